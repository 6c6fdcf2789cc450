"""Helpers for the end-to-end tests: run the real akg_cli on real references."""
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
REFS = os.path.join(SOURCE, "tests", "fixtures", "refs")
KERNELS = os.path.join(SOURCE, "tests", "fixtures", "kernels")


class CliTest(unittest.TestCase):
    """Each test gets its own store and output folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-e2e-")
        self.dir = self.tmp.name
        self.env = dict(os.environ, AKG_STORE=os.path.join(self.dir, "akg.db"),
                        AKG_PYTHON=PYTHON, AKG_HOME=SOURCE)

    def tearDown(self):
        self.tmp.cleanup()

    def akg(self, *args, timeout=300):
        return subprocess.run([CLI, *args], cwd=self.dir, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def op(self, ref, *extra, name="run", timeout=300):
        """Runs `akg_cli op --json` and returns (process, report)."""
        out = os.path.join(self.dir, name)
        p = self.akg("op", "--json", "--output", out, *extra, ref, timeout=timeout)
        report = None
        path = os.path.join(out, "report.json")
        if os.path.exists(path):
            with open(path) as f:
                report = json.load(f)
        return p, report


class ReplayTest(CliTest):
    """A CliTest with the loopback replay server (tests/providers/replay_server.py) running and
    the environment pointing the openai provider at scenario (a path of the server's, e.g.
    "script-relu") under a tag of its own: self.port, self.key, self.tag."""

    scenario = "script-relu"

    def setUp(self):
        super().setUp()
        self.server = subprocess.Popen(
            [sys.executable, os.path.join(SOURCE, "tests", "providers", "replay_server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.server.stdout.readline()
        self.assertTrue(line.startswith("PORT "), line)
        self.port = int(line.split()[1])
        self.key = "sk-replay-" + secrets.token_hex(16)
        self.tag = "relu" + secrets.token_hex(4)
        home = os.path.join(self.dir, "home")
        os.makedirs(home)
        # no settings file of the user's: the environment alone points at the server
        self.env.update(HOME=home, AKG_AGENTS_API_KEY=self.key,
                        AKG_AGENTS_MODEL_NAME="replay-coder-7b",
                        AKG_AGENTS_BASE_URL="http://127.0.0.1:%d/%s/%s/v1"
                        % (self.port, self.scenario, self.tag))

    def tearDown(self):
        self.server.stdin.close()
        self.server.wait(timeout=10)
        self.server.stdout.close()
        super().tearDown()


def wait_for_candidates(proc, count, seconds):
    """Reads proc's stderr until count search candidates have finished (their progress lines) or
    seconds pass; returns (finished, the lines read)."""
    lines, finished = [], 0
    deadline = time.time() + seconds
    for line in proc.stderr:
        lines.append(line)
        if re.search(r"search  evolve: candidate \d+/\d+", line):
            finished += 1
            if finished == count:
                break
        if time.time() > deadline:
            break
    return finished, lines
