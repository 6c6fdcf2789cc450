import torch
import torch.nn as nn

BATCH = 8
SEQ = 512
HIDDEN = 1024
EPS = 1e-6


class Model(nn.Module):
    """RMS normalisation over the last dimension: x / sqrt(mean(x^2) + eps) * weight."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.sin(torch.arange(hidden, dtype=torch.float32)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN) * 2]


def get_init_inputs():
    return [HIDDEN, EPS]


def get_inputs_dyn_list():
    shapes = [(4, 512, 1024), (16, 200, 1024), (1, 3000, 1024)]
    return [[torch.randn(*shape) * 2] for shape in shapes]
