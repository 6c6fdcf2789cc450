"""End to end: `akg_cli op --sketch FILE REF.py`, the user's sketch as the design.

The sketch is checked before anything starts (compiler-style diagnostics, exit 1), run in the
reference interpreter against the reference (the design check), lowered and verified with the real
harness; a design the interpreter finds wrong is reported as that sketch's design error and not
answered with another design."""
import json
import os
import re
import unittest

from akgtest import REFS, SOURCE, CliTest

SKETCHES = os.path.join(SOURCE, "tests", "fixtures", "sketches")
RELU = os.path.join(REFS, "relu.py")


def sketch(name):
    return os.path.join(SKETCHES, name)


class SketchTest(CliTest):
    def test_good_sketch_passes(self):
        p, r = self.op(RELU, "--sketch", sketch("relu.sketch"))
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(r["status"], "pass")
        # the report says where the design came from
        self.assertEqual(r["design"], {"source": "user", "path": sketch("relu.sketch"),
                                       "sketch": "relu"})
        self.assertEqual(r["op"], "relu")
        self.assertEqual(len(r["candidates"]), 1)
        self.assertEqual(r["correctness"]["trials"], 5)
        self.assertGreater(r["perf"]["speedup"], 0)
        # the run folder keeps the design it lowered
        with open(r["paths"]["sketch"]) as f, open(sketch("relu.sketch")) as g:
            self.assertEqual(f.read(), g.read())
        self.assertIn("the Designer is skipped", p.stderr)
        self.assertNotIn("designing a sketch", p.stderr)
        for stage in ("probe", "code", "build", "verify", "profile"):
            self.assertIn("[akg] " + stage, p.stderr)
        self.assertEqual(json.loads(p.stdout)["status"], "pass")

    def test_summary_names_the_users_sketch(self):
        out = os.path.join(self.dir, "summary")
        p = self.akg("op", "--output", out, "--workflow", "kernelgen_only", "--sketch",
                     sketch("relu.sketch"), RELU)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("design:   %s (your sketch" % sketch("relu.sketch"), p.stdout)
        self.assertIn("status:   unverified", p.stdout)

    def test_coder_only_is_the_same(self):
        p, r = self.op(RELU, "--workflow", "coder_only", "--sketch", sketch("relu.sketch"))
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(r["status"], "pass")
        self.assertEqual(r["workflow"], "coder_only")
        self.assertEqual(r["design"]["source"], "user")
        self.assertNotIn("designing a sketch", p.stderr)

    def test_sketch_that_does_not_check(self):
        out = os.path.join(self.dir, "run")
        p = self.akg("op", "--output", out, "--sketch", sketch("relu_undefined.sketch"), RELU)
        self.assertEqual(p.returncode, 1, p.stderr)
        lines = p.stderr.strip().splitlines()
        self.assertTrue(lines)
        for line in lines:
            self.assertRegex(line, r"^%s:\d+:\d+: error: " % re.escape(sketch("relu_undefined.sketch")))
        self.assertIn("%s:15:15: error: undefined name 't9'" % sketch("relu_undefined.sketch"), p.stderr)
        # checked before anything starts: no run folder, no run in the store
        self.assertFalse(os.path.exists(out))
        self.assertNotIn("relu.py", self.akg("runs").stdout)

    def test_unbound_sketch(self):
        p = self.akg("op", "--sketch", sketch("relu_unbound.sketch"), RELU)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("%s:3:1: error: sketch 'relu' has no bind: section"
                      % sketch("relu_unbound.sketch"), p.stderr)

    def test_wrong_design_is_a_design_error(self):
        # the design check runs the sketch in the reference interpreter before any code: the
        # wrong design is found there, no kernel is written
        p, r = self.op(RELU, "--sketch", sketch("relu_wrong.sketch"))
        self.assertEqual(p.returncode, 1, p.stderr[-3000:])
        self.assertEqual(r["status"], "fail")
        e = r["error"]
        self.assertEqual(e["class"], "design_error")
        self.assertEqual(e["where"], "sketch")
        self.assertEqual(e["file"], sketch("relu_wrong.sketch"))
        self.assertEqual(e["line"], 4)  # `sketch relu {`
        self.assertIn(sketch("relu_wrong.sketch"), e["detail"])
        self.assertIn("the design computes another function", e["detail"])
        self.assertEqual(r["design_check"]["result"], "fail")
        # the user's design is the design: no other was tried
        self.assertEqual(r["attempts"], 1)
        self.assertEqual([(c["error_class"], c["blame"], c["found_by"]) for c in r["candidates"]],
                         [("design_error", "design", "design_check")])
        self.assertNotIn("routing to the Designer", p.stderr)
        self.assertNotIn("[akg] code", p.stderr)
        self.assertNotIn("kernel", r["paths"])

    def test_wrong_design_found_after_the_kernel(self):
        # with the check only on a mismatch, the kernel is built and fails; the check then
        # tells the design's error from the kernel's
        p, r = self.op(RELU, "--sketch", sketch("relu_wrong.sketch"), "--design-check", "on_mismatch")
        self.assertEqual(p.returncode, 1, p.stderr[-3000:])
        e = r["error"]
        self.assertEqual(e["class"], "design_error")
        self.assertIn("numerical_mismatch", e["detail"])
        self.assertIn("the design check finds the design wrong", e["detail"])
        self.assertIn("the kernel disagrees with the reference: checking its design", p.stderr)
        self.assertEqual([(c["blame"], c["found_by"], c["design_check"]) for c in r["candidates"]],
                         [("design", "verify", "fail")])
        self.assertFalse(r["correctness"]["passed"])

    def test_usage(self):
        p = self.akg("op", "--sketch", os.path.join(self.dir, "nope.sketch"), RELU)
        self.assertEqual(p.returncode, 2)
        self.assertIn("sketch not found", p.stderr)
        p = self.akg("op", "--workflow", "verifier_only", "--kernel", RELU, "--sketch",
                     sketch("relu.sketch"), RELU)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("--sketch", p.stderr)
        self.assertIn("--sketch FILE", self.akg("op", "--help").stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
