import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 3072
DIM = 2048
NEGATIVE_SLOPE = 0.05


class Model(nn.Module):
    """Elementwise leaky ReLU: y = x if x >= 0 else negative_slope * x."""

    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 4]


def get_init_inputs():
    return [NEGATIVE_SLOPE]


def get_inputs_dyn_list():
    shapes = [(1536, 2048), (2048, 1500), (4095, 513)]
    return [[torch.randn(rows, cols) * 4] for rows, cols in shapes]
