"""Test helper: the JSON form of sketch text, from the real `akg_cli sketch json`.

akg_cli is $AKG_CLI (CTest sets it), else the newest build*/akg_cli of the repository; tests that
need it are skipped with a message when there is none.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import tempfile
import unittest
from typing import Any, Dict, List, Optional

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(TESTS_DIR)))


def find_akg_cli() -> Optional[str]:
    given = os.environ.get("AKG_CLI")
    if given and os.access(given, os.X_OK):
        return given
    found = [p for p in glob.glob(os.path.join(REPO, "build*", "akg_cli")) if os.access(p, os.X_OK)]
    return max(found, key=os.path.getmtime) if found else None


def require_akg_cli() -> str:
    cli = find_akg_cli()
    if cli is None:
        raise unittest.SkipTest("akg_cli is not built (set AKG_CLI): the sketch tests need `akg_cli sketch json`")
    return cli


def sketch_irs(texts: List[str]) -> List[Dict[str, Any]]:
    """The JSON forms of several sketch texts (one akg_cli call); fails the test with the checker's
    diagnostics when one does not check."""
    cli = require_akg_cli()
    with tempfile.TemporaryDirectory(prefix="akg-sketch-test-") as folder:
        paths = []
        for i, text in enumerate(texts):
            path = os.path.join(folder, f"s{i}.sketch")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        proc = subprocess.run([cli, "sketch", "json", *paths], capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"akg_cli sketch json failed:\n{proc.stderr}\n" +
                                 "\n---\n".join(texts))
        lines = proc.stdout.splitlines()
    return [json.loads(line) for line in lines]


def sketch_ir(text: str) -> Dict[str, Any]:
    return sketch_irs([text])[0]


def sketch_file_ir(path: str) -> Dict[str, Any]:
    cli = require_akg_cli()
    proc = subprocess.run([cli, "sketch", "json", path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"akg_cli sketch json {path} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)
