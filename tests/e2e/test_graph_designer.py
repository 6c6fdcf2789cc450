"""The built-in Designer designs from the probe's op graph, not from forward's spelling.

Five spellings of Linear(64, 32) then ReLU (modules, torch.nn.functional, `x @ w.t() + b`,
addmm with a clamp, einsum) give one graph and so one sketch, byte for byte; every reference in
tests/families/graph/refs gets a verified kernel from the real akg_cli, harness and g++; an
operation the graph Designer cannot design is refused with a message that names it and its
line. Needs the probe's `graph` (backends/harness/akg_harness/trace.py).

Each reference runs through akg_cli once: the sketch tests read the sketch.sketch of the verified
run (the design_only run would write the same first design), and the job keeps its first verified
kernel with a brief profile (--min-speedup 0 --profile-runs 5): what is checked is the design and
its verification, never a speed. AKG_GRAPH_GROUPS picks groups (gemm, reduce, views; default all),
so that CTest runs the GEMM group and the other two as two tests side by side."""
import json
import os
import subprocess
import tempfile
import unittest

from akgtest import CLI, PYTHON, SOURCE

GRAPH_REFS = os.path.join(SOURCE, "tests", "families", "graph", "refs")
SPELLINGS = ["linear_relu_modules", "linear_relu_functional", "linear_relu_matmul",
             "linear_relu_addmm", "linear_relu_einsum"]
# reductions, norms and softmax read from the graph (designer_graph_reduce.c)
REDUCTIONS = ["layernorm_manual", "rmsnorm_manual", "abs_max", "logsumexp_dim1", "var_last",
              "sum_dims_0_2", "where_mean", "softmax_manual", "amax_minus",
              "reduce_view_mean", "reduce_pool_flatten", "reduce_f64_sum_dims", "reduce_f64_var",
              "reduce_lse_dim0", "reduce_range_dims", "reduce_prod_cols", "reduce_mean_max_tuple"]
# views read as index maps (slices and selects in place; reshapes of inputs that merge or
# split dims: the tensor declared in the reshaped shape), dtypes as PyTorch computes them,
# several outputs, remainders, an embedding's gather and a batched product of a transposed
# view (designer_graph_ew.c, designer_graph_gather.c)
ELEMENTWISE = ["permute_add", "unsqueeze_outer_bias", "bf16_silu_scale", "f16_upcast_gelu",
               "int32_mod", "remainder_negative", "tuple_three", "embedding_3d",
               "bmm_transposed_weight", "flatten_scale_bias", "reshape_split_scale",
               "glu_chunk", "select_stride", "flatten_after_relu"]
# several stages in one kernel, each a temporary the next reads (designer_graph_stages.c)
STAGES = ["stages_mlp", "stages_linear_layernorm", "stages_attention_bmm"]
# a GEMM whose epilogue reads a tensor of the product's shape (a residual) tile by tile
RESIDUALS = ["linear_residual_3d"]
GROUPS = {
    "gemm": SPELLINGS + ["linear3d_gelu", "linear_scale", "broadcast_mul_add",
                         "linear_nobias"] + STAGES + RESIDUALS,
    "reduce": REDUCTIONS,
    "views": ELEMENTWISE,
}
DESIGNS = [name for group in GROUPS.values() for name in group]
SELECTED = [g for g in os.environ.get("AKG_GRAPH_GROUPS", ",".join(GROUPS)).split(",") if g]
TRACER = os.path.join(SOURCE, "backends", "harness", "akg_harness", "trace.py")
# the first verified kernel, timed briefly: the design is checked, not its speed
VERIFY_FLAGS = ["--trials", "2", "--min-speedup", "0", "--profile-runs", "5"]


def ref(name: str) -> str:
    return os.path.join(GRAPH_REFS, name + ".py")


def needs(group: str):
    return unittest.skipUnless(group in SELECTED, "AKG_GRAPH_GROUPS=%s leaves out %s" % (
        ",".join(SELECTED), group))


@unittest.skipUnless(os.path.exists(TRACER),
                     "the harness's probe traces no op graph yet (akg_harness/trace.py)")
class GraphDesignerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        unknown = [g for g in SELECTED if g not in GROUPS]
        if unknown:
            raise ValueError("AKG_GRAPH_GROUPS: unknown group %s (groups: %s)" % (
                ",".join(unknown), ",".join(GROUPS)))
        cls.tmp = tempfile.TemporaryDirectory(prefix="akg-e2e-graph-")
        cls.dir = cls.tmp.name
        cls.env = dict(os.environ, AKG_STORE=os.path.join(cls.dir, "akg.db"),
                       AKG_PYTHON=PYTHON, AKG_HOME=SOURCE)
        cls.runs = {}

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def op(self, path: str, *extra: str, name: str):
        """`akg_cli op --json` in the class's folder: (process, report or None)."""
        out = os.path.join(self.dir, name)
        p = subprocess.run([CLI, "op", "--json", "--output", out, *extra, path], cwd=self.dir,
                           env=self.env, capture_output=True, text=True, timeout=300)
        report = None
        if os.path.exists(os.path.join(out, "report.json")):
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
        return p, report

    def verified(self, name: str):
        """The reference's one run to a verified kernel, shared by every test that reads it."""
        if name not in self.runs:
            self.runs[name] = self.op(ref(name), *VERIFY_FLAGS, name=name)
        return self.runs[name]

    def sketch_of(self, name: str) -> str:
        p, report = self.verified(name)
        self.assertEqual(p.returncode, 0, "%s: %s" % (name, (p.stderr or "")[-2000:]))
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            return f.read()

    @needs("gemm")
    def test_five_spellings_one_sketch(self) -> None:
        sketches = {name: self.sketch_of(name) for name in SPELLINGS}
        first = sketches[SPELLINGS[0]]
        self.assertIn("gemm(", first)
        self.assertIn("weight(\"fc.weight\"", first)
        self.assertIn("relu(", first)
        for name in SPELLINGS[1:]:
            self.assertEqual(sketches[name], first, "%s designs another sketch" % name)

    def test_each_reference_verifies(self) -> None:
        for name in [n for g in SELECTED for n in GROUPS.get(g, [])]:
            with self.subTest(ref=name):
                # the first verified kernel: what is checked is the design, not a faster one
                p, report = self.verified(name)
                self.assertIsNotNone(report, "%s: no report: %s" % (name, p.stderr[-2000:]))
                self.assertEqual(report.get("status"), "pass",
                                 "%s: %s" % (name, json.dumps(report.get("error"))[:2000]))
                # --min-speedup 0: the job ends with its first verified kernel, however slow
                steps = [c.get("status") for c in report.get("candidates", [])]
                self.assertEqual(steps[-1:], ["pass"], "%s: %s" % (name, steps))
                self.assertEqual(steps.count("pass"), 1, "%s: %s" % (name, steps))
                if name in SPELLINGS:
                    perf = report.get("perf") or {}
                    print("%s: kernel %.4f ms, PyTorch %.4f ms" % (
                        name, perf.get("kernel_ms", 0.0), perf.get("ref_ms", 0.0)))

    @needs("gemm")
    def test_stages_in_one_kernel(self) -> None:
        sketch = self.sketch_of("stages_mlp")
        self.assertEqual(sketch.count("gemm("), 3)
        self.assertEqual(sketch.count("llm_hint=[\"slow\", \"temp_workspace\"]"), 2)
        self.assertIn("weight(\"mlp.4.weight\"", sketch)
        sketch = self.sketch_of("stages_linear_layernorm")
        self.assertIn("gemm(", sketch)
        self.assertIn("weight(\"ln.weight\"", sketch)

    @needs("gemm")
    def test_refusal_names_the_operation_and_line(self) -> None:
        p, report = self.op(ref("grid_sample"), "--workflow", "design_only", name="grid")
        self.assertNotEqual(p.returncode, 0)
        detail = report["error"]["detail"] if report else p.stderr
        self.assertIn("grid_sampler", detail)
        self.assertIn("grid_sample.py:10", detail)
        self.assertIn("--workflow verifier_only", detail)
        self.assertNotIn("openai", detail.lower())


if __name__ == "__main__":
    unittest.main()
