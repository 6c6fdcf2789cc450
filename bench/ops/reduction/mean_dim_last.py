import torch
import torch.nn as nn

BATCH = 64
DIM1 = 512
DIM2 = 384


class Model(nn.Module):
    """Mean over the last dimension of a 3D tensor."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 2 + 1]


def get_init_inputs():
    return [-1]


def get_inputs_dyn_list():
    shapes = [(32, 512, 384), (64, 100, 1025), (2, 64, 65536)]
    return [[torch.randn(*shape) * 2 + 1] for shape in shapes]
