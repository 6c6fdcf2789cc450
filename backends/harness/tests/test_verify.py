"""verify: correct, wrong, partial, cheating, in-place, misshapen and broken kernels; the float64 rule."""

import unittest

from harness_client import KernelDir, Worker, reference


class VerifyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.kernels = KernelDir()
        cls.worker = Worker({"AKG_TEST_REFERENCE": reference("relu_ref.py")})
        cls.next_id = 1000

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        cls.kernels.close()

    def verify(self, kernel: str, ref: str = "relu_ref.py", **fields) -> dict:
        type(self).next_id += 1
        request = {"id": self.next_id, "op": "verify", "reference": reference(ref),
                   "kernel": self.kernels.kernel(kernel), "trials": 5, "seed": 1234, "atol": None, "rtol": None}
        request.update(fields)
        return self.worker.request(request)

    def test_correct_kernel_passes(self) -> None:
        answer = self.verify("relu_ok.py")
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["trials"], 5)
        self.assertEqual(answer["cases"], 1)
        self.assertEqual(answer["seeds"], [1234, 2234, 3234, 4234, 5234])
        self.assertEqual(answer["max_abs_err"], 0.0)
        self.assertEqual((answer["atol"], answer["rtol"], answer["dtype"]), (1e-4, 1e-4, "float32"))
        self.assertFalse(answer["fp64_rule"])
        # relu_ref draws non-negative inputs: trials 1.. ran on signed heavy-tailed ones; a ReLU
        # reduces nothing, so no trial runs on precision-exposing inputs (test_reduction_...)
        self.assertEqual(answer["heavy_tailed"], [[1, 0], [2, 0], [3, 0], [4, 0]])
        self.assertEqual(answer["precision"], [])
        # one progress line per passed trial came before the answer
        self.assertEqual([(p["trial"], p["trials"]) for p in self.worker.progress],
                         [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)])

    def test_repeated_verify_is_stable(self) -> None:
        self.assertEqual(self.verify("relu_ok.py", seed=7)["seeds"], self.verify("relu_ok.py", seed=7)["seeds"])

    def test_dynamic_cases_all_run(self) -> None:
        answer = self.verify("relu_ok.py", ref="dyn_ref.py", trials=2)
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["cases"], 3)

    def test_numerical_mismatch_reports_worst_element(self) -> None:
        answer = self.verify("relu_wrong.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "numerical_mismatch")
        self.assertEqual(answer["where"], "kernel")
        self.assertEqual((answer["trial"], answer["case"]), (0, 0))
        self.assertIn("worst element [", answer["detail"])
        self.assertIn("trial 0 (seed 1234)", answer["detail"])
        # x * 1.01 on inputs in [0, 1): the worst error is close to 0.01.
        self.assertAlmostEqual(answer["max_abs_err"], 0.01, delta=1e-3)

    def test_tolerance_override(self) -> None:
        answer = self.verify("relu_wrong.py", trials=1, atol=0.02, rtol=0.0)
        self.assertTrue(answer["ok"], answer)
        self.assertEqual((answer["atol"], answer["rtol"]), (0.02, 0.0))

    def test_heavy_tailed_trials_catch_identity(self) -> None:
        # Identity equals relu on non-negative inputs; the signed trials expose it.
        answer = self.verify("copy_only.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "numerical_mismatch")
        self.assertEqual(answer["trial"], 1)

    def test_half_filled_output_caught(self) -> None:
        # The unwritten half keeps what the memory held: never the right values for new inputs.
        answer = self.verify("relu_half.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "numerical_mismatch")
        self.assertRegex(answer["detail"], r"(\d+) of 16384 elements out of tolerance|positions differ")

    def test_torch_compute_call_forbidden(self) -> None:
        answer = self.verify("relu_cheat.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "forbidden")
        self.assertTrue(answer["detail"].startswith("relu_cheat.py line 7: ModelNew.forward calls torch.relu: "
                                                    "the kernel must compute its result itself"), answer["detail"])
        self.assertEqual(answer["line"], 7)

    def test_forbidden_even_when_kernel_catches_it(self) -> None:
        # refused before it runs: the static check reads the fallback in the except branch
        answer = self.verify("relu_cheat_caught.py")
        self.assertEqual(answer["class"], "forbidden")
        self.assertIn("applies * to a tensor", answer["detail"])

    def test_holding_the_reference_forbidden(self) -> None:
        # it would have to import the reference: only torch, ctypes and a few others may be imported
        answer = self.verify("holds_reference.py")
        self.assertEqual(answer["class"], "forbidden")
        self.assertIn("imports importlib.util", answer["detail"])

    def test_calling_the_reference_forbidden(self) -> None:
        answer = self.verify("calls_reference.py")
        self.assertEqual(answer["class"], "forbidden")
        self.assertIn("imports importlib.util", answer["detail"])

    def test_kernel_modifying_input(self) -> None:
        answer = self.verify("relu_inplace.py")
        self.assertFalse(answer["ok"])
        # the input region is mapped read-only in the child: the write faults
        self.assertEqual(answer["class"], "crash")
        self.assertIn("SIGSEGV", answer["detail"])
        self.assertIn("its inputs are read-only, so writing one (in place) ends it this way", answer["detail"])

    def test_shape_mismatch(self) -> None:
        answer = self.verify("relu_shape.py")
        self.assertEqual(answer["class"], "shape_mismatch")
        self.assertEqual(answer["detail"], "output 0: expected [16, 1024] float32, got [16, 1023] float32")

    def test_syntax_error_is_build_error(self) -> None:
        answer = self.verify("syntax_error.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "build_error")
        self.assertEqual(answer["line"], 5)
        self.assertIn("SyntaxError", answer["detail"])

    def test_missing_model_new_is_build_error(self) -> None:
        answer = self.verify("no_model_new.py")
        self.assertEqual(answer["class"], "build_error")
        self.assertIn("no class ModelNew", answer["detail"])

    def test_kernel_exception_is_runtime_error(self) -> None:
        answer = self.verify("raises.py")
        self.assertEqual((answer["class"], answer["where"], answer["line"]), ("runtime_error", "kernel", 7))
        self.assertIn("RuntimeError: launch failed", answer["detail"])

    def test_reference_exception_is_reference_runtime_error(self) -> None:
        answer = self.verify("relu_ok.py", ref="raises_ref.py")
        self.assertEqual((answer["class"], answer["where"], answer["line"]), ("runtime_error", "reference", 8))

    def test_changed_kernel_file_is_reloaded(self) -> None:
        # The module cache is keyed by (path, mtime, size): a rewritten kernel is imported again.
        path = self.kernels.kernel("swapped.py")
        for source, expect_ok in (("relu_ok.py", True), ("relu_wrong.py", False)):
            with open(self.kernels.kernel(source), encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
                dst.write(src.read())
            self.assertEqual(self.verify("swapped.py", trials=1)["ok"], expect_ok)


class Fp64RuleTest(unittest.TestCase):
    """Row sums whose exact value is 0: float32 summation order alone exceeds atol + rtol*|ref|."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.kernels = KernelDir()
        cls.worker = Worker()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        cls.kernels.close()

    def verify(self, kernel: str, rid: int) -> dict:
        return self.worker.request({"id": rid, "op": "verify", "reference": reference("rowsum_ref.py"),
                                    "kernel": self.kernels.kernel(kernel), "trials": 3, "seed": 5})

    def test_more_accurate_order_passes_by_fp64_rule(self) -> None:
        answer = self.verify("rowsum_ok.py", 1)
        self.assertTrue(answer["ok"], answer)
        self.assertTrue(answer["fp64_rule"])
        # It did differ from PyTorch's float32 result by more than the plain tolerance.
        self.assertGreater(answer["max_abs_err"], answer["atol"])

    def test_reduction_gets_a_precision_exposing_trial(self) -> None:
        # a row sum reduces: its last trial (of three) runs on 1 + x/256, and the honest kernel,
        # which accumulates in float64, still passes there
        answer = self.verify("rowsum_ok.py", 3)
        self.assertTrue(answer["ok"], answer)
        self.assertEqual([t for t, _ in answer["precision"]], [2])

    def test_wrong_result_still_fails(self) -> None:
        answer = self.verify("rowsum_off.py", 2)
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "numerical_mismatch")
        self.assertFalse(answer["fp64_rule"])


if __name__ == "__main__":
    unittest.main()
