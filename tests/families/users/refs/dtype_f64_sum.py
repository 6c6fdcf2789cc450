"""The sum over dim 1 of a float64 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(120, 500, dtype=torch.float64)]


def get_init_inputs():
    return []
