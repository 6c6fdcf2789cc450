import torch
import torch.nn as nn

M = 3072
N = 2048
SCALE = -2.75


class Model(nn.Module):
    """Matrix times a scalar fixed at construction: C = A * s."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return a * self.scale


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return [SCALE]


def get_inputs_dyn_list():
    shapes = [(1024, 2048), (3000, 1001), (512, 8192)]
    return [[torch.randn(m, n)] for m, n in shapes]
