"""A projection whose shape comment does not fit its weight: it constructs, but fails when run."""
import torch
import torch.nn as nn


class Proj(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim, dim) / dim**0.5)

    def forward(self, x):
        # akg: x: f32[B, 32]; B = 8
        y = x @ self.w
        return torch.tanh(y)
