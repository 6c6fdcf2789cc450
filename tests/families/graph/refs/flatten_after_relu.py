"""torch.relu(x * 2).flatten(1) * w: a flatten after elementwise ops is read on the input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(96))

    def forward(self, x):
        return torch.relu(x * 2.0).flatten(1) * self.w


def get_inputs():
    return [torch.randn(32, 8, 12)]


def get_init_inputs():
    return []
