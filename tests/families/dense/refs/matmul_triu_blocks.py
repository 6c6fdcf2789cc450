import torch
import torch.nn as nn


class Model(nn.Module):
    """triu(A @ B) large enough for several row blocks, column shares and K slices."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(a, b))


def get_inputs():
    return [torch.randn(203, 517), torch.randn(517, 150)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(m, k), torch.randn(k, n)] for m, k, n in ((97, 40, 301), (250, 3, 33))]
