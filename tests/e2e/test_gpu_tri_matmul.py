"""The built-in Designer's GPU design of a matrix product kept triangular (tril/triu of A @ B;
engine/providers/builtin/designer_gpu.c): the matmul design's grid of BM x BN output tiles, a tile
wholly outside the triangle stored as zeros without a product, the tiles the diagonal cuts masked
(where of rows against columns). The two operators of the suite (bench/ops/matmul), cut to 150 x 150
so that the 128-wide tiles leave one wholly outside the triangle and cut the diagonal twice, are
designed for cuda/triton_cuda and verified under Triton's interpreter."""
import unittest

from akgtest import InterpretedGpuTest


class GpuTriMatmulTest(InterpretedGpuTest):
    DESIGNS = {"lower_triangular": ("matmul", {"N": 150}, ()),
               "upper_triangular": ("matmul", {"N": 150}, ())}

    def design_and_verify(self, name, keep):
        sketch = self.gpu_design(name)
        # the GPU's design: tiles of C over the grid, tl.dot, the triangle a mask of the tile
        self.assertIn("on a GPU", sketch)
        self.assertIn("acc = gemm(ta, tb, acc)", sketch)
        self.assertIn("store(fill([BM, BN], 0.0) -> c[i:i+BM, j:j+BN])", sketch)
        self.assertIn("keep = %s(cols[None, :], rows[:, None])" % keep, sketch)

    def test_lower(self):
        self.design_and_verify("lower_triangular", "le")

    def test_upper(self):
        self.design_and_verify("upper_triangular", "ge")


if __name__ == "__main__":
    unittest.main()
