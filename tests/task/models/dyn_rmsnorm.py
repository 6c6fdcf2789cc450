import torch

HIDDEN = 512


# akg: x: f32[M, HIDDEN]
# akg: weight: f32[HIDDEN]
# @hint: M in range(16, 65536)
def rms_norm(x, weight, eps: float = 1e-6):
    var = x.pow(2).mean(dim=-1, keepdim=True)
    return x * torch.rsqrt(var + eps) * weight
