"""nn.AdaptiveAvgPool3d((2, 3, 4)) from 5x7x9 volumes on an unbatched input: uneven windows in
every dim."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d((2, 3, 4))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(6, 5, 7, 9)]


def get_init_inputs():
    return []
