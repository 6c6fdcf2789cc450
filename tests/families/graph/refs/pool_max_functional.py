"""F.max_pool2d with a 3x3 window, stride 2, padding 1 and ceil_mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)


def get_inputs():
    return [torch.randn(2, 12, 31, 30)]


def get_init_inputs():
    return []
