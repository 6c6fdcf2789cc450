import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    """Strided 2D convolution halving height and width (3x3 kernel, stride 2, padding 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
