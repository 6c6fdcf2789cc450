"""Transcript tests of what "Generate kernel for this" does when the TaskConstructor cannot know a
shape: it never guesses. Over JSON-RPC the test sees an Error diagnostic at each unknown input's
name (not at the whole selection) that names it and the ways to give it, a quick fix that inserts
one `# akg:` line for exactly the unknown inputs, and a window/showMessageRequest whose action
sends that same edit with workspace/applyEdit. It applies the edit; a `?` left unfilled stops the
next construction again (a diagnostic at that comment); filled in, the next "Generate kernel for
this" builds the task with those shapes. Snippet tab stops only for a client that declared
snippetEditSupport. About 5 s."""

import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402
from test_selection import apply_edits, line_of  # noqa: E402

ASK_ACTION = "Add the # akg: lines to fill in"

MODEL = '''import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, g):
        h = self.proj(x)
        y = h * torch.sigmoid(g)
        return y


# akg: t: f32[N, 64]
def scale(t):
    return t * 2.0
'''


class AskCase(unittest.TestCase):
    snippets = False

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-lsp-ask-")
        self.ws = os.path.join(self.tmp.name, "ws")
        os.makedirs(self.ws)
        env = {"AKG_STORE": os.path.join(self.tmp.name, "store.db"), "HOME": self.tmp.name}
        settings = {"targets": ["cpu/cpp"]}
        self.c = Client(env=env, settings=settings, cwd=self.tmp.name)
        edit_caps = {"documentChanges": True}
        if self.snippets:
            edit_caps["snippetEditSupport"] = True
        caps = {
            "window": {"workDoneProgress": True},
            "workspace": {"configuration": True, "applyEdit": True, "workspaceEdit": edit_caps},
            "textDocument": {"publishDiagnostics": {"versionSupport": True}},
        }
        self.c.initialize(root=self.ws, capabilities=caps, options=settings)
        self.path = os.path.join(self.ws, "gate.py")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(MODEL)
        self.uri = self.c.open(self.path, MODEL)
        self.version = 1

    def tearDown(self):
        self.c.kill()
        self.tmp.cleanup()

    def actions(self, row, only=None, whole_line=False):
        context = {"diagnostics": []}
        if only:
            context["only"] = only
        return self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": self.uri},
            "range": {"start": {"line": row, "character": 0},
                      "end": {"line": row + whole_line, "character": 0}},
            "context": context})["result"]

    def generate(self, row):
        """The code action on the line (selected whole), run: the command's answer."""
        gen = [a for a in self.actions(row, whole_line=True) if a.get("command", {}).get("command") ==
               "akg.generateForSelection"]
        self.assertEqual(len(gen), 1)
        return self.c.request("workspace/executeCommand", {
            "command": gen[0]["command"]["command"], "arguments": gen[0]["command"]["arguments"]})

    def diagnostics(self):
        return self.c.notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == self.uri and p["diagnostics"] and
            p.get("version") == self.version, 10)["params"]["diagnostics"]

    def change(self, text):
        self.version += 1
        self.c.notify("textDocument/didChange", {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"text": text}]})
        cleared = self.c.notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == self.uri and p.get("version") == self.version, 10)
        self.assertEqual(cleared["params"]["diagnostics"], [])  # the failure may be fixed

    @staticmethod
    def span(text, row, word):
        col = re.search(r"\b%s\b" % word, text.splitlines()[row]).start()
        return {"start": {"line": row, "character": col},
                "end": {"line": row, "character": col + len(word)}}


