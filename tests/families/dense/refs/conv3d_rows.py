import torch
import torch.nn as nn


class Model(nn.Module):
    """Unpadded 3D convolution: output rows of 32, 18 and 45 columns read in place or packed."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, (2, 3, 3), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 3, 6, 9, 34)]


def get_init_inputs():
    return [3, 7]


def get_inputs_dyn_list():
    return [[torch.randn(1, 3, 4, 5, 20)], [torch.randn(2, 3, 5, 6, 47)]]
