"""F.adaptive_avg_pool2d to 4x4 on inputs of several sizes: 16x16 (even windows, traced) and
18x13 (uneven), one kernel for both."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, (4, 4))


def get_inputs():
    return [torch.randn(2, 8, 16, 16)]


def get_inputs_dyn_list():
    return [[torch.randn(2, 8, 16, 16)], [torch.randn(3, 8, 18, 13)]]


def get_init_inputs():
    return []
