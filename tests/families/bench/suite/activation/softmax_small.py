import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over the last dimension of a small batch."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(32, 512) * 4]


def get_init_inputs():
    return []
