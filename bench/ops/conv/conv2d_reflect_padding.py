import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 32
KERNEL_SIZE = 3
PADDING = 1
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    """2D convolution with reflect padding of 1 (borders mirrored, not zero-filled)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int,
                 padding_mode: str, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding,
                                padding_mode=padding_mode, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING, "reflect", True]
