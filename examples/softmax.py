import torch
import torch.nn as nn

BATCH = 64
DIM = 4096


class Model(nn.Module):
    """Row softmax: y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k]) over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 3]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(rows, cols) * 3] for rows, cols in ((64, 4096), (32, 1000), (128, 2048))]
