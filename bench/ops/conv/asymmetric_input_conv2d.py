import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 32
KERNEL_SIZE = 3
HEIGHT = 32
WIDTH = 256


class Model(nn.Module):
    """2D convolution with a square 3x3 kernel on a wide, non-square input (32x256)."""

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
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]


def get_inputs_dyn_list():
    shapes = [(2, 32, 256), (8, 16, 500), (4, 100, 60)]
    return [[torch.randn(batch, IN_CHANNELS, h, w)] for batch, h, w in shapes]
