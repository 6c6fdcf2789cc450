"""F.conv2d without bias, a per-channel bias added through [:, None, None], then sigmoid."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 4, 5, 5) * 0.1)
        self.bias = nn.Parameter(torch.randn(8) * 0.1)

    def forward(self, x):
        y = F.conv2d(x, self.weight, padding=2)
        return torch.sigmoid(y + self.bias[:, None, None])


def get_inputs():
    return [torch.randn(2, 4, 28, 28)]


def get_init_inputs():
    return []
