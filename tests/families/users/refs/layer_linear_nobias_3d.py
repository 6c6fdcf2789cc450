"""nn.Linear without bias applied to a [batch, tokens, features] tensor (96 -> 48)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(96, 48, bias=False)

    def forward(self, tokens):
        return self.proj(tokens)


def get_inputs():
    return [torch.randn(4, 33, 96)]


def get_init_inputs():
    return []
