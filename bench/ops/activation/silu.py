import torch
import torch.nn as nn

BATCH = 2048
DIM = 2048


class Model(nn.Module):
    """Elementwise SiLU (swish): y = x * sigmoid(x)."""

    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(BATCH, DIM) * torch.exp(torch.randn(BATCH, DIM))]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(1024, 1024), (2047, 2049), (512, 6000)]
    return [[torch.randn(rows, cols) * torch.exp(torch.randn(rows, cols))] for rows, cols in shapes]
