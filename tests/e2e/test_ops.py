"""End to end: akg_cli generates, verifies and profiles a kernel for each
elementwise fixture and the softmax, on the CPU with the built-in provider.

Run one op: AKG_E2E_OPS=relu,gelu python3 -m unittest test_ops"""
import json
import os
import subprocess
import sys
import unittest

from akgtest import PYTHON, REFS, CliTest

OPS = ["relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "softplus", "elu", "selu",
       "hardtanh", "hardsigmoid", "softsign", "softmax", "log_domain"]
SELECTED = [o for o in os.environ.get("AKG_E2E_OPS", ",".join(OPS)).split(",") if o]

STANDALONE = r"""
import importlib.util, sys, torch
ref_dir, kernel_dir, name = sys.argv[1:4]
sys.path.insert(0, ref_dir)
sys.path.insert(0, kernel_dir)
ref = __import__(name)
import model_new
torch.manual_seed(7)
init = ref.get_init_inputs()
torch.manual_seed(1); m = ref.Model(*init)
torch.manual_seed(1); k = model_new.ModelNew(*init)
cases = [ref.get_inputs()] + (ref.get_inputs_dyn_list() if hasattr(ref, "get_inputs_dyn_list") else [])
for inputs in cases:
    want, got = m(*inputs), k(*inputs)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    assert torch.allclose(got, want, atol=1e-4, rtol=1e-4, equal_nan=True), (got - want).abs().max()
print("standalone ok", len(cases))
"""


class OpsTest(CliTest):
    def check_op(self, name):
        p, report = self.op(os.path.join(REFS, name + ".py"), name=name)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIsNotNone(report)
        self.assertEqual(report["status"], "pass")
        self.assertEqual(report["backend"], "cpu")
        self.assertEqual(report["dsl"], "cpp")
        # the first design passes: the fast polynomial maths are right over the whole domain
        # (a failure would be recovered by a libm retry and hide the bug)
        self.assertEqual(report["design"]["math"], "fast")
        # the first candidate passes; another follows only when it was measured slower than
        # the reference (the Conductor then tries other designs and keeps the fastest)
        first = report["candidates"][0]
        self.assertEqual(first["status"], "pass")
        if len(report["candidates"]) > 1:
            self.assertLess(first["speedup"], 1.0, report["candidates"])
            self.assertIn("asking the Designer for another design", p.stderr)
        self.assertEqual(report["verdict"], "slower" if report["perf"]["speedup"] < 1.0 else "faster")
        corr = report["correctness"]
        self.assertEqual(corr["trials"], 5)
        self.assertLessEqual(corr["max_abs_err"], 1e-3)
        self.assertEqual(corr["atol"], 1e-4)
        perf = report["perf"]
        self.assertGreater(perf["ref_ms"], 0)
        self.assertGreater(perf["kernel_ms"], 0)
        self.assertAlmostEqual(perf["speedup"], perf["ref_ms"] / perf["kernel_ms"], places=3)
        for key in ("sketch", "kernel", "model_new", "report"):
            self.assertTrue(os.path.exists(report["paths"][key]), key)
        # where the harness time went: a request per candidate and op, its wait and its run
        times = report["harness_times"]
        for op in ("probe", "verify", "profile"):
            self.assertGreaterEqual(times[op]["requests"], 1, times)
            self.assertGreater(times[op]["ran_s"], 0.0, times)
            self.assertGreaterEqual(times[op]["queued_s"], 0.0, times)
        self.assertEqual(times["verify"]["requests"], len(report["candidates"]), times)
        self.assertLess(sum(t["ran_s"] for t in times.values()), report["elapsed_s"], times)
        # progress went to stderr, one line per stage
        for stage in ("probe", "design", "code", "build", "verify", "profile"):
            self.assertIn("[akg] " + stage, p.stderr)
        # the stdout of --json is the report
        self.assertEqual(json.loads(p.stdout)["status"], "pass")
        # model_new.py works on its own next to the reference, dynamic cases too
        s = subprocess.run([PYTHON, "-c", STANDALONE, REFS, os.path.dirname(report["paths"]["model_new"]),
                            name], capture_output=True, text=True, timeout=120)
        self.assertEqual(s.returncode, 0, s.stderr[-2000:])
        self.assertIn("standalone ok", s.stdout)


for _op in SELECTED:
    setattr(OpsTest, "test_" + _op, lambda self, _op=_op: self.check_op(_op))

if __name__ == "__main__":
    unittest.main(verbosity=2)
