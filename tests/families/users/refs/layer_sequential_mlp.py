"""A two-layer MLP as nn.Sequential: Linear(128, 256), ReLU, Linear(256, 64)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in=128, d_hidden=256, d_out=64):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(d_in, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, d_out),
        )

    def forward(self, x):
        return self.mlp(x)


def get_inputs():
    return [torch.randn(32, 128)]


def get_init_inputs():
    return [128, 256, 64]
