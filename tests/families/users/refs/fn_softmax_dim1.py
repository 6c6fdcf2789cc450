"""F.softmax along dim 1 (the middle axis) of a [6, 40, 70] tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(6, 40, 70)]


def get_init_inputs():
    return []
