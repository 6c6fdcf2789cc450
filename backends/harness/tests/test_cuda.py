"""The CUDA path with a Triton kernel; skipped where there is no GPU or no Triton."""

import importlib.util
import shutil
import unittest

import torch

from harness_client import KernelDir, Worker, reference

HAVE_GPU = torch.cuda.is_available() and importlib.util.find_spec("triton") is not None


@unittest.skipUnless(HAVE_GPU, "needs a CUDA device and Triton")
class CudaTritonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.kernels = KernelDir()
        # a GPU machine may lack bubblewrap: the children then run without the OS sandbox
        extra = {} if shutil.which("bwrap") else {"AKG_SANDBOX": '{"mode": "none"}'}
        cls.worker = Worker(extra_env=extra, device="cuda:0")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        cls.kernels.close()

    def test_ready_on_gpu(self) -> None:
        self.assertEqual(self.worker.ready["device"], "cuda:0")

    def test_triton_kernel_verifies(self) -> None:
        answer = self.worker.request({"id": 1, "op": "verify", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_triton.py"), "trials": 3, "seed": 1})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["max_abs_err"], 0.0)

    def test_cheat_forbidden_on_gpu(self) -> None:
        answer = self.worker.request({"id": 2, "op": "verify", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_cheat.py"), "trials": 1, "seed": 1})
        self.assertEqual(answer["class"], "forbidden")

    def test_triton_profile(self) -> None:
        answer = self.worker.request({"id": 3, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_triton.py"), "warmup": 3, "runs": 10})
        self.assertTrue(answer["ok"], answer)
        self.assertGreater(answer["kernel_ms"], 0.0)
        self.assertEqual(answer["env"]["device"], "cuda:0")
        # the outputs' copy to the host is timed apart and an honest kernel's is not charged
        self.assertGreater(answer["kernel_copy_ms_per_call"], 0.0)
        self.assertGreater(answer["ref_copy_ms_per_call"], 0.0)
        self.assertLess(answer["kernel_copy_charged_ms"], 5.0, answer)

    def test_work_deferred_into_the_copy_is_charged(self) -> None:
        answer = self.worker.request({"id": 4, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_triton_lazy_copy.py"),
                                      "warmup": 3, "runs": 10})
        if not answer["ok"]:  # caught another way (its CPU time outside the calls): also right
            self.assertEqual(answer["class"], "background_work", answer)
            return
        # 2 ms a call deferred: every timed call is charged at least most of it
        self.assertGreater(answer["kernel_copy_charged_ms"], 10.0, answer)
        self.assertGreater(answer["kernel_ms"], 1.5, answer)


if __name__ == "__main__":
    unittest.main()
