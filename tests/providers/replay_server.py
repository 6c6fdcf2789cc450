"""A loopback OpenAI-compatible server that replays recorded answers and injects faults.

Standard library only. Started by the provider tests: it binds 127.0.0.1 on a free port, prints
"PORT <n>" on stdout, and serves until its stdin closes (so it never outlives the test).

The path picks the behaviour: POST /<scenario>/<tag>/v1/chat/completions, where <tag> keeps the
counters of one test case apart. GET /stats/<tag> answers what the server saw for that tag:
{"requests", "max_active", "auth": [...], "bodies": [...], "paths": [...], "x_api_key": [...],
"anthropic_version": [...]}. POST /<scenario>/<tag>/v1/messages speaks the Anthropic Messages
API for the script-<name> scenarios: the same recorded turns, converted (text blocks,
stop_reason end_turn or max_tokens, usage input_tokens and output_tokens; streamed as
message_start, content_block_delta, message_delta and message_stop events).

Scenarios (the fixture is <name>.json for a plain request, <name>.sse when the body asks for
"stream": true):
  ok, length, empty, nousage   a recorded answer (fixtures/chat_<name>.*)
  badjson                      200 with a body that is not JSON (stream: a broken data line)
  hang                         accepts, reads the request, never answers
  stall                        streams one chunk, then never another byte
  r429s / r429d                429 twice (Retry-After: 1 / as an HTTP date 1 s ahead), then ok
  r429long                     429 with Retry-After: 3600, always
  e500                         500 always;  e500once: 500 once, then ok
  trunc                        a stream cut mid-chunk, always;  trunconce: once, then ok
  slow                         ok after 0.3 s (the concurrency test counts overlaps)
  echokey                      401 whose message repeats the Authorization header it got
  script-<name>                the n-th request of a tag gets fixtures/script_<name>_<n>.json (the
                               last one again past the end): a conversation recorded in turns;
                               a streaming request gets the same answer as SSE chunks; a turn
                               {"replay_as": "<fixture>"} answers as that fixture does, a turn
                               {"replay_hang": true} never answers (a timeout)
  paced-<name>                 script-<name>, streamed in 40-character chunks 0.1 s apart (the
                               progress a client shows while an answer streams)
"""

