import torch
import torch.nn as nn

M = 768
K = 768
N = 1024


class Model(nn.Module):
    """Matrix product with B given transposed: C[M, N] = A @ B^T, B of shape [N, K]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
