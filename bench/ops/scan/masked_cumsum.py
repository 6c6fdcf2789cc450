import torch
import torch.nn as nn

BATCH = 1024
LENGTH = 2048


class Model(nn.Module):
    """Prefix sum along dim 1 counting only the elements where the boolean mask is set."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH) * 2, torch.randn(BATCH, LENGTH) > 0]


def get_init_inputs():
    return [1]


def get_inputs_dyn_list():
    shapes = [(256, 2048), (1024, 999), (32, 20000)]
    return [[torch.randn(rows, cols) * 2, torch.randn(rows, cols) > 0] for rows, cols in shapes]
