"""a / (b * b + 1): a division by a strictly positive denominator."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a / (b * b + 1)


def get_inputs():
    return [torch.randn(256, 180), torch.randn(256, 180)]


def get_init_inputs():
    return []
