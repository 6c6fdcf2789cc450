"""akg_cli bench end to end: a three-operator suite (two the built-in provider covers, one it does
not) plus a helper file that is not a reference. Checks the table, the JSON record (and that
bench/summary.py reads it next to a recorded run), the failure listed apart, the totals'
arithmetic, the refusal of a baseline below its best, and Ctrl-C cancelling the running job.
The run itself is the engine's suite module (akg/suite.h); its pure rules have unit tests in
tests/unit/test_suite.c."""

import json
import math
import os
import signal
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
SUITE = os.path.join(HERE, "suite")
TIMEOUT_S = 240

# (family, name) of every reference in suite/, and the one the built-in provider has no rule for.
EXPECTED_OPS = [("activation", "relu_small"), ("activation", "softmax_small"), ("misc", "fft_magnitude")]
UNSUPPORTED = ("misc", "fft_magnitude")
NOT_A_REFERENCE = "helpers.py"


class BenchCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-bench-")
        self.dir = self.tmp.name
        self.env = dict(os.environ, AKG_STORE=os.path.join(self.dir, "akg.db"), AKG_PYTHON=PYTHON,
                        AKG_HOME=SOURCE)

    def tearDown(self):
        self.tmp.cleanup()

    def bench(self, *args, env=None):
        return subprocess.run([CLI, "bench", *args], cwd=self.dir, env=env or self.env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)


