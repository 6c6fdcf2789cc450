"""End to end: `akg_cli op --provider openai` against the loopback replay server.

The server replays a recorded conversation for relu (tests/providers/fixtures/script_relu_*.json):
the first answer's sketch does not check (the provider sends the checker's diagnostics back), the
second checks but computes abs(x) (the design check fails; the Conductor's model classifies it as
a design error for the Designer, with a suggestion), the fourth holds a broken block and then the
right sketch, which passes. The
report and the store show both designs and their tokens; the API key set in the environment
reaches the server's Authorization header and nothing else: not the run folder, the store, the
CLI's output."""
import json
import os
import re
import sqlite3
import unittest
import urllib.request

from akgtest import REFS, ReplayTest


class OpenAIProviderTest(ReplayTest):
    scenario = "script-relu"

    def stats(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/stats/%s" % (self.port, self.tag),
                                    timeout=10) as r:
            return json.load(r)

    def test_wrong_design_then_right(self):
        # answers streamed (SSE, usage in the last chunk), as with the original's stream_output
        os.makedirs(os.path.join(self.dir, ".akg"))
        with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
            json.dump({"stream_output": True}, f)
        # the first verified kernel is kept (a design asked to be faster would be a fourth request)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--min-speedup", "0", "--profile-runs", "5", name="run")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])

        # four model requests: the unchecked sketch, its repair, the Conductor, the redesign
        st = self.stats()
        self.assertEqual(st["requests"], 4, st)
        self.assertTrue(all(b.get("stream") for b in st["bodies"]), st["bodies"][0].keys())
        self.assertEqual(set(st["auth"]), {"Bearer " + self.key})
        last_user = [b["messages"][-1]["content"] for b in st["bodies"]]
        self.assertIn("t9", last_user[1])  # the checker's diagnostic went back to the model
        self.assertIn("sketch.sketch:", last_user[1])
        self.assertIn("`design_error`", last_user[2])  # the Conductor's question
        self.assertIn("abs(t0)", last_user[3])  # the tried design, with the failure's class
        self.assertIn("Attempt 1 failed", last_user[3])
        self.assertIn("the Conductor's suggestion: abs(x) is not relu", last_user[3])
        self.assertIn("The Unified Sketch language", st["bodies"][0]["messages"][0]["content"])

        # the report: the wrong design's candidate, then the passing one, each with its tokens
        cands = report["candidates"]
        self.assertGreaterEqual(len(cands), 2, cands)
        first, last = cands[0], cands[-1]
        self.assertEqual(first["status"], "fail")
        self.assertEqual(first["blame"], "design")
        routed = first["conductor"]
        self.assertEqual((routed["routed_by"], routed["class"], routed["agent"]),
                         ("model", "design_error", "designer"), routed)
        self.assertEqual(routed["model"]["prompt_tokens"], 1500)
        self.assertEqual(last["status"], "pass")
        d1, d2 = first["design"], last["design"]
        self.assertEqual(d1["source"], "openai")
        self.assertEqual(d1["model"], "replay-coder-7b")
        self.assertEqual(d1["level"], "standard")  # cpu/cpp's agent_model_config
        self.assertEqual(d1["checker_rounds"], 1)
        self.assertEqual([r["sketch_checks"] for r in d1["requests"]], [False, True])
        self.assertEqual(d1["prompt_tokens"], 5123 + 5702)
        self.assertEqual(d1["completion_tokens"], 311 + 298)
        self.assertEqual(d2["checker_rounds"], 0)
        self.assertEqual(d2["prompt_tokens"], 6410)
        self.assertEqual(d2["completion_tokens"], 305)
        self.assertEqual(report["design"]["prompt_tokens"], 6410)

        # the progress: who asks which model, and each answer's tokens, as the requests go
        for line in ("attempt 1/4: the Designer asks replay-coder-7b (request 1)",
                     "attempt 1/4: the Designer asks replay-coder-7b (request 2)",
                     "attempt 1/4: replay-coder-7b answered the Designer: 5123 prompt and 311 answer tokens",
                     "attempt 2/4: the Designer asks replay-coder-7b (request 1)",
                     "attempt 2/4: replay-coder-7b answered the Designer: 6410 prompt and 305 answer tokens"):
            self.assertIn(line, p.stderr)
        asked = p.stderr.index("the Designer asks replay-coder-7b (request 1)")
        self.assertLess(asked, p.stderr.index("replay-coder-7b answered the Designer"))
        self.assertLess(p.stderr.index("replay-coder-7b answered the Designer: 6410"),
                        p.stderr.rindex("sketch  written"))

        # the store: the run's report with both designs, a row per candidate
        db = sqlite3.connect(self.env["AKG_STORE"])
        run_id, stored = db.execute("SELECT id, report FROM runs ORDER BY id DESC").fetchone()
        n = db.execute("SELECT count(*) FROM candidates WHERE run_id = ?", (run_id,)).fetchone()
        db.close()
        self.assertGreaterEqual(n[0], 2)
        stored = json.loads(stored)
        self.assertEqual(stored["candidates"][0]["design"]["prompt_tokens"], 5123 + 5702)

        # the key: in no file of the run folder, the store, or the CLI's output
        key = self.key.encode()
        self.assertNotIn(key, p.stdout.encode() + p.stderr.encode())
        seen = 0
        for root, _dirs, files in os.walk(self.dir):
            if root.startswith(os.path.join(self.dir, "home")):
                continue
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    self.assertNotIn(key, fh.read(), os.path.join(root, f))
                seen += 1
        self.assertGreater(seen, 3)

    def test_progress_while_an_answer_streams(self):
        """A streamed answer's tokens are reported as they come (at most once a second), with the
        model's name; the design alone (--workflow design_only, no check): the repaired sketch."""
        os.makedirs(os.path.join(self.dir, ".akg"))
        with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
            json.dump({"stream_output": True}, f)
        self.env["AKG_AGENTS_BASE_URL"] = "http://127.0.0.1:%d/paced-relu/%s/v1" % (self.port, self.tag)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai", "--workflow",
                            "design_only", "--design-check", "off", name="paced")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "unverified", json.dumps(report)[-2000:])
        counts = [int(m) for m in re.findall(r"replay-coder-7b is writing for the Designer: (\d+) tokens",
                                             p.stderr)]
        self.assertTrue(counts, p.stderr[-3000:])
        self.assertTrue(all(c > 0 for c in counts), counts)
        # the counts come while the answer streams, before it is reported answered
        first = p.stderr.index("is writing for the Designer")
        self.assertLess(first, p.stderr.index("replay-coder-7b answered the Designer"))

    def test_prompt_fits_a_small_context(self):
        # max_prompt_tokens (a small model's context): the Designer's prompt is cut to fit, the
        # syntax and a worked example kept, the skills within their share; without it the same
        # task's prompt is several times larger
        sizes = {}
        os.makedirs(os.path.join(self.dir, ".akg"))
        for limit in (None, 4000):
            level = {"max_prompt_tokens": limit} if limit else {}
            with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
                json.dump({"models": {"standard": level}}, f)
            before = self.stats()["requests"]
            p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                                "--workflow", "design_only", "--max-step", "1",
                                name="run%s" % limit)
            self.assertIsNotNone(report, p.stderr[-3000:])
            self.assertGreater(self.stats()["requests"], before, p.stderr[-3000:])
            body = self.stats()["bodies"][before]
            text = "".join(m["content"] for m in body["messages"])
            sizes[limit] = len(text.encode())
            self.assertIn("## Syntax", text)
            self.assertIn("## Examples", text)
            if limit:
                self.assertEqual(report["design"]["settings"]["max_prompt_tokens"], limit)
                self.assertNotIn("\n## Semantics (every", text)
                # the reference's source and the probe come on top of the shares: within 4 bytes
                # a token, with room for the task itself
                self.assertLess(sizes[limit], 4 * limit * 1.2, sizes)
        self.assertGreater(sizes[None], 1.5 * sizes[4000], sizes)

    def test_coder_on_the_model(self):
        # an unbound sketch checks but the emitter cannot lower it: the Coder's model writes the
        # kernel and model_new.py, whose library name the provider fills in. The design check
        # runs only bound sketches (an unbound one is a design error there), so it is off here:
        # with it on, the model codes only what the emitter refuses of a bound sketch
        self.env["AKG_AGENTS_BASE_URL"] = "http://127.0.0.1:%d/script-relucode/%s/v1" % (
            self.port, self.tag)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--min-speedup", "0", "--profile-runs", "5", "--design-check", "off",
                            name="run")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])
        st = self.stats()
        self.assertEqual(st["requests"], 2, st)
        coder = st["bodies"][1]["messages"]
        self.assertIn("You are the Coder", coder[0]["content"])
        self.assertIn("no bind: section", coder[-1]["content"])
        # the report says what writing the kernel cost, as it does for the design
        code = report["code"]
        self.assertEqual((code["agent"], code["model"], code["source"]), ("coder", "replay-coder-7b", "openai"))
        self.assertEqual(len(code["requests"]), 1, code)
        self.assertEqual(code["requests"][0]["outcome"], "ok", code)
        self.assertGreater(code["completion_tokens"], 0, code)
        self.assertEqual(code["completion_tokens"], code["requests"][0]["completion_tokens"], code)
        self.assertEqual(report["design"]["agent"], "designer")
        run = os.path.join(self.dir, "run")
        with open(os.path.join(run, "model_new.py")) as f:
            model_new = f.read()
        self.assertNotIn("@AKG_KERNEL_LIB@", model_new)
        libs = [f for f in os.listdir(run) if f.startswith("kernel_") and f.endswith(".so")]
        self.assertEqual(len(libs), 1, os.listdir(run))
        self.assertIn(libs[0], model_new)

    def test_no_server(self):
        # nothing listens there: the design ends with the endpoint named, in bounded time
        self.env["AKG_AGENTS_BASE_URL"] = "http://127.0.0.1:9/v1"
        settings = os.path.join(self.dir, ".akg")
        os.makedirs(settings)
        with open(os.path.join(settings, "settings.json"), "w") as f:
            json.dump({"models": {"standard": {"max_retries": 0}}}, f)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai", name="run",
                            timeout=120)
        self.assertNotEqual(p.returncode, 0)
        detail = report["error"]["detail"]
        self.assertIn("http://127.0.0.1:9/v1", detail)
        self.assertIn("(connect)", detail)
        self.assertEqual(report["candidates"], [])
        self.assertNotIn(self.key, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
