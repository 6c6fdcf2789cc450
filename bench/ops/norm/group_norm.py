import torch
import torch.nn as nn

BATCH = 8
FEATURES = 64
GROUPS = 8
HEIGHT = 96
WIDTH = 96
EPS = 1e-5


class Model(nn.Module):
    """Group normalisation: channels split into groups, each group normalised over its channels and positions."""

    def __init__(self, num_features: int, num_groups: int, eps: float):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features, eps=eps)
        with torch.no_grad():
            channel = torch.arange(num_features, dtype=torch.float32)
            self.gn.weight.copy_(1.0 + 0.3 * torch.sin(channel))
            self.gn.bias.copy_(0.1 * torch.cos(channel))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES, HEIGHT, WIDTH) * 2]


def get_init_inputs():
    return [FEATURES, GROUPS, EPS]


def get_inputs_dyn_list():
    shapes = [(4, 64, 96, 96), (16, 64, 48, 80), (2, 64, 200, 150)]
    return [[torch.randn(*shape) * 2] for shape in shapes]
