"""Tests of suite.py --dsl cuda's pieces that need neither nvcc nor a GPU (cuda_kernels.py): the
backend's nvcc flags, which prebuilt library a kernel may take (same kernel.cu, same arch only), a
build with neither nvcc nor a library saying so, and the report's goal without a GPU (every operator
`compiled`, else exit 1).

    /usr/bin/python3 -m unittest discover -s tests/sketch/difftest -p "test_cuda_kernels.py" -v
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cuda_kernels  # noqa: E402
import suite  # noqa: E402

SOURCE = "extern \"C\" int akg_kernel(void *const *t, const long long *s, const double *p, void *q) { return 0; }\n"


def write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class CudaKernelsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-cuda-kernels-")
        self.dir = self.tmp.name

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_flags_are_the_backends(self) -> None:
        flags = cuda_kernels.nvcc_flags()
        self.assertIn("-shared", flags)
        self.assertIn("-O3", flags)
        self.assertFalse(any(f.startswith("-arch") for f in flags))  # the arch is the run's

    def test_prebuilt_only_for_the_same_source_and_arch(self) -> None:
        theirs = os.path.join(self.dir, "theirs", "relu")
        write(os.path.join(theirs, "kernel.cu"), SOURCE)
        write(os.path.join(theirs, "kernel.so"), "not really a library")
        write(os.path.join(theirs, "kernel.arch"), "sm_90a\n")
        ours = write(os.path.join(self.dir, "ours", "relu", "kernel.cu"), SOURCE)
        folder = os.path.join(self.dir, "theirs")
        self.assertEqual(cuda_kernels._prebuilt(folder, ours, "sm_90a"), os.path.join(theirs, "kernel.so"))
        self.assertIsNone(cuda_kernels._prebuilt(folder, ours, "sm_90"))
        write(ours, SOURCE + "// edited\n")
        self.assertIsNone(cuda_kernels._prebuilt(folder, ours, "sm_90a"))
        other = write(os.path.join(self.dir, "ours", "gelu", "kernel.cu"), SOURCE)
        self.assertIsNone(cuda_kernels._prebuilt(folder, other, "sm_90a"))

    def test_no_nvcc_and_no_library_is_a_build_error(self) -> None:
        src = write(os.path.join(self.dir, "work", "relu", "kernel.cu"), SOURCE)
        built = cuda_kernels.build([(3, src)], os.path.join(self.dir, "work"), None, "sm_90a", 1)
        self.assertEqual(built.library, {})
        self.assertIn("no nvcc here", built.errors[3])
        theirs = os.path.join(self.dir, "theirs", "relu")
        write(os.path.join(theirs, "kernel.cu"), SOURCE)
        write(os.path.join(theirs, "kernel.so"), "a library")
        write(os.path.join(theirs, "kernel.arch"), "sm_90a\n")
        built = cuda_kernels.build([(3, src)], os.path.join(self.dir, "work"), None, "sm_90a", 1,
                                   os.path.join(self.dir, "theirs"))
        self.assertEqual(built.errors, {})
        self.assertEqual(built.library[3], os.path.join(os.path.dirname(src), "kernel.so"))

    def test_compiled_is_the_goal_without_a_gpu(self) -> None:
        ops = [suite.Op(0, "activation", "relu", "relu.py", outcome=suite.COMPILED),
               suite.Op(1, "activation", "gelu", "gelu.py", outcome=suite.COMPILED)]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = suite.report(ops, self.dir, 0, {}, 1.0, 1.0, suite.COMPILED, ".cu")
        self.assertEqual(rc, 0)
        self.assertIn("2 of 2 operators compiled (no GPU here: nothing ran)", out.getvalue())
        ops[1].outcome, ops[1].detail = "build_error", "nvcc: error"
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = suite.report(ops, self.dir, 0, {}, 1.0, 1.0, suite.COMPILED, ".cu")
        self.assertEqual(rc, 1)
        self.assertIn("1 of 2 operators compiled", out.getvalue())
        self.assertIn("| activation | 2 | 1 | 0 | 0 | 0 | 1: gelu |", out.getvalue())


if __name__ == "__main__":
    unittest.main()
