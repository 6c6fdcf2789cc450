"""F.conv_transpose2d with stride 2 on a parameter, no bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 10, 3, 3) * 0.2)

    def forward(self, x):
        return F.conv_transpose2d(x, self.w, stride=2, padding=1)


def get_inputs():
    return [torch.randn(2, 6, 13, 11)]


def get_init_inputs():
    return []
