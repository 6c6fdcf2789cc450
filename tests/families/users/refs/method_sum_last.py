"""x.sum(-1): the sum over the last axis of a [16, 24, 130] tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(-1)


def get_inputs():
    return [torch.randn(16, 24, 130)]


def get_init_inputs():
    return []
