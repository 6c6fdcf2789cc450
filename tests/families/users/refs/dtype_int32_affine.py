"""a + 3 * b on int32 tensors (integer arithmetic, int32 result)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a + 3 * b


def get_inputs():
    return [torch.randint(-1000, 1000, (200, 150), dtype=torch.int32),
            torch.randint(-1000, 1000, (200, 150), dtype=torch.int32)]


def get_init_inputs():
    return []
