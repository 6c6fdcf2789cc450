"""Transcript tests of akg-lsp's document features on references and stored
results: sync, diagnostics, code actions, lenses, hovers, inlay hints, trust,
settings and the on-disk watch. They need no harness: results come from the
store the way a restarted server finds them."""

import hashlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, path_uri  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REFS = os.path.normpath(os.path.join(HERE, "..", "fixtures", "refs"))


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


class FeatureCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ws = os.path.join(self.tmp.name, "ws")
        os.makedirs(self.ws)
        self.store = os.path.join(self.tmp.name, "store.db")
        self.env = {"AKG_STORE": self.store, "HOME": self.tmp.name}
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.kill()
        self.tmp.cleanup()

    def start(self, settings=None, options=None, root=True, encodings=None, capabilities=None):
        c = Client(env=self.env, settings=settings)
        self.clients.append(c)
        c.initialize(root=self.ws if root else None, options=options, encodings=encodings,
                     capabilities=capabilities)
        return c

    def copy_ref(self, name, as_name=None):
        dst = os.path.join(self.ws, as_name or name)
        shutil.copy(os.path.join(REFS, name), dst)
        return dst

    def diagnostics(self, c, uri, version=None, timeout=5):
        def match(p):
            return p["uri"] == uri and (version is None or p.get("version") == version)
        return c.notification("textDocument/publishDiagnostics", match, timeout)["params"]["diagnostics"]

    def code_actions(self, c, uri, only=None):
        ctx = {"diagnostics": []}
        if only is not None:
            ctx["only"] = only
        r = c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": ctx})
        return r["result"]

    def lenses(self, c, uri):
        return c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]

    def hover(self, c, uri, line, character):
        return c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": {"line": line, "character": character}})

    def line_of(self, path, needle):
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if needle in line:
                    return i, line.index(needle)
        raise AssertionError(needle)

    # A run in the store, as the engine writes it when a job ends.
    def store_run(self, path, backend, dsl, status, report, speedup=None, content=None):
        if content is None:
            with open(path, "rb") as f:
                content = f.read()
        h = hashlib.sha256(content).hexdigest()
        db = sqlite3.connect(self.store)
        db.execute(
            "INSERT INTO runs (reference_path, content_hash, op, backend, dsl, arch, workflow,"
            " provider, output_dir, status, speedup, report, started_at, finished_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (path, h, "relu", backend, dsl, "x86_64", "default", "builtin",
             os.path.dirname(report["paths"]["report"]), status, speedup, json.dumps(report),
             "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"))
        db.commit()
        db.close()


