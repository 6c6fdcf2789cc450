"""Rows scaled to unit length by hand: x / x.norm(p=2, dim=1, keepdim=True).clamp_min(1e-6)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        n = x.norm(p=2, dim=1, keepdim=True).clamp_min(1e-6)
        return x / n


def get_inputs():
    return [torch.randn(150, 100)]


def get_init_inputs():
    return []
