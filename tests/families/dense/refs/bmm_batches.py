import torch
import torch.nn as nn


class Model(nn.Module):
    """tril(A @ B) over a batch large enough that each thread runs whole batch items: several row
    blocks, K slices and a ragged last column panel per item."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.bmm(a, b))


def get_inputs():
    return [torch.randn(6, 203, 517), torch.randn(6, 517, 70)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(z, m, k), torch.randn(z, k, n)]
            for z, m, k, n in ((1, 97, 40, 301), (5, 33, 3, 250), (8, 7, 260, 9))]
