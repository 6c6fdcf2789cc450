"""End to end: the engine's side of the sandboxed judge, through the real akg_cli.

The harness worker is fake_judge/worker.py, installed under the test's own AKG_HOME: it runs the
real worker and passes its lines through (the probe and the design check are real), but answers
verify and profile requests as each test's plan says. So the tests see what the engine does with
the answers the sandboxed judge gives:
- the candidate's faults (crash, timeout, resource_limit, late_write, background_work) go back
  to the Coder, one attempt each;
- sandbox_error ends the job as an error of the machine, in the worker's words, with no retry;
- a profile's flags reach report.json's perf and the result line;
- the ready line's sandbox reaches report.json and the summary's sandbox line (nothing where the
  worker does not say), and the worker receives config.yaml's sandbox section as AKG_SANDBOX,
  its mode replaced by --sandbox."""
import json
import os
import shutil
import unittest

from akgtest import KERNELS, REFS, SOURCE, CliTest

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_judge", "worker.py")
CONFIG = os.path.join(SOURCE, "backends", "cpu", "cpp", "config.yaml")

BWRAP = {"mode": "bwrap",
         "detail": "user, pid, net, mount namespaces; read-only file system; memory 4096 MB",
         "limits": {"memory_mb": 4096, "processes": 64}}
VERIFIED = {"ok": True, "trials": 2, "max_abs_err": 0.0, "max_rel_err": 0.0, "atol": 1e-5,
            "rtol": 1e-5}
TIMED = {"ok": True, "ref_ms": 1.0, "kernel_ms": 0.05, "speedup": 20.0, "runs": 50, "warmup": 5}
CODE_FAULTS = ["crash", "timeout", "resource_limit", "late_write", "background_work"]


def failed(cls, detail):
    return {"answer": {"ok": False, "class": cls, "detail": detail, "where": "kernel"}}


