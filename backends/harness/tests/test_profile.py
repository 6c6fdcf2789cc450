"""profile: the interleaved timing answer."""

import unittest

import torch

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

    def test_both_sides_timed_alike(self) -> None:
        """The reference is timed in a child of its own, in batches as large as the kernel's."""
        answer = self.worker.request({"id": 11, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 2, "runs": 12, "seed": 3})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["ref_timing"], "child")
        self.assertEqual(answer["ref_batch"], answer["kernel_batch"])
        # a small relu: calls worth about 2 ms a batch (how many depends on the machine's speed
        # now), their 64 KB outputs all kept within KEEP_BYTES
        self.assertGreaterEqual(answer["kernel_batch"], 1)
        self.assertLessEqual(answer["kernel_batch"] * 16 * 1024 * 4, 4 << 20)
        self.assertGreater(answer["ref_call_overhead_ms"], 0.0)
        # each side's segment starts with settling calls worth SWITCH_SETTLE_MS (8 ms): a call of
        # a few microseconds takes many, and they are counted among the kernel's calls
        self.assertEqual(answer["segment_batches"], 8)
        self.assertGreater(answer["kernel_switch_settle"], 1)
        self.assertGreater(answer["ref_switch_settle"], 1)
        timed = answer["kernel_batch"] * max(5, -(-12 // answer["kernel_batch"]))
        self.assertGreaterEqual(answer["kernel_calls"], timed + answer["kernel_switch_settle"])

    def test_large_outputs_one_call_a_batch(self) -> None:
        """8 MB outputs: a batch keeps its timed outputs alive, so it holds one call (KEEP_BYTES)."""
        answer = self.worker.request({"id": 12, "op": "profile", "reference": reference("relu_big_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 1, "runs": 6, "seed": 3})
        self.assertTrue(answer["ok"], answer)
        self.assertEqual((answer["kernel_batch"], answer["ref_batch"]), (1, 1))

    def test_reference_that_needs_its_folder_is_timed_by_the_judge(self) -> None:
        """A reference that reads a data file beside it cannot run in the reference child (only the
        .py files are staged): the judge times it and says why."""
        answer = self.worker.request({"id": 12, "op": "profile", "reference": reference("reads_file_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 1, "runs": 6, "seed": 0})
        self.assertTrue(answer["ok"], answer)
        self.assertTrue(answer["ref_timing"].startswith("judge (the reference did not run in a child"), answer)
        self.assertIn("reads_file_ref.scale", answer["ref_timing"])
        self.assertNotIn("ref_batch", answer)
        self.assertGreater(answer["ref_ms"], 0.0)

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

    def test_compiled_baseline(self) -> None:
        """"compiled": true adds torch.compile's timing under PyTorch 2 and says why not under 1.x."""
        answer = self.worker.request({"id": 4, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 2, "runs": 9,
                                      "compiled": True})
        self.assertTrue(answer["ok"], answer)
        self.assertGreater(answer["ref_ms"], 0.0)
        self.assertGreater(answer["kernel_ms"], 0.0)
        self.assertGreaterEqual(answer["compile_s"], 0.0)
        if hasattr(torch, "compile"):
            self.assertNotIn("compiled_error", answer)
            self.assertLessEqual(answer["compiled_ms_p10"], answer["compiled_ms"])
            self.assertLessEqual(answer["compiled_ms"], answer["compiled_ms_p90"])
            self.assertAlmostEqual(answer["speedup_compiled"], answer["compiled_ms"] / answer["kernel_ms"], places=9)
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                cpu_flags = f.read()
            if " avx2 " in cpu_flags and " fma " in cpu_flags:
                # inductor names its vector set and extensions ("avx2", "avx512 avx512_vnni", ...):
                # a SIMD one, never "none" (scalar code would make the baseline a straw man)
                isa = answer["compiled_isa"].split()
                self.assertIn(isa[0], ("avx2", "avx512", "amx"), answer)
        else:
            self.assertIn("has no torch.compile", answer["compiled_error"])
            self.assertNotIn("compiled_ms", answer)
            self.assertNotIn("speedup_compiled", answer)

    def test_compiled_flag_must_be_boolean(self) -> None:
        answer = self.worker.request({"id": 5, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "compiled": "yes"})
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertIn("compiled", answer["detail"])

    def test_no_compiled_fields_unless_asked(self) -> None:
        answer = self.worker.request({"id": 6, "op": "profile", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "warmup": 1, "runs": 3})
        self.assertTrue(answer["ok"], answer)
        for key in ("compile_s", "compiled_ms", "speedup_compiled", "compiled_error"):
            self.assertNotIn(key, answer)


if __name__ == "__main__":
    unittest.main()


class BatchSizeTest(unittest.TestCase):
    """How many calls a timed batch holds (profile._pick_batch)."""

    def test_gpu_batches_amortise_the_launch_and_the_pipe(self) -> None:
        from akg_harness.profile import BATCH_MS_GPU, _pick_batch
        mib = 1 << 20
        # an elementwise op on 128 MiB at 0.09 ms a call: on a CPU the kept outputs stay within
        # the cache's share (one call a batch); on a GPU a batch holds many calls, within the
        # device memory its outputs (2 GiB) and input copies may take
        self.assertEqual(_pick_batch(0.09, 128 * mib, 128 * mib), 1)
        k = _pick_batch(0.09, 128 * mib, 128 * mib, gpu=True)
        self.assertEqual(k, 16)
        self.assertGreater(k * 0.09, 1.0)
        # a small GPU kernel: the batch is BATCH_MS_GPU of calls, at most MAX_BATCH
        self.assertEqual(_pick_batch(0.5, mib, mib, gpu=True), int(BATCH_MS_GPU / 0.5) + 1)
        self.assertEqual(_pick_batch(0.001, 4, 4, gpu=True), 256)
        # the probe's bound still holds
        self.assertEqual(_pick_batch(0.001, 4, 4, 16, True), 16)
