"""relu(x.transpose(1, 2) @ w): a batch of [C, T] maps read as [T, C], times a [C, K] weight."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(48, 40) / 7.0)

    def forward(self, x):
        return torch.relu(x.transpose(1, 2) @ self.w)


def get_inputs():
    return [torch.randn(3, 48, 70)]


def get_init_inputs():
    return []
