"""Transcript tests of "Generate kernel for this" on a selection in a model file that is not a
reference: selection -> code action -> akg.generateForSelection -> the job (CPU backend, built-in
provider) -> "Use the generated kernel" -> workspace/applyEdit. The test applies the edit to the
file and runs the edited model and the original on the same inputs with the harness's PyTorch:
the outputs must agree and the kernel must have run. A selection the TaskConstructor cannot
handle gives a diagnostic (at the selection, or at the name whose shape it cannot know) and an
error answer, and the server goes on."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, path_uri  # noqa: E402

PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
JOB_TIMEOUT = 120

MODEL = '''import torch
import torch.nn as nn


class Act(nn.Module):
    def forward(self, x):
        # akg: x: f32[16, 64]
        return torch.sigmoid(x) * x


class Block(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        # akg: h: f32[16, 64]
        y = torch.relu(h)
        return self.out(y) * 2.0


def make():
    return nn.Sequential(Block(64), Act())
'''

# Runs the original and the edited model on the same weights and inputs; prints what it saw.
RUNNER = r'''
import importlib.util, json, sys
import torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

original, edited = load(sys.argv[1], "original"), load(sys.argv[2], "edited")
torch.manual_seed(1)
a = original.make()
torch.manual_seed(1)
b = edited.make()
outs = []
for seed in (2, 3):
    torch.manual_seed(seed)
    x = torch.randn(16, 64)
    with torch.no_grad():
        outs.append((a(x), b(x)))
kernels = edited._akg_kernel.__defaults__[0] if hasattr(edited, "_akg_kernel") else {}
print(json.dumps({
    "close": all(torch.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in outs),
    "max_abs": max(float((p - q).abs().max()) for p, q in outs),
    "kernels_loaded": sorted(kernels),
    "state_dict_same": sorted(a.state_dict()) == sorted(b.state_dict()),
}))
'''


def apply_edits(text, edits):
    """Applies LSP TextEdits (UTF-16 positions; the texts here are ASCII) to text."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)

    def offset(pos):
        if pos["line"] >= len(starts):
            return len(text)
        line_end = starts[pos["line"] + 1] - 1 if pos["line"] + 1 < len(starts) else len(text)
        return min(starts[pos["line"]] + pos["character"], line_end)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"])
                    for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def line_of(text, needle):
    return [i for i, l in enumerate(text.splitlines()) if needle in l][0]


class SelectionCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-lsp-selection-")
        self.ws = os.path.join(self.tmp.name, "ws")
        os.makedirs(self.ws)
        env = {"AKG_STORE": os.path.join(self.tmp.name, "store.db"), "HOME": self.tmp.name}
        settings = {"targets": ["cpu/cpp"]}
        self.c = Client(env=env, settings=settings, cwd=self.tmp.name)
        caps = {
            "window": {"workDoneProgress": True, "showDocument": {"support": True}},
            "workspace": {"configuration": True, "applyEdit": True,
                          "workspaceEdit": {"documentChanges": True}},
            "textDocument": {"publishDiagnostics": {"versionSupport": True}},
        }
        self.c.initialize(root=self.ws, capabilities=caps, options=settings)

    def tearDown(self):
        self.c.kill()
        self.tmp.cleanup()

    def write_model(self, text, name="block.py"):
        path = os.path.join(self.ws, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path, self.c.open(path, text)

    def actions(self, uri, first, last):
        return self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": first, "character": 0},
                      "end": {"line": last + 1, "character": 0}},
            "context": {"diagnostics": []}})["result"]

    def command(self, action):
        return self.c.request("workspace/executeCommand", {
            "command": action["command"]["command"], "arguments": action["command"]["arguments"]})


