import torch
import torch.nn as nn

BATCH = 16
SEQ = 384
HIDDEN = 768
EPS = 1e-6


class Model(nn.Module):
    """Layer normalisation over the last (hidden) dimension with learned weight and bias."""

    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            index = torch.arange(hidden, dtype=torch.float32)
            self.ln.weight.copy_(1.0 + 0.2 * torch.sin(index))
            self.ln.bias.copy_(0.05 * torch.cos(index))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN) * 3 + 0.5]


def get_init_inputs():
    return [HIDDEN, EPS]


def get_inputs_dyn_list():
    shapes = [(8, 512, 768), (32, 128, 768), (1, 4000, 768)]
    return [[torch.randn(*shape) * 3 + 0.5] for shape in shapes]
