"""The index type of a cuda/triton_cuda kernel is a launch-time choice: akg_kernel passes each
kernel AKG_IDX = tl.int32 when every tensor and integer of the launch is at most 2**29 (the
prelude's _akg_idx), else tl.int64. Checks the rule on stand-ins for huge tensors (numel only, no
memory), and runs the relu fixture under Triton's interpreter on both paths (the int64 one by
lowering the module's limit), the same values either way.

    /usr/bin/python3 -m unittest discover -s tests/sketch/difftest -p "test_triton_index_type.py" -v

Needs akg_cli ($AKG_CLI, else build/akg_cli) and the PyTorch 2 + Triton environment
(.venv-torch2); skipped without them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "sketch", "fixtures", "triton_cuda", "activation_relu.sketch")
TORCH2 = os.path.join(ROOT, ".venv-torch2", "bin", "python")

# run under the Triton environment: argv[1] is the lowered module
PROBE = r'''
import importlib.util
import sys

import torch
import triton.language as tl

spec = importlib.util.spec_from_file_location("akg_relu", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)


class Huge:
    """A tensor's stand-in: only its element count."""

    def __init__(self, n):
        self.n = n

    def numel(self):
        return self.n


L = 2 ** 29
assert m._AKG_IDX_LIMIT == L
assert m._akg_idx([Huge(L), Huge(1)], [L, -L, 0]) == tl.int32
assert m._akg_idx([], []) == tl.int32
assert m._akg_idx([Huge(1), Huge(L + 1)], [1]) == tl.int64
assert m._akg_idx([Huge(3 * 2 ** 30)], []) == tl.int64
assert m._akg_idx([Huge(1)], [L + 1]) == tl.int64
assert m._akg_idx([Huge(1)], [-L - 1]) == tl.int64
assert m._akg_idx([Huge(1)], [2 ** 31]) == tl.int64

chosen = []
pick = m._akg_idx


def spy(tensors, ints):
    chosen.append(pick(tensors, ints))
    return chosen[-1]


m._akg_idx = spy
x = torch.randn(3, 1000)
for limit, want in ((L, tl.int32), (100, tl.int64)):
    m._AKG_IDX_LIMIT = limit
    out = torch.full_like(x, float("nan"))
    chosen.clear()
    m.akg_kernel([x, out], [x.numel(), 3, 1000], [])
    assert chosen and all(c == want for c in chosen), (limit, chosen)
    assert torch.equal(out, torch.relu(x)), limit
print("index type: ok")
'''


def find_akg_cli():
    for candidate in (os.environ.get("AKG_CLI"), os.path.join(ROOT, "build", "akg_cli")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class TritonIndexTypeTest(unittest.TestCase):
    def test_int32_below_the_limit_int64_above(self) -> None:
        akg_cli = find_akg_cli()
        if not akg_cli:
            self.skipTest("akg_cli is not built")
        if not os.access(TORCH2, os.X_OK):
            self.skipTest("PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
        lowered = subprocess.run([akg_cli, "sketch", "emit", "--backend", "cuda", "--dsl", "triton_cuda", FIXTURE],
                                 capture_output=True, text=True)
        self.assertEqual(lowered.returncode, 0, lowered.stderr)
        src = lowered.stdout
        self.assertIn("_pid = tl.program_id(0).to(AKG_IDX)", src)
        self.assertIn("AKG_IDX: tl.constexpr", src)
        self.assertIn("AKG_IDX=_akg_idx([T_x, T_out], [S_N, _n0])", src)
        self.assertNotIn("tl.int64)", src.split("def akg_kernel")[0].split("def _akg_k0")[1])
        with tempfile.TemporaryDirectory(prefix="akg-index-type-") as tmp:
            path = os.path.join(tmp, "akg_relu.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(src)
            env = dict(os.environ, TRITON_INTERPRET="1")
            run = subprocess.run([TORCH2, "-c", PROBE, path], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("index type: ok", run.stdout)


if __name__ == "__main__":
    unittest.main()
