import torch
import torch.nn as nn

BATCH = 8192
DIM = 512


class Model(nn.Module):
    """Hinge loss mean(max(1 - predictions * targets, 0)) with targets in {-1, +1}."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    targets = torch.randn(BATCH, DIM).sign()
    return [torch.randn(BATCH, DIM) * 2, targets]


def get_init_inputs():
    return []
