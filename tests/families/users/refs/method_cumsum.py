"""x.cumsum(1): running sums along the rows of a [64, 200] tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.cumsum(1)


def get_inputs():
    return [torch.randn(64, 200)]


def get_init_inputs():
    return []
