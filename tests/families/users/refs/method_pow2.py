"""x.pow(2): the elementwise square."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.pow(2)


def get_inputs():
    return [torch.randn(200, 333)]


def get_init_inputs():
    return []
