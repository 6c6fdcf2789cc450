import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """Exclusive prefix sum along the last dim."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = torch.zeros_like(x.narrow(self.dim, 0, 1))
        body = x.narrow(self.dim, 0, x.size(self.dim) - 1)
        return torch.cumsum(torch.cat((head, body), dim=self.dim), dim=self.dim)


def get_inputs():
    return [torch.randn(8, 100) * 2]


def get_init_inputs():
    return [-1]
