"""F.linear with the weight and bias held as nn.Parameter tensors (200 -> 72)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) / n_in ** 0.5)
        self.bias = nn.Parameter(torch.zeros(n_out).uniform_(-0.1, 0.1))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


def get_inputs():
    return [torch.randn(48, 200)]


def get_init_inputs():
    return [200, 72]
