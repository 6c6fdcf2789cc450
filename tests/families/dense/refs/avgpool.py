import torch
import torch.nn as nn


class Model(nn.Module):
    """1D average pooling that does not count padded zeros."""

    def __init__(self, k: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(k, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 3, 50)]


def get_init_inputs():
    return [5, 3, 2]
