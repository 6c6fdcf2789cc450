"""profile: the interleaved timing answer."""

import unittest

from harness_client import KernelDir, Worker, reference


class ProfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.kernels = KernelDir()
        cls.worker = Worker()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        cls.kernels.close()

    def test_profile_answer_is_sane(self) -> None:
        answer = self.worker.request({"id": 1, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 2, "runs": 12, "seed": 3})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual((answer["runs"], answer["warmup"]), (12, 2))
        for side in ("ref", "kernel"):
            self.assertGreater(answer[f"{side}_ms"], 0.0)
            self.assertLessEqual(answer[f"{side}_ms_p10"], answer[f"{side}_ms"])
            self.assertLessEqual(answer[f"{side}_ms"], answer[f"{side}_ms_p90"])
        self.assertAlmostEqual(answer["speedup"], answer["ref_ms"] / answer["kernel_ms"], places=9)
        env = answer["env"]
        self.assertEqual((env["device"], env["threads"]), ("cpu", 1))
        for key in ("torch", "blas", "coretype"):
            self.assertIn(key, env)
        self.assertNotIn("case", answer)

    def test_dynamic_task_times_get_inputs(self) -> None:
        answer = self.worker.request({"id": 2, "op": "profile", "reference": reference("dyn_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 1, "runs": 3, "seed": 0})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["case"], "get_inputs")

    def test_kernel_failure_in_profile(self) -> None:
        answer = self.worker.request({"id": 3, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("raises.py"), "warmup": 1, "runs": 3})
        self.assertFalse(answer["ok"])
        self.assertEqual((answer["class"], answer["where"]), ("runtime_error", "kernel"))


if __name__ == "__main__":
    unittest.main()