class Documents(FeatureCase):
    def test_reference_is_recognised_and_clean(self):
        c = self.start()
        uri = c.open(self.copy_ref("relu.py"))
        self.assertEqual(self.diagnostics(c, uri, 1), [])
        titles = [a["title"] for a in self.code_actions(c, uri)]
        self.assertIn("akg: Generate kernel (cpu/cpp)", titles)
        self.assertIn("akg: Design sketch only", titles)
        self.assertEqual(self.code_actions(c, uri, only=["quickfix"]), [])
        self.assertEqual(len(self.code_actions(c, uri, only=["source"])), len(titles))
        lens = self.lenses(c, uri)
        self.assertEqual(lens[0]["command"]["title"], "cpu/cpp: generate kernel")
        self.assertEqual(lens[0]["command"]["command"], "akg.generate")
        self.assertEqual(lens[0]["command"]["arguments"][0]["uri"], uri)
        line, _ = self.line_of(os.path.join(self.ws, "relu.py"), "class Model")
        self.assertEqual(lens[0]["range"]["start"]["line"], line)
        # Nothing ran: opening a reference starts no job and no progress.
        self.assertFalse([m for m in c.server_requests if m["method"] != "workspace/configuration"])

    def test_not_a_reference(self):
        c = self.start()
        path = os.path.join(self.ws, "plain.py")
        with open(path, "w") as f:
            f.write("x = 1\n")
        uri = c.open(path)
        self.assertEqual(self.diagnostics(c, uri), [])
        self.assertEqual(self.code_actions(c, uri), [])
        self.assertEqual(self.lenses(c, uri), [])
        self.assertIsNone(self.hover(c, uri, 0, 0)["result"])

    def test_broken_references(self):
        c = self.start()
        uri = c.open(self.copy_ref("syntax_error.py"))
        d = self.diagnostics(c, uri)
        self.assertTrue([x for x in d if x["code"] == "syntax" and x["severity"] == 1], d)
        uri = c.open(self.copy_ref("no_get_inputs.py"))
        d = self.diagnostics(c, uri)
        self.assertTrue([x for x in d if x["code"] == "kernelbench-form"], d)
        self.assertIn("get_inputs", json.dumps(d))

    def test_incremental_sync_utf16_and_utf8(self):
        for encodings, unit in ((None, utf16_len), (["utf-8"], lambda s: len(s.encode()))):
            c = self.start(encodings=encodings)
            path = self.copy_ref("relu.py")
            uri = c.open(path)
            self.diagnostics(c, uri, 1)
            line, col = self.line_of(path, "return torch.relu(x)")
            with open(path, encoding="utf-8") as f:
                old = f.read().splitlines()[line]
            new = old[:col] + 's = "😀é"; ' + old[col:]
            # Replace the line through an incremental change in the client's units.
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"range": {"start": {"line": line, "character": unit(old[:col])},
                                              "end": {"line": line, "character": unit(old[:col])}},
                                    "text": 's = "😀é"; '}]})
            # The debounced re-parse publishes version 2.
            self.assertEqual(self.diagnostics(c, uri, 2), [])
            call_col = new.index("torch.relu")
            h = self.hover(c, uri, line, unit(new[:call_col]) + 3)["result"]
            self.assertIsNotNone(h)
            self.assertIn("torch.relu", h["contents"]["value"])
            self.assertIn("relu", h["contents"]["value"])
            self.assertEqual(h["range"]["start"], {"line": line, "character": unit(new[:call_col])})
            end = new.index("(x)", call_col) + 3
            self.assertEqual(h["range"]["end"], {"line": line, "character": unit(new[:end])})
            # Full-text change, then close: diagnostics are cleared.
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                "contentChanges": [{"text": "x = 1\n"}]})
            self.assertEqual(self.diagnostics(c, uri, 3), [])
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            self.assertEqual(self.diagnostics(c, uri), [])
            c.shutdown_and_exit()

    def test_settings_targets(self):
        c = self.start(options={"targets": ["cpu/cpp", {"backend": "cuda", "dsl": "triton", "arch": "h100"}]})
        uri = c.open(self.copy_ref("relu.py"))
        titles = [a["title"] for a in self.code_actions(c, uri)]
        self.assertIn("akg: Generate kernel (cuda/triton)", titles)
        args = [a["command"]["arguments"][0] for a in self.code_actions(c, uri)
                if a["title"].endswith("(cuda/triton)")][0]
        self.assertEqual((args["backend"], args["dsl"], args["arch"]), ("cuda", "triton", "h100"))
        c.notify("workspace/didChangeConfiguration", {"settings": {"akg": {"targets": ["cpu/cpp"]}}})
        titles = [a["title"] for a in self.code_actions(c, uri)]
        self.assertNotIn("akg: Generate kernel (cuda/triton)", titles)
        self.assertEqual(len(self.lenses(c, uri)), 1)

    def test_settings_unknown_provider_refused(self):
        c = self.start(options={"targets": ["cpu/cpp"], "provider": "nonesuch"})
        uri = path_uri(self.copy_ref("relu.py"))
        r = c.request("workspace/executeCommand", {
            "command": "akg.generate", "arguments": [{"uri": uri, "backend": "cpu", "dsl": "cpp"}]})
        self.assertEqual(r["error"]["code"], -32803, r)
        self.assertIn("unknown provider 'nonesuch'", r["error"]["message"])
        self.assertIn("the providers in this build: builtin, openai", r["error"]["message"])

    def test_settings_from_workspace_configuration(self):
        c = self.start(settings={"targets": ["cpu/cpp", "cuda/cuda_c"]})
        uri = c.open(self.copy_ref("relu.py"))
        titles = [a["title"] for a in self.code_actions(c, uri)]
        self.assertIn("akg: Generate kernel (cuda/cuda_c)", titles)


