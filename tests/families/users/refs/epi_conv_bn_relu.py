"""Conv2d (no bias), BatchNorm2d in eval mode, ReLU: the ResNet block's first half."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.3)
            self.bn.running_var.uniform_(0.5, 1.5)
        self.bn.eval()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(2, 16, 24, 24)]


def get_init_inputs():
    return [16, 32]
