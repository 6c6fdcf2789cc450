"""x.mean(dim=1, keepdim=True) over the middle axis of [10, 60, 50]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(10, 60, 50)]


def get_init_inputs():
    return []
