import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 16
DEPTH = 16
HEIGHT = 48
WIDTH = 48
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 2


class Model(nn.Module):
    """3D max pooling, 3x3x3 window with dilation 2, stride 2, padding 1."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.maxpool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                                    return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
