"""The differential test's own tests: the generator on its own, and the runner against hand-written
kernels served by a stand-in emitter (fake_emit.py), whatever state the real emitter is in.

    AKG_CLI=build/akg_cli /usr/bin/python3 -m unittest discover -s tests/sketch/difftest -v
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import difftest  # noqa: E402
import kernels  # noqa: E402
import sketchgen  # noqa: E402
import values  # noqa: E402

GENERATED = 2 * len(sketchgen.FAMILIES) * 10  # enough for every family's operation cycle


def akg_cli() -> str:
    path = os.environ.get("AKG_CLI") or os.path.join(difftest.ROOT, "build", "akg_cli")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest("akg_cli is not built (set AKG_CLI)")
    return path


class GeneratorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.sketches = [sketchgen.generate(1, i) for i in range(GENERATED)]
        cls.all_text = "\n".join(s.text for s in cls.sketches)

    def test_deterministic(self) -> None:
        for i in (0, 7, 100):
            self.assertEqual(sketchgen.generate(1, i).text, self.sketches[i].text)
        self.assertNotEqual(sketchgen.generate(2, 0).text, self.sketches[0].text)

    def test_every_family_and_operation_appears(self) -> None:
        self.assertEqual({s.family for s in self.sketches}, {name for name, _ in sketchgen.FAMILIES})
        ops = (sketchgen.UNARY_OPS + sketchgen.BINARY_OPS + sketchgen.CMP_OPS + sketchgen.REDUCE_OPS
               + ["argmax", "argmin", "cumsum", "cumprod", "gemm", "dot", "gather", "where", "cast", "fill", "zeros",
                  "arange", "softmax", "log_softmax", "transpose", "logical_and", "logical_or"])
        for op in ops:
            with self.subTest(op=op):
                self.assertRegex(self.all_text, rf"\b{op}\(")
        for feature in ("trans_a=True", "trans_b=True", "dst=", "+= gemm(", "init_zero", "reverse=True",
                        "exclusive=True", "keepdim=False", "axis=[", "mask=", "other=", "None, ", "::2", "1::3",
                        "elif ", "else:", "ceil(N, BR)", '"parallel"', '"vectorize", "simd", ', '"unroll"',
                        '"math"', "]: f64", "]: f16", "]: bf16", "]: i32", "]: i64", "]: bool", "params:",
                        "N * M", "N // 2 + 1", "(M + 1) // 2"):
            with self.subTest(feature=feature):
                self.assertIn(feature, self.all_text)

    def test_metadata_round_trips(self) -> None:
        sk = self.sketches[3]
        self.assertEqual(sketchgen.read_meta(sk.text), json.loads(json.dumps(sk.meta)))

    def test_every_sketch_checks_and_interprets(self) -> None:
        cli = akg_cli()
        with tempfile.TemporaryDirectory(prefix="akg-difftest-gen-") as work:
            items = difftest.generated_items(1, GENERATED, work)
            proc = subprocess.run([cli, "sketch", "check", *[it.path for it in items]], capture_output=True,
                                  text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr[:3000])
            difftest.json_forms(cli, items)
            difftest.interpret_all(items, {}, 1, 2)
        bad = [(it.name, it.outcome, it.detail) for it in items if it.outcome != "pending"]
        self.assertEqual(bad, [])
        # the interpreter's results are finite where the generator kept values in range
        for it in items:
            if "_nan_" in it.name:  # the family that puts NaN into its inputs
                continue
            for t in it.ir["tensors"]:  # type: ignore[index]
                data = it.expected[t["name"]]  # type: ignore[index]
                if data.dtype.kind == "f":
                    self.assertTrue(bool((data == data).all()), f"{it.name}: NaN in '{t['name']}'")


KERNEL_HEAD = """#include <cstdint>
#include <cstring>
"""

KERNELS: Dict[str, str] = {
    # y = 2 * x, symbols and params read in declaration order
    "scale": KERNEL_HEAD + """static inline float twice(float v) { return 2.0f * v; }
