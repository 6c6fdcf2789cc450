"""Transcript tests of akg-lsp's transport and lifecycle: the real binary over
pipes, good and bad input. The server must answer correctly or error cleanly,
and stay alive."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, encode, frame, path_uri, server_path  # noqa: E402

# `exit` ends the process at once; the tests allow for a loaded machine.
EXIT_WITHIN_S = 2.0


class ServerCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.env = {"AKG_STORE": os.path.join(self.tmp.name, "store.db"), "HOME": self.tmp.name}
        self.client = Client(env=self.env)

    def tearDown(self):
        self.client.kill()
        self.tmp.cleanup()

    def init(self, **kw):
        return self.client.initialize(root=self.tmp.name, **kw)

    def assert_alive(self):
        r = self.client.request("textDocument/hover", {
            "textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32602, r)
        self.assertTrue(self.client.alive())


class Lifecycle(ServerCase):
    def test_initialize_shutdown_exit(self):
        r = self.init()
        caps = r["result"]["capabilities"]
        self.assertEqual(r["result"]["serverInfo"]["name"], "akg-lsp")
        self.assertEqual(caps["textDocumentSync"]["change"], 2)
        self.assertEqual(caps["positionEncoding"], "utf-16")
        self.assertIn("akg.generate", caps["executeCommandProvider"]["commands"])
        for cmd in ("akg.designSketch", "akg.verify", "akg.openReport", "akg.cancel",
                    "akg.generateFromSketch"):
            self.assertIn(cmd, caps["executeCommandProvider"]["commands"])
        self.assertTrue(caps["hoverProvider"])
        # The server pulled the akg section after `initialized`.
        self.assertTrue([m for m in self.client.server_requests
                         if m["method"] == "workspace/configuration"])
        r, code = self.client.shutdown_and_exit()
        self.assertIsNone(r["result"])
        self.assertEqual(code, 0)

    def test_exit_without_shutdown_is_1(self):
        self.init()
        self.client.notify("exit")
        self.assertEqual(self.client.wait_exit(), 1)

    def test_end_of_input_without_exit(self):
        self.init()
        self.client.proc.stdin.close()
        self.assertEqual(self.client.wait_exit(), 1)

    def test_requests_before_initialize(self):
        r = self.client.request("textDocument/hover", {})
        self.assertEqual(r["error"]["code"], -32002)
        r = self.client.request("shutdown")
        self.assertEqual(r["error"]["code"], -32002)
        # A notification before initialize is dropped, not answered.
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": "file:///x.py", "languageId": "python", "version": 1, "text": ""}})
        self.assertIn("result", self.init())

    def test_initialize_twice(self):
        self.init()
        r = self.client.request("initialize", {"processId": None, "capabilities": {}})
        self.assertEqual(r["error"]["code"], -32600)

    def test_requests_after_shutdown(self):
        self.init()
        self.assertIn("result", self.client.request("shutdown"))
        r = self.client.request("textDocument/hover", {})
        self.assertEqual(r["error"]["code"], -32600)
        self.client.notify("exit")
        self.assertEqual(self.client.wait_exit(), 0)

    def test_position_encoding_negotiation(self):
        r = self.init(encodings=["utf-32", "utf-8", "utf-16"])
        self.assertEqual(r["result"]["capabilities"]["positionEncoding"], "utf-8")

    def test_version_and_help(self):
        import subprocess
        from lsp_client import server_path
        out = subprocess.run([server_path(), "--version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0)
        self.assertTrue(out.stdout.startswith("akg-lsp "))
        out = subprocess.run([server_path(), "--help"], capture_output=True, text=True)
        self.assertIn("--log", out.stdout)
        out = subprocess.run([server_path(), "--bogus"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)


class ExitWithInputOpen(ServerCase):
    """The client keeps its end of the server's stdin open after `exit` (it
    never closes it in these tests): the server must not wait for the end of
    its input, nor for anything else, before it leaves."""

    def exit_now(self):
        t0 = time.monotonic()
        self.client.notify("exit")
        code = self.client.wait_exit(timeout=10)
        self.assertLess(time.monotonic() - t0, EXIT_WITHIN_S)
        self.assertFalse(self.client.proc.stdin.closed)
        self.assertTrue(self.client.eof.is_set(), "the server closed its output")
        return code

    def test_shutdown_then_exit_is_0(self):
        self.init()
        self.assertIsNone(self.client.request("shutdown")["result"])
        self.assertEqual(self.exit_now(), 0)

    def test_exit_without_shutdown_is_1(self):
        self.init()
        self.assertEqual(self.exit_now(), 1)

    def test_exit_before_initialize_is_1(self):
        self.assertEqual(self.exit_now(), 1)

    def test_exit_with_a_document_open_and_a_reparse_pending(self):
        self.init()
        uri = self.client.open(os.path.join(self.tmp.name, "ref.py"), text="import torch\n")
        # The edit arms the debounced re-parse timer; exit comes before it fires.
        self.client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": "import torch\nx = 1\n"}]})
        self.assertIn("result", self.client.request("shutdown"))
        self.assertEqual(self.exit_now(), 0)

    def test_client_that_stopped_reading(self):
        # More answers than a pipe holds, none of them read, then shutdown and
        # exit: what the client never takes is dropped instead of keeping the
        # server alive (it gets half a second to drain).
        env = dict(os.environ, **self.env)
        proc = subprocess.Popen([server_path()], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
        try:
            data = encode({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                           "params": {"processId": None, "capabilities": {}}})
            data += encode({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            for i in range(3000):
                data += encode({"jsonrpc": "2.0", "id": i + 1, "method": "akg/unknown"})
            data += encode({"jsonrpc": "2.0", "id": 5000, "method": "shutdown"})
            data += encode({"jsonrpc": "2.0", "method": "exit"})
            proc.stdin.write(data)
            proc.stdin.flush()
            t0 = time.monotonic()
            self.assertEqual(proc.wait(timeout=10), 0)
            self.assertLess(time.monotonic() - t0, EXIT_WITHIN_S + 1.0)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdin.close()
            proc.stdout.close()


class BadInput(ServerCase):
    def test_unknown_method(self):
        self.init()
        r = self.client.request("akg/noSuchThing", {})
        self.assertEqual(r["error"]["code"], -32601)
        # Unknown notifications, $/ ones included, get no answer at all.
        self.client.notify("akg/noSuchNotification", {})
        self.client.notify("$/noSuchThing", {})
        self.assert_alive()
        self.assertFalse([m for m in self.client.backlog if "error" in m])

    def test_invalid_json(self):
        self.init()
        self.client.write(frame(b'{"jsonrpc": "2.0", "id": 5, "method": '))
        err = self.client.errors_with_null_id()
        self.assertEqual(err["error"]["code"], -32700)
        self.assert_alive()

    def test_invalid_utf8(self):
        self.init()
        self.client.write(frame(b'{"jsonrpc":"2.0","id":7,"method":"x\xff\xfe"}'))
        err = self.client.errors_with_null_id()
        self.assertEqual(err["error"]["code"], -32700)
        self.assertIn("UTF-8", err["error"]["message"])
        # An overlong encoding and a lone surrogate are invalid too.
        self.client.write(frame(b'{"a":"\xc0\xaf"}'))
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32700)
        self.client.write(frame(b'{"a":"\xed\xa0\x80"}'))
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32700)
        self.assert_alive()

    def test_not_an_object_and_bad_ids(self):
        self.init()
        self.client.write(frame(b'[1, 2, 3]'))
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32600)
        self.client.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"})
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32600)
        self.client.send({"jsonrpc": "2.0", "id": 3, "method": 42})
        r = self.client.response(3)
        self.assertEqual(r["error"]["code"], -32600)
        self.assert_alive()

    def test_broken_framing(self):
        self.init()
        # A header block without Content-Length, then garbage, then a good message.
        self.client.write(b"Content-Type: application/json\r\n\r\n")
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32700)
        self.client.write(b"this is not a header at all\r\n\r\n")
        self.client.errors_with_null_id()
        self.client.write(b"Content-Length: abc\r\n\r\n")
        self.client.errors_with_null_id()
        rid = self.client.send_request("akg/unknown", {})
        self.assertEqual(self.client.response(rid)["error"]["code"], -32601)
        # Lots of garbage without any header end: skipped, then a good message.
        self.client.write(b"x" * 20000)
        rid = self.client.send_request("akg/unknown", {})
        self.assertEqual(self.client.response(rid)["error"]["code"], -32601)
        self.assert_alive()

    def test_split_header_and_body(self):
        self.init()
        data = encode({"jsonrpc": "2.0", "id": 99, "method": "akg/unknown"})
        for i in range(len(data)):
            self.client.write(data[i:i + 1])
        self.assertEqual(self.client.response(99)["error"]["code"], -32601)

    def test_truncated_body_then_next_message(self):
        self.init()
        good = json.dumps({"jsonrpc": "2.0", "id": 41, "method": "akg/unknown"}).encode()
        # The header promises more than the body has; the next message follows at once.
        self.client.write(b"Content-Length: %d\r\n\r\n" % (len(good) + 40) + good[:20])
        rid = self.client.send_request("akg/unknown", {})
        self.assertEqual(self.client.errors_with_null_id()["error"]["code"], -32700)
        self.assertEqual(self.client.response(rid)["error"]["code"], -32601)
        self.assert_alive()

    def test_truncated_body_at_end_of_input(self):
        self.init()
        self.client.write(b"Content-Length: 100\r\n\r\n{\"jsonrpc\":")
        self.client.proc.stdin.close()
        self.assertEqual(self.client.wait_exit(), 1)

    def test_100mb_message(self):
        self.init()
        body = b'{"jsonrpc":"2.0","id":1000,"method":"akg/unknown","params":{"pad":"' + \
            b"a" * (100 * 1000 * 1000) + b'"}}'
        t0 = time.monotonic()
        self.client.write(frame(body))
        err = self.client.errors_with_null_id(timeout=60)
        self.assertEqual(err["error"]["code"], -32600)
        self.assertIn("limit", err["error"]["message"])
        self.assertLess(time.monotonic() - t0, 60)
        # The stream is in step again and no answer to id 1000 ever comes.
        self.assert_alive()
        self.assertFalse([m for m in self.client.backlog if m.get("id") == 1000])

    def test_absurd_content_length_closes_cleanly(self):
        self.init()
        self.client.write(b"Content-Length: 99999999999999999999999999\r\n\r\n{}")
        self.client.errors_with_null_id()
        self.assertEqual(self.client.wait_exit(), 1)

    def test_wrong_param_types(self):
        self.init()
        cases = [
            ("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}}),
            ("textDocument/hover", {"textDocument": "x"}),
            ("textDocument/codeAction", {"textDocument": {"uri": []}}),
            ("textDocument/codeLens", {}),
            ("textDocument/inlayHint", {"textDocument": {"uri": None}}),
            ("textDocument/formatting", {"textDocument": {"uri": 1.5}}),
            ("workspace/executeCommand", {"command": 7}),
            ("workspace/executeCommand", {"command": "akg.generate", "arguments": "x"}),
            ("workspace/executeCommand", {"command": "akg.generate", "arguments": [5]}),
            ("workspace/executeCommand", {"command": "akg.cancel", "arguments": [{"jobId": "x"}]}),
            ("workspace/executeCommand", {"command": "akg.nope", "arguments": []}),
        ]
        for method, params in cases:
            r = self.client.request(method, params)
            self.assertEqual(r["error"]["code"], -32602, (method, params, r))
        # params that are neither object nor array make the message invalid.
        self.client.send({"jsonrpc": "2.0", "id": 77, "method": "textDocument/hover", "params": 3})
        self.assertEqual(self.client.response(77)["error"]["code"], -32600)
        # Bad notifications are logged, never answered.
        self.client.notify("textDocument/didOpen", {"textDocument": {"uri": 3}})
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": "file:///a.py"},
                                                      "contentChanges": "x"})
        self.client.notify("$/setTrace", {"value": 3})
        self.assert_alive()

    def test_did_change_for_closed_document(self):
        self.init()
        uri = path_uri(os.path.join(self.tmp.name, "closed.py"))
        self.client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": "x = 1\n"}]})
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.assert_alive()
        r = self.client.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("not open", r["error"]["message"])

    def test_cancel_request(self):
        self.init()
        # The request and its cancellation arrive together: the request is
        # still queued when the cancellation is read, so it ends with -32800.
        req = encode({"jsonrpc": "2.0", "id": 500, "method": "textDocument/codeLens",
                      "params": {"textDocument": {"uri": "file:///x.py"}}})
        cancel = encode({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 500}})
        self.client.write(req + cancel)
        self.assertEqual(self.client.response(500)["error"]["code"], -32800)
        # Cancelling something already answered or unknown is harmless.
        self.client.notify("$/cancelRequest", {"id": 123456})
        self.assert_alive()

    def test_every_request_one_response(self):
        self.init()
        ids = []
        batch = b""
        for i in range(200):
            rid = 1000 + i
            ids.append(rid)
            method = ["akg/unknown", "textDocument/hover", "textDocument/codeLens"][i % 3]
            batch += encode({"jsonrpc": "2.0", "id": rid, "method": method,
                             "params": {"textDocument": {"uri": "file:///x.py"},
                                        "position": {"line": 0, "character": 0}}})
        self.client.write(batch)
        for rid in ids:
            self.client.response(rid)
        time.sleep(0.3)
        while not self.client.messages.empty():
            self.client.backlog.append(self.client.messages.get())
        self.assertFalse([m for m in self.client.backlog if m.get("id") in ids])


class Logging(unittest.TestCase):
    def test_log_file_and_trace(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "server.log")
            c = Client(env={"AKG_STORE": os.path.join(tmp, "s.db"), "HOME": tmp}, log_path=log)
            try:
                c.initialize(root=tmp)
                c.notify("$/setTrace", {"value": "verbose"})
                c.request("akg/unknown", {})
                c.wait_for(lambda m: m.get("method") == "window/logMessage", 5, "window/logMessage")
                c.notify("$/setTrace", {"value": "off"})
                c.shutdown_and_exit()
            finally:
                c.kill()
            with open(log, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("akg-lsp", text)
            self.assertIn("initialized", text)


if __name__ == "__main__":
    unittest.main()
