import torch
import torch.nn as nn


class Model(nn.Module):
    """An even kernel with "same" padding (one more on the far side), then reflect padding."""

    def __init__(self, cin: int, mid: int, cout: int):
        super().__init__()
        self.same = nn.Conv2d(cin, mid, 4, padding="same", bias=False)
        self.reflect = nn.Conv2d(mid, cout, 3, padding=1, padding_mode="reflect", bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.same(x)
        return self.reflect(x)


def get_inputs():
    return [torch.randn(2, 4, 21, 37)]


def get_init_inputs():
    return [4, 8, 5]


def get_inputs_dyn_list():
    return [[torch.randn(1, 4, 5, 70)], [torch.randn(3, 4, 40, 16)]]
