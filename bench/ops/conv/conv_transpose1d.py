import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 32
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1
LENGTH = 1024


class Model(nn.Module):
    """Transposed 1D convolution that doubles the length (kernel 4, stride 2, padding 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose1d = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding,
                                                   groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose1d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