SKETCH = """# relu
sketch relu {
  symbols: N;
  tensors: x[N]: f32; out[N]: f32;
  constexpr: BLOCK = tune(4096, 16384);

  @llm_hint("parallel", "coreidx")
  for i in range(0, N, BLOCK):
    t0 = alloc([BLOCK], llm_hint=["fastest"])
    load(x[i:i + BLOCK] -> t0)
    t1 = relu(t0)
    store(t1 -> out[i:i + BLOCK])
}
"""


class Sketches(FeatureCase):
    def open_sketch(self, c, text, name="relu.sketch"):
        path = os.path.join(self.ws, name)
        with open(path, "w") as f:
            f.write(text)
        return c.open(path, text=text, language="sketch")

    def test_live_checker_diagnostics(self):
        c = self.start()
        uri = self.open_sketch(c, SKETCH)
        self.assertEqual(self.diagnostics(c, uri, 1), [])
        line = SKETCH.splitlines().index("    t1 = relu(t0)")
        col = SKETCH.splitlines()[line].index("t0)")
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 2}},
             "text": "t9"}]})
        d = self.diagnostics(c, uri, 2)
        undefined = [x for x in d if "t9" in x["message"]]
        self.assertEqual(len(undefined), 1, d)
        self.assertEqual(undefined[0]["severity"], 1)
        self.assertEqual(undefined[0]["source"], "akg-sketch")
        self.assertEqual(undefined[0]["range"]["start"], {"line": line, "character": col})
        # A syntax error is a diagnostic too, not a crash.
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                            "contentChanges": [{"text": "sketch {{{\n"}]})
        self.assertTrue(self.diagnostics(c, uri, 3))

    def test_formatting(self):
        c = self.start()
        messy = SKETCH.replace("x[N]: f32; out", "x[N] :  f32;  out").replace("i + BLOCK", "i+BLOCK")
        uri = self.open_sketch(c, messy)
        edits = c.request("textDocument/formatting", {
            "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})["result"]
        self.assertEqual(len(edits), 1)
        self.assertEqual(edits[0]["newText"], SKETCH)
        self.assertEqual(edits[0]["range"]["start"], {"line": 0, "character": 0})
        uri = self.open_sketch(c, SKETCH, "canonical.sketch")
        edits = c.request("textDocument/formatting", {
            "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})["result"]
        self.assertEqual(edits, [])
        uri = self.open_sketch(c, "sketch {{{\n", "broken.sketch")
        r = c.request("textDocument/formatting", {
            "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})
        self.assertEqual(r["error"]["code"], -32803)

    def test_hover_on_operations(self):
        c = self.start()
        uri = self.open_sketch(c, SKETCH)
        lines = SKETCH.splitlines()
        line = lines.index("    t1 = relu(t0)")
        h = self.hover(c, uri, line, lines[line].index("relu") + 1)["result"]
        self.assertIn("max(x,0)", h["contents"]["value"])
        self.assertEqual(h["range"]["start"]["character"], lines[line].index("relu"))
        line = [i for i, l in enumerate(lines) if "load(" in l][0]
        h = self.hover(c, uri, line, lines[line].index("load") + 1)["result"]
        self.assertIn("copies the region", h["contents"]["value"])
        # A tile is not an operation.
        self.assertIsNone(self.hover(c, uri, line, lines[line].index("t0"))["result"])


class SketchLink(FeatureCase):
    """A .sketch file linked to its reference offers "Generate from this sketch"."""

    def write(self, rel, text):
        path = os.path.join(self.ws, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def from_sketch_actions(self, c, uri):
        return [a for a in self.code_actions(c, uri)
                if a["command"]["command"] == "akg.generateFromSketch"]

    def test_first_line_link(self):
        c = self.start()
        ref = self.copy_ref("relu.py")
        path = self.write("designs/relu.sketch", "# akg: reference ../relu.py\n" + SKETCH)
        uri = c.open(path, language="sketch")
        actions = self.from_sketch_actions(c, uri)
        self.assertEqual(len(actions), 1, actions)
        self.assertEqual(actions[0]["title"], "akg: Generate from this sketch")
        self.assertEqual(actions[0]["kind"], "source.akg")
        arg = actions[0]["command"]["arguments"][0]
        self.assertEqual(arg["uri"], uri)
        self.assertEqual(arg["reference"], ref)
        self.assertEqual((arg["backend"], arg["dsl"]), ("cpu", "cpp"))
        # `only` filters as for references; a reference's actions are not offered on a sketch
        self.assertEqual(self.code_actions(c, uri, only=["quickfix"]), [])
        self.assertFalse([a for a in self.code_actions(c, uri)
                          if a["command"]["command"] == "akg.generate"])

    def test_report_json_link(self):
        c = self.start()
        ref = self.copy_ref("relu.py")
        path = self.write("akg_output/run1/sketch.sketch", SKETCH)
        self.write("akg_output/run1/report.json", json.dumps({"reference": ref, "status": "pass"}))
        uri = c.open(path, language="sketch")
        actions = self.from_sketch_actions(c, uri)
        self.assertEqual(len(actions), 1, actions)
        self.assertEqual(actions[0]["command"]["arguments"][0]["reference"], ref)

    def test_one_action_per_target(self):
        c = self.start(options={"targets": ["cpu/cpp", {"backend": "cpu", "dsl": "cpp",
                                                          "arch": "aarch64"}]})
        self.copy_ref("relu.py")
        path = self.write("relu.sketch", "# akg: reference relu.py\n" + SKETCH)
        uri = c.open(path, language="sketch")
        titles = [a["title"] for a in self.from_sketch_actions(c, uri)]
        self.assertEqual(titles, ["akg: Generate from this sketch (cpu/cpp)"] * 2)

    def test_no_link_no_action(self):
        c = self.start()
        path = self.write("lonely.sketch", SKETCH)
        uri = c.open(path, language="sketch")
        self.assertEqual(self.from_sketch_actions(c, uri), [])
        r = c.request("workspace/executeCommand", {"command": "akg.generateFromSketch",
                                                   "arguments": [{"uri": uri}]})
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("names no reference", r["error"]["message"])
        self.assertIn("# akg: reference", r["error"]["message"])
        # a link to a file that is not there is named as such
        path = self.write("dangling.sketch", "# akg: reference gone.py\n" + SKETCH)
        uri = c.open(path, language="sketch")
        self.assertEqual(self.from_sketch_actions(c, uri), [])
        r = c.request("workspace/executeCommand", {"command": "akg.generateFromSketch",
                                                   "arguments": [{"uri": uri}]})
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn(os.path.join(self.ws, "gone.py"), r["error"]["message"])
        self.assertIn("does not exist", r["error"]["message"])

    def test_outside_the_workspace_refused(self):
        c = self.start()
        outside = os.path.join(self.tmp.name, "outside.sketch")
        with open(outside, "w") as f:
            f.write("# akg: reference ws/relu.py\n" + SKETCH)
        self.copy_ref("relu.py")
        r = c.request("workspace/executeCommand", {"command": "akg.generateFromSketch",
                                                   "arguments": [{"uri": path_uri(outside)}]})
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("outside the workspace", r["error"]["message"])


class Trust(FeatureCase):
    def generate(self, c, uri):
        return c.request("workspace/executeCommand", {
            "command": "akg.generate",
            "arguments": [{"uri": uri, "backend": "cpu", "dsl": "cpp"}]})

    def test_outside_workspace_refused(self):
        c = self.start()
        outside = os.path.join(REFS, "relu.py")
        r = self.generate(c, path_uri(outside))
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("outside the workspace", r["error"]["message"])
        r = c.request("workspace/executeCommand", {
            "command": "akg.verify", "arguments": [{"uri": path_uri(outside)}]})
        self.assertIn("error", r)
        # A path that climbs out of the folder is outside too.
        r = self.generate(c, "file://" + self.ws + "/../../" + outside)
        self.assertEqual(r["error"]["code"], -32803)
        # So is a link inside the folder that points outside.
        link = os.path.join(self.ws, "link.py")
        os.symlink(outside, link)
        r = self.generate(c, path_uri(link))
        self.assertEqual(r["error"]["code"], -32803)
        # Not file:// at all.
        r = self.generate(c, "untitled:Untitled-1")
        self.assertEqual(r["error"]["code"], -32602)

    def test_no_workspace_folder_refuses_all(self):
        c = self.start(root=False)
        r = self.generate(c, path_uri(self.copy_ref("relu.py")))
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("no workspace folder", r["error"]["message"])

    def test_cancel_without_jobs(self):
        c = self.start()
        r = c.request("workspace/executeCommand", {"command": "akg.cancel", "arguments": []})
        self.assertEqual(r["result"], {"cancelled": 0})
        r = c.request("workspace/executeCommand", {"command": "akg.cancel", "arguments": [{"jobId": 42}]})
        self.assertEqual(r["error"]["code"], -32803)
        r = c.request("workspace/executeCommand", {
            "command": "akg.openReport", "arguments": [{"uri": path_uri(self.copy_ref("relu.py"))}]})
        self.assertEqual(r["error"]["code"], -32803)
        self.assertIn("no report", r["error"]["message"])


class StoredResults(FeatureCase):
    def report(self, status, speedup=None, error=None):
        out = os.path.join(self.tmp.name, "runs", status + str(time.monotonic_ns()))
        os.makedirs(out)
        rep = {
            "op": "relu", "backend": "cpu", "dsl": "cpp", "status": status,
            "correctness": {"trials": 5, "max_abs_err": 3.5e-2 if error else 0.0,
                            "max_rel_err": 0.25 if error else 0.0, "atol": 1e-5, "rtol": 1e-5,
                            "worst_trial": 3},
            "perf": {"ref_ms": 0.42, "kernel_ms": 0.228, "speedup": speedup, "runs": 50},
            "paths": {"report": os.path.join(out, "report.json"),
                      "kernel": os.path.join(out, "kernel.cpp"),
                      "model_new": os.path.join(out, "model_new.py")},
            "task": {"inputs": [{"kind": "tensor", "shape": [256, 1024], "dtype": "float32"}],
                     "outputs": [{"kind": "tensor", "shape": [256, 1024], "dtype": "float32"}]},
        }
        if error:
            rep["error"] = error
        with open(rep["paths"]["report"], "w") as f:
            json.dump(rep, f)
        return rep

    def prepare(self):
        # A first server creates the store; results are then added as a
        # finished job adds them, and a second server (a restart) shows them.
        path = self.copy_ref("relu.py")
        c = self.start()
        uri = c.open(path)
        self.diagnostics(c, uri)
        c.shutdown_and_exit()
        self.store_run(path, "cpu", "cpp", "pass", self.report("pass", 1.84), speedup=1.84)
        self.store_run(path, "cuda", "triton", "fail", self.report(
            "fail", None, {"class": "numerical_mismatch", "detail": "3 of 262144 elements differ"}))
        return path

    def test_slower_kernel_is_a_warning_not_done(self):
        # a verified kernel slower than PyTorch: the hover and a Warning say so
        path = self.copy_ref("relu.py")
        c = self.start()
        uri = c.open(path)
        self.diagnostics(c, uri)
        c.shutdown_and_exit()
        rep = self.report("pass", 0.62)
        rep["perf"]["slower_than_reference"] = True
        rep["verdict"] = "slower"
        rep["kept_step"] = 2
        self.store_run(path, "cpu", "cpp", "pass", rep, speedup=0.62)
        c = self.start()
        uri = c.open(path)
        d = self.diagnostics(c, uri, 1)
        slow = [x for x in d if x.get("code") == "slower-than-reference"]
        self.assertEqual(len(slow), 1, d)
        self.assertEqual(slow[0]["severity"], 2)
        self.assertIn("slower than the reference (0.62x", slow[0]["message"])
        self.assertIn("not a drop-in speedup", slow[0]["message"])
        mline, mcol = self.line_of(path, "Model")
        h = self.hover(c, uri, mline, mcol + 2)["result"]["contents"]["value"]
        self.assertIn("pass (slower than the reference)", h)
        self.assertIn("**slower than the reference** (0.62x)", h)
        self.assertIn("attempt 2", h)

    def test_hover_lens_inlay_diagnostics_after_restart(self):
        path = self.prepare()
        c = self.start()
        uri = c.open(path)
        d = self.diagnostics(c, uri, 1)
        mismatch = [x for x in d if x["code"] == "numerical_mismatch"]
        self.assertEqual(len(mismatch), 1, d)
        self.assertIn("cuda/triton", mismatch[0]["message"])
        self.assertIn("worst abs err 0.035", mismatch[0]["message"])
        self.assertIn("trial 3", mismatch[0]["message"])
        fline, fcol = self.line_of(path, "forward")
        self.assertEqual(mismatch[0]["range"]["start"], {"line": fline, "character": fcol})

        titles = [l["command"]["title"] for l in self.lenses(c, uri)]
        self.assertIn("cpu/cpp 1.84x, verified 5/5", titles)
        self.assertIn("cuda/triton failed: numerical mismatch", titles)
        self.assertIn("open report", titles)

        mline, mcol = self.line_of(path, "Model")
        h = self.hover(c, uri, mline, mcol + 2)["result"]["contents"]["value"]
        for needle in ("cpu/cpp", "1.84x", "0.42", "0.228", "1e-05", "numerical_mismatch",
                       "report.json", "2026-01-01T00:01:00Z"):
            self.assertIn(needle, h)
        cline, ccol = self.line_of(path, "torch.relu(x)")
        h = self.hover(c, uri, cline, ccol + 1)["result"]["contents"]["value"]
        self.assertIn("op `relu`", h)
        self.assertIn("1.84x", h)

        hints = c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}})["result"]
        labels = [x["label"] for x in hints]
        self.assertIn(": [256, 1024] float32", labels)
        self.assertIn("-> [256, 1024] float32", labels)

        r = c.request("workspace/executeCommand", {
            "command": "akg.openReport", "arguments": [{"uri": uri, "backend": "cpu", "dsl": "cpp"}]})
        self.assertTrue(r["result"]["path"].endswith("report.json"))
        shown = c.wait_for(lambda m: m.get("method") == "window/showDocument", 5, "showDocument")
        self.assertEqual(shown["params"]["uri"], path_uri(r["result"]["path"]))

        # Editing the reference makes the results stale (Information), live.
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                            "contentChanges": [{"range": {
                                                "start": {"line": 0, "character": 0},
                                                "end": {"line": 0, "character": 0}},
                                                "text": "# edited\n"}]})
        d = self.diagnostics(c, uri, 2)
        stale = [x for x in d if x["code"] == "stale-result"]
        self.assertEqual(len(stale), 2, d)
        self.assertTrue(all(x["severity"] == 3 for x in stale))
        titles = [l["command"]["title"] for l in self.lenses(c, uri)]
        self.assertIn("cpu/cpp 1.84x, verified 5/5 (stale)", titles)

    def test_closed_reference_changed_on_disk(self):
        path = self.prepare()
        c = self.start()
        uri = c.open(path)
        self.diagnostics(c, uri, 1)
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.diagnostics(c, uri)
        with open(path, "a") as f:
            f.write("\n# changed on disk\n")
        # The server's own watch marks the runs stale and asks for fresh lenses.
        c.wait_for(lambda m: m.get("method") == "workspace/codeLens/refresh", 5, "codeLens/refresh")
        deadline = time.monotonic() + 5
        while True:
            db = sqlite3.connect(self.store)
            stale = [r[0] for r in db.execute("SELECT stale FROM runs WHERE reference_path=?", (path,))]
            db.close()
            if stale and all(stale):
                break
            self.assertLess(time.monotonic(), deadline, stale)
            time.sleep(0.1)
        uri = c.open(path, version=5)
        d = self.diagnostics(c, uri, 5)
        self.assertEqual(len([x for x in d if x["code"] == "stale-result"]), 2, d)

    def test_watched_files_notification(self):
        path = self.prepare()
        c = self.start(capabilities={"workspace": {"codeLens": {"refreshSupport": True}}})
        c.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": path_uri(path), "type": 2}]})
        # Same content: nothing is stale.
        c.wait_for(lambda m: m.get("method") == "workspace/codeLens/refresh", 5, "codeLens/refresh")
        db = sqlite3.connect(self.store)
        self.assertEqual([r[0] for r in db.execute("SELECT stale FROM runs")], [0, 0])
        db.close()


if __name__ == "__main__":
    unittest.main()
