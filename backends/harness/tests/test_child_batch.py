"""The child's batch protocol as the profile uses it (akg_harness/candidate.py, child.py).

A batch runs its settling calls after a first "go" and its timed calls after a second; the
settling calls' outputs are freed as each returns (the first timed call writes where the last
settling call wrote, as an allocator would hand an operator its predecessor's block), so only
timed calls can be checked, and asking for a settling call's outputs is the judge's own error."""

import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from akg_harness.candidate import CandidateProcess  # noqa: E402
from akg_harness.jail import Jail, settings_from_env  # noqa: E402
from akg_harness.protocol import HarnessError  # noqa: E402
from harness_client import KernelDir, reference  # noqa: E402


class ChildBatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        torch.set_num_threads(1)
        cls.kernels = KernelDir()
        cls.child = CandidateProcess(Jail.create(settings_from_env()), "cpu")
        cls.child.wait_ready()
        cls.child.load(cls.kernels.kernel("relu_ok.py"), [reference("relu_ref.py")], [], {}, 0)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.child.close()
        cls.kernels.close()

    def batch(self):
        return [[torch.randn(16, 1024)] for _ in range(3)]

    def test_timed_outputs_are_read(self) -> None:
        sets = self.batch()
        result = self.child.call(sets, check=[1, 2], expect=[16 * 1024 * 4], settle=1)
        self.assertEqual(sorted(result.outs), [1, 2])
        for b in (1, 2):
            self.assertTrue(torch.equal(result.outs[b][0], torch.relu(sets[b][0])))
        self.assertGreater(result.settle_ns, 0)

    def test_a_settling_call_cannot_be_checked(self) -> None:
        with self.assertRaises(ValueError) as ctx:
            self.child.call(self.batch(), check=[0], expect=[16 * 1024 * 4], settle=1)
        self.assertIn("1 settling, 2 timed", str(ctx.exception))
        # the child is untouched by the refusal: the next batch runs
        result = self.child.call(self.batch(), check=[2], expect=[16 * 1024 * 4], settle=1)
        self.assertEqual(sorted(result.outs), [2])

    def test_without_settling_every_call_can_be_checked(self) -> None:
        sets = self.batch()
        result = self.child.call(sets, check=[0], expect=[16 * 1024 * 4])
        self.assertTrue(torch.equal(result.outs[0][0], torch.relu(sets[0][0])))
        self.assertEqual(result.settle_ns, 0)


if __name__ == "__main__":
    unittest.main()


class CopyPhaseTest(unittest.TestCase):
    """A GPU batch's outputs reach the host after "done", in a phase timed apart; a child on the
    CPU that claims one (time it could work in, untimed) is refused."""

    def test_a_cpu_child_cannot_claim_a_copy_phase(self) -> None:
        kernels = KernelDir()
        child = CandidateProcess(Jail.create(settings_from_env()), "cpu")
        try:
            child.wait_ready()
            child.load(kernels.kernel("relu_copy_phase_on_cpu.py"), [reference("relu_ref.py")], [], {}, 0)
            with self.assertRaises(HarnessError) as ctx:
                child.call([[torch.randn(16, 1024)]], check=[0], expect=[16 * 1024 * 4])
            self.assertEqual(ctx.exception.error_class, "runtime_error")
            self.assertIn("asked for a copy phase on a CPU", ctx.exception.detail)
        finally:
            child.close()
            kernels.close()

