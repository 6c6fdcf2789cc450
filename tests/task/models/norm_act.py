import torch
from torch import nn


class NormAct(nn.Module):
    def __init__(self, dim, eps=1e-6, affine=True):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps, elementwise_affine=affine)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.norm(x))


def demo():
    layer = NormAct(dim=96, eps=1e-5)
    inp = torch.randn(4, 10, 96)
    return layer(inp)
