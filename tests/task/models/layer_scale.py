import torch
from torch import Tensor

try:
    from jaxtyping import Float
except ImportError:  # the annotations only document shapes

    class _Annotation:
        def __getitem__(self, item):
            return Tensor

    Float = _Annotation()

# akg: B = 4; T = 8


def layer_scale_residual(x: Float[Tensor, "B T 64"], y: Float[Tensor, "B T 64"],
                         gamma: Float[Tensor, "64"]) -> Float[Tensor, "B T 64"]:
    return x + gamma * y
