"""nn.LayerNorm over the last 192 features of a [8, 50, 192] activation."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, h):
        return self.norm(h)


def get_inputs():
    return [torch.randn(8, 50, 192) * 2.0 + 1.0]


def get_init_inputs():
    return [192]
