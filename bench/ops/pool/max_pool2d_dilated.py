import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 32
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
STRIDE = 1
PADDING = 1
DILATION = 2


class Model(nn.Module):
    """2D max pooling with a dilated 3x3 window (dilation 2), stride 1, padding 1."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
