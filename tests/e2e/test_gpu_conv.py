"""The built-in Designer's GPU design of convolutions for cuda (engine/providers/builtin/
designer_gpu_conv.c): an implicit GEMM, one program per BW output columns of a row x BN output
channels of a group, K walked as BK input channels per tap with `gemm` into an f32 tile, zero
padding as the loads' bounds guards. Two operators of the suite (bench/ops/conv), cut to small
shapes, are designed for cuda/triton_cuda and verified under Triton's interpreter: conv2d_standard
(padding 1, a bias) and grouped_conv2d made strided and dilated (2 groups, stride 2, dilation 2).
Their sketches also lower to CUDA C, compiled by nvcc where one is installed.

The interpreter's time is the programs' (one per output row, batch element and group), so the
rows are cut to the fewest that still have a first and a last row reading the padding and one
between that does not; the columns, one program's, stay wider."""
import os
import unittest

from akgtest import InterpretedGpuTest, cut_reference


class GpuConvTest(InterpretedGpuTest):
    DESIGNS = {
        # kernel 3, padding 1: 3 rows
        "conv2d_standard": ("conv", {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20,
                                     "HEIGHT": 3, "WIDTH": 9}, ()),
        # stride 2, padding 2, dilation 2: 5 input rows give 3 output rows
        "grouped_conv2d": ("conv", {"BATCH": 1, "IN_CHANNELS": 8, "OUT_CHANNELS": 12, "GROUPS": 2,
                                    "HEIGHT": 5, "WIDTH": 11},
                           [("KERNEL_SIZE, 1, 1, 1, GROUPS, True",
                             "KERNEL_SIZE, 2, 2, 2, GROUPS, True")]),
    }

    def design_and_verify(self, name):
        sketch = self.gpu_design(name)
        # the GPU's design: an implicit GEMM over a grid of output tiles, not packed panels
        self.assertIn("acc = gemm(tw, tx, acc)", sketch)
        return sketch

    def test_standard(self):
        sketch = self.design_and_verify("conv2d_standard")
        self.assertIn("bias = weight(\"conv2d.bias\", [OC])", sketch)
        # 9 taps: the weight is first copied in tap-major order, and the product reads the copy
        self.assertIn("store(tp -> wp[kd, kh, kw, o, 0:ICG])", sketch)
        self.assertIn("load(wp[kd, kh, kw, g * OCG + oc:", sketch)
        # 20 output and 5 input channels: the 32-column steps
        self.assertIn("BW = tune(32, 64, 16)", sketch)
        self.lowers_to_cuda_c("conv2d_standard", sketch)

    def test_grouped_strided_dilated(self):
        sketch = self.design_and_verify("grouped_conv2d")
        self.assertIn("G = 2", sketch)
        self.assertIn(":2] -> tx)", sketch)  # the strided columns, a literal step
        self.lowers_to_cuda_c("grouped_conv2d", sketch)

    def test_tile_rule(self):
        """The suite's conv2d_standard channels (32 in, 64 out, unit stride) get 64 x 64 steps
        (measured on an H200: bench/results/2026-12-03-h200-conv-tiles.json); with stride 2
        (strided_conv2d's channels) the 32-column steps stay. Designed only: the probe runs."""
        for name, sizes, want in (
                ("conv2d_standard", {"BATCH": 1, "HEIGHT": 3, "WIDTH": 9},
                 ("BW = tune(64, 32, 16)", "BK = tune(64, 32, 16)")),
                ("strided_conv2d", {"BATCH": 1, "HEIGHT": 5, "WIDTH": 9},
                 ("BW = tune(32, 64, 16)", "BK = tune(32, 16, 64)"))):
            ref = cut_reference("conv", name, sizes, (), os.path.join(self.dir, "refs"))
            p, report = self.op(ref, "--backend", "cuda", "--dsl", "triton_cuda", "--workflow",
                                "design_only", name=name)
            self.assertIsNotNone(report, p.stderr[-2000:])
            with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
                sketch = f.read()
            for text in want:
                self.assertIn(text, sketch, name)


if __name__ == "__main__":
    unittest.main()