class AskInTheEditor(AskCase):
    def test_diagnostics_quick_fix_question_edit_then_construction(self):
        text = MODEL
        cls = line_of(text, "class Gate(")
        fwd = line_of(text, "def forward(self, x, g)")
        self.c.message_action = ASK_ACTION  # the user picks the action when asked
        r = self.generate(cls)
        self.assertEqual(r["error"]["code"], -32803, r)
        self.assertIn("cannot know the shape of `x`", r["error"]["message"])

        # the diagnostics: one at each unknown input's name, saying how to give it
        d = sorted(self.diagnostics(), key=lambda x: x["range"]["start"]["character"])
        self.assertEqual([x["code"] for x in d], ["missing-shape", "missing-shape"], d)
        self.assertEqual(d[0]["range"], self.span(text, fwd, "x"))
        self.assertEqual(d[1]["range"], self.span(text, fwd, "g"))
        for x, name in zip(d, "xg"):
            self.assertEqual(x["severity"], 1)
            self.assertIn("shape of `%s`" % name, x["message"])
            self.assertIn("# akg: %s: f32[" % name, x["message"])
            self.assertIn("annotation", x["message"])
            self.assertIn("sample call", x["message"])
            self.assertEqual(x["relatedInformation"][0]["location"]["range"]["start"]["line"], cls)

        # the question, and the edit its action sends
        ask = self.c.wait_for(lambda m: m.get("method") == "window/showMessageRequest", 10,
                              "showMessageRequest")["params"]
        self.assertEqual(ask["type"], 1)
        self.assertIn("`x` and `g`", ask["message"])
        self.assertEqual([a["title"] for a in ask["actions"]], [ASK_ACTION])
        applied = self.c.wait_for(lambda m: m.get("method") == "workspace/applyEdit", 10,
                                  "workspace/applyEdit")["params"]
        change = applied["edit"]["documentChanges"]
        self.assertEqual(len(change), 1)
        self.assertEqual(change[0]["textDocument"], {"uri": self.uri, "version": 1})
        edits = change[0]["edits"]
        self.assertEqual(edits, [{"range": {"start": {"line": cls, "character": 0},
                                            "end": {"line": cls, "character": 0}},
                                  "newText": "# akg: x: f32[?]\n# akg: g: f32[?]\n"}])

        # the quick fix holds the same edit, on the selection's line and on the unknowns' line
        for row in (cls, fwd):
            fixes = self.actions(row, ["quickfix"])
            self.assertEqual(len(fixes), 1, fixes)
            self.assertEqual(fixes[0]["kind"], "quickfix")
            self.assertTrue(fixes[0]["isPreferred"])
            self.assertEqual(len(fixes[0]["diagnostics"]), 2)
            self.assertEqual(fixes[0]["edit"]["documentChanges"][0]["edits"], edits)
            self.assertIn("`x` and `g`", fixes[0]["title"])
        self.assertEqual(self.actions(line_of(text, "def scale"), ["quickfix"]), [])

        # the edit applied, the `?` left unfilled: asked again at that comment, never guessed
        text = apply_edits(text, edits)
        self.change(text)
        cls += 2
        r = self.generate(cls)
        self.assertEqual(r["error"]["code"], -32803, r)
        d = sorted(self.diagnostics(), key=lambda x: x["range"]["start"]["line"])
        self.assertEqual([x["range"] for x in d],
                         [self.span(text, cls - 2, "x"), self.span(text, cls - 1, "g")])
        self.assertIn("still holds `?`", d[0]["message"])
        self.assertEqual(self.actions(cls, ["quickfix"]), [])  # nothing to insert

        # filled in: the next "Generate kernel for this" builds the task with those shapes
        text = text.replace("# akg: x: f32[?]", "# akg: x: f32[8, 64]").replace(
            "# akg: g: f32[?]", "# akg: g: f32[8, 64]")
        self.change(text)
        r = self.generate(cls)
        self.assertIn("result", r, r)
        with open(r["result"]["task"], encoding="utf-8") as f:
            reference = f.read()
        self.assertEqual(reference.count("torch.randn((8, 64), dtype=torch.float32)"), 2,
                         reference)
        self.assertIn("torch.sigmoid(g)", reference)
        self.c.request("workspace/executeCommand", {"command": "akg.cancel", "arguments": []})
        done = self.c.notification("akg/jobFinished", lambda p: p["id"] == r["result"]["jobId"],
                                   30)["params"]
        self.assertIn(done["status"], ("cancelled", "pass"), done)
        self.assertTrue(self.c.alive())

    def test_dismissed_question_keeps_the_quick_fix(self):
        # statements of forward reading a local and a parameter; the user says no when asked
        row = line_of(MODEL, "y = h * torch.sigmoid")
        r = self.generate(row)
        self.assertEqual(r["error"]["code"], -32803, r)
        d = sorted(self.diagnostics(), key=lambda x: x["range"]["start"]["line"])
        self.assertEqual([x["code"] for x in d], ["missing-shape"] * 2, d)
        fwd = line_of(MODEL, "def forward(self, x, g)")
        self.assertEqual(d[0]["range"], self.span(MODEL, fwd, "g"))  # the parameter
        self.assertEqual(d[1]["range"], self.span(MODEL, row - 1, "h"))  # where h is assigned
        self.assertIn("read by the statements at lines", d[1]["message"])
        self.c.wait_for(lambda m: m.get("method") == "window/showMessageRequest", 10,
                        "showMessageRequest")
        fixes = self.actions(row, ["quickfix"])
        self.assertEqual(len(fixes), 1, fixes)
        # above the selected statement, at its indentation
        self.assertEqual(fixes[0]["edit"]["documentChanges"][0]["edits"][0]["newText"],
                         "        # akg: h: f32[?]\n        # akg: g: f32[?]\n")
        self.assertFalse(any(m.get("method") == "workspace/applyEdit"
                             for m in self.c.server_requests))


class AskWithSnippets(AskCase):
    snippets = True

    def test_snippet_placeholders_for_a_client_that_takes_them(self):
        cls = line_of(MODEL, "class Gate(")
        self.assertEqual(self.generate(cls)["error"]["code"], -32803)
        self.diagnostics()
        fix = self.actions(cls, ["quickfix"])[0]
        edit = fix["edit"]["documentChanges"][0]["edits"][0]
        self.assertNotIn("newText", edit)
        self.assertEqual(edit["snippet"], {"kind": "snippet", "value":
                                           "# akg: x: ${1:f32}[${2:?}]\n"
                                           "# akg: g: ${3:f32}[${4:?}]\n"})

        # a size without a value: its line, at the comment that names it
        fn = line_of(MODEL, "def scale")
        self.assertEqual(self.generate(fn)["error"]["code"], -32803)
        d = self.diagnostics()
        self.assertEqual([x["code"] for x in d], ["missing-value"], d)
        self.assertEqual(d[0]["range"], self.span(MODEL, fn - 1, "N"))
        self.assertIn("# akg: N = 32", d[0]["message"])
        edit = self.actions(fn, ["quickfix"])[0]["edit"]["documentChanges"][0]["edits"][0]
        self.assertEqual(edit["snippet"]["value"], "# akg: N = ${1:?}\n")
        self.assertEqual(edit["range"]["start"], {"line": fn, "character": 0})


if __name__ == "__main__":
    unittest.main()
