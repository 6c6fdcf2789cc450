import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed 1D convolution: stride 3, padding 1, output padding 2, over one image and over
    several (whole images per thread)."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(5, 4, 4, stride=3, padding=1, output_padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


def get_inputs():
    return [torch.randn(3, 5, 33)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    # one image: the parallelism runs inside the item; five: whole items per thread
    return [[torch.randn(1, 5, 40)], [torch.randn(5, 5, 7)]]
