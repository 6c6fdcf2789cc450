"""End to end: results cached and searches resumed by task (engine/workflows/search_cache.c).

- ResumeTest: an evolve search on ReLU (the fixture sketch's BLOCK = tune(16384, 4096, 65536):
  candidate 0 and two more) is SIGKILLed once two candidates have finished; the store passes
  PRAGMA integrity_check; the rerun takes the finished search candidate from the store (not
  run again: no row of it in the new run) and completes the search.
- CacheTest: a second `akg_cli op` on the same reference answers from the store (cached, the
  same files, in well under a second, no harness worker); --no-cache runs the pipeline; an
  edited reference (another fingerprint) and a kernel another judge verified are not served.

Two verification trials and five timed runs keep each run short; about 40 s each here."""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import unittest

from akgtest import CLI, REFS, SOURCE, CliTest, wait_for_candidates

RELU = os.path.join(REFS, "relu.py")
SKETCH = os.path.join(SOURCE, "tests", "fixtures", "sketches", "relu.sketch")
BRIEF = ["--trials", "2", "--profile-runs", "5", "--threads", "1", "--seed", "7"]
SEARCH = ["--workflow", "evolve", "--sketch", SKETCH, "--max-rounds", "1", "--parallel-num", "2"]


def block_of(sketch_text):
    m = re.search(r"BLOCK\s*=\s*tune\(\s*(\d+)", sketch_text or "")
    return int(m.group(1)) if m else None


class ResumeTest(CliTest):
    def rows(self, run_dir):
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            return db.execute(
                "SELECT c.step, c.status, c.sketch FROM candidates c JOIN runs r ON r.id = c.run_id"
                " WHERE r.output_dir = ? ORDER BY c.step", (run_dir,)).fetchall()
        finally:
            db.close()

    def test_sigkill_then_resume(self):
        out = os.path.join(self.dir, "killed")
        proc = subprocess.Popen([CLI, "op", *SEARCH, *BRIEF, "--output", out, RELU],
                                cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            finished, lines = wait_for_candidates(proc, 2, 300)
            self.assertEqual(finished, 2, "".join(lines[-40:]))
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
        finally:
            db.close()
        killed = [r for r in self.rows(out) if r[1] in ("pass", "fail")]
        self.assertGreaterEqual(len(killed), 2, killed)
        self.assertEqual([r[0] for r in killed[:2]], [1, 2], killed)
        done = {block_of(r[2]): r[1] for r in killed[1:]}  # the search's (1 is the default)

        p, report = self.op(RELU, *SEARCH, *BRIEF, name="again", timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass")
        search = report["search"]
        self.assertEqual(search["resumed"], len(done), p.stderr[-3000:])
        self.assertRegex(p.stderr, r"resumed %d finished candidates? from the store" % len(done))
        cands = report["candidates"]
        self.assertEqual(len(cands), 3, json.dumps(cands, indent=1))
        resumed = [c for c in cands if c.get("resumed")]
        self.assertEqual({c["search"]["tune"]["BLOCK"]: c["status"] for c in resumed}, done)
        self.assertEqual(sorted(c["resumed_from"]["step"] for c in resumed),
                         [r[0] for r in killed[1:]])
        # not redone: the new run's rows are the default design and the blocks left
        again = self.rows(os.path.join(self.dir, "again"))
        blocks = [block_of(r[2]) for r in again]
        self.assertFalse(set(blocks[1:]) & set(done), (blocks, done))
        self.assertEqual(sorted(blocks[1:] + list(done)), [4096, 65536])
        # the search completed: every block tried, the curve has a point a candidate
        self.assertEqual(search["candidates"], 3)
        self.assertEqual(len(search["best_so_far"]), 3)
        self.assertIn("end", search)
        # the kept kernel's files are in the run folder, whichever candidate it was
        kept = os.path.join(self.dir, "again")
        with open(os.path.join(kept, "sketch.sketch")) as f:
            kept_block = block_of(f.read())
        self.assertEqual(kept_block, [c for c in cands if c["step"] == report["kept_step"]][0]
                         ["search"]["tune"]["BLOCK"])
        self.assertTrue(os.path.exists(report["paths"]["model_new"]))


class CacheTest(CliTest):
    def test_second_run_is_cached(self):
        ref = os.path.join(self.dir, "relu.py")
        shutil.copyfile(RELU, ref)
        flags = [*BRIEF, "--min-speedup", "0"]
        p, first = self.op(ref, *flags, name="first")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(first["status"], "pass")
        self.assertNotIn("cached", first)

        start = time.monotonic()
        p, second = self.op(ref, *flags, name="second")
        wall = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIs(second.get("cached"), True, p.stderr[-3000:])
        self.assertEqual(second["cached_from"]["run_id"], first["run_id"])
        self.assertEqual(second["status"], "pass")
        self.assertNotIn("[akg] verify", p.stderr)  # nothing ran
        # the same files, written from the store
        a, b = os.path.join(self.dir, "first"), os.path.join(self.dir, "second")
        for key in ("sketch", "kernel", "model_new", "library"):
            if key not in first["paths"]:
                continue
            name = os.path.basename(first["paths"][key])
            self.assertEqual(os.path.basename(second["paths"][key]), name)
            with open(os.path.join(a, name), "rb") as f1, open(os.path.join(b, name), "rb") as f2:
                self.assertEqual(f1.read(), f2.read(), name)
        self.assertEqual(second["perf"]["speedup"], first["perf"]["speedup"])
        # no worker, no compiler: a process's start and a few reads (0.05 s here)
        self.assertLess(wall, 2.0)
        self.assertLess(second["elapsed_s"], 0.5)

        # the cached files are a working kernel: the judge verifies them as given
        p, checked = self.op(ref, "--workflow", "verifier_only", "--kernel",
                             second["paths"]["model_new"], "--trials", "2", "--profile-runs", "5",
                             "--threads", "1", name="check")
        self.assertEqual(checked["status"], "pass", p.stderr[-3000:])

        # --no-cache runs the pipeline
        p, fresh = self.op(ref, *flags, "--no-cache", name="fresh")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("cached", fresh)
        self.assertIn("[akg] verify", p.stderr)
        self.assertGreater(fresh["run_id"], first["run_id"])

        # another judge's kernels are never served
        db = sqlite3.connect(os.path.join(self.dir, "akg.db"))
        try:
            db.execute("UPDATE runs SET judge = 'another judge'")
            db.commit()
        finally:
            db.close()
        p, rejudged = self.op(ref, *flags, name="rejudged")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("cached", rejudged)
        self.assertIn("[akg] verify", p.stderr)

        # an edited reference is another task: not served from the cache
        with open(ref, "a") as f:
            f.write("\n# edited: another fingerprint\n")
        p, edited = self.op(ref, *flags, name="edited")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("cached", edited)
        self.assertNotEqual(edited["reference_hash"], first["reference_hash"])


if __name__ == "__main__":
    unittest.main()
