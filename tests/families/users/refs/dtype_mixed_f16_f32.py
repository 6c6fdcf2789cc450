"""A float16 tensor times a float32 tensor: type promotion gives a float32 result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, h, s):
        return h * s + 1.0


def get_inputs():
    return [torch.randn(100, 300).half(), torch.randn(100, 300)]


def get_init_inputs():
    return []