class GenerateAndUse(SelectionCase):
    def generate(self, uri, first, last, start_char=0, end_char=None):
        """Selection -> code action -> akg.generateForSelection; the command's answer."""
        rng = {"start": {"line": first, "character": start_char},
               "end": {"line": last + 1, "character": 0} if end_char is None
               else {"line": last, "character": end_char}}
        actions = self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": rng,
            "context": {"diagnostics": []}})["result"]
        generate = [a for a in actions if a["command"]["command"] == "akg.generateForSelection"]
        self.assertEqual(len(generate), 1, actions)
        self.assertEqual(generate[0]["title"], "akg: Generate kernel for this")
        self.assertEqual(generate[0]["kind"], "refactor.akg")
        # keep the job short: a few timed runs, the first verified kernel kept
        generate[0]["command"]["arguments"][0].update({"profileRuns": 3, "minSpeedup": 0})
        r = self.command(generate[0])
        self.assertIn("result", r, r)
        task = r["result"]["task"]
        self.assertEqual(task, os.path.join(self.ws, ".akg", "tasks", r["result"]["name"] + ".py"))
        with open(task, encoding="utf-8") as f:
            reference = f.read()
        self.assertIn("class Model(nn.Module):", reference)
        self.assertIn("def get_inputs():", reference)
        return r["result"]

    def finished(self, uri, started):
        done = self.c.notification("akg/jobFinished", lambda p: p["id"] == started["jobId"],
                                   JOB_TIMEOUT)["params"]
        self.assertEqual(done["status"], "pass", done)
        self.assertEqual(done["modelUri"], uri)
        self.assertEqual(done["uri"], path_uri(started["task"]))
        ask = self.c.wait_for(lambda m: m.get("method") == "window/showMessageRequest" and
                              started["name"] in m["params"]["message"], 10, "showMessageRequest")
        self.assertEqual([a["title"] for a in ask["params"]["actions"]], ["Use the generated kernel"])
        return done

    def use(self, action_or_arg, version):
        """Runs akg.useGeneratedKernel; the edits of the workspace/applyEdit it sends."""
        if "command" in action_or_arg:
            r = self.command(action_or_arg)
        else:
            r = self.c.request("workspace/executeCommand", {"command": "akg.useGeneratedKernel",
                                                            "arguments": [action_or_arg]})
        self.assertIn("result", r, r)
        apply = self.c.wait_for(lambda m: m.get("method") == "workspace/applyEdit", 10,
                                "workspace/applyEdit")["params"]
        self.assertEqual(apply["label"], r["result"]["label"])
        changes = apply["edit"]["documentChanges"]
        self.assertEqual(len(changes), 1)  # one edit of the model: one undo
        self.assertEqual(changes[0]["textDocument"]["version"], version)
        return changes[0]["edits"]

    def test_statements_and_class_to_kernels_same_outputs(self):
        path, uri = self.write_model(MODEL)
        # two selections, their jobs side by side: statements in forward, a class under the cursor
        first, last = line_of(MODEL, "# akg: h"), line_of(MODEL, "y = torch.relu")
        stmts = self.generate(uri, first, last)
        act_row = line_of(MODEL, "class Act(")
        act = self.generate(uri, act_row, act_row, 6, 6)
        create = self.c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", 10,
                                 "workDoneProgress/create")
        self.assertIn(create["params"]["token"], ("akg-job-%d" % stmts["jobId"],
                                                  "akg-job-%d" % act["jobId"]))
        self.finished(uri, stmts)
        self.finished(uri, act)

        # the statements' kernel, from the code action on their lines
        use = [a for a in self.actions(uri, first, last)
               if a["command"]["command"] == "akg.useGeneratedKernel"]
        self.assertEqual(len(use), 1, use)
        edited = apply_edits(MODEL, self.use(use[0], 1))
        self.assertNotIn("y = torch.relu(h)", edited)
        self.assertIn("y = _akg_on(self, ", edited)
        self.assertIn("# akg: h: f32[16, 64]", edited)  # the shape comment stays
        self.assertEqual(edited.count("def _akg_kernel("), 1)
        self.c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": edited}]})
        # the class's kernel, its lines moved by the first edit; the helpers are not added twice
        edited = apply_edits(edited, self.use({"uri": uri, "jobId": act["jobId"]}, 2))
        self.assertEqual(edited.count("def _akg_kernel("), 1)
        self.assertIn("class Act(nn.Module):", edited)  # the original stays, rebound after it
        self.assertIn('\nAct = _akg_kernel("akg_output/', edited)
        self.c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                 "contentChanges": [{"text": edited}]})
        row = line_of(edited, "class Act(")
        self.assertEqual([a for a in self.actions(uri, row, row)
                          if a["command"]["command"] == "akg.useGeneratedKernel"], [])

        original = os.path.join(self.tmp.name, "original_block.py")
        with open(original, "w", encoding="utf-8") as f:
            f.write(MODEL)
        with open(path, "w", encoding="utf-8") as f:
            f.write(edited)
        run = subprocess.run([PYTHON, "-c", RUNNER, original, path], capture_output=True,
                             text=True, timeout=120, cwd=self.tmp.name)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:] + "\n" + edited)
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertTrue(seen["close"], seen)
        self.assertEqual(len(seen["kernels_loaded"]), 2, seen)  # both kernels ran
        self.assertTrue(all(k.endswith("model_new.py") for k in seen["kernels_loaded"]), seen)
        self.assertTrue(seen["state_dict_same"], seen)