class JudgeClassesTest(CliTest):
    def setUp(self):
        super().setUp()
        home = os.path.join(self.dir, "home")
        os.makedirs(os.path.join(home, "backends", "harness"))
        os.makedirs(os.path.join(home, "backends", "cpu", "cpp"))
        shutil.copy(FAKE, os.path.join(home, "backends", "harness", "worker.py"))
        shutil.copy(CONFIG, os.path.join(home, "backends", "cpu", "cpp", "config.yaml"))
        self.env.update(AKG_HOME=home,
                        AKG_REAL_WORKER=os.path.join(SOURCE, "backends", "harness", "worker.py"))
        self.env.pop("AKG_SANDBOX", None)
        self.env.pop("AKG_SANDBOX_MODE", None)

    def run_plan(self, plan, *args, name="run"):
        """akg_cli op with the worker's plan: (process, report)."""
        self.env["AKG_FAKE_PLAN"] = json.dumps(plan)
        out = os.path.join(self.dir, name)
        p = self.akg("op", "--output", out, *args)
        report = None
        if os.path.exists(os.path.join(out, "report.json")):
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
        return p, report

    def test_code_faults_go_to_the_coder(self):
        verify = [failed(cls, "the candidate's %s (injected by the test)" % cls)
                  for cls in CODE_FAULTS]
        verify.append({"answer": VERIFIED})
        plan = {"ready_sandbox": BWRAP, "verify": verify,
                "profile": [{"answer": dict(TIMED, flags=["speedup_over_10x"])}]}
        p, r = self.run_plan(plan, "--max-step", "6", "--trials", "2",
                             os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(r["status"], "pass")
        fails = [c for c in r["candidates"] if c["status"] == "fail"]
        self.assertEqual([c["error_class"] for c in fails], CODE_FAULTS)
        for step, c in enumerate(fails, start=1):
            self.assertEqual(c["step"], step)
            self.assertEqual(c["blame"], "code")
            self.assertIn("injected by the test", c["detail"])
            self.assertIn("conductor: attempt %d failed (%s, found by verify); routing to the "
                          "Coder" % (step, c["error_class"]), p.stderr)
        self.assertNotIn("routing to the Designer", p.stderr)
        self.assertEqual(r["attempts"], 6)
        # the flags and the sandbox, in the report and the summary
        self.assertEqual(r["perf"]["flags"], ["speedup_over_10x"])
        self.assertEqual(r["sandbox"], BWRAP)
        self.assertIn("sandbox:  bwrap (user, pid, net, mount namespaces; read-only file system; "
                      "memory 4096 MB)\n", p.stdout)
        self.assertRegex(p.stdout, r"speedup: +20\.00x \(reference 1\.0000 ms, kernel 0\.0500 ms\)"
                                   r" \[flagged: speedup_over_10x\]\n")

    def test_sandbox_error_ends_the_job(self):
        detail = "bwrap: No permissions to create a new namespace (injected by the test)"
        # a worker whose detail names the mode itself: the summary names it once
        said = dict(BWRAP, detail="bwrap (user, pid, network namespaces); memory 4096 MB")
        plan = {"ready_sandbox": said, "verify": [failed("sandbox_error", detail)]}
        p, r = self.run_plan(plan, "--max-step", "4", "--trials", "2",
                             os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 1, p.stderr[-3000:])
        self.assertEqual(r["status"], "error")
        self.assertEqual(r["error"]["class"], "sandbox_error")
        self.assertIn(detail, r["error"]["detail"])
        self.assertIn("--sandbox none", r["error"]["detail"])
        self.assertEqual(r["attempts"], 1)
        self.assertNotIn("routing to the", p.stderr)
        self.assertIn("error:    sandbox_error: the candidate could not be run", p.stdout)
        self.assertIn("\nsandbox:  bwrap (user, pid, network namespaces); memory 4096 MB\n",
                      p.stdout)
        self.assertEqual(r["sandbox"], said)

    def verify_only(self, *extra, name="run"):
        plan = {"ready_sandbox": "echo", "verify": [{"answer": VERIFIED}],
                "profile": [{"answer": TIMED}]}
        p, r = self.run_plan(plan, "--workflow", "verifier_only", "--kernel",
                             os.path.join(KERNELS, "good_relu_model_new.py"), *extra,
                             os.path.join(REFS, "relu.py"), name=name)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p, r

    def test_settings_reach_the_worker(self):
        defaults = {"mode": "auto", "memory_mb": 4096, "processes": 64, "cpu_seconds": 600,
                    "file_size_mb": 256, "call_timeout_s": 60}
        # config.yaml's section as it stands; an AKG_SANDBOX of the caller's never reaches it
        self.env["AKG_SANDBOX"] = json.dumps({"mode": "none"})
        p, r = self.verify_only(name="default")
        self.assertEqual(r["sandbox"]["limits"], defaults)
        self.assertIn("sandbox:  auto (settings {", p.stdout)
        self.assertNotIn("flags", r["perf"])
        self.assertNotIn("flagged", p.stdout)
        # --sandbox replaces the mode alone
        p, r = self.verify_only("--sandbox", "none", name="none")
        self.assertEqual(r["sandbox"]["limits"], dict(defaults, mode="none"))
        self.assertEqual(r["sandbox"]["mode"], "none")
        # an unknown mode is a usage error, before anything starts
        p = self.akg("op", "--sandbox", "chroot", os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "akg_cli op: --sandbox chroot is not a sandbox mode; use auto, "
                                   "bwrap or none\n")
        p = self.akg("op", "--help")
        self.assertIn("--sandbox MODE", p.stdout)

    def test_bad_setting_is_named(self):
        path = os.path.join(self.env["AKG_HOME"], "backends", "cpu", "cpp", "config.yaml")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("memory_mb: 4096", "memory_mb: 4G"))
        p, r = self.run_plan({}, os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 1)
        self.assertIsNone(r)
        self.assertIn("config.yaml: sandbox.memory_mb is \"4G\"; it must be a number of MiB "
                      "greater than 0, such as 4096", p.stderr)

    def test_older_worker_says_nothing(self):
        plan = {"ready_sandbox": None, "verify": [{"answer": VERIFIED}],
                "profile": [{"answer": TIMED}]}
        p, r = self.run_plan(plan, "--workflow", "verifier_only", "--kernel",
                             os.path.join(KERNELS, "good_relu_model_new.py"),
                             os.path.join(REFS, "relu.py"))
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("sandbox", r)
        self.assertNotIn("sandbox:", p.stdout)
        self.assertNotIn("flags", r["perf"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
