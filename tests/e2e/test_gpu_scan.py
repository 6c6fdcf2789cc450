"""The built-in Designer's GPU design of scans for cuda (engine/providers/builtin/
rx_sketch_gpu_scan.c): D streamed with a vector of f64 running values, RB rows per program for
contiguous rows and CH columns of an outer row per program for strided ones. Two operators of
the suite (bench/ops/scan), cut to small shapes, are designed for cuda/triton_cuda and verified
under Triton's interpreter: cumsum (the contiguous rows) and cumsum_dim0 (the strided columns).
Their sketches also lower to CUDA C (cumsum's compiled by nvcc where one is installed)."""
import unittest

from akgtest import InterpretedGpuTest


class GpuScanTest(InterpretedGpuTest):
    def design_and_verify(self, name, sizes):
        return self.gpu_design("scan", name, sizes)

    def test_contiguous_rows(self):
        sketch = self.design_and_verify("cumsum", {"BATCH": 9, "LENGTH": 40})
        # the GPU's design: rows as a vector of running values, not four scalar rows per task
        self.assertIn("on a GPU", sketch)
        self.assertIn("for o in range(0, O, RB):", sketch)
        self.assertIn("dtype=f64", sketch)
        self.assertIn("grididx", sketch)
        self.assertNotIn("r3 = ", sketch)
        self.lowers_to_cuda_c("cumsum", sketch, True)

    def test_strided_columns(self):
        sketch = self.design_and_verify("cumsum_dim0", {"LENGTH": 24, "COLS": 300})
        self.assertIn("on a GPU", sketch)
        self.assertIn("for c in range(0, I, CH):", sketch)
        self.assertIn("run = alloc([min(CH, I - c)], dtype=f64", sketch)
        self.lowers_to_cuda_c("cumsum_dim0", sketch, False)


if __name__ == "__main__":
    unittest.main()
