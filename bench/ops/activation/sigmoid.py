import torch
import torch.nn as nn

BATCH = 2048
DIM = 2048


class Model(nn.Module):
    """Elementwise logistic sigmoid: y = 1 / (1 + exp(-x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sigmoid()


def get_inputs():
    return [torch.randn(BATCH, DIM) * torch.exp(torch.randn(BATCH, DIM))]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(1024, 1024), (2000, 1999), (333, 8192)]
    return [[torch.randn(rows, cols) * torch.exp(torch.randn(rows, cols))] for rows, cols in shapes]
