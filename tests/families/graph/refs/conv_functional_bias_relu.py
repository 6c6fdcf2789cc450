"""F.conv2d with its bias and stride 2 on parameters, then ReLU in the epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(20, 8, 3, 3) * 0.2)
        self.b = nn.Parameter(torch.randn(20) * 0.1)

    def forward(self, x):
        return F.relu(F.conv2d(x, self.w, self.b, stride=2, padding=1))


def get_inputs():
    return [torch.randn(2, 8, 30, 34)]


def get_init_inputs():
    return []
