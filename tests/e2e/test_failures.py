"""End to end: references and candidates that fail end with the right error
class, a clear message, and the right exit status."""
import json
import os
import signal
import sqlite3
import subprocess
import time
import unittest

from akgtest import CLI, KERNELS, PYTHON, REFS, CliTest


class UsageTest(CliTest):
    def test_help(self):
        p = self.akg("op", "--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--workflow", p.stdout)

    def test_unknown_flag(self):
        p = self.akg("op", "--frobnicate", "1", os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("unknown flag --frobnicate", p.stderr)

    def test_missing_file(self):
        p = self.akg("op", os.path.join(self.dir, "nope.py"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("reference not found", p.stderr)

    def test_unsupported_pair(self):
        p = self.akg("op", "--backend", "cpu", "--dsl", "triton", os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("not supported", p.stderr)
        p = self.akg("op", "--dsl", "fortran", os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown DSL", p.stderr)

    def test_verifier_only_needs_kernel(self):
        p = self.akg("op", "--workflow", "verifier_only", os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--kernel", p.stderr)

    def test_unknown_provider(self):
        # Refused while the flags are read: before the reference is looked at
        # (this one does not exist) and before any engine or worker starts.
        p = self.akg("op", "--provider", "nonesuch", os.path.join(self.dir, "nope.py"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("unknown provider 'nonesuch'", p.stderr)
        self.assertIn("the providers in this build are builtin, openai", p.stderr)
        p = self.akg("op", "--help")
        self.assertIn("--provider NAME        who designs and writes code: builtin, openai", p.stdout)


class ReferenceFailureTest(CliTest):
    def test_reference_raises(self):
        p, r = self.op(os.path.join(REFS, "raises_in_forward.py"))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["error"]["class"], "runtime_error")
        self.assertEqual(r["error"]["where"], "reference")
        self.assertEqual(r["error"]["line"], 16)
        self.assertIn("ValueError", r["error"]["detail"])

    def test_reference_hangs(self):
        t = time.monotonic()
        p, r = self.op(os.path.join(REFS, "hangs_in_forward.py"), "--verify-timeout", "4")
        self.assertLess(time.monotonic() - t, 60)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "timeout")
        self.assertIn("did not finish within 4.0 s", r["error"]["detail"])

    def test_not_kernelbench(self):
        p, r = self.op(os.path.join(REFS, "no_get_inputs.py"))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "reference_error")
        self.assertIn("no module-level get_inputs()", r["error"]["detail"])

    def test_syntax_error(self):
        p, r = self.op(os.path.join(REFS, "syntax_error.py"))
        self.assertEqual(p.returncode, 1)
        self.assertIn(":14:", r["error"]["detail"])

    def test_unsupported_op_is_named(self):
        p, r = self.op(os.path.join(REFS, "unsupported_op.py"))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "unsupported")
        self.assertIn("torch.fft.fft", r["error"]["detail"])
        self.assertIn("--workflow verifier_only", r["error"]["detail"])
        self.assertNotIn("openai", r["error"]["detail"].lower())
        self.assertNotIn("kernel", r["paths"])  # nothing unverified is produced


class CandidateFailureTest(CliTest):
    def verify(self, kernel, *extra):
        return self.op(os.path.join(REFS, "relu.py"), "--workflow", "verifier_only", "--kernel",
                       os.path.join(KERNELS, kernel), *extra)

    def test_good_candidate_passes(self):
        p, r = self.verify("good_relu_model_new.py")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(r["status"], "pass")
        self.assertGreater(r["perf"]["speedup"], 0)

    def test_wrong_candidate(self):
        p, r = self.verify("wrong_relu_model_new.py")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "numerical_mismatch")
        self.assertIn("trial", r["error"]["detail"])

    def test_half_output(self):
        p, r = self.verify("half_relu_model_new.py")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "numerical_mismatch")

    def test_segfault(self):
        p, r = self.verify("segfault_relu_model_new.py")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "crash")
        self.assertIn("SIGSEGV", r["error"]["detail"])  # the judge names the signal that killed the candidate's child

    def test_spin(self):
        p, r = self.verify("spin_relu_model_new.py", "--verify-timeout", "5")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "timeout")

    def test_cheat(self):
        p, r = self.verify("cheat_relu_model_new.py")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(r["error"]["class"], "forbidden")
        self.assertIn("relu", r["error"]["detail"])


