import torch
import torch.nn as nn

BATCH = 1024
LENGTH = 2048


class Model(nn.Module):
    """Inclusive prefix sum along dim 1: y[i, j] = sum_{k <= j} x[i, k]."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH) * 2]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    shapes = [(256, 2048), (1024, 700), (16, 40000)]
    return [[torch.randn(rows, cols) * 2] for rows, cols in shapes]
