"""Linear then ReLU spelled as a product with the transposed weight."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return torch.relu(x @ self.fc.weight.t() + self.fc.bias)


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
