import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
FEATURES = 64
HEIGHT = 96
WIDTH = 128
EPS = 1e-5


class Model(nn.Module):
    """2D batch normalisation in inference form: (x - running_mean) / sqrt(running_var + eps) * weight + bias."""

    def __init__(self, num_features: int, eps: float):
        super().__init__()
        self.eps = eps
        # Non-trivial statistics and affine parameters, so a kernel that ignores any of them is caught.
        channel = torch.arange(num_features, dtype=torch.float32)
        self.register_buffer("running_mean", 0.5 * torch.sin(channel))
        self.register_buffer("running_var", 0.5 + torch.cos(channel) ** 2)
        self.weight = nn.Parameter(1.0 + 0.25 * torch.cos(0.3 * channel))
        self.bias = nn.Parameter(0.1 * channel / num_features - 0.05)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=False, eps=self.eps)


def get_inputs():
    return [torch.randn(BATCH, FEATURES, HEIGHT, WIDTH) * 2 + 0.3]


def get_init_inputs():
    return [FEATURES, EPS]


def get_inputs_dyn_list():
    shapes = [(4, 64, 128, 128), (16, 64, 64, 96), (1, 64, 256, 255)]
    return [[torch.randn(*shape) * 2 + 0.3] for shape in shapes]
