import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, temperature: float = 2.0):
        h = self.proj(x)
        # akg: h: f32[4, 32]; temperature = 0.5
        logits = h / temperature
        probs = logits.softmax(-1)
        return probs
