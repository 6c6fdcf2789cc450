"""Linear then ReLU as an einsum, a bias add and relu."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return torch.einsum("bk,nk->bn", x, self.fc.weight).add(self.fc.bias).relu()


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
