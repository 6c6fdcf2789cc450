"""nn.GELU (exact, erf form) on a [128, 500] tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(128, 500)]


def get_init_inputs():
    return []
