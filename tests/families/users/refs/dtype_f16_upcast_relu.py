"""ReLU of a float16 tensor computed in float32 and cast back: x.float().relu().half()."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.float().relu().half()


def get_inputs():
    return [torch.randn(256, 200).half()]


def get_init_inputs():
    return []