class BenchRunTest(BenchCase):
    def test_suite_table_json_and_totals(self):
        out = os.path.join(self.dir, "bench.json")
        runs = os.path.join(self.dir, "runs")
        p = self.bench("--suite", SUITE, "--output", out, "--runs-dir", runs)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            record = json.load(f)

        # Every reference ran, in path order; the helper was skipped with a note, not counted.
        ops = record["ops"]
        self.assertEqual([(o["family"], o["name"]) for o in ops], EXPECTED_OPS)
        self.assertEqual([os.path.basename(s["path"]) for s in record["skipped"]], [NOT_A_REFERENCE])
        self.assertIn("not in KernelBench form", record["skipped"][0]["reason"])
        self.assertIn("skipping", p.stderr)
        for key in ("family", "name", "path", "status", "error_class", "error_detail", "ref_ms",
                    "kernel_ms", "speedup", "run_dir"):
            for o in ops:
                self.assertIn(key, o)

        by_name = {(o["family"], o["name"]): o for o in ops}
        for key in EXPECTED_OPS[:2]:
            o = by_name[key]
            self.assertEqual(o["status"], "pass", o)
            self.assertIsNone(o["error_class"])
            self.assertGreater(o["ref_ms"], 0)
            self.assertGreater(o["kernel_ms"], 0)
            self.assertAlmostEqual(o["speedup"], o["ref_ms"] / o["kernel_ms"], delta=1e-6 * o["speedup"])
            self.assertEqual(o["run_dir"], os.path.join(runs, f"{key[0]}_{key[1]}"))
            with open(os.path.join(o["run_dir"], "report.json")) as f:
                self.assertEqual(json.load(f)["status"], "pass")
        bad = by_name[UNSUPPORTED]
        self.assertEqual((bad["status"], bad["error_class"]), ("error", "unsupported"))
        self.assertIn("torch.fft.rfft", bad["error_detail"])
        self.assertIsNone(bad["speedup"])

        # The failure is listed apart, in the JSON and under the table.
        self.assertEqual([(f["family"], f["name"], f["error_class"]) for f in record["failures"]],
                         [(*UNSUPPORTED, "unsupported")])
        self.assertNotIn("\n", record["failures"][0]["detail"])
        failures = p.stdout.split("failures (1):", 1)
        self.assertEqual(len(failures), 2, p.stdout)
        self.assertIn("misc/fft_magnitude  error  unsupported: ", failures[1])

        # Totals recomputed from the per-op records: failures count as not fast.
        passing = [o for o in ops if o["status"] == "pass"]
        speedups = [o["speedup"] for o in passing]
        totals = record["totals"]
        self.assertEqual((totals["ops"], totals["passed"], totals["failed"], totals["not_run"]), (3, 2, 1, 0))
        self.assertAlmostEqual(totals["pass_rate"], 2 / 3)
        self.assertAlmostEqual(totals["fast_1"], sum(s > 1.0 for s in speedups) / 3)
        self.assertAlmostEqual(totals["fast_1.5"], sum(s > 1.5 for s in speedups) / 3)
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        self.assertAlmostEqual(totals["geomean_speedup"], geomean, places=9)
        self.assertEqual(totals["geomean_over"], 2)
        fams = record["per_family"]
        self.assertEqual(list(fams), ["activation", "misc"])
        self.assertAlmostEqual(fams["activation"]["geomean_speedup"], geomean, places=9)
        self.assertEqual((fams["misc"]["ops"], fams["misc"]["passed"]), (1, 0))
        self.assertIsNone(fams["misc"]["geomean_speedup"])
        self.assertEqual(fams["misc"]["fast_1"], 0)

        # The environment record: what the baseline ran on, and that bench accepted it.
        self.assertIsNone(record["refused"])
        env = record["environment"]
        self.assertEqual(env["threads"], record["threads"])
        self.assertIn(env["blas"]["kind"], ("openblas", "mkl", "blis"))
        self.assertGreater(env["gemm"]["gflops"], 0)
        self.assertEqual(env["gemm"]["n"], 1024)
        self.assertIn("policy", env["malloc"])
        # The engine gives its workers the thread-pool settings unless the user chose their own.
        self.assertEqual(env["omp_wait_policy"], os.environ.get("OMP_WAIT_POLICY", "passive"))
        self.assertEqual(env["openblas_thread_timeout"], os.environ.get("OPENBLAS_THREAD_TIMEOUT", "4"))
        self.assertTrue(record["timings_comparable"])

        # The table: environment above it, one row per op, the totals line with the same numbers.
        self.assertTrue(p.stdout.startswith("environment: torch "), p.stdout)
        self.assertIn("GEMM:", p.stdout)
        self.assertIn("OPENBLAS_THREAD_TIMEOUT=" + env["openblas_thread_timeout"], p.stdout)
        for family, name in EXPECTED_OPS:
            rows = [l for l in p.stdout.splitlines() if l.split()[:2] == [family, name]]
            self.assertEqual(len(rows), 1, p.stdout)
        self.assertIn(f"geomean speedup {geomean:.2f}x over 2 passing", p.stdout)
        self.assertIn("3 ops, 2 pass (66.7%)", p.stdout)

        # The record keeps the format of the recorded runs: every key they have, and the
        # scripts that read them read it, next to an old record.
        with open(os.path.join(SOURCE, "bench", "results-cpu-torch1.13.json")) as f:
            old = json.load(f)
        self.assertLessEqual(set(old) - {"totals_compiled", "per_family_compiled"}, set(record))
        self.assertLessEqual(set(old["ops"][0]), set(ops[0]))
        self.assertLessEqual(set(old["totals"]), set(totals))
        self.assertLessEqual(set(old["failures"][0] if old["failures"] else {}), set(record["failures"][0]))
        for table in ("families", "ops"):
            s = subprocess.run([PYTHON, os.path.join(SOURCE, "bench", "summary.py"), table, out,
                                os.path.join(SOURCE, "bench", "results-cpu-torch1.13.json")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(s.returncode, 0, s.stdout + s.stderr)
            self.assertIn("| activation |", s.stdout)

    def test_filter_selects_by_path(self):
        out = os.path.join(self.dir, "bench.json")
        p = self.bench("--suite", SUITE, "--filter", "misc/", "--output", out, "--quiet")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            record = json.load(f)
        self.assertEqual([o["name"] for o in record["ops"]], ["fft_magnitude"])
        self.assertEqual(record["totals"]["passed"], 0)
        self.assertEqual(record["totals"]["fast_1"], 0)
        self.assertIsNone(record["totals"]["geomean_speedup"])
        self.assertEqual(p.stderr, "")


class BenchRefusalTest(BenchCase):
    def test_wrong_core_type_is_refused(self):
        # The engine keeps an OPENBLAS_CORETYPE the user set; no CPU's flags call for Prescott.
        out = os.path.join(self.dir, "bench.json")
        env = dict(self.env, OPENBLAS_CORETYPE="Prescott")
        p = self.bench("--suite", SUITE, "--output", out, env=env)
        with open(out) as f:
            record = json.load(f)
        if record["environment"]["blas"]["kind"] != "openblas":
            self.skipTest("torch does not call OpenBLAS here")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("OPENBLAS_CORETYPE=Prescott", record["refused"])
        self.assertIn("refusing to measure speedups", p.stderr)
        self.assertIn("refused: OPENBLAS_CORETYPE=Prescott", p.stdout)
        # Nothing ran, nothing is called fast.
        self.assertEqual({o["status"] for o in record["ops"]}, {"not_run"})
        self.assertIsNone(record["totals"]["geomean_speedup"])
        self.assertIsNone(record["totals"]["fast_1"])

    def test_a_workflow_that_times_nothing_runs_anyway(self):
        # design_only measures no speedup: the same baseline does not stop its designs, and the
        # record still says why speedups would be refused
        out = os.path.join(self.dir, "bench.json")
        env = dict(self.env, OPENBLAS_CORETYPE="Prescott")
        p = self.bench("--suite", SUITE, "--output", out, "--workflow", "design_only", env=env)
        with open(out) as f:
            record = json.load(f)
        if record["environment"]["blas"]["kind"] != "openblas":
            self.skipTest("torch does not call OpenBLAS here")
        self.assertIn("OPENBLAS_CORETYPE=Prescott", record["refused"] or "")
        statuses = {o["name"]: o["status"] for o in record["ops"]}
        self.assertEqual(statuses["relu_small"], "unverified", (statuses, p.stderr[-2000:]))
        self.assertEqual(statuses["softmax_small"], "unverified", statuses)
        self.assertIsNone(record["totals"]["geomean_speedup"])


class BenchCancelTest(BenchCase):
    def test_interrupt_cancels_the_running_job(self):
        # Ctrl-C while the first operator runs: its job is cancelled, the rest are not run, the
        # table and the record still come, and the exit status is 130.
        out = os.path.join(self.dir, "bench.json")
        proc = subprocess.Popen([CLI, "bench", "--suite", SUITE, "--output", out], cwd=self.dir,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            seen = []
            for line in proc.stderr:
                seen.append(line)
                if ": started" in line:
                    proc.send_signal(signal.SIGINT)
                    break
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stderr = "".join(seen) + stderr
        self.assertEqual(proc.returncode, 130, stdout + stderr)
        self.assertIn("[bench] cancelling...", stderr)
        with open(out) as f:
            record = json.load(f)
        statuses = [o["status"] for o in record["ops"]]
        self.assertIn(statuses[0], ("cancelled", "pass", "fail", "error"))  # it may just have ended
        self.assertEqual(statuses[1:], ["not_run", "not_run"])
        self.assertEqual(record["totals"]["not_run"], 2)
        self.assertIn("not run: 2 (interrupted)", stdout)


class BenchScaleTest(BenchCase):
    """A suite's size per target (its suite.yaml, size_scale): the bench runs a scaled copy of each
    reference and says so; the suite's files are not touched; --scale overrides the factor."""

    def make_suite(self, yaml_text):
        suite = os.path.join(self.dir, "scaled-suite")
        os.makedirs(os.path.join(suite, "activation"))
        with open(os.path.join(SUITE, "activation", "relu_small.py")) as f:
            text = f.read().replace("torch.randn(64, 256)", "torch.randn(BATCH, 256)")
        self.source = text.replace("import torch.nn as nn\n", "import torch.nn as nn\n\nBATCH = 64  # rows\n")
        with open(os.path.join(suite, "activation", "relu_small.py"), "w") as f:
            f.write(self.source)
        with open(os.path.join(suite, "suite.yaml"), "w") as f:
            f.write(yaml_text)
        return suite

    def test_the_suite_scales_for_its_backend(self):
        suite = self.make_suite("size_scale:\n  cpu: {factor: 3, constants: [ROWS, BATCH]}\n")
        out, runs = os.path.join(self.dir, "bench.json"), os.path.join(self.dir, "runs")
        p = self.bench("--suite", suite, "--output", out, "--runs-dir", runs)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            record = json.load(f)
        self.assertEqual(record["size_scale"], 3)
        op = record["ops"][0]
        self.assertEqual((op["status"], op["scaled"]), ("pass", "BATCH 64 -> 192"), op)
        copy = os.path.join(runs, "scaled-references", "activation_relu_small.py")
        with open(copy) as f:
            self.assertEqual(f.read(), self.source.replace("BATCH = 64  #", "BATCH = 192  #"))
        with open(os.path.join(suite, "activation", "relu_small.py")) as f:
            self.assertEqual(f.read(), self.source)  # the suite's own file as it was
        with open(os.path.join(op["run_dir"], "report.json")) as f:
            report = json.load(f)
        self.assertIn("scaled-references", json.dumps(report))

        # --scale 1: the references as written
        p = self.bench("--suite", suite, "--output", out, "--runs-dir", runs + "1", "--scale", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            record = json.load(f)
        self.assertEqual(record["size_scale"], 1)
        self.assertNotIn("scaled", record["ops"][0])

    def test_a_bad_rule_is_named(self):
        suite = self.make_suite("size_scale:\n  cpu: {factor: 0.5, constants: BATCH}\n")
        p = self.bench("--suite", suite)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("size_scale.cpu needs factor (an integer from 1 to 1024)", p.stderr)
        for bad in ("0", "x", "2000"):
            p = self.bench("--suite", suite, "--scale", bad)
            self.assertEqual(p.returncode, 2)
            self.assertIn("--scale must be an integer from 1 to 1024", p.stderr)


class BenchUsageTest(BenchCase):
    def test_usage_errors_exit_2(self):
        for args in (["--jobs", "0"], ["--jobs", "x"], ["--suite", os.path.join(self.dir, "none")],
                     ["--suite", SUITE, "--filter", "no-such-op"], ["--bogus"],
                     ["--suite", SUITE, "--backend", "cpu", "--dsl", "no-such-dsl"],
                     ["--seed", "0"], ["--seed", "-3"], ["--seed", "7x"], ["--trials", "0"],
                     ["--profile-runs", "0"], ["--min-speedup", "-1"], ["--min-speedup", "fast"],
                     ["--suite", SUITE, "--design-check", "never"]):
            p = self.bench(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertTrue(p.stderr.startswith("akg_cli bench: "), (args, p.stderr))

    def test_seed_and_design_check_reach_every_job(self):
        """--seed and --design-check are every job's, as akg_cli op's: the designs of a suite in
        one engine (tests/sketch/difftest/suite.py designs the operator suite this way)."""
        runs = os.path.join(self.dir, "runs")
        p = self.bench("--suite", SUITE, "--filter", "activation/", "--workflow", "design_only",
                       "--design-check", "off", "--seed", "7", "--runs-dir", runs, "--quiet")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for name in ("activation_relu_small", "activation_softmax_small"):
            with open(os.path.join(runs, name, "report.json")) as f:
                report = json.load(f)
            self.assertEqual(report["status"], "unverified", report)
            self.assertEqual(report["seed"], 7, report)
            self.assertTrue(os.path.isfile(os.path.join(runs, name, "sketch.sketch")))
            self.assertNotIn("design_check", report)  # present when the design was checked

    def test_help(self):
        p = self.bench("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--jobs N", p.stdout)
        self.assertIn("Timings with N > 1 are NOT", p.stdout)


if __name__ == "__main__":
    unittest.main()
