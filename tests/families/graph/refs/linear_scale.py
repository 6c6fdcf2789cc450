"""Linear with bias, then a scale by a number."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(x) * 0.5


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