import email.utils
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
LOCK = threading.Lock()
STATS = {}


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def stats_of(tag):
    return STATS.setdefault(tag, {"requests": 0, "active": 0, "max_active": 0, "auth": [],
                                  "bodies": [], "paths": [], "x_api_key": [],
                                  "anthropic_version": []})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the test reads stdout for the port only
        pass

    def send_json(self, status, obj, headers=()):
        body = json.dumps(obj).encode() if not isinstance(obj, bytes) else obj
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def replay(self, name, stream):
        if not stream:
            self.send_json(200, fixture("chat_%s.json" % name))
            return
        self.start_stream()
        for event in fixture("chat_%s.sse" % name).split(b"\n\n"):
            if event.strip():
                self.chunk(event + b"\n\n")
                time.sleep(0.01)
        self.end_stream()

    def event(self, kind, obj):
        self.chunk(b"event: " + kind.encode() + b"\ndata: " + json.dumps(obj).encode() + b"\n\n")

    def anthropic(self, answer, stream, size):
        """answer (a recorded chat completion) as the Messages API sends it."""
        choice = answer["choices"][0]
        text = choice["message"]["content"]
        stop = {"length": "max_tokens"}.get(choice["finish_reason"], "end_turn")
        usage = answer.get("usage") or {}
        pt, ct = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        base = {"id": answer.get("id", "replay"), "type": "message", "role": "assistant",
                "model": answer.get("model", "replay")}
        if not stream:
            self.send_json(200, dict(base, content=[{"type": "text", "text": text}],
                                     stop_reason=stop, stop_sequence=None,
                                     usage={"input_tokens": pt, "output_tokens": ct}))
            return
        self.start_stream()
        self.event("message_start", {"type": "message_start", "message": dict(
            base, content=[], stop_reason=None, usage={"input_tokens": pt, "output_tokens": 1})})
        self.event("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})
        self.event("ping", {"type": "ping"})
        for i in range(0, len(text), size):
            self.event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta",
                                                         "text": text[i:i + size]}})
        self.event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self.event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": ct}})
        self.event("message_stop", {"type": "message_stop"})
        self.end_stream()

    def script(self, name, n, stream, size=200, pace=0.0, api="openai"):
        turns = sorted(f for f in os.listdir(FIXTURES) if f.startswith("script_%s_" % name))
        if not turns:
            self.send_json(404, {"error": {"message": "no recorded turns for " + name}})
            return
        wanted = "script_%s_%d.json" % (name, n)
        raw = fixture(wanted if wanted in turns else "script_%s_%d.json" % (name, len(turns)))
        turn = json.loads(raw)
        if turn.get("replay_hang"):
            self.wait_forever()
            return
        if "replay_as" in turn:  # the same answer as another fixture
            raw = fixture(turn["replay_as"])
        if api == "anthropic":
            self.anthropic(json.loads(raw), stream, size)
            return
        if not stream:
            self.send_json(200, raw)
            return
        answer = json.loads(raw)
        text = answer["choices"][0]["message"]["content"]
        self.start_stream()
        base = {"id": answer.get("id", "replay"), "object": "chat.completion.chunk",
                "model": answer.get("model", "replay")}
        for i in range(0, len(text), size):
            delta = dict(base, choices=[{"index": 0, "delta": {"content": text[i:i + size]},
                                         "finish_reason": None}])
            self.chunk(b"data: " + json.dumps(delta).encode() + b"\n\n")
            time.sleep(pace)
        last = dict(base, choices=[{"index": 0, "delta": {},
                                    "finish_reason": answer["choices"][0]["finish_reason"]}],
                    usage=answer.get("usage"))
        self.chunk(b"data: " + json.dumps(last).encode() + b"\n\n")
        self.chunk(b"data: [DONE]\n\n")
        self.end_stream()

    def cut(self):
        """Closes the connection at once, mid-answer."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def wait_forever(self):
        # until the client goes away (a read returns nothing) or a minute passes
        self.connection.settimeout(60)
        try:
            while self.connection.recv(1024):
                pass
        except OSError:
            pass
        self.close_connection = True

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "stats":
            with LOCK:
                s = dict(stats_of(parts[1]))
            self.send_json(200, s)
        else:
            self.send_json(404, {"error": {"message": "no such path " + self.path}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        parts = self.path.strip("/").split("/")
        if parts[2:] == ["v1", "messages"]:
            api = "anthropic"
        elif len(parts) == 5 and parts[2:] == ["v1", "chat", "completions"]:
            api = "openai"
        else:
            self.send_json(404, {"error": {"message": "no route for " + self.path}})
            return
        scenario, tag = parts[0], parts[1]
        try:
            body = json.loads(raw)
        except ValueError:
            self.send_json(400, {"error": {"message": "the request body is not JSON"}})
            return
        stream = bool(body.get("stream"))
        with LOCK:
            s = stats_of(tag)
            s["requests"] += 1
            n = s["requests"]
            s["active"] += 1
            s["max_active"] = max(s["max_active"], s["active"])
            s["auth"].append(self.headers.get("Authorization") or "")
            s["bodies"].append(body)
            s["paths"].append(self.path)
            s["x_api_key"].append(self.headers.get("x-api-key") or "")
            s["anthropic_version"].append(self.headers.get("anthropic-version") or "")
        try:
            if api == "anthropic":
                if scenario.startswith("script-"):
                    self.script(scenario[len("script-"):], n, stream, api=api)
                else:
                    self.send_json(404, {"type": "error", "error": {
                        "type": "not_found_error", "message": "no Messages API scenario "
                        + scenario}})
                return
            self.serve(scenario, n, stream)
        finally:
            with LOCK:
                stats_of(tag)["active"] -= 1

    def serve(self, scenario, n, stream):
        if scenario in ("ok", "length", "empty", "nousage"):
            self.replay(scenario, stream or scenario == "nousage")
        elif scenario == "badjson":
            if stream:
                self.replay("badjson", True)
            else:
                self.send_json(200, b"<html><body>502 Bad Gateway</body></html>")
        elif scenario == "hang":
            self.wait_forever()
        elif scenario == "stall":
            self.start_stream()
            self.chunk(fixture("chat_ok.sse").split(b"\n\n")[1] + b"\n\n")
            self.wait_forever()
        elif scenario in ("r429s", "r429d", "r429long"):
            if scenario == "r429long" or n <= 2:
                after = "3600" if scenario == "r429long" else "1"
                if scenario == "r429d":
                    after = email.utils.formatdate(time.time() + 1.5, usegmt=True)
                self.send_json(429, {"error": {"message": "Rate limit reached for requests",
                                               "type": "requests"}},
                               headers=[("Retry-After", after)])
            else:
                self.replay("ok", stream)
        elif scenario in ("e500", "e500once"):
            if scenario == "e500" or n == 1:
                self.send_json(500, {"error": {"message": "CUDA out of memory in the model "
                                                          "server", "type": "server_error"}})
            else:
                self.replay("ok", stream)
        elif scenario in ("trunc", "trunconce"):
            if scenario == "trunc" or n == 1:
                self.start_stream()
                events = fixture("chat_ok.sse").split(b"\n\n")
                self.chunk(events[1] + b"\n\n")
                part = events[2] + b"\n\n"
                self.wfile.write(b"%x\r\n%s" % (len(part), part[: len(part) // 2]))
                self.wfile.flush()
                self.cut()
            else:
                self.replay("ok", True)
        elif scenario == "slow":
            time.sleep(0.3)
            self.replay("ok", stream)
        elif scenario.startswith("script-"):
            self.script(scenario[len("script-"):], n, stream)
        elif scenario.startswith("paced-"):
            self.script(scenario[len("paced-"):], n, stream, size=40, pace=0.1)
        elif scenario == "echokey":
            self.send_json(401, {"error": {"message": "Incorrect API key provided: "
                                           + (self.headers.get("Authorization") or "")}})
        else:
            self.send_json(404, {"error": {"message": "unknown scenario " + scenario}})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that hung up on purpose (a cancel, a timeout) is part of the test
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)

    def watch_stdin():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
