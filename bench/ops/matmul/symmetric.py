import torch
import torch.nn as nn

N = 768


class Model(nn.Module):
    """Product of two symmetric matrices C = A @ B (A = A^T, B = B^T)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def _symmetric(n: int) -> torch.Tensor:
    x = torch.randn(n, n)
    return (x + x.T) / 2


def get_inputs():
    return [_symmetric(N), _symmetric(N)]


def get_init_inputs():
    return []
