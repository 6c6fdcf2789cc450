"""u[:, None] * v[None, :]: the outer product of two vectors by indexing with None."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, u, v):
        return u[:, None] * v[None, :]


def get_inputs():
    return [torch.randn(400), torch.randn(300)]


def get_init_inputs():
    return []
