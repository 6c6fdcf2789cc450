"""F.avg_pool2d with a 3x3 window, stride 2 and padding 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(2, 10, 27, 27)]


def get_init_inputs():
    return []
