"""silu(x) * 2 + y on bfloat16 tensors: each op rounds to bfloat16 as PyTorch's do."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x, y):
        return F.silu(x) * 2.0 + y


def get_inputs():
    return [torch.randn(64, 96, dtype=torch.bfloat16), torch.randn(64, 96, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
