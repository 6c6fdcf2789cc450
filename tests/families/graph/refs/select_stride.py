"""x[:, 0, ::2] * y + x[:, 1, 1::2]: selects and stepped slices read in place."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return x[:, 0, ::2] * y + x[:, 1, 1::2]


def get_inputs():
    return [torch.randn(16, 3, 40), torch.randn(16, 20)]


def get_init_inputs():
    return []
