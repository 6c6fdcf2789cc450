"""x.clamp(min=0): ReLU spelled as a clamp."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.clamp(min=0)


def get_inputs():
    return [torch.randn(3, 64, 250)]


def get_init_inputs():
    return []
