"""Test helper: drives the real worker.py over pipes, and builds the native fixture kernels."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any, Dict, Optional

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
HARNESS_DIR = os.path.dirname(TESTS_DIR)
FIXTURES = os.path.join(TESTS_DIR, "fixtures")
WORKER = os.path.join(HARNESS_DIR, "worker.py")
ANSWER_TIMEOUT_S = 240.0


def reference(name: str) -> str:
    return os.path.join(FIXTURES, "refs", name)


class KernelDir:
    """A temporary folder with the fixture kernels and libakgfx.so built from akgfx.c.

    Owns the folder; ``close()`` removes it.
    """

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="akg-harness-test-")
        src = os.path.join(FIXTURES, "kernels")
        for name in os.listdir(src):
            if name.endswith(".py"):
                shutil.copy(os.path.join(src, name), self.path)
        compiler = os.environ.get("CC", "cc")
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", os.path.join(self.path, "libakgfx.so"),
                        os.path.join(src, "akgfx.c")], check=True)

    def kernel(self, name: str) -> str:
        return os.path.join(self.path, name)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class Worker:
    """One worker process. Owns the process and its log file; ``close()`` ends both."""

    def __init__(self, extra_env: Optional[Dict[str, str]] = None, device: str = "cpu") -> None:
        env = dict(os.environ)
        env.update({"AKG_THREADS": "1", "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"})
        env.update(extra_env or {})
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([os.environ.get("AKG_PYTHON", sys.executable), "-u", WORKER, "--device", device], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=HARNESS_DIR)
        self._lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready = self.next_message()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def next_message(self, timeout: float = ANSWER_TIMEOUT_S) -> Dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        if line is None:
            raise EOFError("worker closed stdout\n" + self.log_text())
        # Every stdout line must be one JSON object: anything else is a protocol violation.
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, dict), line
        return message

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        """Sends one request and returns its answer; the progress lines that
        come before it are kept in self.progress."""
        self.send_raw((json.dumps(payload) + "\n").encode("utf-8"))
        self.progress = []
        answer = self.next_message()
        while answer.get("event") == "progress":
            assert answer.get("id") == payload.get("id"), (answer, payload)
            self.progress.append(answer)
            answer = self.next_message()
        assert answer.get("id") == payload.get("id"), (answer, payload)
        return answer

    def log_text(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def close(self) -> int:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.log.close()
        return self.proc.returncode
