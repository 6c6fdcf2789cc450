"""probe: shapes, dtypes, parameters, dynamic cases and clear failures."""

import platform
import unittest

from harness_client import Worker, reference


class ProbeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.worker = Worker()
        cls.next_id = 100

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()

    def probe(self, name: str, seed: int = 0) -> dict:
        type(self).next_id += 1
        return self.worker.request({"id": self.next_id, "op": "probe", "reference": reference(name), "seed": seed})

    def test_plain_reference(self) -> None:
        answer = self.probe("relu_ref.py")
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["init_inputs"], [])
        self.assertEqual(len(answer["inputs"]), 1)
        x = answer["inputs"][0]
        self.assertEqual((x["kind"], x["shape"], x["dtype"]), ("tensor", [16, 1024], "float32"))
        self.assertGreaterEqual(x["min"], 0.0)
        self.assertLess(x["max"], 1.0)
        self.assertEqual(answer["outputs"][0]["shape"], [16, 1024])
        self.assertEqual(answer["params"], [])
        self.assertEqual(answer["dyn_cases"], [])
        self.assertGreater(answer["ref_ms"], 0.0)
        # the processor the kernel will run on, as /proc/cpuinfo names it (the Designer reads it)
        cpu = answer["cpu"]
        self.assertEqual(cpu["machine"], platform.machine())
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
        self.assertEqual("avx512f" in cpu["simd"], "avx512f" in flags)
        self.assertEqual("avx2" in cpu["simd"], "avx2" in flags)

    def test_init_inputs_parameters_buffers(self) -> None:
        answer = self.probe("conv_linear_ref.py")
        self.assertTrue(answer["ok"], answer)
        self.assertEqual([d["value"] for d in answer["init_inputs"]], [3, 4, 3, 5])
        self.assertEqual(answer["inputs"][0]["shape"], [2, 3, 8, 8])
        self.assertEqual(answer["inputs"][1], {"kind": "scalar", "type": "float", "value": 2.0})
        params = {p["name"]: p["shape"] for p in answer["params"]}
        self.assertEqual(params, {"conv.weight": [4, 3, 3, 3], "conv.bias": [4], "fc.weight": [5, 4], "fc.bias": [5]})
        self.assertEqual(answer["buffers"], [{"name": "shift", "shape": [5], "dtype": "float32"}])
        self.assertEqual(answer["outputs"][0]["shape"], [2, 5])
        # the layers as built: what the constructor's arguments became
        conv = answer["modules"]["conv"]
        self.assertEqual(conv["type"], "Conv2d")
        for key, value in {"in_channels": 3, "out_channels": 4, "kernel_size": [3, 3], "stride": [1, 1],
                           "padding": [0, 0], "dilation": [1, 1], "groups": 1, "padding_mode": "zeros"}.items():
            self.assertEqual(conv["attrs"][key], value, key)
        self.assertEqual(answer["modules"]["fc"]["attrs"]["in_features"], 4)

    def test_dynamic_cases(self) -> None:
        answer = self.probe("dyn_ref.py")
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["inputs"][0]["shape"], [4, 64])
        shapes = [(c["inputs"][0]["shape"], c["outputs"][0]["shape"]) for c in answer["dyn_cases"]]
        self.assertEqual(shapes, [([2, 33], [2, 33]), ([7, 130], [7, 130])])

    def test_tuple_output(self) -> None:
        answer = self.probe("multi_out_ref.py")
        self.assertTrue(answer["ok"], answer)
        self.assertEqual([(o["shape"], o["dtype"]) for o in answer["outputs"]], [([3], "float32"), ([3], "int64")])

    def test_seed_decides_inputs(self) -> None:
        a, b, c = self.probe("relu_ref.py", 1), self.probe("relu_ref.py", 1), self.probe("relu_ref.py", 2)
        self.assertEqual(a["inputs"], b["inputs"])
        self.assertNotEqual(a["inputs"], c["inputs"])

    def test_missing_get_inputs(self) -> None:
        answer = self.probe("no_get_inputs_ref.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertEqual(answer["where"], "reference")
        self.assertEqual(answer["detail"], "reference has no get_inputs()")

    def test_missing_model(self) -> None:
        answer = self.probe("no_model_ref.py")
        self.assertEqual(answer["detail"], "reference has no class Model(nn.Module)")

    def test_forward_raises_with_line(self) -> None:
        answer = self.probe("raises_ref.py")
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        self.assertEqual(answer["where"], "reference")
        self.assertEqual(answer["line"], 8)
        self.assertIn("ValueError: rank 2 is not supported", answer["detail"])
        self.assertIn("raises_ref.py:8", answer["detail"])

    def test_get_inputs_raises_with_line(self) -> None:
        answer = self.probe("bad_get_inputs_ref.py")
        self.assertFalse(answer["ok"])
        self.assertTrue(answer["detail"].startswith("get_inputs() raised RuntimeError"), answer["detail"])
        self.assertEqual(answer["line"], 12)

    def test_missing_file(self) -> None:
        answer = self.probe("does_not_exist.py")
        self.assertFalse(answer["ok"])
        self.assertIn("not found", answer["detail"])


if __name__ == "__main__":
    unittest.main()
