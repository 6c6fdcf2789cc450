"""Convolutions and pooling designed from the probe's op graph (designer_graph_conv.c).

F.conv1d/conv2d/conv_transpose2d on parameters, a depthwise convolution, nn.Conv2d with
BatchNorm2d in eval mode, and elementwise epilogues on each output tile (bias, per-channel
scale, relu, gelu, silu, hardswish); functional max and average pooling; adaptive average
pooling with even windows (a plain average pool) and uneven ones (PyTorch's start/end formula),
in 1-D and on an unbatched 3-D input. Each reference in tests/families/graph/refs named conv_*
or pool_* gets a verified kernel from the real akg_cli, harness and g++; the graph's conv
writes the same sketch as the spelling rule for the same nn.Conv2d; what the design cannot fuse
is refused with the op and its line.

Each reference of refs/ runs through akg_cli once: the epilogue test reads the sketch.sketch of the
verified run, and the job keeps its first verified kernel with a brief profile (--min-speedup 0
--profile-runs 5): what is checked is the design and its verification, never a speed (the search
for a faster design is e2e_SlowKernelTest's and the engine's routing tests')."""
import json
import os
import subprocess
import tempfile
import unittest

from akgtest import CLI, PYTHON, SOURCE, CliTest

GRAPH_REFS = os.path.join(SOURCE, "tests", "families", "graph", "refs")
TRACER = os.path.join(SOURCE, "backends", "harness", "akg_harness", "trace.py")
DESIGNS = sorted(f[:-3] for f in os.listdir(GRAPH_REFS)
                 if f.endswith(".py") and (f.startswith("conv_") or f.startswith("pool_")))


# the first verified kernel, timed briefly: the design is checked, not its speed
VERIFY_FLAGS = ["--trials", "2", "--min-speedup", "0", "--profile-runs", "5"]
# each reference's one verified run: name -> (process, report, run folder)
VERIFIED = {}


def ref(name: str) -> str:
    return os.path.join(GRAPH_REFS, name + ".py")


def setUpModule() -> None:
    global SHARED
    SHARED = tempfile.TemporaryDirectory(prefix="akg-e2e-conv-")


def tearDownModule() -> None:
    SHARED.cleanup()


def verified(name: str):
    """akg_cli op on refs/NAME.py to its first verified kernel, once for every test."""
    if name not in VERIFIED:
        out = os.path.join(SHARED.name, name)
        env = dict(os.environ, AKG_STORE=os.path.join(SHARED.name, "akg.db"), AKG_PYTHON=PYTHON,
                   AKG_HOME=SOURCE)
        p = subprocess.run([CLI, "op", "--json", "--output", out, *VERIFY_FLAGS, ref(name)],
                           cwd=SHARED.name, env=env, capture_output=True, text=True, timeout=300)
        report = None
        if os.path.exists(os.path.join(out, "report.json")):
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
        VERIFIED[name] = (p, report, out)
    return VERIFIED[name]


@unittest.skipUnless(os.path.exists(TRACER),
                     "the harness's probe traces no op graph yet (akg_harness/trace.py)")
class GraphConvTest(CliTest):
    def sketch_of(self, path: str, name: str) -> str:
        p, report = self.op(path, "--workflow", "design_only", name=name)
        self.assertEqual(p.returncode, 0, "%s: %s" % (name, (p.stderr or "")[-2000:]))
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            return f.read()

    def verified_sketch(self, name: str) -> str:
        p, report, out = verified(name)
        self.assertEqual(p.returncode, 0, "%s: %s" % (name, (p.stderr or "")[-2000:]))
        with open(os.path.join(out, "sketch.sketch")) as f:
            return f.read()

    def test_each_reference_verifies(self) -> None:
        self.assertGreaterEqual(len(DESIGNS), 9)
        for name in DESIGNS:
            with self.subTest(ref=name):
                p, report, _ = verified(name)
                self.assertIsNotNone(report, "%s: no report: %s" % (name, p.stderr[-2000:]))
                self.assertEqual(report.get("status"), "pass",
                                 "%s: %s" % (name, json.dumps(report.get("error"))[:2000]))
                perf = report.get("perf") or {}
                print("%s: kernel %.4f ms, PyTorch %.4f ms" % (
                    name, perf.get("kernel_ms", 0.0), perf.get("ref_ms", 0.0)))

    def test_epilogue_on_each_tile(self) -> None:
        s = self.verified_sketch("conv_bn_silu_modules")
        self.assertIn("bind: w0 = weight(\"conv.weight\"", s)
        self.assertIn("bind: v2 = weight(\"bn.running_mean\", [OC0])", s)
        self.assertIn("bn0 = div(vt0, sqrt(add(vt3, 1e-05)))", s)
        self.assertIn("e1 = add(mul(o, bn0), sub(vt1, mul(vt2, bn0)))", s)
        self.assertIn("e2 = silu(e1)", s)
        self.assertIn("store(e2 -> y[", s)
        s = self.verified_sketch("conv_depthwise_scale_hardswish")
        self.assertIn("load(v0[oc:oc + 1] -> vt0)", s)
        self.assertIn("bind: v0 = weight(\"scale\", [OC0, 1, 1])", s)

    def test_graph_and_spelling_design_one_layer_alike(self) -> None:
        # nn.Conv2d read by the spelling rule and F.conv2d on a parameter read from the
        # graph: the same loops, the graph's geometry as constants instead of attr() reads
        layer = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                 "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                 "        self.conv = nn.Conv2d(8, 16, 3, padding=1, bias=False)\n\n"
                 "    def forward(self, x):\n        return %s\n\n\n"
                 "def get_inputs():\n    return [torch.randn(2, 8, 20, 20)]\n\n\n"
                 "def get_init_inputs():\n    return []\n")
        sketches = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, body in enumerate(["self.conv(x)", "F.conv2d(x, self.conv.weight, padding=1)"]):
                path = os.path.join(tmp, "spelling%d.py" % i)
                with open(path, "w") as f:
                    f.write(layer % body)
                sketches.append(self.sketch_of(path, "s%d" % i))
        body = [s[s.index("  # layer 0"):] for s in sketches]
        self.assertEqual(body[0].replace("self.conv", "weight conv.weight"), body[1])
        self.assertIn("attr(\"conv.stride\", 0)", sketches[0])
        self.assertNotIn("attr(", sketches[1])

    def test_refusal_names_what_is_not_fused(self) -> None:
        src = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
               "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.w = nn.Parameter(torch.randn(8, 8, 3, 3))\n\n"
               "    def forward(self, x):\n        y = F.conv2d(x, self.w, padding=1)\n"
               "        return y + x\n\n\n"
               "def get_inputs():\n    return [torch.randn(2, 8, 10, 10)]\n\n\n"
               "def get_init_inputs():\n    return []\n")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "residual.py")
            with open(path, "w") as f:
                f.write(src)
            p, report = self.op(path, "--workflow", "design_only", name="residual")
        self.assertNotEqual(p.returncode, 0)
        detail = report["error"]["detail"] if report else p.stderr
        self.assertIn("cannot design add (residual.py:13)", detail)
        self.assertIn("not one value per output channel", detail)


if __name__ == "__main__":
    unittest.main()
