"""x.reshape(4, 6, 5) * s: an input split into more dims, scaled along the middle one."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = nn.Parameter(torch.randn(6, 1))

    def forward(self, x):
        return x.reshape(4, 6, 5) * self.s


def get_inputs():
    return [torch.randn(4, 30)]


def get_init_inputs():
    return []
