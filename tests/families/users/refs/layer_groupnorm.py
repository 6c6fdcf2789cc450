"""nn.GroupNorm with 4 groups over 32 channels of 16x16 maps."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(2, 32, 16, 16)]


def get_init_inputs():
    return [4, 32]
