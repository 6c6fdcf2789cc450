"""A fake quantiser: clamp to [-1, 1], scale by 127, floor, scale back."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        q = torch.floor(x.clamp(-1.0, 1.0) * 127.0 + 0.5)
        return q / 127.0


def get_inputs():
    return [torch.randn(200, 200) * 0.7]


def get_init_inputs():
    return []
