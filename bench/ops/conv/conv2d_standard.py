import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 3
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    """Standard 2D convolution with a square kernel, padding 1, stride 1 and a bias."""

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
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, 1, 1, 1, 1, True]


def get_inputs_dyn_list():
    shapes = [(2, 64, 64), (8, 40, 72), (1, 128, 128)]
    return [[torch.randn(batch, IN_CHANNELS, h, w)] for batch, h, w in shapes]
