import torch
import torch.nn as nn

N = 768
M = 768


class Model(nn.Module):
    """Diagonal matrix product C = diag(a) @ B, i.e. row i of B scaled by a[i]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ b


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
