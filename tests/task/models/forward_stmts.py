import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, -1).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, -1).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, -1).transpose(1, 2)
        # akg: q: f32[2, 2, 24, 16]; k: f32[2, 2, 24, 16]; v: f32[2, 2, 24, 16]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v)
        return out.transpose(1, 2).reshape(b, t, d)


model = Attention(32)
