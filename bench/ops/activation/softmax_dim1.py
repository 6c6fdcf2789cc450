import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 256
LENGTH = 512


class Model(nn.Module):
    """Softmax over dim 1 (channels) of a [batch, channels, length] tensor."""

    def __init__(self, dim: int):
        super().__init__()
        self.softmax = nn.Softmax(dim=dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH) * 4]


def get_init_inputs():
    return [1]
