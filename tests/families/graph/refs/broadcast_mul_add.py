"""x * y + z with broadcasting: [8, 1, 16] * [4, 16] + [8, 4, 16]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y, z):
        return x * y + z


def get_inputs():
    return [torch.randn(8, 1, 16), torch.randn(4, 16), torch.randn(8, 4, 16)]


def get_init_inputs():
    return []
