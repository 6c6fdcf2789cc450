import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """Sum over a constructor-given dim, keeping it; dynamic shapes."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(6, 37, 10) * 3]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    return [[torch.randn(3, 5, 7)], [torch.randn(2, 300, 1)]]
