import torch
import torch.nn as nn

BATCH = 64
DIM1 = 512
DIM2 = 128


class Model(nn.Module):
    """Index of the maximum over dim 1 of a 3D tensor (int64 output)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2) * 4]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    shapes = [(16, 512, 128), (64, 200, 256), (8, 2048, 100)]
    return [[torch.randn(*shape) * 4] for shape in shapes]
