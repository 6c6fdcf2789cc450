"""Linear, ReLU, then LayerNorm over the 128 output features."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.act = nn.ReLU()
        self.ln = nn.LayerNorm(d_out)

    def forward(self, x):
        return self.ln(self.act(self.fc(x)))


def get_inputs():
    return [torch.randn(80, 96)]


def get_init_inputs():
    return [96, 128]
