"""akg harness worker: one JSON request per line on stdin, one JSON answer per line on stdout.

Usage: python -u worker.py [--device cpu|cuda:N]

stdout carries answers only. At start the worker keeps a private copy of the stdout descriptor for
answers and points descriptor 1 (and sys.stdout) at stderr, so prints from references, kernels and
native code all land in the engine's log. See README.md for the protocol.
"""

from __future__ import annotations

import argparse
import gc
import os
import select
import sys
import traceback
from typing import Any, Callable, Dict, IO, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# After a verify or profile answer the worker wants a new spare child (candidate.py). It starts it
# when no request arrives within this many seconds, or with the next probe, design_check or verify
# (the engine is preparing another candidate), but not for a profile (it would share the cores with
# the timed calls) nor at shutdown (it would be killed unused).
SPARE_DELAY_S = 0.5
SPARE_WITH = ("probe", "design_check", "verify")


class LineReader:
    """Request lines from a descriptor, with a wait that can time out (``ready``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False

    def ready(self, timeout: float) -> bool:
        if b"\n" in self.buf or self.eof:
            return True
        readable, _, _ = select.select([self.fd], [], [], timeout)
        return bool(readable)

    def readline(self) -> bytes:
        while b"\n" not in self.buf and not self.eof:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buf += chunk
        if b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            return line + b"\n"
        line, self.buf = self.buf, b""
        return line


def _take_stdout() -> IO[str]:
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(answer_fd, "w", encoding="utf-8", buffering=1)


def _die_with_parent() -> None:
    """Asks Linux to kill this worker when the process that started it dies.

    A worker stuck in a hanging reference never reads the end of its input,
    so without this an engine killed by a signal would leave it running."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the call above
        os._exit(0)


def main(argv: Optional[list] = None) -> int:
    _die_with_parent()
    parser = argparse.ArgumentParser(description="akg verifier harness worker")
    parser.add_argument("--device", default="cpu", help="cpu or cuda:N")
    args = parser.parse_args(argv)

    answers_stream = _take_stdout()

    from akg_harness import envinfo
    envinfo.apply_malloc_policy()  # before torch allocates anything: reference and kernel alike

    import torch  # noqa: F401 - imported once for the worker's lifetime

    from akg_harness import env as worker_env
    from akg_harness.candidate import Judge
    from akg_harness.design_check import run_design_check
    from akg_harness.jail import SANDBOX_ERROR, Jail, SandboxError, settings_from_env
    from akg_harness.loading import Registry
    from akg_harness.probe import run_probe
    from akg_harness.profile import run_profile
    from akg_harness.protocol import AnswerWriter, HarnessError
    from akg_harness.verify import run_verify

    writer = AnswerWriter(answers_stream)
    interpreted = worker_env.interpreted_device(args.device)
    if interpreted:
        args.device = "cpu"
    try:
        env = worker_env.setup(args.device, interpreted)
    except Exception as exc:  # noqa: BLE001 - report why the worker cannot serve, then stop
        writer.send({"event": "fatal", "detail": f"{type(exc).__name__}: {exc}"})
        return 2
    # Candidates run in sandboxed children (akg_harness/jail.py); when the sandbox cannot be set up
    # the worker still serves probe and design_check (they run only the reference) and answers
    # verify and profile with sandbox_error.
    judge: Optional[Judge] = None
    sandbox_problem: Optional[str] = None
    try:
        jail = Jail.create(settings_from_env())
        judge = Judge(jail, args.device)
        sandbox_info = judge.describe()
    except SandboxError as exc:
        sandbox_problem = str(exc)
        sandbox_info = {"mode": "unavailable", "detail": sandbox_problem}
    ready = worker_env.ready_event(env)
    ready["sandbox"] = sandbox_info
    writer.send(ready)
    if judge is not None:
        # both import torch while the engine probes, designs and builds the first candidate
        judge.warm_spare()
        judge.warm_reference()

    def judged(run: Callable[[Dict[str, Any], Judge], Dict[str, Any]]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
        def handler(req: Dict[str, Any]) -> Dict[str, Any]:
            if judge is None:
                raise HarnessError(SANDBOX_ERROR, sandbox_problem or "no sandbox")
            return run(req, judge)
        return handler

    registry = Registry()
    handlers: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = {
        "ping": lambda req: {"ok": True},
        "probe": lambda req: run_probe(req, registry, env),
        "verify": judged(lambda req, j: run_verify(req, registry, env, j,
                                                   progress=lambda info: writer.send(
                                                       {"event": "progress", "id": req.get("id"), **info}))),
        "profile": judged(lambda req, j: run_profile(req, registry, env, j)),
        "design_check": lambda req: run_design_check(req, registry, env),
        "env": lambda req: envinfo.run_env(req, env),
    }

    try:
        return serve(LineReader(sys.stdin.fileno()), writer, handlers, judge)
    finally:
        if judge is not None:
            judge.close()


def serve(stdin: LineReader, writer: Any, handlers: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]],
          judge: Any) -> int:
    import torch

    from akg_harness.protocol import (RUNTIME_ERROR, HarnessError, error_answer, parse_request,
                                      request_id)
    from akg_harness.verify import VerifyFailure

    spare_wanted = False
    while True:
        if spare_wanted and not stdin.ready(SPARE_DELAY_S):
            judge.warm_spare()  # starts while the engine builds the next candidate
            spare_wanted = False
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        rid: Optional[int] = None
        op: Any = None
        try:
            req = parse_request(line)
            rid = request_id(req)
            if rid is None:
                raise HarnessError(RUNTIME_ERROR, "request has no integer \"id\"")
            op = req.get("op")
            if spare_wanted and op in SPARE_WITH:
                judge.warm_spare()
                spare_wanted = False
            if op == "shutdown":
                writer.send({"id": rid, "ok": True})
                return 0
            handler = handlers.get(op) if isinstance(op, str) else None
            if handler is None:
                raise HarnessError(RUNTIME_ERROR, f"unknown op {op!r}")
            with torch.no_grad():
                answer = handler(req)
            writer.send({"id": rid, **answer})
        except VerifyFailure as failure:
            writer.send(error_answer(rid, failure.error, failure.extra()))
        except HarnessError as err:
            writer.send(error_answer(rid, err))
        except KeyboardInterrupt:
            return 130
        except BaseException as exc:  # noqa: BLE001 - a request must never end the worker
            detail = f"internal error: {type(exc).__name__}: {exc}"
            print(traceback.format_exc(), file=sys.stderr)
            writer.send(error_answer(rid, HarnessError(RUNTIME_ERROR, detail)))
        finally:
            sys.stdout = sys.stderr  # user code may have replaced it
            if judge is not None and op in ("verify", "profile"):
                spare_wanted = True
                if judge.device.startswith("cuda"):
                    judge.trim()  # the children's cached device memory goes back (below: why)
            if op in handlers and op != "ping":
                gc.collect()  # free the request's tensors and models before the next one
                if torch.cuda.is_initialized():
                    # every worker's processes share the GPU: what the caching allocator keeps
                    # of this request's largest tensors would leave another worker's next
                    # request without memory
                    torch.cuda.empty_cache()


def _exit_now(code: Any) -> None:
    """Ends the worker without the interpreter's teardown: everything it owns (children, cgroups,
    staging folders) is released by ``main`` already, and tearing down torch's modules took about a
    second of CPU at every engine's exit for nothing."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


if __name__ == "__main__":
    _exit_now(main())
