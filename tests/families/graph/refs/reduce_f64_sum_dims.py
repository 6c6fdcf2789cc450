"""A float64 sum over dims (0, 2): accumulated in f64, returned as f64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return (x * x).sum(dim=(0, 2))


def get_inputs():
    return [torch.randn(12, 40, 300, dtype=torch.float64)]


def get_init_inputs():
    return []
