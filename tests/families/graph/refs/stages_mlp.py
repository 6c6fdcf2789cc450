"""Three Linear layers as nn.Sequential (GELU, ReLU between): three GEMM stages in one kernel,
each layer's activations a temporary the next layer reads."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in=96, d_hidden=160, d_out=24):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(d_in, d_hidden),
            nn.GELU(),
            nn.Linear(d_hidden, d_hidden // 2),
            nn.ReLU(),
            nn.Linear(d_hidden // 2, d_out),
        )

    def forward(self, x):
        return self.mlp(x)


def get_inputs():
    return [torch.randn(60, 96)]


def get_inputs_dyn_list():
    return [[torch.randn(60, 96)], [torch.randn(17, 96)]]


def get_init_inputs():
    return [96, 160, 24]
