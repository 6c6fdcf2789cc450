import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    """2D average pooling, 3x3 window, stride 2, padding 1 (padded zeros counted)."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]


def get_inputs_dyn_list():
    shapes = [(2, 64, 128, 128), (8, 64, 61, 90), (1, 32, 300, 256)]
    return [[torch.randn(*shape) * 3] for shape in shapes]
