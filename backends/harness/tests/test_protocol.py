"""The line protocol: ready event, ping, malformed lines, unknown ops, shutdown, EOF."""

import unittest

from harness_client import KernelDir, Worker, reference


class ProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.kernels = KernelDir()
        cls.worker = Worker()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        cls.kernels.close()

    def test_ready_event(self) -> None:
        ready = self.worker.ready
        self.assertEqual(ready["event"], "ready")
        self.assertEqual(ready["pid"], self.worker.proc.pid)
        self.assertEqual(ready["device"], "cpu")
        self.assertEqual(ready["threads"], 1)  # AKG_THREADS=1 in the test environment
        for key in ("python", "torch", "blas"):
            self.assertIn(key, ready)
        self.assertIn("library", ready["blas"])
        self.assertIn("coretype", ready["blas"])

    def test_ping(self) -> None:
        self.assertEqual(self.worker.request({"id": 1, "op": "ping"}), {"id": 1, "ok": True})

    def test_malformed_line_then_ping(self) -> None:
        self.worker.send_raw(b"{this is not json\n")
        answer = self.worker.next_message()
        self.assertIsNone(answer["id"])
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertIn("malformed", answer["detail"])
        self.assertEqual(self.worker.request({"id": 2, "op": "ping"}), {"id": 2, "ok": True})

    def test_not_an_object(self) -> None:
        self.worker.send_raw(b"[1, 2]\n")
        answer = self.worker.next_message()
        self.assertFalse(answer["ok"])
        self.assertIsNone(answer["id"])

    def test_unknown_op_keeps_id(self) -> None:
        answer = self.worker.request({"id": 3, "op": "frobnicate"})
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertIn("frobnicate", answer["detail"])

    def test_missing_id(self) -> None:
        self.worker.send_raw(b'{"op": "ping"}\n')
        answer = self.worker.next_message()
        self.assertIsNone(answer["id"])
        self.assertFalse(answer["ok"])

    def test_bad_field_type(self) -> None:
        answer = self.worker.request({"id": 4, "op": "verify", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("relu_ok.py"), "trials": "five"})
        self.assertFalse(answer["ok"])
        self.assertIn("trials", answer["detail"])

    def test_relative_path_refused(self) -> None:
        answer = self.worker.request({"id": 5, "op": "probe", "reference": "refs/relu_ref.py"})
        self.assertFalse(answer["ok"])
        self.assertIn("absolute", answer["detail"])

    def test_kernel_prints_stay_off_stdout(self) -> None:
        # raises.py prints to stdout before raising; the client parses every stdout line as JSON.
        answer = self.worker.request({"id": 6, "op": "verify", "reference": reference("relu_ref.py"),
                                      "kernel": self.kernels.kernel("raises.py"), "trials": 1})
        self.assertEqual(answer["class"], "runtime_error")
        self.assertEqual(self.worker.request({"id": 7, "op": "ping"}), {"id": 7, "ok": True})
        self.assertIn("kernel says hello on stdout", self.worker.log_text())


class LifecycleTest(unittest.TestCase):
    def test_shutdown_answers_and_exits_zero(self) -> None:
        worker = Worker()
        try:
            self.assertEqual(worker.request({"id": 9, "op": "shutdown"}), {"id": 9, "ok": True})
            self.assertEqual(worker.proc.wait(timeout=60), 0)
        finally:
            worker.close()

    def test_eof_exits_zero(self) -> None:
        worker = Worker()
        self.assertEqual(worker.close(), 0)

    def test_threads_from_environment(self) -> None:
        worker = Worker({"AKG_THREADS": "2", "OPENBLAS_CORETYPE": "Haswell"})
        try:
            self.assertEqual(worker.ready["threads"], 2)
            self.assertEqual(worker.ready["blas"]["coretype"], "Haswell")
            answer = worker.request({"id": 1, "op": "ping"})
            self.assertTrue(answer["ok"])
        finally:
            worker.close()


if __name__ == "__main__":
    unittest.main()
