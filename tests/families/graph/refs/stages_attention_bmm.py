"""Attention weights of a batch of sequences: softmax(q @ k^T / sqrt(d)) over the keys. A batched
GEMM stage (k read transposed while packing, the scale applied to each tile) writes the scores
into a temporary; a softmax stage normalises its rows."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k):
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        return scores.softmax(dim=-1)


def get_inputs():
    return [torch.randn(6, 70, 32), torch.randn(6, 90, 32)]


def get_inputs_dyn_list():
    return [[torch.randn(6, 70, 32), torch.randn(6, 90, 32)],
            [torch.randn(3, 17, 32), torch.randn(3, 33, 32)]]


def get_init_inputs():
    return []
