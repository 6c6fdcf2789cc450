import torch
import torch.nn as nn

BATCH = 2048
DIM = 2048
ALPHA = 1.3


class Model(nn.Module):
    """Elementwise ELU: y = x if x > 0 else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float):
        super().__init__()
        self.act = nn.ELU(alpha=alpha)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 4]


def get_init_inputs():
    return [ALPHA]


def get_inputs_dyn_list():
    shapes = [(1024, 1024), (1999, 2001), (4096, 300)]
    return [[torch.randn(rows, cols) * 4] for rows, cols in shapes]
