import torch
import torch.nn as nn

BATCH = 3072
DIM = 2048


class Model(nn.Module):
    """Elementwise ReLU: y = max(x, 0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 4]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(2048, 1536), (3000, 1000), (777, 4099)]
    return [[torch.randn(rows, cols) * 4] for rows, cols in shapes]
