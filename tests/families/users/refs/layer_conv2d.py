"""A 3x3 same-padded nn.Conv2d from 8 to 16 channels on 30x30 images."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin=8, cout=16):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)

    def forward(self, img):
        return self.conv(img)


def get_inputs():
    return [torch.randn(2, 8, 30, 30)]


def get_init_inputs():
    return [8, 16]
