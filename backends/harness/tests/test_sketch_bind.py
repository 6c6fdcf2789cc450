"""Binding a sketch to its task: the bind: section against real PyTorch models."""

from __future__ import annotations

import os
import sys
import unittest

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from akg_harness.sketch_bind import BindError, bind, check_outputs  # noqa: E402
from akg_harness.sketch_interp import run  # noqa: E402
from sketch_helper import TESTS_DIR, sketch_file_ir, sketch_ir  # noqa: E402

SKETCHES = os.path.join(TESTS_DIR, "fixtures", "sketches")


class Norm(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.copy_(torch.linspace(0.5, 1.5, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


class Pool(nn.Module):
    def __init__(self, kernel, stride=(2, 2), scale: float = 0.5) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(kernel, stride)
        self.scale = scale

    def forward(self, x: torch.Tensor, bias: float = 0.0) -> torch.Tensor:
        return self.pool(x) * self.scale + bias


POOL = """sketch pool {
  symbols: B, C, H, W, K, S, OH, OW;
  tensors: x[B * C, H, W]: f32; y[B * C, OH, OW]: f32;
  constexpr: KH = 2;
  params: scale: f32, bias = 0.0;
  bind: x = input("x", [B, C, H, W]), K = init("kernel"), S = attr("pool.stride", 0), KH = init("kernel")
  bind: OH = (H - K) // S + 1, OW = (W - K) // S + 1, y = output(0, [B, C, OH, OW])
  bind: scale = attr("scale"), bias = input("bias")

  for p in range(B * C):
    for oh in range(OH):
      for ow in range(OW):
        t = alloc([K, K])
        load(x[p, oh * S:oh * S + K, ow * S:ow * S + K] -> t)
        store(reduce_max(t, axis=[0, 1]) * scale + bias -> y[p, oh:oh + 1, ow:ow + 1])
}
"""


class BindTest(unittest.TestCase):
    def test_merged_dims_weights_attr_and_outputs(self) -> None:
        ir = sketch_file_ir(os.path.join(SKETCHES, "layernorm.sketch"))
        model = Norm(40)
        x = torch.randn(2, 3, 40)
        binding = bind(ir, model, [40], [x])
        self.assertEqual(binding.symbols, {"B": 2, "S": 3, "H": 40})
        self.assertEqual(binding.tensors["x"].shape, (6, 40))
        np.testing.assert_array_equal(binding.tensors["x"], x.reshape(6, 40).numpy())
        np.testing.assert_array_equal(binding.tensors["w"], model.ln.weight.detach().numpy())
        self.assertAlmostEqual(binding.params["eps"], 1e-5)
        self.assertTrue(np.isnan(binding.tensors["y"]).all())  # outputs start poisoned
        run(ir, binding.tensors, binding.symbols, binding.params)
        leaves = binding.output_leaves()
        self.assertEqual(list(leaves), [0])
        ref = model(x)
        check_outputs(binding, [ref])
        torch.testing.assert_close(leaves[0], ref.detach(), rtol=1e-5, atol=1e-5)

    def test_init_attr_tuple_expressions_and_numbers(self) -> None:
        ir = sketch_ir(POOL)
        model = Pool(2, (2, 2), 0.75)
        x = torch.randn(2, 3, 7, 9)
        binding = bind(ir, model, [2], [x, 0.25])
        self.assertEqual(binding.symbols["K"], 2)
        self.assertEqual(binding.symbols["S"], 2)
        self.assertEqual((binding.symbols["OH"], binding.symbols["OW"]), (3, 4))
        self.assertEqual(binding.params, {"scale": 0.75, "bias": 0.25})
        run(ir, binding.tensors, binding.symbols, binding.params)
        torch.testing.assert_close(binding.output_leaves()[0], model(x, 0.25))

    def test_a_plain_number_serves_every_index(self) -> None:
        # nn.MaxPool2d(2, 2) keeps stride as the int 2: attr("pool.stride", 0) is 2
        ir = sketch_ir(POOL)
        binding = bind(ir, Pool(2, 2), [2], [torch.randn(1, 1, 6, 6)])
        self.assertEqual(binding.symbols["S"], 2)

    def test_a_scalar_output_stays_0_d(self) -> None:
        class Total(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x.sum()

        ir = sketch_ir("""sketch total {
  symbols: N;
  tensors: x[N]: f32; y[1]: f32;
  bind: x = input("x", [N]), y = output(0, [])

  t = alloc([N])
  load(x[0:N] -> t)
  store(reduce_sum(t, axis=0) -> y[0:1])
}
""")
        x = torch.randn(11)
        binding = bind(ir, Total(), [], [x])
        run(ir, binding.tensors, binding.symbols, binding.params)
        leaf = binding.output_leaves()[0]
        self.assertEqual(leaf.shape, torch.Size([]))
        check_outputs(binding, [Total()(x)])
        torch.testing.assert_close(leaf, x.sum())

    def test_a_default_argument_of_forward(self) -> None:
        ir = sketch_ir(POOL)
        binding = bind(ir, Pool(2), [2], [torch.randn(1, 1, 4, 4)])
        self.assertEqual(binding.params["bias"], 0.0)

    def test_errors_name_the_item(self) -> None:
        ir = sketch_file_ir(os.path.join(SKETCHES, "layernorm.sketch"))
        cases = [
            ([torch.randn(2, 3, 40, dtype=torch.float64)], "bind item 'x'", "float64 but tensor 'x' is f32"),
            ([torch.randn(6, 40)], "bind item 'x'", "has shape [6, 40] (2 dimensions)"),
            ([], "bind item 'x'", "forward's argument 'x' was not passed"),
        ]
        for args, item, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(BindError) as caught:
                    bind(ir, Norm(40), [40], args)
                self.assertIn(item, caught.exception.message)
                self.assertIn(message, caught.exception.message)
                self.assertEqual(caught.exception.item, "x")
        with self.assertRaises(BindError) as caught:
            bind(ir, Norm(40), [40], [torch.randn(2, 3, 39)])
        self.assertIn("bind item 'w'", caught.exception.message)  # w's shape [H] checks H = 39 against 40

    def test_constexpr_specialisation(self) -> None:
        ir = sketch_ir(POOL)
        bind(ir, Pool(2), [2], [torch.randn(1, 1, 4, 4)])
        with self.assertRaises(BindError) as caught:
            bind(ir, Pool(3), [3], [torch.randn(1, 1, 6, 6)])
        self.assertIn("constexpr 'KH' is specialised to 2", caught.exception.message)

    def test_a_string_attribute_tested_for_a_value(self) -> None:
        # attr(PATH, "reflect") is 1 when the attribute is that string: a design for one
        # padding mode, refused for another
        text = POOL.replace("constexpr: KH = 2;", "constexpr: KH = 2, RF = 0;").replace(
            'bind: scale = attr("scale")', 'bind: RF = attr("mode", "reflect"), scale = attr("scale")')
        ir = sketch_ir(text)
        model = Pool(2)
        model.mode = "zeros"
        bind(ir, model, [2], [torch.randn(1, 1, 4, 4)])
        model.mode = "reflect"
        with self.assertRaises(BindError) as caught:
            bind(ir, model, [2], [torch.randn(1, 1, 4, 4)])
        self.assertIn("constexpr 'RF' is specialised to 0", caught.exception.message)
        model.mode = (1, 1)  # not a string: not "reflect" either
        bind(ir, model, [2], [torch.randn(1, 1, 4, 4)])

    def test_outputs_must_cover_the_reference(self) -> None:
        ir = sketch_file_ir(os.path.join(SKETCHES, "layernorm.sketch"))
        binding = bind(ir, Norm(40), [40], [torch.randn(2, 3, 40)])
        with self.assertRaises(BindError) as caught:
            check_outputs(binding, [torch.zeros(2, 3, 40), torch.zeros(1)])
        self.assertIn("output 1 of the reference is not bound", caught.exception.message)
        with self.assertRaises(BindError) as caught:
            check_outputs(binding, [torch.zeros(2, 3, 41)])
        self.assertIn("[2, 3, 40] f32, but the reference returns [2, 3, 41] float32", caught.exception.message)

    def test_a_sketch_without_bind(self) -> None:
        ir = sketch_file_ir(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(TESTS_DIR))),
                                         "tests", "sketch", "fixtures", "valid", "layernorm.sketch"))
        with self.assertRaises(BindError) as caught:
            bind(ir, Norm(4), [4], [torch.randn(2, 4)])
        self.assertIn("no bind: section", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