class ConstructionFails(SelectionCase):
    def diagnostics(self, uri):
        return self.c.notification("textDocument/publishDiagnostics",
                                   lambda p: p["uri"] == uri and p["diagnostics"], 10)["params"]

    def test_missing_shape_and_unsupported_construct(self):
        text = MODEL.replace("        # akg: h: f32[16, 64]\n", "")
        path, uri = self.write_model(text)
        row = line_of(text, "y = torch.relu")
        generate = [a for a in self.actions(uri, row, row)
                    if a["command"]["command"] == "akg.generateForSelection"][0]
        r = self.command(generate)
        self.assertEqual(r["error"]["code"], -32803, r)
        self.assertIn("# akg:", r["error"]["message"])
        d = self.diagnostics(uri)["diagnostics"]
        self.assertEqual(len(d), 1, d)
        self.assertEqual(d[0]["code"], "missing-shape")
        self.assertEqual(d[0]["severity"], 1)
        # at h's name where it is assigned, not at the whole selection (tests/lsp/test_ask.py)
        h_row = line_of(text, "h = self.fc(x)")
        self.assertEqual(d[0]["range"]["start"], {"line": h_row, "character": 8})
        self.assertEqual(d[0]["range"]["end"], {"line": h_row, "character": 9})
        self.assertIn("`h`", d[0]["message"])
        self.assertIn("# akg: h:", d[0]["message"])  # what would work

        # inside __init__: not code the constructor turns into a kernel
        row = line_of(text, "self.fc = nn.Linear")
        generate = [a for a in self.actions(uri, row, row)
                    if a["command"]["command"] == "akg.generateForSelection"][0]
        r = self.command(generate)
        self.assertEqual(r["error"]["code"], -32803, r)
        d = self.diagnostics(uri)["diagnostics"]
        self.assertEqual([x["code"] for x in d], ["unsupported-construct"], d)
        self.assertEqual(d[0]["range"]["start"]["line"], row)
        self.assertIn("__init__", d[0]["message"])
        self.assertIn("forward", d[0]["message"])

        # editing the file clears it; the server answers as before
        self.c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": MODEL}]})
        cleared = self.c.notification("textDocument/publishDiagnostics",
                                      lambda p: p["uri"] == uri and p.get("version") == 2, 10)
        self.assertEqual(cleared["params"]["diagnostics"], [])
        self.assertTrue(self.c.alive())
        self.assertIn("result", self.c.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}))


if __name__ == "__main__":
    unittest.main()
