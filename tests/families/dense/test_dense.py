"""End-to-end tests of the matmul, conv and pool families: the real akg_cli designs, lowers,
builds, verifies and profiles a kernel for each small reference in refs/.

The job keeps its first verified kernel, timed briefly (--min-speedup 0 --profile-runs 5): what is
checked is the Designer's first design of each family and its verification, not whether a faster
design exists on this machine today (the search is e2e_SlowKernelTest's and the engine's routing
tests')."""

import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.environ.get("AKG_CLI", "akg_cli")


def run_op(ref: str, out_dir: str) -> dict:
    # --no-cache: with no AKG_STORE this is the caller's own store, which may already hold a
    # verified kernel of the reference; what is checked is a design made now
    proc = subprocess.run(
        [CLI, "op", "--quiet", "--json", "--no-cache", "--trials", "3", "--min-speedup", "0", "--profile-runs", "5",
         "--output", out_dir,
         os.path.join(HERE, "refs", ref + ".py")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("akg_cli gave no report (exit %d): %s" % (proc.returncode, proc.stderr[-2000:]))


class DenseFamiliesTest(unittest.TestCase):
    def check(self, ref: str, family: str, sketch_words: list) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            report = run_op(ref, out)
            self.assertEqual(report.get("status"), "pass", json.dumps(report.get("error"))[:2000])
            with open(os.path.join(out, "sketch.sketch")) as f:
                sketch = f.read()
            for word in sketch_words:
                self.assertIn(word, sketch)
            with open(os.path.join(out, "model_new.py")) as f:
                model_new = f.read()
            self.assertIn("_KERNEL(", model_new)
            self.assertGreater(report["perf"]["kernel_ms"], 0.0)

    def test_matmul_transposed_tril(self) -> None:
        self.check("matmul_t", "matmul", ["gemm(", "MR = tune(", "@llm_hint(\"parallel\""])

    def test_conv_grouped_strided_dilated(self) -> None:
        self.check("conv_grouped", "conv", ["gemm(", "KC = tune("])

    def test_conv_transpose(self) -> None:
        self.check("conv_transpose", "conv", ["trans_a=True"])

    def test_depthwise_then_pointwise(self) -> None:
        self.check("depthwise", "conv", ["depthwise", "gemm("])

    def test_depthwise_register_blocks_edges_and_strides(self) -> None:
        self.check("depthwise_rows", "conv", ["depthwise", "acc = add(acc, mul(t, wt))"])

    def test_matmul_triangle_over_row_blocks(self) -> None:
        self.check("matmul_triu_blocks", "matmul", ["gemm(", "MC = tune("])

    def test_conv_chain_same_then_reflect_padding(self) -> None:
        # the second layer reads the first one's output: x is reassigned between the calls
        self.check("conv_padded", "conv", ["gemm(", "t0 = alloc("])

    def test_conv3d_rows_in_place_and_packed(self) -> None:
        self.check("conv3d_rows", "conv", ["gemm(", "NR = tune("])

    def test_bmm_whole_batch_items_per_thread(self) -> None:
        self.check("bmm_batches", "matmul", ["gemm(", "for z in range(0, Z):"])

    def test_max_pool_ceil_dilated(self) -> None:
        self.check("maxpool", "pool", ["maximum(", "OWB = tune("])

    def test_avg_pool_without_padding_count(self) -> None:
        # count_include_pad=False: the design is specialised to it and divides by the window
        # clipped to the input
        self.check("avgpool", "pool", ["CIP = 0", "minimum(W0 + KW, IW) - maximum(W0, 0)"])


if __name__ == "__main__":
    unittest.main()
