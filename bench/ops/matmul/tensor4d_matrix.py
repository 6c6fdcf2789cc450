import torch
import torch.nn as nn

B = 8
I = 32
J = 32
L = 256
K = 256


class Model(nn.Module):
    """4D tensor times matrix over the last axis: C[b, i, j, k] = sum_l A[b, i, j, l] * W[l, k] (einsum)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", a, w)


def get_inputs():
    return [torch.randn(B, I, J, L), torch.randn(L, K)]


def get_init_inputs():
    return []
