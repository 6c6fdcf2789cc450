"""torch.addmm(bias, x, w) followed by tanh, with w stored [in, out]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n_in, n_out) / n_in ** 0.5)
        self.b = nn.Parameter(torch.randn(n_out) * 0.1)

    def forward(self, x):
        return torch.addmm(self.b, x, self.w).tanh()


def get_inputs():
    return [torch.randn(40, 144)]


def get_init_inputs():
    return [144, 100]
