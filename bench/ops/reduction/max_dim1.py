import torch
import torch.nn as nn

BATCH = 64
DIM1 = 512
DIM2 = 128


class Model(nn.Module):
    """Maximum over dim 1 of a 3D tensor (values only)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 4]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    shapes = [(16, 512, 128), (64, 129, 300), (4, 2048, 256)]
    return [[torch.randn(*shape) * 4] for shape in shapes]
