import torch
import torch.nn as nn

# akg: B = 8; D = 256


class GatedResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x):
        residual = x
        h = self.fc(x)
        g = self.gate(x)
        # akg: h: f32[B, D]; g: f32[B, D]; residual: f32[B, D]
        h = h * torch.sigmoid(g)
        h = h + residual
        h = torch.clamp(h, -3.0, 3.0)
        return h * 0.5


if __name__ == "__main__":
    print(GatedResidual(256)(torch.randn(8, 256)).shape)
