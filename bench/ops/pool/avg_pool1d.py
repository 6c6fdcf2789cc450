import torch
import torch.nn as nn

BATCH = 8
CHANNELS = 64
LENGTH = 8192
KERNEL_SIZE = 8
STRIDE = 3
PADDING = 4


class Model(nn.Module):
    """1D average pooling, window 8, stride 3, padding 4 (padded zeros counted in the average)."""

    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
