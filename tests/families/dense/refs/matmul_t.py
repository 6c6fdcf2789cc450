import torch
import torch.nn as nn


class Model(nn.Module):
    """A^T @ B with A given as [K, M], kept lower triangular."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(a.T, b))


def get_inputs():
    return [torch.randn(70, 45), torch.randn(70, 37)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(k, m), torch.randn(k, n)] for k, m, n in ((5, 3, 20), (130, 61, 9))]
