import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """KL divergence, reduction "sum", with targets that are exactly zero (their terms are 0) or
    denormal (t * log t underflows): the kernel's t * log(t) must take both as torch does."""

    def __init__(self):
        super().__init__()

    def forward(self, log_predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_predictions, targets, reduction="sum")


def get_inputs():
    log_predictions = torch.log_softmax(torch.randn(24, 300) * 2, dim=-1)
    targets = torch.softmax(torch.randn(24, 300) * 4, dim=-1)
    flat = targets.view(-1)
    flat[0::7] = 0.0
    flat[1::13] = 2e-40
    return [log_predictions, targets]


def get_init_inputs():
    return []
