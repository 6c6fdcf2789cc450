"""Helpers for the end-to-end tests: run the real akg_cli on real references."""
import json
import os
import subprocess
import tempfile
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
