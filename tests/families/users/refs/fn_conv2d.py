"""F.conv2d with stride 2 and padding 1, weight as a parameter and no bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(12, 6, 3, 3) * 0.2)

    def forward(self, x):
        return F.conv2d(x, self.w, stride=2, padding=1)


def get_inputs():
    return [torch.randn(3, 6, 40, 36)]


def get_init_inputs():
    return []
