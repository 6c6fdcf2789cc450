import torch
import torch.nn as nn

M = 8192
K = 256
N = 128


class Model(nn.Module):
    """Tall-skinny matrix product: C[M, N] = A[M, K] @ B[K, N] with M much larger than K and N."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(4096, 256, 128), (20000, 128, 64), (8192, 300, 200)]
    return [[torch.randn(m, k), torch.randn(k, n)] for m, k, n in shapes]
