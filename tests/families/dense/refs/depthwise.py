import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2D convolution (padding 1) then a pointwise one."""

    def __init__(self, channels: int, out_channels: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.pw = nn.Conv2d(channels, out_channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pw(self.dw(x))


def get_inputs():
    return [torch.randn(2, 8, 17, 21)]


def get_init_inputs():
    return [8, 11]
