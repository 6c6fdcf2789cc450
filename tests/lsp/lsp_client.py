"""A small LSP client that drives the real akg-lsp binary over pipes.

Standard library only. A reader thread splits the server's output into
messages; the test thread sends requests and waits for answers and
notifications. Requests the server sends (progress tokens, configuration,
showDocument) are answered automatically and recorded, like an editor would.
"""

import json
import os
import queue
import subprocess
import threading
import time


def server_path():
    path = os.environ.get("AKG_LSP")
    if not path:
        raise RuntimeError("set AKG_LSP to the akg-lsp binary")
    return os.path.abspath(path)  # the server may be started in another working directory


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def encode(msg) -> bytes:
    return frame(json.dumps(msg).encode("utf-8"))


def path_uri(path: str) -> str:
    from urllib.parse import quote
    return "file://" + quote(os.path.abspath(path))


class Client:
    def __init__(self, args=(), env=None, settings=None, log_path=None, cwd=None):
        cmd = [server_path()] + list(args)
        if log_path:
            cmd += ["--log", log_path]
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env, cwd=cwd)
        self.messages = queue.Queue()
        self.backlog = []  # messages read but not yet consumed by a wait
        self.server_requests = []
        self.settings = settings if settings is not None else {}
        # window/showMessageRequest: the title of the action to pick (None: dismissed)
        self.message_action = None
        self.next_id = 1
        self.lock = threading.Lock()
        self.eof = threading.Event()
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()
        self.stderr_chunks = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # ---- I/O ---------------------------------------------------------------

    def _drain_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
            self.stderr_chunks.append(chunk)

    def _read_loop(self):
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers["content-length"])
                body = out.read(length)
                if len(body) < length:
                    return
                msg = json.loads(body.decode("utf-8"))
                if "method" in msg and "id" in msg:
                    self._answer_server_request(msg)
                self.messages.put(msg)
        finally:
            self.eof.set()

    def _answer_server_request(self, msg):
        self.server_requests.append(msg)
        method = msg["method"]
        result = None
        if method == "workspace/configuration":
            result = [self.settings for _ in msg["params"]["items"]]
        elif method == "window/showDocument":
            result = {"success": True}
        elif method == "window/showMessageRequest" and self.message_action:
            result = next((a for a in msg["params"].get("actions") or []
                           if a["title"] == self.message_action), None)
        elif method == "workspace/applyEdit":
            result = {"applied": True}  # the test applies the edit itself
        self.write(encode({"jsonrpc": "2.0", "id": msg["id"], "result": result}))

    def write(self, data: bytes):
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, msg):
        self.write(encode(msg))

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def send_request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    # ---- waiting -------------------------------------------------------------

    def wait_for(self, predicate, timeout=10.0, what="a message"):
        """Returns the first message (old or new) for which predicate holds."""
        for i, m in enumerate(self.backlog):
            if predicate(m):
                return self.backlog.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out waiting for %s; got %s" %
                                   (what, json.dumps(self.backlog[-8:])[:3000]))
            try:
                m = self.messages.get(timeout=min(left, 0.2))
            except queue.Empty:
                if self.eof.is_set() and self.messages.empty():
                    raise EOFError("server closed its output while waiting for %s; stderr: %s" %
                                   (what, b"".join(self.stderr_chunks)[-2000:]))
                continue
            if predicate(m):
                return m
            self.backlog.append(m)

    def response(self, rid, timeout=10.0):
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m,
                             timeout, "the response to request %r" % rid)

    def request(self, method, params=None, timeout=10.0):
        return self.response(self.send_request(method, params), timeout)

    def notification(self, method, predicate=lambda p: True, timeout=10.0):
        return self.wait_for(lambda m: m.get("method") == method and "id" not in m
                             and predicate(m.get("params")), timeout, method)

    def errors_with_null_id(self, timeout=5.0):
        return self.wait_for(lambda m: "error" in m and m.get("id") is None, timeout,
                             "an error with id null")

    # ---- lifecycle -------------------------------------------------------------

    def initialize(self, root=None, capabilities=None, options=None, encodings=None):
        caps = capabilities if capabilities is not None else {
            "window": {"workDoneProgress": True, "showDocument": {"support": True}},
            "workspace": {"configuration": True, "codeLens": {"refreshSupport": True}},
            "textDocument": {"publishDiagnostics": {"versionSupport": True}},
        }
        if encodings is not None:
            caps.setdefault("general", {})["positionEncodings"] = encodings
        params = {"processId": os.getpid(), "capabilities": caps,
                  "rootUri": path_uri(root) if root else None}
        if root:
            params["workspaceFolders"] = [{"uri": path_uri(root), "name": "ws"}]
        if options is not None:
            params["initializationOptions"] = options
        r = self.request("initialize", params)
        self.notify("initialized", {})
        if "result" in r and caps.get("workspace", {}).get("configuration"):
            # The server pulls settings now; its request is answered by the
            # reader thread. Wait for it, so that tests writing partial frames
            # are not interleaved with that answer.
            self.wait_for(lambda m: m.get("method") == "workspace/configuration", 5,
                          "workspace/configuration")
        return r

    def open(self, path, text=None, language="python", version=1):
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        uri = path_uri(path)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": version, "text": text}})
        return uri

    def shutdown_and_exit(self, timeout=10.0):
        r = self.request("shutdown")
        self.notify("exit")
        return r, self.wait_exit(timeout)

    def wait_exit(self, timeout=10.0):
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.reader.join(timeout=2)

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
