"""Two outputs from one forward: the tuple (a + b, a * b)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a + b, a * b


def get_inputs():
    return [torch.randn(100, 120), torch.randn(100, 120)]


def get_init_inputs():
    return []
