"""End to end: a verified kernel slower than the reference is never offered silently.

The report marks it (perf.slower_than_reference, verdict), the summary says it is slower and not
a drop-in, and the Conductor spends the remaining attempts on other designs, keeping the fastest
verified one. Timings can flip on a loaded machine, so the tests assert what follows from the
measured speedups, never the speedups themselves; --min-speedup far above any kernel makes the
Conductor ask for another design on every attempt, whatever the timings."""
import json
import os
import re
import unittest

from akgtest import KERNELS, REFS, CliTest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow_refs")


def read(path):
    with open(path) as f:
        return f.read()


class SlowKernelTest(CliTest):
    def check_marks(self, report):
        """Every timed candidate, and the verdict, agree with the measured speedup."""
        timed = [c for c in report["candidates"] if "speedup" in c]
        for c in timed:
            self.assertEqual(c["slower_than_reference"], c["speedup"] < 1.0, c)
        perf = report["perf"]
        self.assertEqual(perf["slower_than_reference"], perf["speedup"] < 1.0)
        self.assertEqual(report["verdict"], "slower" if perf["speedup"] < 1.0 else "faster")
        kept = [c for c in timed if c.get("kept")]
        self.assertEqual(len(kept), 1, report["candidates"])
        self.assertEqual(kept[0]["step"], report["kept_step"])
        self.assertEqual(kept[0]["speedup"], max(c["speedup"] for c in timed))
        self.assertAlmostEqual(kept[0]["speedup"], perf["speedup"])
        return timed

    def pow_case(self, ref):
        p, report = self.op(ref, "--min-speedup", "1000", "--max-step", "2", "--trials", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(report["status"], "pass")
        timed = self.check_marks(report)
        self.assertEqual([c["step"] for c in timed], [1, 2])
        # candidate 1 was below the wanted speedup: the Conductor asked for a second design,
        # and the second sketch computes the cube with multiplies, not pow
        self.assertIn("asking the Designer for another design (attempt 2/2)", p.stderr)
        first = read(os.path.join(timed[0]["dir"], "sketch.sketch"))
        self.assertRegex(first, r"\bpow\(")
        self.assertEqual(timed[1]["design"].get("pow_reduced"), 1)
        kept = read(os.path.join(report["paths"]["dir"], "sketch.sketch"))
        second = kept if report["kept_step"] == 2 else None
        if second is None:  # the first design was kept: its files are the run's again
            self.assertRegex(kept, r"\bpow\(")
        else:
            self.assertNotRegex(second, r"\bpow\(")
            self.assertEqual(len(re.findall(r"\bmul\(", second)), 2, second)
        self.assertEqual(report["search_end"], "the attempts are spent")

    def test_torch_pow(self):
        self.pow_case(os.path.join(HERE, "pow3.py"))

    def test_pow_operator(self):
        self.pow_case(os.path.join(HERE, "pow3_op.py"))

    def test_no_design_left(self):
        # relu has no pow: the Designer's answers are the other block sizes, then none
        p, report = self.op(os.path.join(REFS, "relu.py"), "--min-speedup", "1000",
                            "--max-step", "6", "--trials", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        timed = self.check_marks(report)
        self.assertEqual(len(timed), 3, report["candidates"])
        self.assertIn("the Designer has no other design", report["search_end"])
        blocks = [c["design"]["block"] for c in timed]
        self.assertEqual(len(set(blocks)), 3, blocks)
        kept_dir = report["paths"]["dir"]
        model_new = read(os.path.join(kept_dir, "model_new.py"))
        self.assertIn(os.path.basename(report["paths"]["library"]), model_new)

    def test_always_slower(self):
        # an injected fault: a right kernel that waits 20 ms a call, checked as given
        p, report = self.op(os.path.join(REFS, "relu.py"), "--workflow", "verifier_only",
                            "--kernel", os.path.join(KERNELS, "slow_relu_model_new.py"),
                            "--trials", "2")
        self.assertEqual(p.returncode, 0, p.stderr)  # verified: exit 0, the verdict says slower
        self.assertEqual(report["status"], "pass")
        self.assertTrue(report["perf"]["slower_than_reference"])
        self.assertEqual(report["verdict"], "slower")
        self.assertIn("not a drop-in", report["verdict_detail"])
        self.check_marks(report)
        # the summary says so too
        out = os.path.join(self.dir, "summary")
        q = self.akg("op", "--output", out, "--workflow", "verifier_only", "--kernel",
                     os.path.join(KERNELS, "slow_relu_model_new.py"), "--trials", "2",
                     os.path.join(REFS, "relu.py"))
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertRegex(q.stdout, r"SLOWER: +the kernel is verified but slower than the "
                                   r"reference: it takes [0-9.]+x the reference's time")
        self.assertIn("not a drop-in speedup", q.stdout)


if __name__ == "__main__":
    unittest.main()
