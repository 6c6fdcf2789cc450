"""A gated block whose constructor builds a module, a helper and constants of its own file."""
import math

import torch
import torch.nn as nn

CLIP = 6.0
SLOPE = 0.1 * math.sqrt(4.0)


def _clip(x):
    return x.clamp(-CLIP, CLIP)


class LeakyClip(nn.Module):
    def __init__(self, slope=SLOPE):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return _clip(torch.where(x > 0, x, x * self.slope))


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))
        self.act = LeakyClip()

    def forward(self, x):
        # akg: x: f32[B, 64]; B = 16
        h = x * self.scale
        h = torch.relu(h) + 1.0
        return self.act(h)


if __name__ == "__main__":
    block = GatedBlock(64)
    print(block(torch.randn(16, 64)).shape)
