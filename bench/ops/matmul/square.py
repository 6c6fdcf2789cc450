import torch
import torch.nn as nn

N = 768


class Model(nn.Module):
    """Square matrix product C = A @ B with A, B of shape [N, N]."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(n, n), torch.randn(n, n)] for n in (512, 640, 900)]
