"""x * torch.sigmoid(x): SiLU written out as two operations."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(64, 1000)]


def get_init_inputs():
    return []
