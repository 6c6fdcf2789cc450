"""Conv2d with a bias, BatchNorm2d in eval mode and SiLU as modules: one kernel, BatchNorm
folded into a per-channel scale and shift on each output tile."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(12, 18, 3, padding=2, dilation=2)
        self.bn = nn.BatchNorm2d(18)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.3)
            self.bn.running_var.uniform_(0.5, 1.5)
        self.act = nn.SiLU()
        self.eval()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(2, 12, 20, 21)]


def get_init_inputs():
    return []
