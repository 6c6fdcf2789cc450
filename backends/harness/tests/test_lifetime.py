"""The worker dies with the process that started it, even while a request hangs; what a killed
worker leaves in the temporary folder is removed by the next one."""
import glob
import os
import shutil
import tempfile
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "..", "worker.py")
HANG = os.path.join(HERE, "..", "..", "..", "tests", "fixtures", "refs", "hangs_in_forward.py")

# A parent that starts the worker, sends a probe of a hanging reference, prints
# the worker's pid and then waits to be killed.
PARENT = r"""
import json, os, subprocess, sys, time
w = subprocess.Popen([sys.executable, "-u", sys.argv[1]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
w.stdout.readline()  # ready
w.stdin.write(json.dumps({"id": 1, "op": "probe", "reference": os.path.abspath(sys.argv[2])}) + "\n")
w.stdin.flush()
print(w.pid, flush=True)
time.sleep(600)
"""


class LifetimeTest(unittest.TestCase):
    def test_worker_dies_with_its_parent(self) -> None:
        parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER, HANG],
                                  stdout=subprocess.PIPE, text=True)
        pid = int(parent.stdout.readline())
        time.sleep(1.0)  # the probe is inside the hanging forward now
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        parent.stdout.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            # a zombie until reaped by init counts as gone
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().split()[2] == "Z":
                        return
            except FileNotFoundError:
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        self.fail("the worker outlived its parent")

    def test_next_worker_removes_a_killed_workers_staging(self) -> None:
        from harness_client import KernelDir, Worker, reference
        # A temporary folder of this test's own: every worker sweeps the dead judges' folders when it
        # starts, so a worker of a test running beside this one would otherwise remove the folder
        # before this test's second worker is there to show that it does.
        tmp = tempfile.mkdtemp(prefix="akg-lifetime-")
        env = {"TMPDIR": tmp}
        kernels = KernelDir()
        worker = Worker(extra_env=env)
        try:
            answer = worker.request({"id": 1, "op": "verify", "reference": reference("relu_ref.py"),
                                     "kernel": kernels.kernel("relu_ok.py"), "trials": 1, "seed": 0})
            self.assertTrue(answer["ok"], answer)
            staged = glob.glob(os.path.join(tmp, f"akg-kernel-{worker.proc.pid}-*"))
            self.assertTrue(staged, "the verify staged no kernel folder")
            worker.proc.kill()  # no cleanup: as the engine ends a worker it no longer needs
            worker.proc.wait()
            time.sleep(0.5)  # its children die with it (PDEATHSIG)
            self.assertTrue(any(os.path.exists(p) for p in staged), "the killed worker's folder vanished")
            Worker(extra_env=env).close()
            self.assertEqual([p for p in staged if os.path.exists(p)], [])
        finally:
            worker.close()
            kernels.close()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
