"""A reduction broadcast back against its input: x.amax(dim=1, keepdim=True) - x."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.amax(dim=1, keepdim=True) - x


def get_inputs():
    return [torch.randn(16, 128, 32)]


def get_init_inputs():
    return []
