"""The Conductor on the model: `akg_cli op --provider openai` against the loopback replay server.

Each case replays a conversation for relu (tests/providers/fixtures/script_conduct*_<n>.json):
the Designer's sketch checks but has no bind: section, so the Coder's model writes the kernel,
and that kernel does not build (a code error). Then the Conductor's model is asked where the
failure goes:
  - script-conduct: it answers (in a fence, after a sentence) that it is a design error for the
    Designer, with a suggestion; the run follows it: the next request is the Designer's, its
    prompt carries the suggestion, and the report's candidate says the model routed it;
  - script-conductcoder: it sends it back to the Coder with a suggestion, which the Coder's
    next prompt carries with the build's failure;
  - script-conductgarbage: it answers with prose; the rules route the code error to the Coder,
    whose prompt carries the build's failure, and the report says why the model was not used;
  - script-conducthang: it never answers; the conductor's level times out after 3 s and the
    rules route, as above.
The design check is off: it runs bound sketches only (see test_openai_provider.py)."""
import json
import os
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from akgtest import REFS, ReplayTest  # noqa: E402

HINT = "CONDUCTOR-HINT-7f3a"


class ConductorTest(ReplayTest):
    def use(self, scenario):
        self.env["AKG_AGENTS_BASE_URL"] = "http://127.0.0.1:%d/%s/%s/v1" % (
            self.port, scenario, self.tag)

    def stats(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/stats/%s" % (self.port, self.tag),
                                    timeout=10) as r:
            return json.load(r)

    def run_op(self, scenario, settings=None):
        self.use(scenario)
        if settings:
            os.makedirs(os.path.join(self.dir, ".akg"))
            with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
                json.dump(settings, f)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--min-speedup", "0", "--profile-runs", "5", "--design-check", "off",
                            "--max-step", "2", name="run", timeout=120)
        self.assertIsNotNone(report, p.stderr[-3000:])
        return p, report

    def assert_first_failed_by_build(self, report):
        first = report["candidates"][0]
        self.assertEqual((first["status"], first["error_class"], first["blame"]),
                         ("fail", "build_error", "code"), first)
        return first

    def test_model_sends_a_code_error_to_the_designer(self):
        p, report = self.run_op("script-conduct")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])
        st = self.stats()
        self.assertEqual(st["requests"], 5, st)
        bodies = st["bodies"]
        conductor = bodies[2]["messages"]
        self.assertIn("You are the Conductor", conductor[0]["content"])
        asked = conductor[-1]["content"]
        self.assertIn("Attempt 1 of 2 failed", asked)
        self.assertIn("`build_error`", asked)
        self.assertIn("would send it to the Coder", asked)
        self.assertIn("this is not C++", asked)  # the compiler's word, in the detail
        # the model's choice was followed: the next request is the Designer's, and it carries
        # the suggestion with the failure
        designer = bodies[3]["messages"]
        self.assertIn("You are the Designer", designer[0]["content"])
        self.assertIn("the Conductor's suggestion: Bind the sketch (%s)" % HINT,
                      designer[-1]["content"])
        self.assertIn("Attempt 1 failed", designer[-1]["content"])
        self.assertIn("You are the Coder", bodies[4]["messages"][0]["content"])

        first = self.assert_first_failed_by_build(report)
        rec = first["conductor"]
        self.assertEqual((rec["routed_by"], rec["class"], rec["agent"]),
                         ("model", "design_error", "designer"), rec)
        self.assertIn(HINT, rec["suggestion"])
        self.assertNotIn("fallback", rec)
        model = rec["model"]
        self.assertEqual((model["agent"], model["level"], model["source"]),
                         ("conductor", "fast", "openai"), model)  # cpu/cpp's agent_model_config
        self.assertEqual((model["prompt_tokens"], model["completion_tokens"]), (1200, 60), model)
        self.assertEqual(model["requests"][0]["outcome"], "ok")
        # the second attempt was a new design, not the Coder again
        self.assertEqual(report["candidates"][-1]["status"], "pass")
        self.assertIn("the model classifies it as design_error and routes it to the Designer",
                      p.stderr)
        self.assertIn("the Conductor asks replay-coder-7b", p.stderr)
        self.assertNotIn(self.key, p.stdout + p.stderr + json.dumps(report))

    def test_model_sends_a_code_error_to_the_coder(self):
        p, report = self.run_op("script-conductcoder")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])
        st = self.stats()
        self.assertEqual(st["requests"], 4, st)
        # the same design, the Coder again: its prompt holds the failure and the suggestion
        coder = st["bodies"][3]["messages"]
        self.assertIn("You are the Coder", coder[0]["content"])
        self.assertIn("The last kernel failed (build_error)", coder[-1]["content"])
        self.assertIn("The Conductor's suggestion: Write real C++ (CODER-HINT-91c2)",
                      coder[-1]["content"])
        rec = self.assert_first_failed_by_build(report)["conductor"]
        self.assertEqual((rec["routed_by"], rec["class"], rec["agent"]),
                         ("model", "local_code_error", "coder"), rec)
        self.assertIn("CODER-HINT-91c2", rec["suggestion"])
        self.assertEqual(rec["model"]["completion_tokens"], 50)

    def assert_rules_routed_to_the_coder(self, p, report, requests, why):
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])
        st = self.stats()
        self.assertEqual(st["requests"], requests, st)
        # the rules' choice: the Coder again, its prompt with the build's failure
        coder = st["bodies"][-1]["messages"]
        self.assertIn("You are the Coder", coder[0]["content"])
        self.assertIn("The last kernel failed (build_error)", coder[-1]["content"])
        self.assertIn("this is not C++", coder[-1]["content"])
        first = self.assert_first_failed_by_build(report)
        rec = first["conductor"]
        self.assertEqual((rec["routed_by"], rec["class"], rec["agent"], rec["suggestion"]),
                         ("rules", "local_code_error", "coder", ""), rec)
        self.assertIn(why, rec["fallback"])
        self.assertIn("the model's routing is not usable", p.stderr)
        self.assertIn("so the rules route it to the Coder", p.stderr)
        return rec

    def test_garbage_answer_falls_back_to_the_rules(self):
        p, report = self.run_op("script-conductgarbage")
        rec = self.assert_rules_routed_to_the_coder(p, report, 4, "holds no JSON object")
        self.assertEqual(rec["model"]["requests"][0]["outcome"], "ok")
        self.assertIn("I think the coder should", rec["model"]["requests"][0]["answer"])
        self.assertEqual(rec["model"]["completion_tokens"], 40)

    def test_timeout_falls_back_to_the_rules(self):
        started = time.time()
        p, report = self.run_op("script-conducthang",
                                {"models": {"fast": {"timeout": 3, "max_retries": 0}}})
        rec = self.assert_rules_routed_to_the_coder(p, report, 4, "(timeout)")
        self.assertEqual(rec["model"]["requests"][0]["outcome"], "timeout")
        self.assertLess(time.time() - started, 60)


if __name__ == "__main__":
    unittest.main()
