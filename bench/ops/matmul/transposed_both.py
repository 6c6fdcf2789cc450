import torch
import torch.nn as nn

M = 768
K = 768
N = 1024


class Model(nn.Module):
    """Matrix product with both operands transposed: C[M, N] = A^T @ B^T, A [K, M], B [N, K]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b.T)


def get_inputs():
    return [torch.randn(K, M), torch.randn(N, K)]


def get_init_inputs():
    return []
