"""NCHW to NHWC with permute(0, 2, 3, 1), then relu, made contiguous."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).relu().contiguous()


def get_inputs():
    return [torch.randn(2, 16, 20, 24)]


def get_init_inputs():
    return []
