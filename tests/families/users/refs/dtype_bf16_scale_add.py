"""x * 0.5 + y on bfloat16 tensors."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return x * 0.5 + y


def get_inputs():
    return [torch.randn(128, 256, dtype=torch.bfloat16), torch.randn(128, 256, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
