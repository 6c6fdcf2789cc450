"""The tensor method x.relu() on a [512, 96] tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.relu()


def get_inputs():
    return [torch.randn(512, 96)]


def get_init_inputs():
    return []
