import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN_MULT = 4


class MLPBlock(nn.Module):
    """The feed-forward half of a transformer layer."""

    def __init__(self, dim, mult=HIDDEN_MULT, dropout=0.0):
        super().__init__()
        self.up = nn.Linear(dim, dim * mult)
        self.down = nn.Linear(dim * mult, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.down(F.gelu(self.up(x))))


if __name__ == "__main__":
    block = MLPBlock(128)
    x = torch.randn(8, 128)
    y = block(x)
    print(y.shape)
