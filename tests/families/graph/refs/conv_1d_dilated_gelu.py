"""F.conv1d with dilation 2 and a bias, then GELU and a shift by a number."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(24, 10, 3) * 0.2)
        self.b = nn.Parameter(torch.randn(24) * 0.1)

    def forward(self, x):
        return F.gelu(F.conv1d(x, self.w, self.b, dilation=2)) - 0.25


def get_inputs():
    return [torch.randn(4, 10, 70)]


def get_init_inputs():
    return []
