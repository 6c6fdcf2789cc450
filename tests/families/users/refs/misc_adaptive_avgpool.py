"""nn.AdaptiveAvgPool2d((4, 4)) from 18x18 maps (uneven windows)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((4, 4))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 32, 18, 18)]


def get_init_inputs():
    return []
