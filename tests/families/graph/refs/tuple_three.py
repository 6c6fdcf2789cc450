"""Three outputs from one pass: (x + y, relu(x - y), x * y)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return x + y, torch.relu(x - y), x * y


def get_inputs():
    return [torch.randn(40, 50), torch.randn(40, 50)]


def get_init_inputs():
    return []
