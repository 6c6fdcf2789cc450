import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2048
DIM = 2048
BETA = 2.0
THRESHOLD = 10.0


class Model(nn.Module):
    """Elementwise softplus: y = log(1 + exp(beta * x)) / beta, linear above the threshold."""

    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 8]


def get_init_inputs():
    return [BETA, THRESHOLD]
