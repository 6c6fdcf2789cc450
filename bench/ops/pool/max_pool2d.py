import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 32
HEIGHT = 96
WIDTH = 96
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 1


class Model(nn.Module):
    """2D max pooling, 3x3 window, stride 2, padding 1."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]


def get_inputs_dyn_list():
    shapes = [(2, 32, 96, 96), (8, 32, 50, 77), (1, 32, 200, 160)]
    return [[torch.randn(*shape) * 3] for shape in shapes]
