import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 1024


class Model(nn.Module):
    """Cosine similarity loss: mean over rows of 1 - cos(predictions[i], targets[i])."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cosine = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine)


def get_inputs():
    predictions = torch.randn(BATCH, DIM)
    return [predictions, predictions * 0.5 + torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
