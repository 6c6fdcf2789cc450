"""End to end: the search workflows on one small operator (ReLU) whose sketch has a tune()
choice (BLOCK = tune(16384, 4096, 65536), tests/fixtures/sketches/relu.sketch).

- evolve runs its candidates (the default design is candidate 0), stores each one, returns the
  fastest verified one and never one slower than the default design's;
- adaptive_search runs its candidates and reports its UCB settings (from the DSL config's
  adaptive_search: section, the flag --max-total-tasks winning) and the best-so-far curve;
- a bad value in the config's evolve: section stops akg_cli op before anything runs, naming
  the file, the key, the value and the range;
- Ctrl-C or SIGKILL mid-search keeps every finished candidate in the store.

Small budgets (--max-rounds 1, --parallel-num 2, --max-total-tasks 3), two verification trials
and five timed runs keep each run short on a shared machine."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import unittest

from akgtest import CLI, REFS, SOURCE, CliTest, wait_for_candidates

HERE = os.path.dirname(os.path.abspath(__file__))
RELU = os.path.join(REFS, "relu.py")
SKETCH = os.path.join(SOURCE, "tests", "fixtures", "sketches", "relu.sketch")
BRIEF = ["--trials", "2", "--profile-runs", "5", "--threads", "1", "--seed", "7"]


def home_with_config(root, replacements):
    """A data dir under root that is SOURCE (a link to each of its entries) but for
    backends/cpu/cpp/config.yaml: SOURCE's text with each (old, new) of replacements made."""
    def link_all_but(src, dst, keep):
        os.makedirs(dst)
        for name in os.listdir(src):
            if name != keep:
                os.symlink(os.path.join(src, name), os.path.join(dst, name))
    home = os.path.join(root, "home")
    link_all_but(SOURCE, home, "backends")
    link_all_but(os.path.join(SOURCE, "backends"), os.path.join(home, "backends"), "cpu")
    link_all_but(os.path.join(SOURCE, "backends", "cpu"), os.path.join(home, "backends", "cpu"),
                 "cpp")
    cpp = os.path.join(SOURCE, "backends", "cpu", "cpp")
    link_all_but(cpp, os.path.join(home, "backends", "cpu", "cpp"), "config.yaml")
    with open(os.path.join(cpp, "config.yaml")) as f:
        text = f.read()
    for old, new in replacements:
        if old not in text:
            raise AssertionError("%r is not in the cpu/cpp config" % old)
        text = text.replace(old, new)
    config = os.path.join(home, "backends", "cpu", "cpp", "config.yaml")
    with open(config, "w") as f:
        f.write(text)
    return home, config


def block_of(sketch_text):
    """The BLOCK value the Coder takes: the first of its tune()."""
    m = re.search(r"BLOCK\s*=\s*tune\(\s*(\d+)", sketch_text)
    return int(m.group(1)) if m else None


