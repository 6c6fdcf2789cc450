import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """RMS normalisation written with torch ops, with a learned scale."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.arange(hidden, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ms = torch.mean(x ** 2, dim=-1, keepdim=True)
        return x / torch.sqrt(ms + self.eps) * self.weight


def get_inputs():
    return [torch.randn(5, 7, 24) * 2]


def get_init_inputs():
    return [24, 1e-5]


def get_inputs_dyn_list():
    # other sizes of the same rank: a bound sketch gives each tensor one rank (a rank that
    # varies between cases is refused with a message; test_rules.c checks that)
    return [[torch.randn(3, 1, 24)], [torch.randn(2, 9, 24)]]
