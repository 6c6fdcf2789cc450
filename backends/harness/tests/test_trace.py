"""probe's graph: the reference's forward traced at ATen level and canonicalised (README.md, "graph").

Every reference here is written to a temporary file and probed through the real worker, under
whichever PyTorch runs the tests (1.13 and 2.x both).
"""

import os
import shutil
import sys
import tempfile
import textwrap
import unittest
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for `-m unittest tests.test_trace` too
from harness_client import Worker  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def linear_model(forward: str, extra_init: str = "") -> str:
    """A Model with ``self.fc = nn.Linear(64, 32)`` and the given forward body (one expression)."""
    return (f"class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.fc = nn.Linear(64, 32)\n{extra_init}"
            f"\n    def forward(self, x):\n        return {forward}\n")


SPELLINGS = {
    "modules": linear_model("self.act(self.fc(x))", "        self.act = nn.ReLU()\n"),
    "F.linear": linear_model("F.relu(F.linear(x, self.fc.weight, self.fc.bias))"),
    "matmul": linear_model("torch.relu(x @ self.fc.weight.t() + self.fc.bias)"),
    "addmm": linear_model("torch.addmm(self.fc.bias, x, self.fc.weight.T).clamp(min=0)"),
    "einsum": linear_model('torch.einsum("bk,nk->bn", x, self.fc.weight).add(self.fc.bias).relu()'),
}


def strip_places(graph: Dict[str, Any]) -> Dict[str, Any]:
    """values and outputs without line and module: what two spellings must agree on."""
    values = [{k: v for k, v in value.items() if k not in ("line", "module")} for value in graph["values"]]
    return {"values": values, "outputs": graph["outputs"]}


def ops(graph: Dict[str, Any]) -> List[str]:
    return [v["op"] for v in graph["values"] if v["kind"] == "op"]


class TraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.worker = Worker()
        cls.dir = tempfile.mkdtemp(prefix="akg-trace-test-")
        cls.next_id = 500
        cls.files = 0

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def probe_source(self, model: str, inputs: str = "[torch.randn(8, 64)]") -> Dict[str, Any]:
        type(self).files += 1
        type(self).next_id += 1
        path = os.path.join(self.dir, f"ref{self.files}.py")
        with open(path, "w") as f:
            f.write(HEADER + model + f"\n\ndef get_inputs():\n    return {inputs}\n\n\n"
                    "def get_init_inputs():\n    return []\n")
        return self.worker.request({"id": self.next_id, "op": "probe", "reference": path, "seed": 0})

    def graph_of(self, model: str, inputs: str = "[torch.randn(8, 64)]") -> Dict[str, Any]:
        answer = self.probe_source(model, inputs)
        self.assertTrue(answer["ok"], answer)
        self.assertIsNotNone(answer.get("graph"), answer.get("graph_error"))
        self.assertNotIn("graph_error", answer)
        graph = answer["graph"]
        self.assertEqual(graph["version"], 1)
        self.assertEqual([v["id"] for v in graph["values"]], list(range(len(graph["values"]))))
        return graph

    def forward_model(self, body: str, init: str = "") -> str:
        """A Model whose forward(self, x) runs ``body`` (indented source lines)."""
        return ("class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                + (textwrap.indent(textwrap.dedent(init), " " * 8) if init else "")
                + "\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body), " " * 8))

    # ---- one computation, many spellings

    def test_linear_relu_spellings_give_one_graph(self) -> None:
        graphs = {name: self.graph_of(src) for name, src in SPELLINGS.items()}
        expected = [
            {"id": 0, "kind": "input", "index": 0, "name": "x", "shape": [8, 64], "dtype": "f32", "strides": [64, 1]},
            {"id": 1, "kind": "weight", "name": "fc.weight", "shape": [32, 64], "dtype": "f32", "strides": [64, 1]},
            {"id": 2, "kind": "weight", "name": "fc.bias", "shape": [32], "dtype": "f32", "strides": [1]},
            {"id": 3, "kind": "op", "op": "permute", "args": [1], "attrs": {"perm": [1, 0]},
             "shape": [64, 32], "dtype": "f32", "strides": [1, 64]},
            {"id": 4, "kind": "op", "op": "matmul", "args": [0, 3], "attrs": {},
             "shape": [8, 32], "dtype": "f32", "strides": [32, 1]},
            {"id": 5, "kind": "op", "op": "add", "args": [4, 2], "attrs": {},
             "shape": [8, 32], "dtype": "f32", "strides": [32, 1]},
            {"id": 6, "kind": "op", "op": "relu", "args": [5], "attrs": {},
             "shape": [8, 32], "dtype": "f32", "strides": [32, 1]},
        ]
        for name, graph in graphs.items():
            self.assertEqual(strip_places(graph), {"values": expected, "outputs": [6]}, name)
            self.assertEqual(graph["notes"], [], name)
        # where the ops came from: the line of the return, and the layer for the module spelling
        modules = graphs["modules"]["values"]
        self.assertEqual([(v["module"], v["line"]) for v in modules[3:]],
                         [("fc", 13), ("fc", 13), ("fc", 13), ("act", 13)])
        self.assertEqual({v["module"] for v in graphs["matmul"]["values"][3:]}, {""})

    def test_linear_spellings_on_a_3d_input(self) -> None:
        graphs = {name: self.graph_of(SPELLINGS[name], "[torch.randn(4, 8, 64)]")
                  for name in ("modules", "F.linear", "matmul")}
        first = strip_places(graphs["modules"])
        for name, graph in graphs.items():
            self.assertEqual(strip_places(graph), first, name)
        self.assertEqual(ops(graphs["modules"]), ["permute", "matmul", "add", "relu"])
        matmul = graphs["modules"]["values"][4]
        self.assertEqual((matmul["args"], matmul["shape"]), ([0, 3], [4, 8, 32]))

    # ---- what each op records

    def test_hand_written_layer_norm(self) -> None:
        graph = self.graph_of(self.forward_model("""\
            m = x.mean(-1, keepdim=True)
            v = x.var(-1, keepdim=True, unbiased=False)
            return (x - m) / torch.sqrt(v + 1e-5)
            """), "[torch.randn(4, 16)]")
        values = {v["op"]: v for v in graph["values"] if v["kind"] == "op"}
        self.assertEqual(ops(graph), ["mean", "sub", "var", "add", "sqrt", "div"])
        self.assertEqual(values["mean"]["attrs"], {"dims": [1], "keepdim": True})
        self.assertEqual(values["var"]["attrs"], {"dims": [1], "keepdim": True, "correction": 0})
        self.assertEqual(values["add"]["args"][1], {"value": 1e-5})
        self.assertEqual(values["var"]["shape"], [4, 1])
        self.assertEqual((values["mean"]["line"], values["var"]["line"], values["div"]["line"]), (11, 12, 13))
        self.assertEqual(graph["outputs"], [values["div"]["id"]])

    def test_abs_max_is_a_full_amax(self) -> None:
        graph = self.graph_of(self.forward_model("return x.abs().max()\n"), "[torch.randn(4, 16)]")
        self.assertEqual(ops(graph), ["abs", "amax"])
        amax = graph["values"][-1]
        self.assertEqual((amax["attrs"], amax["shape"], amax["strides"]), ({"dims": [0, 1], "keepdim": False}, [], []))

    def test_max_with_indices_splits(self) -> None:
        graph = self.graph_of(self.forward_model("return x.max(dim=-1)\n"), "[torch.randn(4, 16)]")
        self.assertEqual(ops(graph), ["amax", "argmax"])
        self.assertEqual([graph["values"][i]["dtype"] for i in graph["outputs"]], ["f32", "i64"])
        only_values = self.graph_of(self.forward_model("return x.max(dim=1)[0]\n"), "[torch.randn(4, 16)]")
        self.assertEqual(ops(only_values), ["amax"])

    def test_conv_then_relu(self) -> None:
        graph = self.graph_of(self.forward_model("return torch.relu(self.conv(x))\n",
                                                 "self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)\n"),
                              "[torch.randn(2, 3, 16, 16)]")
        self.assertEqual([v["kind"] for v in graph["values"][:3]], ["input", "weight", "weight"])
        self.assertEqual([v.get("name") for v in graph["values"][1:3]], ["conv.weight", "conv.bias"])
        conv, relu = graph["values"][3], graph["values"][4]
        self.assertEqual((conv["op"], conv["args"], conv["module"]), ("conv", [0, 1, 2], "conv"))
        self.assertEqual(conv["attrs"], {"stride": [2, 2], "padding": [1, 1], "dilation": [1, 1], "groups": 1,
                                         "transposed": False, "output_padding": [0, 0]})
        self.assertEqual((relu["op"], relu["shape"], relu["line"]), ("relu", [2, 8, 8, 8], 12))

    def test_transpose_view_inside_forward(self) -> None:
        graph = self.graph_of(self.forward_model("y = x.transpose(0, 1)\nreturn y * 2\n"), "[torch.randn(4, 16)]")
        permute, mul = graph["values"][1], graph["values"][2]
        self.assertEqual((permute["op"], permute["attrs"], permute["shape"], permute["strides"]),
                         ("permute", {"perm": [1, 0]}, [16, 4], [1, 16]))
        self.assertEqual((mul["op"], mul["args"], mul["line"]), ("mul", [1, {"value": 2.0}], 12))

    def test_reshape_of_elementwise_ops_moves_onto_their_tensors(self) -> None:
        # relu(x * 2).flatten(1) and relu(x.flatten(1) * 2) are one graph: the reshape sits on x
        after = self.graph_of(self.forward_model("return torch.relu(x * 2).flatten(1)\n"),
                              "[torch.randn(4, 3, 5)]")
        before = self.graph_of(self.forward_model("return torch.relu(x.flatten(1) * 2)\n"),
                               "[torch.randn(4, 3, 5)]")
        self.assertEqual(strip_places(after), strip_places(before))
        self.assertEqual(ops(after), ["reshape", "mul", "relu"])
        self.assertEqual(after["values"][1]["args"], [0])
        # an operand broadcast against the op keeps the reshape above it
        kept = self.graph_of(self.forward_model("return (x * x[:, :1, :]).flatten(1)\n"),
                             "[torch.randn(4, 3, 5)]")
        self.assertEqual(ops(kept)[-1], "reshape")

    def test_tuple_output(self) -> None:
        graph = self.graph_of(self.forward_model("return torch.exp(x), x, torch.tanh(x)\n"), "[torch.randn(3)]")
        self.assertEqual(ops(graph), ["exp", "tanh"])
        self.assertEqual(graph["outputs"], [1, 0, 2])

    def test_float16_and_int32_inputs(self) -> None:
        half = self.graph_of(self.forward_model("return (x + x).float()\n"), "[torch.randn(4, 8).half()]")
        self.assertEqual(half["values"][0]["dtype"], "f16")
        self.assertEqual([(v["op"], v["dtype"]) for v in half["values"][1:]], [("add", "f16"), ("cast", "f32")])
        self.assertEqual(half["values"][2]["attrs"], {"dtype": "f32"})
        ints = self.graph_of(self.forward_model("return x * 3 + 1\n"),
                             "[torch.randint(0, 9, (4, 8), dtype=torch.int32)]")
        self.assertEqual([(v.get("op"), v["dtype"]) for v in ints["values"]], [(None, "i32"), ("mul", "i32"), ("add", "i32")])
        self.assertEqual(ints["values"][1]["args"][1], {"value": 3})

    def test_where(self) -> None:
        graph = self.graph_of(self.forward_model("return torch.where(x > 0, x, 0.5 * x)\n"), "[torch.randn(4, 16)]")
        self.assertEqual(ops(graph), ["gt", "mul", "where"])
        gt, where = graph["values"][1], graph["values"][3]
        self.assertEqual((gt["args"], gt["dtype"]), ([0, {"value": 0.0}], "bool"))
        self.assertEqual(where["args"], [1, 0, 2])

    def test_logsumexp(self) -> None:
        graph = self.graph_of(self.forward_model("return torch.logsumexp(x, dim=-1, keepdim=True)\n"),
                              "[torch.randn(4, 16)]")
        self.assertEqual(ops(graph), ["logsumexp"])
        self.assertEqual(graph["values"][1]["attrs"], {"dims": [1], "keepdim": True})

    # ---- leaves

    def test_ops_on_weights_only_are_ops_on_a_weight_leaf(self) -> None:
        graph = self.graph_of(self.forward_model("return x * (self.w * 2)\n", "self.w = nn.Parameter(torch.randn(8))\n"),
                              "[torch.randn(4, 8)]")
        self.assertEqual([v["kind"] for v in graph["values"]], ["input", "weight", "op", "op"])
        scaled = graph["values"][2]
        self.assertEqual((scaled["op"], scaled["args"]), ("mul", [1, {"value": 2.0}]))
        self.assertNotIn("value", graph["values"][1])

    def test_tensor_made_in_forward_is_a_constant(self) -> None:
        graph = self.graph_of(self.forward_model("return x + torch.ones(3)\n"), "[torch.randn(4, 3)]")
        constant = graph["values"][1]
        self.assertEqual((constant["kind"], constant["shape"], constant["value"]), ("constant", [3], [1.0, 1.0, 1.0]))
        self.assertEqual(graph["values"][2]["args"], [0, 1])

    def test_buffers_and_unused_inputs(self) -> None:
        graph = self.graph_of(
            "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('shift', torch.ones(4))\n\n"
            "    def forward(self, x, unused):\n        return x - self.shift\n",
            "[torch.randn(2, 4), torch.randn(3)]")
        self.assertEqual([(v["kind"], v.get("name"), v.get("index")) for v in graph["values"][:3]],
                         [("input", "x", 0), ("input", "unused", 1), ("buffer", "shift", None)])
        self.assertNotIn("value", graph["values"][2])

    # ---- limits and failures

    def test_forward_raising_is_the_probe_failure(self) -> None:
        answer = self.probe_source(self.forward_model("raise ValueError('no such layer')\n"))
        self.assertFalse(answer["ok"])
        self.assertEqual((answer["class"], answer["where"]), ("runtime_error", "reference"))
        self.assertIn("ValueError: no such layer", answer["detail"])
        self.assertNotIn("graph", answer)

    def test_forward_raising_only_while_traced(self) -> None:
        # the probe calls forward 1 + PROBE_TIMED_RUNS times before it traces
        from akg_harness.probe import PROBE_TIMED_RUNS
        answer = self.probe_source(self.forward_model(f"""\
            type(self).calls = getattr(type(self), "calls", 0) + 1
            if type(self).calls > {1 + PROBE_TIMED_RUNS}:
                raise RuntimeError("fifth call")
            return x * 2
            """))
        self.assertTrue(answer["ok"], answer)
        self.assertIsNone(answer["graph"])
        self.assertEqual(answer["graph_error"], "RuntimeError: fifth call")
        self.assertEqual(answer["outputs"][0]["shape"], [8, 64])

    def test_op_limit(self) -> None:
        answer = self.probe_source(self.forward_model("for _ in range(4200):\n    x = x + 1\nreturn x\n"),
                                   "[torch.randn(4)]")
        self.assertTrue(answer["ok"], answer)
        self.assertIsNone(answer["graph"])
        self.assertIn("more than 4096 ATen operations", answer["graph_error"])
        self.assertEqual(answer["outputs"][0]["shape"], [4])

    def test_write_through_a_view_gives_no_graph(self) -> None:
        answer = self.probe_source(self.forward_model("y = x.clone()\ny[:, 0] = 0\nreturn y\n"), "[torch.randn(4, 3)]")
        self.assertTrue(answer["ok"], answer)
        self.assertIsNone(answer["graph"])
        self.assertTrue(answer["graph_error"].startswith("TraceError: "), answer["graph_error"])

    def test_unknown_op_keeps_its_aten_name(self) -> None:
        graph = self.graph_of(self.forward_model("return torch.cummax(x, 1)[0]\n"), "[torch.randn(4, 8)]")
        self.assertEqual(ops(graph), ["aten.cummax"])
        self.assertEqual(graph["values"][1]["attrs"], {"dim": 1, "output": 0})
        self.assertEqual(len(graph["notes"]), 1)
        self.assertTrue(graph["notes"][0].startswith("aten.cummax"), graph["notes"])

    def test_in_place_forms_are_plain_ops(self) -> None:
        graph = self.graph_of(self.forward_model("y = x * 1.5\ny.relu_()\nreturn F.silu(y, inplace=True)\n"),
                              "[torch.randn(4, 8)]")
        self.assertEqual(ops(graph), ["mul", "relu", "silu"])
        self.assertEqual(graph["outputs"], [3])


if __name__ == "__main__":
    unittest.main()
