"""Linear then ReLU as modules (one of five spellings of one graph)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