extern "C" int akg_kernel(void *const *t, const int64_t *s, const double *p) {
  const float *x = (const float *)t[0];
  float *y = (float *)t[1];
  const int64_t n = s[0] * s[1];
  for (int64_t i = 0; i < n; ++i) y[i] = twice(x[i]) * (float)p[0] + (float)p[1];
  return 0;
}
""",
    # bf16 relu on the 16-bit words: a set sign bit gives +0
    # its own twice() would clash with scale's in one unit without the namespaces
    "bf16_relu": KERNEL_HEAD + """static inline float twice(float v) { return v + v; }
extern "C" int akg_kernel(void *const *t, const int64_t *s, const double *p) {
  const uint16_t *x = (const uint16_t *)t[0];
  uint16_t *y = (uint16_t *)t[1];
  for (int64_t i = 0; i < s[0]; ++i) y[i] = (x[i] & 0x8000u) ? 0 : x[i];
  (void)twice; (void)p;
  return 0;
}
""",
    "wrong": KERNEL_HEAD + """extern "C" int akg_kernel(void *const *t, const int64_t *s, const double *p) {
  const float *x = (const float *)t[0];
  float *y = (float *)t[1];
  for (int64_t i = 0; i < s[0] * s[1]; ++i) y[i] = 3.0f * x[i] * (float)p[0] + (float)p[1];
  return 0;
}
""",
    "crash": KERNEL_HEAD + """extern "C" int akg_kernel(void *const *t, const int64_t *s, const double *p) {
  volatile float *nowhere = nullptr;
  (void)t; (void)s; (void)p;
  nowhere[1] = 1.0f;
  return 0;
}
""",
    "broken": KERNEL_HEAD + """extern "C" int akg_kernel(void *const *t, const int64_t *s, const double *p) {
  return this_does_not_compile;
}
""",
}

SCALE = """sketch {name} {{
  symbols: N, M;
  tensors: x[N * M]: f32; y[N * M]: f32;
  params: a: f32 = 1.0, b = 0.0;

  t = alloc([N * M])
  load(x -> t)
  store(t * 2.0 * a + b -> y)
}}
"""
BF16 = """sketch bf16_relu {
  symbols: N;
  tensors: x[N]: bf16; y[N]: bf16;

  t = alloc([N])
  load(x -> t)
  store(relu(t) -> y)
}
"""


class RunnerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.real = akg_cli()
        self.tmp = tempfile.mkdtemp(prefix="akg-difftest-runner-")
        self.cli = os.path.join(self.tmp, "akg_cli")
        with open(self.cli, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.join(HERE, 'fake_emit.py')} \"$@\"\n")
        os.chmod(self.cli, 0o755)
        table = os.path.join(self.tmp, "kernels.json")
        with open(table, "w", encoding="utf-8") as f:
            json.dump(KERNELS, f)
        self.env = {"FAKE_EMIT_REAL": self.real, "FAKE_EMIT_TABLE": table}
        os.environ.update(self.env)
        self.sketches = os.path.join(self.tmp, "sketches")
        os.makedirs(self.sketches)

    def tearDown(self) -> None:
        for key in self.env:
            os.environ.pop(key, None)
        os.environ.pop("FAKE_EMIT_MISSING", None)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name: str, text: str) -> None:
        with open(os.path.join(self.sketches, f"{name}.sketch"), "w", encoding="utf-8") as f:
            f.write(text)

    def run_dir(self, *extra: str) -> tuple:
        out = io.StringIO()
        work = os.path.join(self.tmp, "work")
        with contextlib.redirect_stdout(out):
            rc = difftest.main(["--dir", self.sketches, "--akg-cli", self.cli, "--work", work, "--batch", "3",
                                "--jobs", "2", *extra])
        return rc, out.getvalue(), work

    def test_agreement_mismatch_crash_and_compile_error(self) -> None:
        for name in ("scale", "wrong", "crash", "broken"):
            self.write(name, SCALE.format(name=name))
        self.write("bf16_relu", BF16)
        rc, out, work = self.run_dir("--sym", "N=5")
        self.assertEqual(rc, 1, out)
        self.assertIn("compile_error 1", out)
        self.assertIn("kernel_crash 1", out)
        self.assertIn("mismatch 1", out)
        self.assertIn("passed 2", out)  # scale and bf16_relu, though built in units with the others
        self.assertRegex(out, r"mismatch: 1 sketch\(es\), e\.g\. wrong")
        self.assertIn("tensor 'y': worst element", out)
        self.assertTrue(os.path.isfile(os.path.join(work, "failures", "wrong.sketch")))
        with open(os.path.join(work, "failures", "wrong.txt"), encoding="utf-8") as f:
            self.assertIn("'N': 5", f.read())

    def test_passes_and_unlowered(self) -> None:
        self.write("scale", SCALE.format(name="scale"))
        self.write("unknown", SCALE.format(name="unknown"))
        rc, out, _ = self.run_dir()
        self.assertEqual(rc, 1, out)
        self.assertIn("not_lowered 1", out)
        rc, out, _ = self.run_dir("--allow-unlowered")
        self.assertEqual(rc, 0, out)

    def test_skips_without_emit(self) -> None:
        self.write("scale", SCALE.format(name="scale"))
        os.environ["FAKE_EMIT_MISSING"] = "1"
        rc, out, _ = self.run_dir()
        self.assertEqual(rc, difftest.SKIP)
        self.assertIn("skipped", out)
        self.assertIn("akg_cli sketch emit", out)

    def test_batched_units_keep_kernels_apart(self) -> None:
        text, ranges = kernels.translation_unit([(1, KERNELS["scale"]), (2, KERNELS["bf16_relu"])])
        self.assertEqual(text.count("#include <cstdint>"), 1)
        self.assertIn("#define akg_kernel akg_kernel_1", text)
        self.assertIn("namespace akg_difftest_2 {", text)
        lines = text.splitlines()
        self.assertTrue(any("twice" in ln for ln in lines[ranges[0][0] - 1:ranges[0][1]]))


class JsonCliTest(unittest.TestCase):
    """The contract the runner relies on: `akg_cli sketch json` prints one line a file, or exits 1
    with the checker's diagnostics."""

    def test_json_lines_and_errors(self) -> None:
        cli = akg_cli()
        with tempfile.TemporaryDirectory(prefix="akg-difftest-json-") as folder:
            good, bad = os.path.join(folder, "good.sketch"), os.path.join(folder, "bad.sketch")
            with open(good, "w", encoding="utf-8") as f:
                f.write(SCALE.format(name="good"))
            with open(bad, "w", encoding="utf-8") as f:
                f.write(SCALE.format(name="bad").replace("t * 2.0", "u * 2.0"))
            proc = subprocess.run([cli, "sketch", "json", good, good], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual([json.loads(ln)["name"] for ln in proc.stdout.splitlines()], ["good", "good"])
            proc = subprocess.run([cli, "sketch", "json", bad], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 1)
            self.assertEqual(proc.stdout, "")
            self.assertRegex(proc.stderr, r"bad\.sketch:8:\d+: error: undefined name 'u'")


class ValuesTest(unittest.TestCase):
    def test_comparison_rules(self) -> None:
        import numpy as np
        a = np.array([1.0, np.nan, 3.0], np.float32)
        self.assertIsNone(values.compare_tensor("y", "f32", a, a + np.float32(1e-5)))
        self.assertIn("NaN positions", values.compare_tensor("y", "f32", a, np.array([1, 2, 3], np.float32)).detail)
        self.assertIn("worst element [2]", values.compare_tensor("y", "f32", a, np.array([1, np.nan, 3.1],
                                                                                          np.float32)).detail)
        self.assertIn("exact match", values.compare_tensor("i", "i32", np.array([1, 2]), np.array([1, 3])).detail)

    def test_bf16_abi_round_trip(self) -> None:
        import numpy as np
        x = values.convert(np.linspace(-3, 3, 11), "bf16")
        np.testing.assert_array_equal(values.from_abi(values.abi_array(x, "bf16"), "bf16"), x)


if __name__ == "__main__":
    unittest.main()
