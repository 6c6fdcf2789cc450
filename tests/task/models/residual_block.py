import torch
import torch.nn as nn


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


def norm(c):
    return nn.GroupNorm(4, c)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = conv3x3(channels, channels)
        self.n1 = norm(channels)
        self.conv2 = conv3x3(channels, channels)
        self.n2 = norm(channels)

    def forward(self, x):
        h = torch.relu(self.n1(self.conv1(x)))
        h = self.n2(self.conv2(h))
        return torch.relu(h + x)


def main():
    channels = 16
    block = ResidualBlock(channels)
    x = torch.randn(2, channels, 8, 8)
    print(block(x).mean())


if __name__ == "__main__":
    main()
