"""nn.Conv1d with kernel 5 and stride 2 over a 16-channel signal of length 128."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(16, 32, 5, stride=2)

    def forward(self, signal):
        return self.conv(signal)


def get_inputs():
    return [torch.randn(4, 16, 128)]


def get_init_inputs():
    return []
