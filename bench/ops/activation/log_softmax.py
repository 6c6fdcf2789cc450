import torch
import torch.nn as nn

BATCH = 512
DIM = 8192


class Model(nn.Module):
    """Log-softmax over the last dimension: y = x - logsumexp(x, dim=-1)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM) * torch.exp(torch.randn(BATCH, DIM))]


def get_init_inputs():
    return [-1]


def get_inputs_dyn_list():
    shapes = [(128, 8192), (1000, 1000), (32, 65536)]
    return [[torch.randn(rows, cols) * torch.exp(torch.randn(rows, cols))] for rows, cols in shapes]
