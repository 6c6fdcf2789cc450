"""The sketch is the design: edits to a generated sketch reach the kernel, for every family.

For one reference per family the built-in Designer writes its sketch; the test then edits that
sketch three ways and runs each edit through `akg_cli op --sketch` (the real harness, PyTorch,
g++, the reference interpreter):

1. a tunable changed to another of its candidates: the lowered kernel changes and still verifies;
2. every `parallel` hint removed: the kernel has no parallel region (and still verifies);
3. the computation changed (a max for a min, an exp dropped, a GEMM accumulated twice...): the
   job fails as a design error of that sketch, found by the design check before any code, and
   never passes with the kernel of the unedited sketch.

Run one family: AKG_EDIT_FAMILIES=conv python3 -m unittest test_sketch_edits"""
import os
import re
import subprocess
import unittest

from akgtest import REFS, SOURCE, CliTest

DENSE = os.path.join(SOURCE, "tests", "families", "dense", "refs")
REDUCTIONS = os.path.join(SOURCE, "tests", "families", "reductions", "refs")

# family -> (reference, the computation edit: (pattern, replacement) applied with re.M to every
# match; the pattern must match)
FAMILIES = {
    "pointwise": (os.path.join(REFS, "relu.py"), (r"\brelu\(", "sigmoid(")),
    "softmax": (os.path.join(REFS, "softmax.py"), (r"exp\((sub\(t, m\))\)", r"\1")),
    "matmul": (os.path.join(DENSE, "matmul_t.py"), (r"^(\s*)(gemm\(.*\))$", r"\1\2\n\1\2")),
    "conv": (os.path.join(DENSE, "conv_grouped.py"), (r"^(\s*)(gemm\(.*\))$", r"\1\2\n\1\2")),
    "pool": (os.path.join(DENSE, "maxpool.py"), (r"\bmaximum\(acc, t\)", "minimum(acc, t)")),
    # a running max for the running sum
    "reduction": (os.path.join(REDUCTIONS, "sum_keepdim.py"), (r"\badd\((acc\d?), ", r"maximum(\1, ")),
    # the square root of the variance for its reciprocal square root
    "norm": (os.path.join(REDUCTIONS, "layer_norm.py"), (r"\brsqrt\(", "sqrt(")),
    # a running sum for the running product
    "scan": (os.path.join(REDUCTIONS, "reverse_cumprod.py"), (r"\bmul\((r\d|run), ", r"add(\1, ")),
    # the quadratic branch without its factor 0.5
    "loss": (os.path.join(REDUCTIONS, "huber.py"),
             (r"mul\(cast\(0\.5, f32\), (sub\(t0, t1\))\)", r"\1")),
}
SELECTED = [f for f in os.environ.get("AKG_EDIT_FAMILIES", ",".join(FAMILIES)).split(",") if f]

PARALLEL_HINT = re.compile(r'^\s*@llm_hint\("parallel"[^\n]*\n', re.M)
TUNABLE = re.compile(r"\b([A-Z][A-Z0-9_]*) = tune\((-?\d+), (-?\d+)")


class SketchEditTest(CliTest):
    def design(self, ref):
        """The built-in Designer's sketch for ref (design_only; its own check is not needed)."""
        out = os.path.join(self.dir, "designed")
        p = self.akg("op", "--quiet", "--workflow", "design_only", "--design-check", "off",
                     "--output", out, ref)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(os.path.join(out, "sketch.sketch")) as f:
            return f.read()

    def write(self, name, text):
        path = os.path.join(self.dir, name + ".sketch")
        with open(path, "w") as f:
            f.write(text)
        return path

    def emit(self, path):
        p = self.akg("sketch", "emit", path)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p.stdout

    def run_sketch(self, ref, path, name):
        return self.op(ref, "--sketch", path, "--trials", "2", name=name)

    def check_family(self, family):
        ref, (pattern, replacement) = FAMILIES[family]
        text = self.design(ref)
        original = self.emit(self.write("original", text))
        self.assertIn("omp parallel", original, "the designed kernel runs in parallel")

        # 1. a tunable to another candidate: another kernel, still right
        m = TUNABLE.search(text)
        self.assertIsNotNone(m, "the design has a tunable")
        name, first, second = m.groups()
        tuned = text[:m.start()] + "%s = tune(%s, %s" % (name, second, first) + text[m.end():]
        path = self.write("tuned", tuned)
        self.assertNotEqual(self.emit(path), original, "%s = %s changes nothing" % (name, second))
        p, r = self.run_sketch(ref, path, "tuned")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(r["status"], "pass")
        self.assertEqual(r["design_check"]["result"] in ("pass", "skipped"), True, r["design_check"])

        # 2. no parallel hint: no parallel region, still right
        serial, n = PARALLEL_HINT.subn("", text)
        self.assertGreater(n, 0)
        path = self.write("serial", serial)
        kernel = self.emit(path)
        self.assertNotIn("omp parallel", kernel)
        self.assertNotIn("omp for", kernel)
        p, r = self.run_sketch(ref, path, "serial")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(r["status"], "pass")

        # 3. another computation: a design error of this sketch, before any code
        changed, n = re.subn(pattern, replacement, text, flags=re.M)
        self.assertGreater(n, 0, "the edit %r applies to the %s design" % (pattern, family))
        path = self.write("changed", changed)
        p, r = self.run_sketch(ref, path, "changed")
        self.assertEqual(p.returncode, 1, p.stderr[-3000:])
        self.assertEqual(r["status"], "fail")
        self.assertEqual(r["error"]["class"], "design_error")
        self.assertEqual(r["error"]["where"], "sketch")
        self.assertEqual(r["error"]["file"], path)
        self.assertEqual(r["design_check"]["result"], "fail")
        self.assertNotIn("correctness", r)  # no kernel was verified, let alone passed
        self.assertNotIn("[akg] code", p.stderr)


for _family in SELECTED:
    setattr(SketchEditTest, "test_" + _family, lambda self, _f=_family: self.check_family(_f))

if __name__ == "__main__":
    unittest.main(verbosity=2)
