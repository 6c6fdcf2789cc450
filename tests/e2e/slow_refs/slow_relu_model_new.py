"""A ReLU candidate for tests/fixtures/refs/relu.py that is right but always slower: the C kernel
of tests/fixtures/kernels/cbuild.py, after a 20 ms wait each call (an injected fault: every timing
of it loses to PyTorch)."""
import os
import sys
import time

import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "fixtures", "kernels"))
import cbuild  # noqa: E402


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        time.sleep(0.02)
        return cbuild.run("relu", x)
