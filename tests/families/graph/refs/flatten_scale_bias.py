"""torch.flatten(x, 1) * w + b: a flattened view of an input read in its flattened shape."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(120))
        self.b = nn.Parameter(torch.randn(120))

    def forward(self, x):
        return torch.flatten(x, 1) * self.w + self.b


def get_inputs():
    return [torch.randn(16, 6, 5, 4)]


def get_init_inputs():
    return []
