import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 48
KERNEL_SIZE = (5, 3)
PADDING = (2, 0)
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    """2D convolution with a 5x3 kernel and per-axis padding (2 rows, 0 columns): height kept, width shrinks."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1,
                 padding: tuple = (0, 0), dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, 1, PADDING, 1, 1, True]
