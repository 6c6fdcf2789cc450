"""The model's transcript in the report and the store, also when no design came of it.

Against the loopback replay server's `script-nosketch` conversation (a model that answers with
chatter and Python, never a sketch), `akg_cli op --provider openai` asks three times (the
answer, then two repairs with the checker's word) and ends with a design error. The report and
the store's copy of it must still show the three requests: each one's outcome, tokens, what
was asked last and what the model answered, with the API key in none of it."""
import json
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from akgtest import REFS, ReplayTest  # noqa: E402


class TranscriptTest(ReplayTest):
    scenario = "script-nosketch"

    def test_failed_design_keeps_the_transcript(self):
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--max-step", "1", name="run", timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr[-3000:])
        self.assertEqual(report["status"], "error")  # no candidate: the design failed
        self.assertEqual(report["error"]["class"], "design_error", report["error"])
        self.assertIn("no sketch that checks in 3 answers", report["error"]["detail"])

        db = sqlite3.connect(self.env["AKG_STORE"])
        (stored,) = db.execute("SELECT report FROM runs").fetchone()
        db.close()
        for where, r in (("report.json", report), ("the store", json.loads(stored))):
            design = r.get("design")
            self.assertIsNotNone(design, where)
            self.assertEqual(design["source"], "openai", where)
            reqs = design["requests"]
            self.assertEqual(len(reqs), 3, (where, reqs))
            self.assertEqual(design["prompt_tokens"], 3 * 5000, where)
            self.assertEqual(design["completion_tokens"], 3 * 40, where)
            for i, req in enumerate(reqs):
                self.assertEqual(req["outcome"], "ok", (where, req))
                self.assertEqual(req["finish_reason"], "stop", (where, req))
                self.assertFalse(req["sketch_checks"], (where, req))
                self.assertIn("ReLU keeps the positive values", req["answer"], (where, i))
            # the first request's last message is the Designer's prompt (the reference in it),
            # the repairs' the checker's word on the answer before
            self.assertIn("class Model", reqs[0]["asked"], where)
            self.assertIn("sketch NAME {", reqs[1]["asked"], where)
            self.assertLessEqual(len(reqs[0]["asked"]), 8000 + 200, where)

        key = self.key.encode()
        for root, _dirs, files in os.walk(self.dir):
            if root.startswith(os.path.join(self.dir, "home")):
                continue
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    self.assertNotIn(key, fh.read(), os.path.join(root, f))


if __name__ == "__main__":
    unittest.main()
