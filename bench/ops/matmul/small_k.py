import torch
import torch.nn as nn

M = 2048
K = 64
N = 2048


class Model(nn.Module):
    """Matrix product with a small inner dimension: C[M, N] = A[M, K] @ B[K, N], K << M, N."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
