import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 32
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1
HEIGHT = 32
WIDTH = 32


class Model(nn.Module):
    """Transposed 2D convolution that doubles height and width (kernel 4, stride 2, padding 1, bias)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding,
                                                   groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, 0, 1, True]


def get_inputs_dyn_list():
    shapes = [(2, 32, 32), (8, 20, 36), (1, 64, 64)]
    return [[torch.randn(batch, IN_CHANNELS, h, w)] for batch, h, w in shapes]
