import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 3072
DIM = 2048
MIN_VAL = -1.5
MAX_VAL = 2.5


class Model(nn.Module):
    """Elementwise hardtanh: clamp(x, min_val, max_val)."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 4]


def get_init_inputs():
    return [MIN_VAL, MAX_VAL]


def get_inputs_dyn_list():
    shapes = [(2048, 1024), (3001, 997), (600, 5000)]
    return [[torch.randn(rows, cols) * 4] for rows, cols in shapes]
