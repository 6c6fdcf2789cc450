"""a @ b: a [96, 160] by [160, 80] matrix product."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(96, 160), torch.randn(160, 80)]


def get_init_inputs():
    return []
