"""akg_cli task: references constructed from selections in real-looking model files.

Each model of models/ is selected the way a user would (a class, a function, statements inside a
forward); the constructed reference must run under the harness's PyTorch and its Model must give
what the selected code gives on the same inputs (check_equal.py runs both in one process). Three of
them then go through `akg_cli op` to a verified CPU kernel. The failure cases check that what
cannot be known is named with its line and the comment that would fix it.
"""
import ast
import json
import os
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")

# name: (model file, selection, expected output over src/init/inputs)
#   selection: ("def", NAME) the class or function NAME; ("stmts", FIRST, LAST) the lines that
#   start with FIRST and LAST inside a forward.
CASES = {
    "mlp": ("mlp.py", ("def", "MLPBlock"), "src.MLPBlock(*init)(*inputs)"),
    "attention": ("attention.py", ("def", "SelfAttention"), "src.SelfAttention(*init)(*inputs)"),
    "conv_stem": ("conv_stem.py", ("def", "ConvStem"), "src.ConvStem(*init)(*inputs)"),
    "norm_act": ("norm_act.py", ("def", "NormAct"), "src.NormAct(*init)(*inputs)"),
    "loss": ("loss.py", ("def", "smooth_l1"), "src.smooth_l1(*inputs)"),
    "custom_fn": ("custom_fn.py", ("def", "fused_bias_gelu"), "src.fused_bias_gelu(*inputs)"),
    "dyn_rmsnorm": ("dyn_rmsnorm.py", ("def", "rms_norm"), "src.rms_norm(*inputs)"),
    "dyn_scale_shift": ("dyn_scale_shift.py", ("def", "scale_shift_relu"),
                        "src.scale_shift_relu(*inputs)"),
    "forward_stmts": ("forward_stmts.py", ("stmts", "scores =", "out ="),
                      "(lambda m, q, k, v: torch.matmul(torch.softmax(torch.matmul(q, "
                      "k.transpose(-2, -1)) * m.scale, dim=-1), v))(src.Attention(*init), *inputs)"),
    "residual_stmts": ("residual_stmts.py", ("stmts", "h = h * torch.sigmoid", "h = torch.clamp"),
                       "(lambda h, g, r: torch.clamp(h * torch.sigmoid(g) + r, -3.0, 3.0))(*inputs)"),
    "swiglu": ("swiglu.py", ("def", "SwiGLU"), "src.SwiGLU(*init)(*inputs)"),
    "residual_block": ("residual_block.py", ("def", "ResidualBlock"),
                       "src.ResidualBlock(*init)(*inputs)"),
    "variadic": ("variadic.py", ("def", "sum_of_sines"), "src.sum_of_sines(*inputs)"),
    "sample_call": ("variadic.py", ("def", "gated"), "src.gated(*inputs)"),
    "temperature_stmts": ("temperature_stmts.py", ("stmts", "logits =", "return probs"),
                          "(inputs[0] / 0.5).softmax(-1) if inputs[1] == 0.5 else None"),
    "layer_scale": ("layer_scale.py", ("def", "layer_scale_residual"),
                    "src.layer_scale_residual(*inputs)"),
    "label_smoothing": ("label_smoothing.py", ("def", "LabelSmoothingLoss"),
                        "src.LabelSmoothingLoss(*init)(*inputs)"),
    "user_module": ("user_module.py", ("stmts", "h = x * self.scale", "h = torch.relu(h)"),
                    "(lambda m, x: torch.relu(x * m.scale) + 1.0)(src.GatedBlock(*init), *inputs)"),
}

# the references that go on through akg_cli op to a verified CPU kernel
VERIFIED = ["custom_fn", "dyn_scale_shift", "residual_stmts", "norm_act"]


def selection(path: str, sel) -> str:
    with open(path) as f:
        text = f.read()
    if sel[0] == "def":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == sel[1]:
                return "%d:%d" % (node.lineno, node.end_lineno)
        raise AssertionError("no %s in %s" % (sel[1], path))
    lines = [line.strip() for line in text.splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith(sel[1])) + 1
    last = next(i for i, line in enumerate(lines) if line.startswith(sel[2])) + 1
    return "%d:%d" % (first, last)


class TaskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="akg-task-")
        cls.dir = cls.tmp.name
        cls.env = dict(os.environ, AKG_STORE=os.path.join(cls.dir, "akg.db"), AKG_PYTHON=PYTHON,
                       AKG_HOME=SOURCE)
        cls.built = {}
        for name, (model, sel, _) in CASES.items():
            out = os.path.join(cls.dir, name + ".py")
            cls.built[name] = (cls.task(os.path.join(MODELS, model), sel, out), out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def task(cls, path, sel, out=None, check=False):
        """akg_cli task; the harness's run of each reference is left to check_equal.py (one
        process for all of them) unless check."""
        args = [CLI, "task", path, "--select", sel if isinstance(sel, str) else selection(path, sel)]
        args += ["--output", out] if out else ["--no-save"]
        args += [] if check else ["--no-check"]
        return subprocess.run(args, cwd=cls.dir, env=cls.env, capture_output=True, text=True,
                              timeout=60)

    def test_constructed_references_match_the_selected_code(self):
        for name, (p, out) in self.built.items():
            self.assertEqual(p.returncode, 0, "%s: %s" % (name, p.stderr))
            with open(out) as f:
                ref = f.read()
            self.assertEqual(p.stdout, ref, name)
            for needed in ("class Model(", "def get_inputs()", "def get_init_inputs()"):
                self.assertIn(needed, ref, name)
        cases = [{"name": n, "model": os.path.join(MODELS, CASES[n][0]),
                  "reference": self.built[n][1], "expected": CASES[n][2]} for n in CASES]
        p = subprocess.run([PYTHON, os.path.join(HERE, "check_equal.py"), json.dumps(cases)],
                           capture_output=True, text=True, timeout=600, cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        results = json.loads(p.stdout)
        failed = {n: r["detail"] for n, r in results.items() if not r["ok"]}
        self.assertEqual(failed, {})
        self.assertEqual(len(results), len(CASES))

    def test_hints_give_dynamic_cases(self):
        with open(self.built["dyn_rmsnorm"][1]) as f:
            ref = f.read()
        self.assertIn("def get_inputs_dyn_list()", ref)
        self.assertIn("M=16", ref)  # the range's lower bound is a case
        with open(self.built["dyn_scale_shift"][1]) as f:
            ref = f.read()
        self.assertIn("N=64", ref)
        self.assertIn("N=2048", ref)  # pow2 cases, capped
        self.assertIn("B=3", ref)
        with open(self.built["mlp"][1]) as f:
            self.assertNotIn("get_inputs_dyn_list", f.read())

    def test_what_the_reference_brings_along(self):
        with open(self.built["custom_fn"][1]) as f:
            ref = f.read()
        for needed in ("def _gelu_tanh", "SQRT_2_OVER_PI =", "GELU_COEF =", "import math"):
            self.assertIn(needed, ref)
        with open(self.built["residual_block"][1]) as f:
            ref = f.read()
        self.assertIn("def conv3x3", ref)
        self.assertIn("return [16]", ref)  # ResidualBlock(channels) with channels = 16 before it
        self.assertNotIn("def main", ref)
        with open(self.built["attention"][1]) as f:
            ref = f.read()
        self.assertIn("return [DIM, HEADS]", ref)  # SelfAttention(DIM, HEADS) inside Layer
        self.assertNotIn("class Layer", ref)
        with open(self.built["layer_scale"][1]) as f:
            ref = f.read()
        self.assertIn("from jaxtyping import Float", ref)  # the try: that binds Float
        self.assertIn("torch.randn((B, T, 64), dtype=torch.float32)", ref)
        with open(self.built["sample_call"][1]) as f:
            ref = f.read()
        self.assertIn("def forward(self, a, b):", ref)  # scale keeps its default
        self.assertIn("torch.randn(4, 8), torch.rand(4, 8)", ref)

    def test_default_output_is_saved_beside_the_model(self):
        work = os.path.join(self.dir, "saved")
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "mlp.py")
        with open(os.path.join(MODELS, "mlp.py")) as src, open(model, "w") as dst:
            dst.write(src.read())
        p = subprocess.run([CLI, "task", model, "--select", "8"], cwd=self.dir, env=self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(work, ".akg", "tasks", "MLPBlock.py")))

    def test_the_reference_is_run_once_before_it_is_saved(self):
        """A shape comment that does not fit the weight constructs but fails when run: the error
        names the user's line, the code there, the comment the shapes came from and --no-check."""
        path = os.path.join(MODELS, "misfit_shape.py")
        out = os.path.join(self.dir, "misfit.py")
        p = self.task(path, ("def", "Proj"), out, check=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertFalse(os.path.exists(out))
        self.assertIn("misfit_shape.py:13: the reference built from lines 6-14 fails when it runs",
                      p.stderr)
        self.assertIn("at `y = x @ self.w`", p.stderr)
        self.assertIn("from line 12 (`# akg: x: f32[B, 32]; B = 8`)", p.stderr)
        self.assertIn("--no-check", p.stderr)
        p = self.task(path, ("def", "Proj"), out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(out))
        out = os.path.join(self.dir, "checked.py")
        p = self.task(os.path.join(MODELS, "user_module.py"), ("def", "GatedBlock"), out, check=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("class Model(nn.Module):", p.stdout)
        self.assertTrue(os.path.exists(out))

    def test_unknown_shape_names_the_variable_line_and_comment(self):
        path = os.path.join(MODELS, "unknown_shape.py")
        p = self.task(path, ("def", "Scale"))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("`x`", p.stderr)
        self.assertIn("line 10", p.stderr)
        self.assertIn("# akg: x: f32[", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_unknown_local_shape_in_forward_statements(self):
        path = os.path.join(MODELS, "forward_stmts.py")
        p = self.task(path, ("stmts", "probs =", "probs ="))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("forward_stmts.py:20: cannot know the shape of `scores`", p.stderr)
        self.assertIn("# akg: scores: f32[", p.stderr)

    def test_unknown_symbol_names_the_symbol(self):
        path = os.path.join(self.dir, "nosym.py")
        with open(path, "w") as f:
            f.write("import torch\n\n\n# akg: x: f32[Q, 8]\ndef f(x):\n    return x.exp()\n")
        p = self.task(path, "5")
        self.assertEqual(p.returncode, 1)
        self.assertIn("`Q`", p.stderr)
        self.assertIn("# akg: Q = ", p.stderr)

    def test_selection_that_is_not_model_code(self):
        path = os.path.join(MODELS, "unknown_shape.py")
        p = self.task(path, "1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("an import, which is not code of a model", p.stderr)
        p = self.task(path, ("def", "Config"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("class Config is not an nn.Module subclass", p.stderr)
        p = self.task(path, "8:8")
        self.assertEqual(p.returncode, 1)
        self.assertIn("inside Scale.__init__, not forward", p.stderr)
        p = self.task(os.path.join(MODELS, "residual_block.py"), ("def", "main"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("function main takes no inputs", p.stderr)
        p = self.task(path, "3:2")
        self.assertEqual(p.returncode, 2)

    def test_no_memory_errors_or_leaks(self):
        """The constructor under valgrind, on selections of each kind and on failures."""
        if not shutil.which("valgrind"):
            self.skipTest("valgrind is not installed")
        for model, sel in (("attention.py", ("def", "SelfAttention")),
                           ("forward_stmts.py", ("stmts", "scores =", "out =")),
                           ("dyn_scale_shift.py", ("def", "scale_shift_relu")),
                           ("variadic.py", ("def", "sum_of_sines")),
                           ("unknown_shape.py", ("def", "Scale")),
                           ("unknown_shape.py", "1")):
            path = os.path.join(MODELS, model)
            p = subprocess.run(["valgrind", "-q", "--leak-check=full", "--error-exitcode=9", CLI,
                                "task", path, "--no-save", "--no-check", "--select",
                                sel if isinstance(sel, str) else selection(path, sel)],
                               capture_output=True, text=True, timeout=120)
            self.assertIn(p.returncode, (0, 1), "%s: %s" % (model, p.stderr[-3000:]))

    def test_model_new_carries_what_the_constructor_builds(self):
        """GatedBlock.__init__ builds LeakyClip, a class of its file whose default reads module
        constants: model_new.py must bring them along (it was a NameError) and, loaded beside the
        reference, give Model's output."""
        out = os.path.join(self.dir, "run-user_module")
        p = subprocess.run([CLI, "op", "--json", "--output", out, "--trials", "1",
                            "--min-speedup", "0", "--profile-runs", "1",
                            self.built["user_module"][1]],
                           cwd=self.dir, env=self.env, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(os.path.join(out, "model_new.py")) as f:
            new = f.read()
        self.assertIn("class LeakyClip(nn.Module):", new)
        self.assertNotIn("def _clip", new)  # only LeakyClip.forward reads it
        run = ("import importlib.util, sys, torch\n"
               "def load(path, name):\n"
               "    spec = importlib.util.spec_from_file_location(name, path)\n"
               "    mod = importlib.util.module_from_spec(spec)\n"
               "    spec.loader.exec_module(mod)\n"
               "    return mod\n"
               "ref, new = load(sys.argv[1], 'ref'), load(sys.argv[2], 'model_new')\n"
               "torch.manual_seed(3)\n"
               "model = ref.Model(*ref.get_init_inputs())\n"
               "torch.manual_seed(3)\n"
               "kernel = new.ModelNew(*ref.get_init_inputs())\n"
               "assert isinstance(kernel.act, new.LeakyClip), kernel.act\n"
               "x = ref.get_inputs()\n"
               "a, b = model(*x), kernel(*x)\n"
               "assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a - b).abs().max()\n"
               "print('equal', tuple(a.shape))\n")
        p = subprocess.run([PYTHON, "-c", run, self.built["user_module"][1],
                            os.path.join(out, "model_new.py")],
                           cwd=self.dir, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("equal (16, 64)", p.stdout)

    def test_three_references_give_verified_cpu_kernels(self):
        for name in VERIFIED:
            with self.subTest(name=name):
                out = os.path.join(self.dir, "run-" + name)
                p = subprocess.run([CLI, "op", "--json", "--output", out, "--trials", "2",
                                    "--min-speedup", "0", "--profile-runs", "5",
                                    self.built[name][1]],
                                   cwd=self.dir, env=self.env, capture_output=True, text=True,
                                   timeout=600)
                report_path = os.path.join(out, "report.json")
                self.assertTrue(os.path.exists(report_path), p.stderr[-3000:])
                with open(report_path) as f:
                    report = json.load(f)
                self.assertEqual(report.get("status"), "pass", p.stderr[-3000:])
                self.assertEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main()
