"""x ** 3 with the Python power operator."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x ** 3


def get_inputs():
    return [torch.randn(150, 222)]


def get_init_inputs():
    return []