class SearchTest(CliTest):
    def stored(self, run_dir):
        """(step, status, sketch) of the store's candidates of the run written to run_dir."""
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            rows = db.execute(
                "SELECT c.step, c.status, c.sketch FROM candidates c JOIN runs r ON r.id = c.run_id"
                " WHERE r.output_dir = ? ORDER BY c.step", (run_dir,)).fetchall()
        finally:
            db.close()
        return rows

    def check_search(self, report, run_dir, expected, stderr):
        try:
            self.check_search_report(report, run_dir, expected)
        except Exception as e:  # the run's words with any surprise, to tell why
            raise AssertionError("%r\nreport: %s\nstderr: %s" % (
                e, json.dumps(report)[-4000:], stderr[-4000:])) from e

    def check_search_report(self, report, run_dir, expected):
        cands = report["candidates"]
        self.assertEqual(len(cands), expected, json.dumps(cands, indent=1))
        search = report["search"]
        self.assertEqual(search["candidates"], expected)
        # one harness worker (the default --devices): one candidate in flight at a time
        self.assertEqual((search["workers"], search["max_in_flight"]), (1, 1))
        later = cands[1:]
        for a, b in zip(later, later[1:]):
            if "finished_s" in a and "started_s" in b:
                self.assertLessEqual(a["finished_s"], b["started_s"], json.dumps(cands))
        values = search["tunables"]["BLOCK"]
        self.assertEqual(sorted(values, key=int), ["4096", "16384", "65536"])
        # every candidate is a distinct choice, candidate 0 the default design (the first value)
        blocks = [c["search"]["tune"]["BLOCK"] for c in cands]
        self.assertEqual(blocks[0], int(values[0]))
        self.assertEqual(len(set(blocks)), len(blocks), blocks)
        # each candidate is in the store with the sketch it was lowered from
        rows = self.stored(run_dir)
        self.assertEqual([r[0] for r in rows], [c["step"] for c in cands])
        self.assertEqual([block_of(r[2]) for r in rows], blocks)
        # the kept kernel is the fastest verified one, unless timed again it was not faster than
        # the default design (candidate 0): then that one; never one slower than the default
        passed = [c for c in cands if c["status"] == "pass"]
        self.assertTrue(passed)
        best = max(passed, key=lambda c: c["speedup"])
        confirm = search.get("confirmation")
        if best is cands[0]:
            self.assertIsNone(confirm)
        else:
            self.assertEqual(confirm["candidate"], cands.index(best))
            if confirm["kept"] == "default":
                self.assertLessEqual(confirm["best_speedup"], confirm["default_speedup"])
                best = cands[0]
            else:
                self.assertGreater(confirm["best_speedup"], confirm["default_speedup"])
        self.assertEqual(report["kept_step"], best["step"])
        self.assertAlmostEqual(report["perf"]["speedup"], best["speedup"], places=9)
        self.assertGreaterEqual(report["perf"]["speedup"], cands[0]["speedup"])
        # the best-so-far curve: one point a candidate, never falling, ending at the fastest
        curve = search["best_so_far"]
        self.assertEqual(len(curve), expected)
        self.assertTrue(all(a <= b for a, b in zip(curve, curve[1:])), curve)
        self.assertAlmostEqual(curve[-1], max(c["speedup"] for c in passed), places=9)
        # the curve drawn next to the report: one point a candidate
        with open(os.path.join(run_dir, "search_curve.svg")) as f:
            svg = f.read()
        points = re.search(r'<polyline[^>]*points="([^"]*)"', svg)
        self.assertIsNotNone(points, svg)
        self.assertEqual(len(points.group(1).split()), expected)
        # the run folder holds the kept candidate's sketch
        with open(os.path.join(run_dir, "sketch.sketch")) as f:
            self.assertEqual(block_of(f.read()), best["search"]["tune"]["BLOCK"])

    def test_evolve(self):
        with open(SKETCH) as f:
            before = f.read()
        p, report = self.op(RELU, "--workflow", "evolve", "--sketch", SKETCH, "--max-rounds", "1",
                            "--parallel-num", "2", *BRIEF, name="evolve", timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass")
        self.assertEqual(report["workflow"], "evolve")
        self.assertEqual(report["search"]["settings"]["num_islands"], 2)
        self.check_search(report, os.path.join(self.dir, "evolve"), 3, p.stderr)
        islands = [c["search"]["island"] for c in report["candidates"][1:]]
        self.assertEqual(islands, [0, 1])  # slot s of a round belongs to island s mod 2
        self.assertIn("search  evolve: candidate 3/3", p.stderr)
        with open(SKETCH) as f:
            self.assertEqual(f.read(), before)  # the user's file is never edited

    def test_failed_candidate_recorded_never_returned(self):
        sketch = os.path.join(HERE, "search_sketches", "relu_bad_choice.sketch")
        p, report = self.op(RELU, "--workflow", "evolve", "--sketch", sketch, "--max-rounds", "1",
                            "--parallel-num", "2", *BRIEF, name="bad", timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        run_dir = os.path.join(self.dir, "bad")
        cands = report["candidates"]
        self.assertEqual(len(cands), 3)
        zero = [c for c in cands if c["search"]["tune"]["BLOCK"] == 0]
        self.assertEqual(len(zero), 1, cands)
        self.assertEqual(zero[0]["status"], "fail")
        self.assertEqual(zero[0]["error_class"], "design_error")
        self.assertIn("range() step must be positive", zero[0]["detail"])
        self.assertNotEqual(report["kept_step"], zero[0]["step"])
        stored = {r[0]: r[1] for r in self.stored(run_dir)}
        self.assertEqual(stored[zero[0]["step"]], "fail")
        self.assertEqual(report["search"]["verified"], 2)
        with open(os.path.join(run_dir, "sketch.sketch")) as f:
            self.assertNotEqual(block_of(f.read()), 0)

    def test_adaptive_search(self):
        # the config's section sets the search; the flag wins over its max_total_tasks
        self.env["AKG_HOME"], _ = home_with_config(self.dir, [
            ("exploration_coef: 1.414", "exploration_coef: 2.5"),
            ("max_total_tasks: 12", "max_total_tasks: 20"), ("patience: 3", "patience: 4")])
        p, report = self.op(RELU, "--workflow", "adaptive_search", "--max-total-tasks", "3",
                            *BRIEF, name="adaptive", timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["workflow"], "adaptive_search")
        settings = report["search"]["settings"]
        self.assertEqual(settings["exploration_coef"], 2.5)
        self.assertEqual(settings["patience"], 4)
        self.assertEqual(settings["initial_task_count"], 4)  # left as it was: the default
        self.assertEqual(settings["max_total_tasks"], 3)
        # the builtin design of ReLU: the same tune() as the fixture
        self.check_search(report, os.path.join(self.dir, "adaptive"), 3, p.stderr)

    def test_bad_budget(self):
        p = self.akg("op", "--workflow", "evolve", "--max-rounds", "0", RELU)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--max-rounds 0: expected a whole number", p.stderr)

    def test_bad_config_value(self):
        self.env["AKG_HOME"], config = home_with_config(
            self.dir, [("  parallel_num: 4", "  parallel_num: 0")])
        p = self.akg("op", "--workflow", "evolve", "--output", os.path.join(self.dir, "out"),
                     RELU)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("%s: evolve.parallel_num is 0; it must be a whole number from 1 to 1000 "
                      "(the candidates a round)" % config, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out")))

    def test_ctrl_c_keeps_finished_candidates(self):
        rows, proc = self.interrupt(signal.SIGINT, "cancelled")
        self.assertEqual(proc.returncode, 130)
        with open(os.path.join(self.dir, "cancelled", "report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["status"], "cancelled")
        self.assertGreaterEqual(len(report["candidates"]), 2)

    def test_sigkill_keeps_finished_candidates(self):
        rows, proc = self.interrupt(signal.SIGKILL, "killed")
        self.assertEqual(proc.returncode, -signal.SIGKILL)

    def interrupt(self, sig, name):
        """Starts an evolve search, sends sig to its process group once two candidates have
        finished, and checks that the store holds them; returns (their rows, the process)."""
        out = os.path.join(self.dir, name)
        proc = subprocess.Popen(
            [CLI, "op", "--workflow", "evolve", "--sketch", SKETCH, "--max-rounds", "3",
             "--parallel-num", "4", *BRIEF, "--output", out, RELU],
            cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            finished, lines = wait_for_candidates(proc, 2, 400)
            self.assertEqual(finished, 2, "".join(lines[-40:]))
            # SIGINT: what Ctrl-C sends to the terminal's group
            os.killpg(proc.pid, sig)
            proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        rows = self.stored(out)
        finished_rows = [r for r in rows if r[1] in ("pass", "fail")]
        self.assertGreaterEqual(len(finished_rows), 2, rows)
        self.assertEqual(len({block_of(r[2]) for r in finished_rows}), len(finished_rows))
        return finished_rows, proc


if __name__ == "__main__":
    unittest.main()
