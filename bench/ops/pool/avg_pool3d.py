import torch
import torch.nn as nn

BATCH = 4
CHANNELS = 16
DEPTH = 16
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    """3D average pooling, 3x3x3 window, stride 2, padding 1 (padded zeros counted)."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH) * 3]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
