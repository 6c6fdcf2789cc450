"""The built-in Designer's GPU designs of transposed and depthwise-separable convolutions for cuda
(engine/providers/builtin/designer_gpu_conv_transposed.c, designer_gpu_conv_separable.c).

A transposed layer is the gather form: one launch per phase of the output (its position modulo the
stride), each an implicit GEMM over the phase's outputs with the taps that reach it, the phase's
columns a strided store. A depthwise layer then a pointwise one are two launches through a scratch
tensor: the depthwise taps elementwise on [BC, BW] tiles, the pointwise product an implicit GEMM.
Operators of the suite (bench/ops/conv), cut to small shapes and some made harder (groups, a stride
of 3 with output padding; a strided, padded, dilated depthwise layer with biases), are designed for
cuda/triton_cuda and verified under Triton's interpreter; their sketches also lower to CUDA C,
compiled by nvcc where one is installed."""
import unittest

from akgtest import InterpretedGpuTest


class Designs(InterpretedGpuTest):
    def design_and_verify(self, name, sizes, replace=()):
        return self.gpu_design("conv", name, sizes, replace)


class GpuConvTransposedTest(Designs):
    def test_transposed_grouped_stride3(self):
        # kernel 4, stride 3, padding 1, output padding 2, 2 groups, a bias: 9 phases, some
        # reached by one tap per dim and some by two
        sketch = self.design_and_verify(
            "conv_transpose2d", {"BATCH": 2, "IN_CHANNELS": 6, "OUT_CHANNELS": 4, "STRIDE": 3,
                                 "HEIGHT": 5, "WIDTH": 7},
            replace=[("KERNEL_SIZE, STRIDE, PADDING, 0, 1, True",
                      "KERNEL_SIZE, STRIDE, PADDING, 2, 2, True")])
        self.assertEqual(sketch.count("# phase "), 9)
        self.assertIn("acc = gemm(tw, tx, acc, trans_a=True)", sketch)
        self.assertIn(":3])", sketch)  # the phase's columns, a strided store
        self.lowers_to_cuda_c("conv_transpose2d", sketch)

    def test_transposed_3d(self):
        sketch = self.design_and_verify(
            "conv_transpose3d", {"BATCH": 1, "IN_CHANNELS": 5, "OUT_CHANNELS": 3, "DEPTH": 3,
                                 "HEIGHT": 4, "WIDTH": 6})
        self.assertEqual(sketch.count("# phase "), 8)
        self.lowers_to_cuda_c("conv_transpose3d", sketch)


class GpuConvSeparableTest(Designs):
    def test_depthwise_separable(self):
        sketch = self.design_and_verify(
            "depthwise_separable_conv2d", {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20,
                                           "HEIGHT": 9, "WIDTH": 11},
            replace=[("KERNEL_SIZE, 1, 1, 1, False", "KERNEL_SIZE, 2, 2, 2, True")])
        self.assertIn("acc = add(acc, mul(tw, tx))", sketch)  # the depthwise taps
        self.assertIn("acc = gemm(tw, tx, acc)", sketch)  # the pointwise product
        self.assertIn(":2] -> tx)", sketch)  # the strided columns, a literal step
        self.assertIn("b0 = weight(\"depthwise.bias\", [C])", sketch)
        self.lowers_to_cuda_c("depthwise_separable_conv2d", sketch)


if __name__ == "__main__":
    unittest.main()
