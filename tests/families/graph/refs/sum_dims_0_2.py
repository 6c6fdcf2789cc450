"""A sum over dims that are not adjacent: (0, 2) of [16, 64, 128]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=(0, 2))


def get_inputs():
    return [torch.randn(16, 64, 128)]


def get_init_inputs():
    return []
