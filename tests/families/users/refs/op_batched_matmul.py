"""a @ b on 3-D tensors: 12 independent [40, 64] x [64, 48] products."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(12, 40, 64), torch.randn(12, 64, 48)]


def get_init_inputs():
    return []
