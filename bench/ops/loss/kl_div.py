import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1024
NUM_CLASSES = 2048


class Model(nn.Module):
    """KL divergence KL(targets || predictions) from log-probabilities and probabilities, reduction batchmean."""

    def __init__(self):
        super().__init__()

    def forward(self, log_predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_predictions, targets, reduction="batchmean")


def get_inputs():
    log_predictions = torch.log_softmax(torch.randn(BATCH, NUM_CLASSES) * 2, dim=-1)
    targets = torch.softmax(torch.randn(BATCH, NUM_CLASSES) * 2, dim=-1)
    return [log_predictions, targets]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    shapes = [(512, 2048), (2048, 700), (32, 50000)]
    return [[torch.log_softmax(torch.randn(b, c) * 2, dim=-1), torch.softmax(torch.randn(b, c) * 2, dim=-1)]
            for b, c in shapes]
