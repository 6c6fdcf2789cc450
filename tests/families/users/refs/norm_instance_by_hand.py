"""Instance normalisation by hand: per (sample, channel) mean and variance over H and W."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        mean = x.mean(dim=(2, 3), keepdim=True)
        var = x.var(dim=(2, 3), keepdim=True, unbiased=False)
        return (x - mean) / (var + 1e-5).sqrt()


def get_inputs():
    return [torch.randn(2, 8, 24, 24) * 2 + 1]


def get_init_inputs():
    return []
