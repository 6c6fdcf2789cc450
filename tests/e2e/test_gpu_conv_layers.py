"""The built-in Designer's GPU designs of transposed and depthwise-separable convolutions for cuda
(engine/providers/builtin/designer_gpu_conv_transposed.c, designer_gpu_conv_separable.c).

A transposed layer is the gather form: one launch per phase of the output (its position modulo the
stride), each an implicit GEMM over the phase's outputs with the taps that reach it, the phase's
columns a strided store. A depthwise layer then a pointwise one are two launches through a scratch
tensor: the depthwise taps elementwise on [BC, BW] tiles, the pointwise product an implicit GEMM.
Operators of the suite (bench/ops/conv), cut to small shapes and some made harder (groups, a stride
of 3 with output padding; a strided, padded, dilated depthwise layer with biases), are designed for
cuda/triton_cuda and verified under Triton's interpreter; their sketches also lower to CUDA C,
compiled by nvcc where one is installed.

The interpreter's time is the programs' (one per output row of a phase, batch element and group;
the columns are one program's), so the rows (and planes) are cut to the fewest that keep every
edge: in each dim, the two-tap phases keep a position with both taps in bounds and one with a tap
past the last input, as larger inputs did (conv_transpose3d's rows the second only), and the
strided depthwise layer a first and a last row reading the padding with one between that does
not."""
import unittest

from akgtest import InterpretedGpuTest


class GpuConvTransposedTest(InterpretedGpuTest):
    DESIGNS = {
        # kernel 4, stride 3, padding 1, output padding 2, 2 groups, a bias: 9 phases, some
        # reached by one tap per dim and some by two; 2 input rows give 7 output rows, two or
        # more in each phase of the rows
        "conv_transpose2d": ("conv", {"BATCH": 2, "IN_CHANNELS": 6, "OUT_CHANNELS": 4,
                                      "STRIDE": 3, "HEIGHT": 2, "WIDTH": 7},
                             [("KERNEL_SIZE, STRIDE, PADDING, 0, 1, True",
                               "KERNEL_SIZE, STRIDE, PADDING, 2, 2, True")]),
        # kernel 3, stride 2, padding 1, output padding 1: 8 phases; 2 input planes give 4 output
        # ones, two in each phase. One input row (2 output rows, one a phase) keeps the rows'
        # two-tap phase with a tap past the last input; its position with both taps in bounds is
        # the planes' and the columns' here and conv_transpose2d's for the rows, the same code
        # of the designer for each dim
        "conv_transpose3d": ("conv", {"BATCH": 1, "IN_CHANNELS": 5, "OUT_CHANNELS": 3, "DEPTH": 2,
                                      "HEIGHT": 1, "WIDTH": 6}, ()),
    }

    def test_transposed_grouped_stride3(self):
        sketch = self.gpu_design("conv_transpose2d")
        self.assertEqual(sketch.count("# phase "), 9)
        self.assertIn("acc = gemm(tw, tx, acc, trans_a=True)", sketch)
        self.assertIn(":3])", sketch)  # the phase's columns, a strided store
        self.lowers_to_cuda_c("conv_transpose2d", sketch)

    def test_transposed_3d(self):
        sketch = self.gpu_design("conv_transpose3d")
        self.assertEqual(sketch.count("# phase "), 8)
        self.lowers_to_cuda_c("conv_transpose3d", sketch)


class GpuConvSeparableTest(InterpretedGpuTest):
    DESIGNS = {
        # stride 2, padding 2, dilation 2, biases: 5 input rows give 3 output rows
        "depthwise_separable_conv2d": ("conv", {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20,
                                                "HEIGHT": 5, "WIDTH": 11},
                                       [("KERNEL_SIZE, 1, 1, 1, False",
                                         "KERNEL_SIZE, 2, 2, 2, True")]),
    }

    def test_depthwise_separable(self):
        sketch = self.gpu_design("depthwise_separable_conv2d")
        self.assertIn("acc = add(acc, mul(tw, tx))", sketch)  # the depthwise taps
        self.assertIn("acc = gemm(tw, tx, acc)", sketch)  # the pointwise product
        self.assertIn(":2] -> tx)", sketch)  # the strided columns, a literal step
        self.assertIn("b0 = weight(\"depthwise.bias\", [C])", sketch)
        self.lowers_to_cuda_c("depthwise_separable_conv2d", sketch)


if __name__ == "__main__":
    unittest.main()
