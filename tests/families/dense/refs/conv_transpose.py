import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 1D convolution followed by nothing: stride 3, padding 1, output padding 2."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(5, 4, 4, stride=3, padding=1, output_padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


def get_inputs():
    return [torch.randn(3, 5, 33)]


def get_init_inputs():
    return []
