"""nn.Linear(256, 512) followed by F.gelu (a transformer MLP's first half)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(256, 512)

    def forward(self, x):
        return F.gelu(self.up(x))


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
