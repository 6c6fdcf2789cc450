import torch
import torch.nn as nn


class Model(nn.Module):
    """2D max pooling with padding, stride, dilation and ceil_mode."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 3, 20, 27)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(1, 2, 9, 64)]]
