"""F.pad with reflections, then F.conv2d with a bias and tanh: the pad is the convolution's
padding (a padded copy of the input with the reflections written out)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(10, 6, 5, 5) * 0.1)
        self.b = nn.Parameter(torch.randn(10) * 0.1)

    def forward(self, x):
        y = F.pad(x, (2, 2, 2, 2), mode="reflect")
        return torch.tanh(F.conv2d(y, self.w, self.b))


def get_inputs():
    return [torch.randn(2, 6, 19, 23)]


def get_init_inputs():
    return []
