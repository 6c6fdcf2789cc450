"""RMSNorm by hand (Llama style): x * rsqrt(mean(x^2) + eps) * weight."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        ms = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(ms + self.eps) * self.weight


def get_inputs():
    return [torch.randn(2, 64, 384)]


def get_init_inputs():
    return [384]
