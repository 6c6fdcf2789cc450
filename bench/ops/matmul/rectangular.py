import torch
import torch.nn as nn

M = 768
K = 512
N = 1536


class Model(nn.Module):
    """Rectangular matrix product C[M, N] = A[M, K] @ B[K, N]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(512, 512, 1024), (1000, 300, 1500), (2048, 777, 333)]
    return [[torch.randn(m, k), torch.randn(k, n)] for m, k, n in shapes]
