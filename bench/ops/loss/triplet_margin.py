import torch
import torch.nn as nn

BATCH = 4096
DIM = 512
MARGIN = 1.0


class Model(nn.Module):
    """Triplet margin loss: mean(max(d(a, p) - d(a, n) + margin, 0)) with the Euclidean distance."""

    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.randn(BATCH, DIM)
    # Positives lie closer to their anchors than negatives do on average, so both hinge sides occur.
    positive = anchor + torch.randn(BATCH, DIM) * 1.2
    negative = anchor + torch.randn(BATCH, DIM) * 1.25
    return [anchor, positive, negative]


def get_init_inputs():
    return [MARGIN]
