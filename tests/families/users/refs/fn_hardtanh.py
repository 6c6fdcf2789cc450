"""F.hardtanh clamping into [-0.5, 2.0]."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.hardtanh(x, min_val=-0.5, max_val=2.0)


def get_inputs():
    return [torch.randn(300, 257)]


def get_init_inputs():
    return []
