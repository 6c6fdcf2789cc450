import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """Reverse cumulative product along dim 0 (strided scan)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x.flip(0), dim=0).flip(0)


def get_inputs():
    return [1.0 + 0.1 * torch.randn(30, 17)]


def get_init_inputs():
    return []
