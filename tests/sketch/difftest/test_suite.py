"""Tests of the suite differential test's shrinking (suite_cases.py) on its own: which extents the
groups of dimensions take under given constraints, and the outputs it compares with the reference.

    /usr/bin/python3 -m unittest discover -s tests/sketch/difftest -p "test_suite.py" -v
"""

from __future__ import annotations

import os
import sys
import unittest
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import torch

    import suite_cases as sc
    from akg_harness.sketch_bind import Binding, OutputBinding
except ImportError as exc:  # the harness's Python without torch: nothing to test here
    raise unittest.SkipTest(f"suite_cases needs PyTorch: {exc}")

Sizes = Dict[sc.Dim, int]


def shapes(args: List[torch.Tensor], sizes: Sizes) -> List[List[int]]:
    return sc.tensor_shapes(sc.materialise(args, sizes))


class ShrinkTest(unittest.TestCase):
    def test_groups_by_extent_largest_first(self) -> None:
        args = [torch.zeros(8, 4, 1), torch.zeros(4, 8)]
        self.assertEqual(sc.extent_groups(args), [(8, [(0, 0), (1, 1)]), (4, [(0, 1), (1, 0)])])

    def test_a_group_shrinks_jointly(self) -> None:
        args = [torch.zeros(64, 32), torch.zeros(32, 64)]

        def fits(s: Sizes) -> bool:  # a matmul: the inner dimensions agree
            return s[(0, 1)] == s[(1, 0)]

        tiny = sc.shrink_sizes(args, fits)
        self.assertEqual(shapes(args, tiny), [[1, 1], [1, 1]])

    def test_a_group_that_cannot_shrink_jointly_splits(self) -> None:
        # depthwise: channels (64) tied to the weights, height and width (also 64) free
        args = [torch.zeros(2, 64, 64, 64)]

        def fits(s: Sizes) -> bool:
            return s[(0, 1)] == 64 and s[(0, 2)] >= 3

        tiny = sc.shrink_sizes(args, fits)
        self.assertEqual(shapes(args, tiny), [[1, 64, 3, 1]])

    def test_ragged_widens_the_last_two_axes(self) -> None:
        args = [torch.zeros(4, 512, 256)]
        tiny = sc.shrink_sizes(args, lambda s: True)
        ragged = sc.widen_sizes(args, tiny, lambda s: True)
        self.assertEqual(shapes(args, ragged), [[1, 13, 37]])
        # past the element cap the last axis takes 13 too
        narrow = sc.widen_sizes(args, tiny, lambda s: True, sc.RAGGED_EXTENTS)
        self.assertEqual(shapes(args, narrow), [[1, 13, 13]])

    def test_widening_goes_round_until_class_indices_fit(self) -> None:
        # cross entropy: logits [N, C], targets [N] with indices up to 15: N > 1 needs all 16 classes
        args = [torch.zeros(1000, 16), torch.zeros(1000, dtype=torch.int64)]

        def fits(s: Sizes) -> bool:
            return s[(0, 0)] == s[(1, 0)] and (s[(0, 0)] == 1 or s[(0, 1)] == 16)

        tiny = sc.shrink_sizes(args, fits)
        self.assertEqual(shapes(args, tiny), [[1, 1], [1]])
        ragged = sc.widen_sizes(args, tiny, fits)
        self.assertEqual(shapes(args, ragged), [[37, 16], [37]])

    def test_materialise_slices_and_copies(self) -> None:
        x = torch.arange(24.0).reshape(4, 6)
        out = sc.materialise([x, 3], {(0, 0): 2, (0, 1): 3})
        self.assertEqual(out[0].tolist(), [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]])
        self.assertEqual(out[1], 3)
        out[0][0, 0] = 99.0
        self.assertEqual(float(x[0, 0]), 0.0)


class OutputLeavesTest(unittest.TestCase):
    def test_scalar_outputs_stay_scalar(self) -> None:
        binding = Binding(tensors={"out": np.array([2.5], dtype=np.float32)},
                          outputs=[OutputBinding(0, "out", (), "f32")])
        leaf = sc.output_leaves(binding)[0]
        self.assertEqual(tuple(leaf.shape), ())
        self.assertEqual(float(leaf), 2.5)


if __name__ == "__main__":
    unittest.main()
