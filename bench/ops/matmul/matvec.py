import torch
import torch.nn as nn

M = 2048
K = 4096


class Model(nn.Module):
    """Matrix-vector product y[M, 1] = A[M, K] @ x[K, 1]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(2048, 4096), (4096, 1000), (1000, 16384)]
    return [[torch.randn(m, k), torch.randn(k, 1)] for m, k in shapes]
