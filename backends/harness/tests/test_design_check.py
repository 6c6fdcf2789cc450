"""design_check: sketches interpreted against references, through the real worker."""

from __future__ import annotations

import os
import unittest
from typing import Any, Dict

from harness_client import Worker, reference
from sketch_helper import TESTS_DIR, sketch_ir, sketch_file_ir

SKETCHES = os.path.join(TESTS_DIR, "fixtures", "sketches")


def fixture_text(name: str) -> str:
    with open(os.path.join(SKETCHES, name), encoding="utf-8") as f:
        return f.read()


class DesignCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.irs = {name: sketch_file_ir(os.path.join(SKETCHES, name)) for name in sorted(os.listdir(SKETCHES))}
        cls.worker = Worker()
        cls.next_id = 5000

    @classmethod
    def tearDownClass(cls) -> None:
        cls.worker.close()

    def check(self, ref: str, ir: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
        type(self).next_id += 1
        request = {"id": self.next_id, "op": "design_check", "reference": reference(ref), "sketch": ir,
                   "trials": 2, "seed": 321}
        request.update(fields)
        return self.worker.request(request)

    def test_a_correct_design_passes(self) -> None:
        answer = self.check("layernorm_ref.py", self.irs["layernorm.sketch"])
        self.assertTrue(answer["ok"], answer)
        self.assertNotIn("skipped", answer)
        self.assertEqual((answer["trials"], answer["case"], answer["seeds"]), (2, 0, [321, 1321]))
        self.assertLess(answer["max_abs_err"], 1e-4)

    def test_the_smallest_case_is_checked(self) -> None:
        # cases: get_inputs() [4, 64], then [2, 33] and [7, 130]
        answer = self.check("dyn_ref.py", self.irs["relu_dyn.sketch"])
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["case"], 1)
        self.assertEqual(answer["max_abs_err"], 0.0)

    def test_several_outputs_number_arguments_and_buffers(self) -> None:
        answer = self.check("affine_ref.py", self.irs["affine.sketch"], trials=3)
        self.assertTrue(answer["ok"], answer)
        answer = self.check("multi_out_ref.py", self.irs["max_dim1.sketch"])
        self.assertTrue(answer["ok"], answer)

    def test_constexpr_specialisation(self) -> None:
        self.assertTrue(self.check("softmax_dim_ref.py", self.irs["softmax_dim.sketch"])["ok"])
        other = sketch_ir(fixture_text("softmax_dim.sketch").replace("DIM = 1", "DIM = 0"))
        answer = self.check("softmax_dim_ref.py", other)
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "design_error")
        self.assertIn("bind item 'DIM'", answer["detail"])
        self.assertIn("specialised to 0", answer["detail"])

    def test_a_wrong_design_is_a_design_error(self) -> None:
        wrong = sketch_ir(fixture_text("layernorm.sketch").replace("d = sub(t, mu)", "d = t"))
        answer = self.check("layernorm_ref.py", wrong)
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "design_error")
        self.assertEqual(answer["where"], "sketch")
        self.assertIn("sketch tensor 'y'", answer["detail"])
        self.assertIn("worst element [", answer["detail"])
        self.assertIn("trial 0 (seed 321), case 0", answer["detail"])
        self.assertEqual(answer["trial"], 0)
        self.assertGreater(answer["max_abs_err"], 0.1)

    def test_an_interpreter_error_names_the_sketch_line(self) -> None:
        text = fixture_text("relu_dyn.sketch").replace("    load(x[i:i+BLOCK] -> t)\n", "")
        answer = self.check("dyn_ref.py", sketch_ir(text))
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "design_error")
        self.assertEqual(answer["line"], 11)
        self.assertIn("at sketch line 11", answer["detail"])
        self.assertIn("read before anything was written", answer["detail"])

    def test_a_binding_that_does_not_fit(self) -> None:
        text = (fixture_text("layernorm.sketch").replace("x[B * S, H]: f32", "x[B * S, H]: f16")
                .replace('t = alloc([ROWS, H], llm_hint=["fast"])',
                         't = alloc([ROWS, H], dtype=f32, llm_hint=["fast"])'))
        answer = self.check("layernorm_ref.py", sketch_ir(text))
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "design_error")
        self.assertIn("bind item 'x'", answer["detail"])
        self.assertIn("float32 but tensor 'x' is f16", answer["detail"])
        self.assertEqual(answer["line"], 7)

    def test_a_check_too_long_is_skipped_not_failed(self) -> None:
        answer = self.check("layernorm_ref.py", self.irs["layernorm.sketch"], max_statements=3)
        self.assertTrue(answer["ok"], answer)
        self.assertIn("skipped", answer)
        self.assertIn("more than 3 statements", answer["skipped"])
        self.assertEqual(answer["trials"], 0)

    def test_bad_requests(self) -> None:
        answer = self.check("layernorm_ref.py", {"not": "a sketch"})
        self.assertFalse(answer["ok"])
        self.assertEqual(answer["class"], "runtime_error")
        answer = self.check("layernorm_ref.py", self.irs["layernorm.sketch"], trials=0)
        self.assertEqual(answer["class"], "runtime_error")
        no_bind = sketch_ir(fixture_text("relu_dyn.sketch").replace(
            '  bind: x = input("x", [R, C]), y = output(0, [R, C])\n', ""))
        answer = self.check("dyn_ref.py", no_bind)
        self.assertEqual(answer["class"], "design_error")
        self.assertIn("no bind: section", answer["detail"])


if __name__ == "__main__":
    unittest.main()
