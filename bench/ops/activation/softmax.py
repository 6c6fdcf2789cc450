import torch
import torch.nn as nn

BATCH = 1024
DIM = 4096


class Model(nn.Module):
    """Row softmax over the last dimension: y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k])."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 4]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(256, 4096), (1024, 1000), (64, 32768)]
    return [[torch.randn(rows, cols) * 4] for rows, cols in shapes]
