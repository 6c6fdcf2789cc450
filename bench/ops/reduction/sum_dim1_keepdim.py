import torch
import torch.nn as nn

BATCH = 64
DIM1 = 1024
DIM2 = 128


class Model(nn.Module):
    """Sum over dim 1 of a 3D tensor, keeping the reduced dimension (output [B, 1, D2])."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 3]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    shapes = [(32, 1024, 128), (64, 300, 257), (4, 4096, 200)]
    return [[torch.randn(*shape) * 3] for shape in shapes]
