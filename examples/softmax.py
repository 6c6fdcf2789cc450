"""An example reference operator in KernelBench form: softmax over the last dim.

    scripts/setup.sh run                      # builds akg and runs this file
    build/akg_cli op --backend cpu --dsl cpp examples/softmax.py

akg reads Model, get_inputs and get_init_inputs; get_inputs_dyn_list adds
shapes the kernel must also handle (sizes are run-time arguments)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = softmax(x, dim=-1) on rows of logits."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.softmax(logits, dim=-1)


def get_inputs():
    return [torch.randn(128, 2048) * 4]


def get_init_inputs():
    return []


def get_inputs_dyn_list():
    return [[torch.randn(rows, cols) * 4] for rows, cols in ((128, 2048), (8, 50257), (1024, 77))]
