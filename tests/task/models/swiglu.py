import torch
import torch.nn as nn
import torch.nn.functional as F

MODEL_DIM = 128
FFN_DIM = 344


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int, bias: bool = False):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=bias)
        self.w3 = nn.Linear(dim, hidden, bias=bias)
        self.w2 = nn.Linear(hidden, dim, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # akg: x: f32[4, 32, MODEL_DIM]
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ffn = SwiGLU(MODEL_DIM, FFN_DIM)

    def forward(self, x):
        return x + self.ffn(x)
