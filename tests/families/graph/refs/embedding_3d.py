"""nn.Embedding(500, 48) looked up by a [4, 6, 5] tensor of token ids."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(500, 48)

    def forward(self, ids):
        return self.table(ids)


def get_inputs():
    return [torch.randint(0, 500, (4, 6, 5))]


def get_init_inputs():
    return []
