"""F.avg_pool1d whose padded taps are not counted (count_include_pad=False)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool1d(x, 4, stride=3, padding=2, count_include_pad=False)


def get_inputs():
    return [torch.randn(4, 6, 50)]


def get_init_inputs():
    return []
