import torch
import torch.nn as nn

BATCH = 1024
LENGTH = 2048


class Model(nn.Module):
    """Inclusive prefix product along dim 1, on entries near +-1 so the products stay finite."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    magnitude = 1.0 + 0.05 * torch.randn(BATCH, LENGTH)
    return [magnitude * torch.randn(BATCH, LENGTH).sign()]


def get_init_inputs():
    return [1]
