"""nn.Embedding lookup of int64 token ids into a 1000 x 64 table."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.emb(ids)


def get_inputs():
    return [torch.randint(0, 1000, (8, 40))]


def get_init_inputs():
    return [1000, 64]
