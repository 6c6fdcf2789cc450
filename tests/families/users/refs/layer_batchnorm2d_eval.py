"""nn.BatchNorm2d in eval mode (running statistics) over 24 channels."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)
        self.bn.eval()

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(4, 24, 20, 20)]


def get_init_inputs():
    return [24]
