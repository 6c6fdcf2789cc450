import math

import torch

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_COEF = 0.044715

# akg: B = 16


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + GELU_COEF * x.pow(3))))


def fused_bias_gelu(x: "f32[B, 768]", bias: "f32[768]") -> torch.Tensor:
    return _gelu_tanh(x + bias)
