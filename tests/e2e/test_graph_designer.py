"""The built-in Designer designs from the probe's op graph, not from forward's spelling.

Five spellings of Linear(64, 32) then ReLU (modules, torch.nn.functional, `x @ w.t() + b`,
addmm with a clamp, einsum) give one graph and so one sketch, byte for byte; every reference in
tests/families/graph/refs gets a verified kernel from the real akg_cli, harness and g++; an
operation the graph Designer cannot design is refused with a message that names it and its
line. Needs the probe's `graph` (backends/harness/akg_harness/trace.py)."""
import json
import os
import unittest

from akgtest import SOURCE, CliTest

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
DESIGNS = SPELLINGS + ["linear3d_gelu", "linear_scale", "broadcast_mul_add",
                       "linear_nobias"] + REDUCTIONS + ELEMENTWISE + STAGES + RESIDUALS
TRACER = os.path.join(SOURCE, "backends", "harness", "akg_harness", "trace.py")


def ref(name: str) -> str:
    return os.path.join(GRAPH_REFS, name + ".py")


@unittest.skipUnless(os.path.exists(TRACER),
                     "the harness's probe traces no op graph yet (akg_harness/trace.py)")
class GraphDesignerTest(CliTest):
    def sketch_of(self, name: str) -> str:
        p, report = self.op(ref(name), "--workflow", "design_only", name=name)
        self.assertEqual(p.returncode, 0, "%s: %s" % (name, (p.stderr or "")[-2000:]))
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            return f.read()

    def test_five_spellings_one_sketch(self) -> None:
        sketches = {name: self.sketch_of(name) for name in SPELLINGS}
        first = sketches[SPELLINGS[0]]
        self.assertIn("gemm(", first)
        self.assertIn("weight(\"fc.weight\"", first)
        self.assertIn("relu(", first)
        for name in SPELLINGS[1:]:
            self.assertEqual(sketches[name], first, "%s designs another sketch" % name)

    def test_each_reference_verifies(self) -> None:
        for name in DESIGNS:
            with self.subTest(ref=name):
                # the first verified kernel: what is checked is the design, not a faster one
                p, report = self.op(ref(name), "--trials", "2", "--min-speedup", "0", name=name)
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

    def test_stages_in_one_kernel(self) -> None:
        sketch = self.sketch_of("stages_mlp")
        self.assertEqual(sketch.count("gemm("), 3)
        self.assertEqual(sketch.count("llm_hint=[\"slow\", \"temp_workspace\"]"), 2)
        self.assertIn("weight(\"mlp.4.weight\"", sketch)
        sketch = self.sketch_of("stages_linear_layernorm")
        self.assertIn("gemm(", sketch)
        self.assertIn("weight(\"ln.weight\"", sketch)

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
