import time

import torch
import torch.nn as nn

BATCH = 64
DIM = 256


class Model(nn.Module):
    """ReLU whose forward takes a quarter of a second: a job on it is still running when a test
    kills it (tests/e2e/test_interrupt.py)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.25)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
