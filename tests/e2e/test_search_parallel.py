"""End to end: a search keeps several candidates in flight on the engine's harness workers
(engine/workflows/search.c, "Candidates in flight"), on ReLU's fixture sketch (BLOCK =
tune(16384, 4096, 65536): candidate 0, the default design, and two more).

- with --devices 2 (two CPU workers) evolve's two candidates of its round run at once: their
  [started_s, finished_s] intervals overlap, while no two profiles overlap, nor a profile and a
  verification (a timing never shares the cores with other work of the pool); the report says
  how many ran at once and each candidate's worker;
- adaptive_search refills its two places as candidates end: two in flight at once as well
  (with one worker, the default, one at a time: test_search.py checks it);
- SIGKILL with two candidates in flight loses no finished one, and the rerun takes the finished
  ones from the store and runs the rest again.

Two verification trials and five timed runs keep each run short (about 8 s each here); the
search runs (ParallelSearchTest) and the kill and resume (ParallelResumeTest) are two tests of
ctest."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import unittest

from akgtest import CLI, REFS, SOURCE, CliTest, wait_for_candidates

RELU = os.path.join(REFS, "relu.py")
SKETCH = os.path.join(SOURCE, "tests", "fixtures", "sketches", "relu.sketch")
BRIEF = ["--trials", "2", "--profile-runs", "5", "--seed", "7"]
EVOLVE = ["--workflow", "evolve", "--sketch", SKETCH, "--max-rounds", "1", "--parallel-num", "2"]


def block_of(sketch_text):
    m = re.search(r"BLOCK\s*=\s*tune\(\s*(\d+)", sketch_text or "")
    return int(m.group(1)) if m else None


def overlap(a, b):
    """Whether the intervals (start, end) a and b share a moment."""
    return max(a[0], b[0]) < min(a[1], b[1])


class SearchRuns(CliTest):
    def run_search(self, name, *args):
        p, report = self.op(RELU, *args, *BRIEF, name=name, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIsNotNone(report, p.stderr[-3000:])
        return p, report

    def check_timings_apart(self, report):
        """No profile overlaps another profile or a verification; returns the profiles."""
        cands = report["candidates"]
        timed = [(c["step"], op, (t["started_s"], t["finished_s"]))
                 for c in cands for op, t in c.get("timings", {}).items()]
        profiles = [t for t in timed if t[1] == "profile"]
        self.assertEqual(len(profiles), len([c for c in cands if c["status"] == "pass"]), timed)
        for step, _, span in profiles:
            self.assertLessEqual(span[0], span[1])
            for other_step, op, other in timed:
                if (other_step, op) != (step, "profile"):
                    self.assertFalse(overlap(span, other),
                                     "the profile of step %d overlaps the %s of step %d: %s"
                                     % (step, op, other_step, json.dumps(timed)))
        return profiles


class ParallelSearchTest(SearchRuns):
    def test_evolve_two_workers(self):
        p, report = self.run_search("evolve2", *EVOLVE, "--devices", "2")
        search = report["search"]
        self.assertEqual(search["workers"], 2)
        self.assertEqual(search["in_flight_limit"], 2)
        self.assertEqual(search["max_in_flight"], 2, p.stderr[-3000:])
        cands = report["candidates"]
        self.assertEqual(len(cands), 3)
        self.assertEqual([c["step"] for c in cands], sorted(c["step"] for c in cands))
        a, b = cands[1], cands[2]
        for c in (a, b):
            self.assertEqual(c["status"], "pass", c)
            self.assertIn(c["worker"], (0, 1))
            self.assertLess(c["started_s"], c["finished_s"])
            self.assertLessEqual(c["started_s"], c["timings"]["verify"]["started_s"])
            self.assertGreaterEqual(c["finished_s"], c["timings"]["profile"]["finished_s"])
        # the round's two candidates ran at once ...
        self.assertTrue(overlap((a["started_s"], a["finished_s"]),
                                (b["started_s"], b["finished_s"])), json.dumps(cands))
        # ... and their timings did not
        self.check_timings_apart(report)
        self.assertIn("2 in flight at once (2 workers)", p.stderr)

    def test_adaptive_two_workers(self):
        p, report = self.run_search("adaptive2", "--workflow", "adaptive_search", "--sketch",
                                    SKETCH, "--max-total-tasks", "3", "--devices", "2")
        search = report["search"]
        self.assertEqual(search["candidates"], 3)
        self.assertEqual(search["max_in_flight"], 2, p.stderr[-3000:])
        a, b = report["candidates"][1:]
        self.assertTrue(overlap((a["started_s"], a["finished_s"]),
                                (b["started_s"], b["finished_s"])), json.dumps(a) + json.dumps(b))
        self.check_timings_apart(report)


class ParallelResumeTest(SearchRuns):
    def test_sigkill_in_flight_then_resume(self):
        out = os.path.join(self.dir, "killed")
        args = [*EVOLVE, *BRIEF, "--devices", "2", "--output", out, RELU]
        proc = subprocess.Popen([CLI, "op", *args], cwd=self.dir, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            finished, lines = wait_for_candidates(proc, 2, 120)  # candidate 0 and one more
            self.assertEqual(finished, 2, "".join(lines[-40:]))
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            rows = db.execute(
                "SELECT c.step, c.status, c.sketch FROM candidates c JOIN runs r ON "
                "r.id = c.run_id WHERE r.output_dir = ? ORDER BY c.step", (out,)).fetchall()
        finally:
            db.close()
        # every finished candidate is in the store: the default design and at least one more
        done = {block_of(s): st for _, st, s in rows if st in ("pass", "fail")}
        self.assertIn(16384, done, rows)
        del done[16384]
        self.assertGreaterEqual(len(done), 1, rows)
        p, report = self.run_search("resumed", *EVOLVE, "--devices", "2")
        search = report["search"]
        self.assertEqual(search["resumed"], len(done), p.stderr[-3000:])
        cands = report["candidates"]
        self.assertEqual(len(cands), 3)
        resumed = {c["search"]["tune"]["BLOCK"] for c in cands if c.get("resumed")}
        self.assertEqual(resumed, set(done))
        # the one in flight at the kill (when one was) runs again
        rerun = {c["search"]["tune"]["BLOCK"] for c in cands[1:] if not c.get("resumed")}
        self.assertEqual(rerun, {4096, 65536} - set(done))


if __name__ == "__main__":
    unittest.main()
