import torch
import torch.nn as nn

ROWS = 4096
COLS = 2048


class Model(nn.Module):
    """Sum over dim 0 (down the columns) of a 2D tensor."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 3]


def get_init_inputs():
    return [0]


def get_inputs_dyn_list():
    shapes = [(1024, 2048), (4096, 1000), (333, 8192)]
    return [[torch.randn(rows, cols) * 3] for rows, cols in shapes]
