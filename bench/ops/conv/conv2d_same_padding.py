import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 32
KERNEL_SIZE = 4
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    """2D convolution with padding='same' and an even 4x4 kernel (uneven padding: 1 before, 2 after)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding="same", bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
