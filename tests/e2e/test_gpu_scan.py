"""The built-in Designer's GPU design of scans for cuda (engine/providers/builtin/
rx_sketch_gpu_scan.c): contiguous rows one program per row, D in BLK-element chunks scanned in
the tile (cumsum / cumprod) with an f64 carry; strided scans CH columns of an outer row per
program, a running value per column. The six scans of the suite (bench/ops/scan), cut to small
shapes, are designed for cuda/triton_cuda and verified under Triton's interpreter; their sketches
also lower to CUDA C (compiled by nvcc where one is installed)."""
import unittest

from akgtest import InterpretedGpuTest


class GpuScanTest(InterpretedGpuTest):
    def rows(self, name, sizes, scan):
        """A contiguous-rows scan: the tile scan `scan` (its call's text) in the sketch."""
        sketch = self.gpu_design("scan", name, sizes)
        self.assertIn("for d in range(0, D, BLK):", sketch)
        self.assertIn(scan, sketch)
        self.assertIn("carry = fill([1]", sketch)
        self.assertIn("dtype=f64", sketch)
        self.assertNotIn("r3 = ", sketch)
        self.lowers_to_cuda_c(name, sketch, True)
        return sketch

    def test_cumsum(self):
        # LENGTH over two chunks of the smallest BLK would make the interpreter slow: one
        # chunk and a part here, the carry across chunks in test_masked_cumsum
        self.rows("cumsum", {"BATCH": 9, "LENGTH": 40}, "cumsum(v, axis=0)")

    def test_cumprod(self):
        self.rows("cumprod", {"BATCH": 5, "LENGTH": 33}, "cumprod(v, axis=0)")

    def test_exclusive_cumsum(self):
        self.rows("exclusive_cumsum", {"BATCH": 4, "LENGTH": 50},
                  "cumsum(v, axis=0, exclusive=True)")

    def test_reverse_cumsum(self):
        self.rows("reverse_cumsum", {"BATCH": 3, "LENGTH": 37}, "cumsum(v, axis=0, reverse=True)")

    def test_masked_cumsum(self):
        self.rows("masked_cumsum", {"BATCH": 2, "LENGTH": 45}, "cumsum(v, axis=0)")

    def test_strided_columns(self):
        sketch = self.gpu_design("scan", "cumsum_dim0", {"LENGTH": 24, "COLS": 300})
        self.assertIn("on a GPU", sketch)
        self.assertIn("for c in range(0, I, CH):", sketch)
        self.assertIn("run = alloc([min(CH, I - c)], dtype=f64", sketch)
        self.lowers_to_cuda_c("cumsum_dim0", sketch, False)


if __name__ == "__main__":
    unittest.main()
