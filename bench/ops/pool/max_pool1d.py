import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
LENGTH = 4096
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 2
DILATION = 3


class Model(nn.Module):
    """1D max pooling with padding, stride and dilation (padded positions never win)."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False):
        super().__init__()
        self.maxpool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding,
                                    dilation=dilation, return_indices=return_indices)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION, False]


def get_inputs_dyn_list():
    shapes = [(4, 64, 4096), (16, 64, 1000), (2, 32, 30000)]
    return [[torch.randn(*shape) * 3] for shape in shapes]
