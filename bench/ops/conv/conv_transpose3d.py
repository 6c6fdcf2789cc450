import torch
import torch.nn as nn

BATCH = 2
IN_CHANNELS = 16
OUT_CHANNELS = 8
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1
DEPTH = 8
HEIGHT = 16
WIDTH = 16


class Model(nn.Module):
    """Transposed 3D convolution that doubles every spatial size (kernel 3, stride 2, padding 1, output padding 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding,
                                                   groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING]
