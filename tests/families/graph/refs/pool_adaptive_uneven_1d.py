"""nn.AdaptiveAvgPool1d(5) from 23 samples: windows of PyTorch's start/end formula, some
overlapping."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool1d(5)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(3, 8, 23)]


def get_init_inputs():
    return []
