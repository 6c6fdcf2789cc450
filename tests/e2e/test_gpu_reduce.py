"""The built-in Designer's GPU design of strided reductions (I > 1; engine/providers/builtin/
rx_sketch_gpu.c): CH columns of an outer row per program, the D rows BD at a time, each step a
[BD, CH] tile reduced along axis 0 into per-column accumulators (an arg-extreme keeps the first
index of the extreme); with few column groups and long columns, the D rows in P parts and a
second launch combining them; a row map's strided branch (F.normalize over dim 0) takes its
statistics and maps in [BD, CH] tiles too. Operators of the suite (bench/ops), cut to shapes with
several BD-row blocks, a ragged last block and a ragged column group, are designed for
cuda/triton_cuda and verified under Triton's interpreter; their sketches also lower to CUDA C
(compiled by nvcc where one is installed)."""
import unittest

from akgtest import InterpretedGpuTest

# inputs of few distinct values: the maximum of a column ties across BD-row blocks
TIES = ("torch.randn(ROWS, COLS) * 4", "torch.randint(-3, 4, (ROWS, COLS)).float()")


class GpuReduceTest(InterpretedGpuTest):
    DESIGNS = {
        # three blocks of BD = 64 rows (the last of 2), two column groups (the last of 6)
        "mean_dim1": ("reduction", {"BATCH": 2, "DIM1": 130, "DIM2": 70}, ()),
        # two blocks of BD = 64 rows (the last of 6), one ragged column group: the interpreter
        # reduces an arg-extreme element by element in Python, a [BD, CH] tile at a time, so
        # its time is the tiles'; a second column group's offsets are mean_dim1's and l2_norm's,
        # the same [BD, CH] tiles of this branch
        "argmax_dim0": ("reduction", {"ROWS": 70, "COLS": 40}, (TIES,)),
        # F.normalize over dim 0 (three blocks of rows, two column groups)
        "l2_norm": ("norm", {"BATCH": 150, "DIM": 70}, (("dim=1, eps", "dim=0, eps"),)),
    }

    def design(self, name):
        """DESIGNS' NAME, designed for cuda/triton_cuda and verified under the interpreter; the
        sketch, with its strided branch in [BD, CH] tiles."""
        sketch = self.gpu_design(name, marker="designed for a GPU")
        self.assertIn("for c in range(0, I, CH):", sketch)
        self.assertIn("for r in range(0, D, BD):", sketch)
        self.assertIn("load(x[o, r:r + min(BD, D - r), c:c + min(CH, I - c)] -> t0)", sketch)
        return sketch

    def strided(self, name):
        """A strided reduction's design, verified under the interpreter: [BD, CH] tiles reduced
        along axis 0 (both strided branches are in every sketch; the shape picks the first, the
        suite's split variants run the second)."""
        sketch = self.design(name)
        self.assertIn("for r in range(lo, hi, BD):", sketch)
        self.assertIn("P, I], dtype=", sketch)
        self.lowers_to_cuda_c(name, sketch, True)
        return sketch

    def test_mean_over_dim1(self):
        sketch = self.strided("mean_dim1")
        self.assertIn("acc0 = add(acc0, reduce_sum(t0, axis=0))", sketch)

    def test_argmax_columns_first_index(self):
        # ties across blocks: the first index of the maximum, as torch.argmax
        sketch = self.strided("argmax_dim0")
        self.assertIn("ri = arange(r, r + min(BD, D - r))", sketch)
        self.assertIn("ri[:, None]", sketch)

    def test_row_map_over_dim0(self):
        # a row map's strided branch, the statistics and then the map in [BD, CH] tiles
        sketch = self.design("l2_norm")
        self.assertIn("store(mul(t0, rvf0) -> y[o, r:r + min(BD, D - r), c:c + min(CH, I - c)])",
                      sketch)
        self.lowers_to_cuda_c("l2_norm", sketch, True)


if __name__ == "__main__":
    unittest.main()
