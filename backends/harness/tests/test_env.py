"""env: the baseline environment answer (threads, BLAS, core type, allocator, GEMM rate)."""

import os
import sys
import unittest

from harness_client import HARNESS_DIR, Worker

sys.path.insert(0, HARNESS_DIR)
from akg_harness.env import parse_device  # noqa: E402
from akg_harness.envinfo import expected_coretype  # noqa: E402


class ParseDeviceTest(unittest.TestCase):
    def test_devices(self) -> None:
        self.assertEqual(str(parse_device("cpu")), "cpu")
        self.assertEqual(str(parse_device("cuda:1")), "cuda:1")
        with self.assertRaises(ValueError) as ctx:
            parse_device("npu:0")
        self.assertIn("--workflow kernelgen_only", str(ctx.exception))  # what works instead
        with self.assertRaises(ValueError) as ctx:
            parse_device("gpu0")
        self.assertIn("expected cpu or cuda:N", str(ctx.exception))


class ExpectedCoretypeTest(unittest.TestCase):
    def test_flags_decide_the_core_type(self) -> None:
        avx2 = {"sse4_2", "avx", "avx2", "fma"}
        self.assertEqual(expected_coretype("GenuineIntel", avx2 | {"avx512f", "avx512bw", "avx512vl"}), "SkylakeX")
        self.assertEqual(expected_coretype("AuthenticAMD", avx2 | {"avx512f", "avx512bw", "avx512vl"}), "SkylakeX")
        self.assertEqual(expected_coretype("AuthenticAMD", avx2), "Zen")
        self.assertEqual(expected_coretype("GenuineIntel", avx2), "Haswell")
        # AVX-512F alone (Knights Landing) is not SkylakeX; AVX2 without FMA is not Haswell.
        self.assertEqual(expected_coretype("GenuineIntel", avx2 | {"avx512f"}), "Haswell")
        self.assertIsNone(expected_coretype("GenuineIntel", {"sse4_2", "avx", "avx2"}))
        self.assertIsNone(expected_coretype(None, set()))


class EnvRequestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.worker = Worker(extra_env={"OPENBLAS_CORETYPE": "Haswell", "AKG_MALLOC": "keep"})

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()

    def test_env_answer(self) -> None:
        answer = self.worker.request({"id": 1, "op": "env", "gemm_n": 256, "gemm_runs": 3})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["torch"], self.worker.ready["torch"])
        self.assertEqual(answer["python"], self.worker.ready["python"])
        # The test worker runs with AKG_THREADS=1: torch and OpenMP must both say so.
        self.assertEqual(answer["threads"], 1)
        if answer["omp_max_threads"] is not None:
            self.assertEqual(answer["omp_max_threads"], 1)
        self.assertEqual(answer["openblas_coretype"], "Haswell")
        self.assertEqual(answer["omp_wait_policy"], "passive")
        self.assertEqual(answer["environment"]["OMP_NUM_THREADS"], "1")
        self.assertEqual(answer["openblas_thread_timeout"], os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
        cpu = answer["cpu"]
        self.assertIn(cpu["expected_coretype"], ("SkylakeX", "Zen", "Haswell", None))
        blas = answer["blas"]
        self.assertIn(blas["kind"], ("openblas", "reference", "mkl", "blis", "unknown"))
        if blas["library"] is not None:
            self.assertTrue(os.path.isabs(blas["library"]))
            self.assertIn(blas["library"], blas["libraries"])
        if blas["kind"] == "openblas":
            self.assertTrue(blas["corename"])
            self.assertIn("OpenBLAS", blas["config"])
        gemm = answer["gemm"]
        self.assertEqual((gemm["n"], gemm["runs"], gemm["dtype"]), (256, 3, "float32"))
        self.assertLessEqual(gemm["best_ms"], gemm["ms"])
        self.assertAlmostEqual(gemm["gflops"], 2 * 256 ** 3 / (gemm["ms"] * 1e6), places=6)
        malloc = answer["malloc"]
        self.assertEqual(malloc["policy"], "keep")
        if sys.platform.startswith("linux"):
            self.assertTrue(malloc["applied"], malloc)
            self.assertEqual(malloc["mmap_max"], 0)

    def test_bad_gemm_size_is_refused(self) -> None:
        answer = self.worker.request({"id": 2, "op": "env", "gemm_n": 3})
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertIn("gemm_n", answer["detail"])
        self.assertNotIn("where", answer)
        # The worker keeps serving after a refused request.
        self.assertTrue(self.worker.request({"id": 3, "op": "ping"})["ok"])


class SystemMallocTest(unittest.TestCase):
    def test_system_policy_leaves_glibc_alone(self) -> None:
        worker = Worker(extra_env={"AKG_MALLOC": "system"})
        try:
            answer = worker.request({"id": 1, "op": "env", "gemm_n": 64, "gemm_runs": 1})
        finally:
            self.assertEqual(worker.close(), 0)
        self.assertTrue(answer["ok"], answer)
        self.assertEqual((answer["malloc"]["policy"], answer["malloc"]["applied"]), ("system", False))


if __name__ == "__main__":
    unittest.main()
