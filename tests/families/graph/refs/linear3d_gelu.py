"""A 3-D input through nn.Linear (its leading dims are rows), then GELU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 48)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.fc(x))


def get_inputs():
    return [torch.randn(4, 12, 64)]


def get_inputs_dyn_list():
    return [[torch.randn(4, 12, 64)], [torch.randn(3, 7, 64)]]


def get_init_inputs():
    return []
