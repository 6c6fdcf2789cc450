import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
NUM_CLASSES = 1000


class Model(nn.Module):
    """Cross-entropy of logits against integer class targets, averaged over the batch."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(BATCH, NUM_CLASSES) * 3, torch.randint(0, NUM_CLASSES, (BATCH,), dtype=torch.int64)]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(1024, 1000), (16384, 16), (256, 32000)]
    return [[torch.randn(batch, classes) * 3, torch.randint(0, classes, (batch,), dtype=torch.int64)]
            for batch, classes in shapes]
