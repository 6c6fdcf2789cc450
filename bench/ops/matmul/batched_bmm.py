import torch
import torch.nn as nn

BATCH = 16
M = 128
K = 256
N = 256


class Model(nn.Module):
    """Batched matrix product C[b] = A[b] @ B[b] (torch.bmm)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(16, 128, 256, 256), (64, 100, 200, 300), (8, 512, 128, 512)]
    return [[torch.randn(b, m, k), torch.randn(b, k, n)] for b, m, k, n in shapes]
