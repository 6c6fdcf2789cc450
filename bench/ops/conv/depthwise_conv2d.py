import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 64
KERNEL_SIZE = 3
HEIGHT = 72
WIDTH = 72


class Model(nn.Module):
    """Depthwise 2D convolution: one 3x3 filter per channel (groups = channels), padding 1."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, CHANNELS, KERNEL_SIZE, 1, 1, 1, CHANNELS, False]


def get_inputs_dyn_list():
    shapes = [(2, 64, 64), (4, 33, 95), (1, 160, 150)]
    return [[torch.randn(batch, CHANNELS, h, w)] for batch, h, w in shapes]
