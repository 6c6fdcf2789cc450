import torch
import torch.nn as nn

N = 768


class Model(nn.Module):
    """Product of two lower triangular matrices, kept lower triangular: C = tril(A @ B)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(a, b))


def get_inputs():
    return [torch.tril(torch.randn(N, N)), torch.tril(torch.randn(N, N))]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.tril(torch.randn(n, n)), torch.tril(torch.randn(n, n))] for n in (512, 700, 900)]
