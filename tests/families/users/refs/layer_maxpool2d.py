"""nn.MaxPool2d with a 2x2 window and stride 2 on [2, 16, 32, 32] feature maps."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 16, 32, 32)]


def get_init_inputs():
    return []
