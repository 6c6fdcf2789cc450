"""torch.bmm of two batches followed by .relu()."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b).relu()


def get_inputs():
    return [torch.randn(8, 50, 72), torch.randn(8, 72, 36)]


def get_init_inputs():
    return []
