"""The CUDA path with a Triton kernel; skipped where there is no GPU or no Triton."""

import importlib.util
import os
import shutil
import time
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
        if not answer["ok"]:
            # caught another way: its CPU time outside the calls, or the static check refusing
            # its reach into the child's modules (sys): both also right
            self.assertIn(answer["class"], ("background_work", "forbidden"), answer)
            return
        # 2 ms a call deferred: every timed call is charged at least most of it
        self.assertGreater(answer["kernel_copy_charged_ms"], 10.0, answer)
        self.assertGreater(answer["kernel_ms"], 1.5, answer)

    def test_device_memory_goes_back_after_a_request(self) -> None:
        # 256 MB inputs: a profile's batches hold gigabytes in the kernel's and the reference's
        # children; every worker's processes share the GPU, so after the request the children and
        # the judge give back what their caching allocators keep (a child's context stays)
        ref = os.path.join(self.kernels.path, "big_relu_ref.py")
        with open(ref, "w", encoding="utf-8") as f:
            f.write("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.relu(x)\n\n\n"
                    "def get_inputs():\n    return [torch.rand(64, 1 << 20)]\n\n\n"
                    "def get_init_inputs():\n    return []\n")
        kernel = self.kernels.kernel("relu_triton.py")
        answer = self.worker.request({"id": 5, "op": "verify", "reference": ref, "kernel": kernel,
                                      "trials": 1, "seed": 1})
        self.assertTrue(answer["ok"], answer)
        free_before = torch.cuda.mem_get_info()[0]
        answer = self.worker.request({"id": 6, "op": "profile", "reference": ref, "kernel": kernel,
                                      "warmup": 3, "runs": 10})
        self.assertTrue(answer["ok"], answer)
        time.sleep(2)  # the spare child started after the request has its context by now
        held = free_before - torch.cuda.mem_get_info()[0]
        self.assertLess(held, 2 << 30, f"{held >> 20} MiB of device memory still held after the profile")


if __name__ == "__main__":
    unittest.main()
