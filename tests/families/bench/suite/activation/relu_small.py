import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise ReLU on a small tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 256) * 3]


def get_init_inputs():
    return []
