"""A GLU by hand: x.chunk(2, dim=-1) gives two slices of x, a * sigmoid(b)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return a * torch.sigmoid(b)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
