import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 8
OUT_CHANNELS = 16
KERNEL_SIZE = 3
DEPTH = 16
HEIGHT = 32
WIDTH = 32


class Model(nn.Module):
    """3D convolution with a cubic kernel over a [batch, channels, depth, height, width] volume."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, 1, 1]
