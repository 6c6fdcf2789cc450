import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped, strided, dilated 2D convolution with a bias."""

    def __init__(self, cin: int, cout: int, k: int, stride: int, padding: int, dilation: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation,
                              groups=groups, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 6, 19, 23)]


def get_init_inputs():
    return [6, 9, 3, 2, 2, 2, 3]


def get_inputs_dyn_list():
    return [[torch.randn(1, 6, 9, 40)], [torch.randn(3, 6, 30, 7)]]
