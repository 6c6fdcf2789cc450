import torch
import torch.nn as nn

BATCH = 32
DIM1 = 256
DIM2 = 512


class Model(nn.Module):
    """Minimum over the last dimension of a 3D tensor (values only)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim).values


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 4]


def get_init_inputs():
    return [-1]
