"""An operation the graph Designer has no rule for (the refusal test)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x, grid):
        y = torch.relu(x)
        return F.grid_sample(y, grid, align_corners=False)


def get_inputs():
    return [torch.randn(2, 3, 8, 8), torch.rand(2, 4, 4, 2) * 2 - 1]


def get_init_inputs():
    return []
