"""The range (max - min) over dims 1 and 3, which are not adjacent: an epilogue on two statistics."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.amax(dim=(1, 3)) - x.amin(dim=(1, 3))


def get_inputs():
    return [torch.randn(4, 10, 6, 20)]


def get_init_inputs():
    return []
