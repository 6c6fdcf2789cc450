import torch
import torch.nn as nn

BATCH = 8
M = 256
K = 512
L = 384


class Model(nn.Module):
    """3D tensor times matrix: C[b, m, l] = sum_k A[b, m, k] * B[k, l]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(K, L)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(4, 256, 512, 384), (16, 100, 300, 500), (2, 1024, 256, 256)]
    return [[torch.randn(b, m, k), torch.randn(k, l)] for b, m, k, l in shapes]