class WorkflowTest(CliTest):
    def test_kernelgen_only_is_unverified(self):
        p, r = self.op(os.path.join(REFS, "relu.py"), "--workflow", "kernelgen_only")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(r["status"], "unverified")
        self.assertNotIn("correctness", r)
        self.assertTrue(os.path.exists(r["paths"]["kernel"]))

    def test_coder_only_writes_no_sketch(self):
        p, r = self.op(os.path.join(REFS, "sigmoid.py"), "--workflow", "coder_only")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(r["status"], "pass")
        self.assertNotIn("sketch", r["paths"])

    def test_runs_lists_the_store(self):
        self.op(os.path.join(REFS, "relu.py"), "--workflow", "design_only")
        p = self.akg("runs")
        self.assertEqual(p.returncode, 0)
        self.assertIn("relu.py", p.stdout)
        self.assertIn("unverified", p.stdout)

    def test_ctrl_c_cancels_and_kills_children(self):
        # a uniquely named interpreter link makes this test's workers findable
        link = os.path.join(self.dir, "python-cancel-test")
        os.symlink(PYTHON, link)
        proc = subprocess.Popen([CLI, "op", "--python", link, "--output", os.path.join(self.dir, "c"),
                                 os.path.join(REFS, "hangs_in_forward.py")], cwd=self.dir,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if subprocess.run(["pgrep", "-f", link], capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
        time.sleep(2.0)  # the probe is now inside the hanging forward
        t = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertLess(time.monotonic() - t, 2.0)
        self.assertEqual(proc.returncode, 130, err[-2000:])
        self.assertIn("cancelled", out)
        time.sleep(0.2)
        self.assertNotEqual(subprocess.run(["pgrep", "-f", link]).returncode, 0,
                            "a harness worker survived the cancellation")


class RecordFailureTest(CliTest):
    """Failed writes of report.json and of the store are said, never silently dropped."""

    def test_report_that_cannot_be_written(self):
        out = os.path.join(self.dir, "run")
        os.makedirs(os.path.join(out, "report.json"))  # a folder where the file should go
        p = self.akg("op", "--json", "--output", out, "--workflow", "design_only",
                     os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 1, p.stderr[-2000:])
        self.assertIn("report.json could not be written", p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["error"]["class"], "io_error")
        self.assertIn("report.json could not be written", r["error"]["detail"])
        self.assertNotIn("report", r["paths"])
        self.assertTrue(os.path.exists(r["paths"]["sketch"]))  # the rest was written
        # the store has the run as it ended
        runs = self.akg("runs").stdout
        self.assertIn("relu.py", runs)
        self.assertIn("error", runs)

    def refuse(self, *statements):
        """Makes the test's store refuse writes: triggers that abort them."""
        self.op(os.path.join(REFS, "relu.py"), "--workflow", "design_only", name="first")
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            for st in statements:
                db.execute(st)
            db.commit()
        finally:
            db.close()

    def test_store_refuses_the_end_and_the_candidates(self):
        self.refuse("CREATE TRIGGER refuse_end BEFORE UPDATE ON runs "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
                    "CREATE TRIGGER refuse_candidate BEFORE INSERT ON candidates "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        p, r = self.op(os.path.join(REFS, "relu.py"), "--workflow", "verifier_only", "--kernel",
                       os.path.join(KERNELS, "good_relu_model_new.py"))
        # the kernel passed; the store's failures are errors said on the way and in the report
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(r["status"], "pass")
        self.assertIn("the store could not record candidate 1: refused by the test", p.stderr)
        self.assertIn("the store could not record the run's end: refused by the test", p.stderr)
        self.assertIn("refused by the test", r["store_error"])

    def test_store_refuses_the_run(self):
        self.refuse("CREATE TRIGGER refuse_run BEFORE INSERT ON runs "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        p, r = self.op(os.path.join(REFS, "relu.py"), "--workflow", "design_only")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("the store could not record this run (refused by the test)", p.stderr)
        self.assertEqual(r["status"], "unverified")
        self.assertLess(r["run_id"], 0)
        self.assertIn("refused by the test", r["store_error"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
