"""The Anthropic Messages API through the openai provider: a level with "api": "anthropic".

`akg_cli op --provider openai` against the loopback replay server's Messages API
(POST /<scenario>/<tag>/v1/messages), which answers the same recorded relu conversation as
test_openai_provider.py does, converted: a sketch that does not check and its repair, the
Conductor's routing of the wrong design, the right design. Asked plainly and streamed (the
Messages API's events), the run ends the same way and the report has the same tokens (usage's
input_tokens and output_tokens); the requests carry the key in x-api-key (never in
Authorization), anthropic-version, and the system prompt as the body's "system"."""
import json
import os
import sys
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from akgtest import REFS, ReplayTest  # noqa: E402


class AnthropicApiTest(ReplayTest):
    def setUp(self):
        super().setUp()
        os.makedirs(os.path.join(self.dir, ".akg"))

    def settings(self, stream):
        levels = {lv: {"api": "anthropic"} for lv in ("standard", "fast")}
        with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
            json.dump({"models": levels, "stream_output": stream}, f)

    def stats(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/stats/%s" % (self.port, self.tag),
                                    timeout=10) as r:
            return json.load(r)

    def check_requests(self, st, n):
        self.assertEqual(st["requests"], n, st["paths"])
        self.assertTrue(all(p.endswith("/v1/messages") for p in st["paths"]), st["paths"])
        self.assertEqual(set(st["x_api_key"]), {self.key})
        self.assertEqual(set(st["auth"]), {""})  # the key is not sent as a bearer token
        self.assertEqual(set(st["anthropic_version"]), {"2023-06-01"})
        for body in st["bodies"]:
            self.assertEqual(body["model"], "replay-coder-7b")
            self.assertGreater(body["max_tokens"], 0)
            self.assertNotIn("stream_options", body)
            self.assertTrue(all(m["role"] in ("user", "assistant") for m in body["messages"]),
                            [m["role"] for m in body["messages"]])
        self.assertIn("You are the Designer", st["bodies"][0]["system"])
        self.assertIn("The Unified Sketch language", st["bodies"][0]["system"])
        # the repair continues the conversation: the model's answer, then the checker's word
        roles = [m["role"] for m in st["bodies"][1]["messages"]]
        self.assertEqual(roles, ["user", "assistant", "user"])

    def test_messages_api(self):
        self.settings(stream=False)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--min-speedup", "0", "--profile-runs", "5", name="run",
                            timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "pass", json.dumps(report, indent=1)[-3000:])
        st = self.stats()
        self.check_requests(st, 4)
        self.assertFalse(any(b["stream"] for b in st["bodies"]))
        self.assertIn("You are the Conductor", st["bodies"][2]["system"])
        first = report["candidates"][0]
        d1 = first["design"]
        self.assertEqual(d1["settings"]["api"], "anthropic")
        self.assertEqual(d1["prompt_tokens"], 5123 + 5702)
        self.assertEqual(d1["completion_tokens"], 311 + 298)
        self.assertEqual([r["finish_reason"] for r in d1["requests"]], ["end_turn"] * 2)
        routed = first["conductor"]
        self.assertEqual((routed["routed_by"], routed["agent"]), ("model", "designer"), routed)
        self.assertEqual(routed["model"]["prompt_tokens"], 1500)
        self.assertEqual(report["design"]["prompt_tokens"], 6410)
        self.assertNotIn(self.key, p.stdout + p.stderr + json.dumps(report))

    def test_messages_api_streamed(self):
        self.settings(stream=True)
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--workflow", "design_only", "--design-check", "off", name="run",
                            timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertEqual(report["status"], "unverified", json.dumps(report)[-2000:])
        st = self.stats()
        self.check_requests(st, 2)
        self.assertTrue(all(b["stream"] for b in st["bodies"]))
        d = report["design"]
        # the tokens from message_start and message_delta, not counted from the chunks
        self.assertEqual(d["prompt_tokens"], 5123 + 5702)
        self.assertEqual(d["completion_tokens"], 311 + 298)
        self.assertFalse(any(r.get("tokens_counted") for r in d["requests"]), d["requests"])
        self.assertIn("sketch relu", d["requests"][1]["answer"])
        self.assertNotIn(self.key, p.stdout + p.stderr + json.dumps(report))


if __name__ == "__main__":
    unittest.main()
