"""The built-in Designer's GPU design of scans for cuda (engine/providers/builtin/
rx_sketch_gpu_scan.c): contiguous rows one program per row, D in BLK-element chunks scanned in
the tile (cumsum / cumprod) with an f64 carry; strided scans CH columns of an outer row per
program, D in [BD, CH] chunks scanned along D with a carry per column. The six scans of the suite (bench/ops/scan), cut to small
shapes, are designed for cuda/triton_cuda and verified under Triton's interpreter; their sketches
also lower to CUDA C (compiled by nvcc where one is installed)."""
import unittest

from akgtest import InterpretedGpuTest


class GpuScanTest(InterpretedGpuTest):
    DESIGNS = {
        "cumsum": ("scan", {"BATCH": 9, "LENGTH": 40}, ()),
        # the interpreter scans a product (and an exclusive sum) element by element in Python,
        # BLK elements a row at a time: two rows cross the rows' offsets
        "cumprod": ("scan", {"BATCH": 2, "LENGTH": 33}, ()),
        # a row of two chunks (BLK is 1024): the carry between them; rows of two chunks are
        # masked_cumsum's too
        "exclusive_cumsum": ("scan", {"BATCH": 1, "LENGTH": 1100}, ()),
        "reverse_cumsum": ("scan", {"BATCH": 3, "LENGTH": 37}, ()),
        "masked_cumsum": ("scan", {"BATCH": 2, "LENGTH": 1500}, ()),
        # three chunks of BD = 32 rows (the last of 6), two programs of CH = 64 columns (the last
        # of 36)
        "cumsum_dim0": ("scan", {"LENGTH": 70, "COLS": 100}, ()),
    }

    def rows(self, name, scan):
        """A contiguous-rows scan: the tile scan `scan` (its call's text) in the sketch."""
        sketch = self.gpu_design(name)
        self.assertIn("for d in range(0, D, BLK):", sketch)
        self.assertIn(scan, sketch)
        self.assertIn("carry = fill([1]", sketch)
        self.assertIn("dtype=f64", sketch)
        self.assertNotIn("r3 = ", sketch)
        self.lowers_to_cuda_c(name, sketch, True)
        return sketch

    def test_cumsum(self):
        self.rows("cumsum", "cumsum(v, axis=0)")

    def test_cumprod(self):
        self.rows("cumprod", "cumprod(v, axis=0)")

    def test_exclusive_cumsum(self):
        self.rows("exclusive_cumsum", "cumsum(v, axis=0, exclusive=True)")

    def test_reverse_cumsum(self):
        self.rows("reverse_cumsum", "cumsum(v, axis=0, reverse=True)")

    def test_masked_cumsum(self):
        self.rows("masked_cumsum", "cumsum(v, axis=0)")

    def test_strided_columns(self):
        sketch = self.gpu_design("cumsum_dim0")
        self.assertIn("for c in range(0, I, CH):", sketch)
        self.assertIn("for d in range(0, D, BD):", sketch)
        self.assertIn("carry = fill([1, min(CH, I - c)], 0.0, dtype=f64)", sketch)
        self.assertIn("cumsum(v, axis=0)", sketch)
        self.lowers_to_cuda_c("cumsum_dim0", sketch, True)


if __name__ == "__main__":
    unittest.main()
