import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """Cross-entropy against int64 class targets (mean over the batch)."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(50, 13) * 3, torch.randint(0, 13, (50,), dtype=torch.int64)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(7, 300) * 3, torch.randint(0, 300, (7,), dtype=torch.int64)]]
