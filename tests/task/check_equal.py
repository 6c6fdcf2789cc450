"""Runs each constructed reference beside the code it was built from, in one process.

argv[1] is a JSON list of {name, model, reference, expected}: `expected` is a Python expression
over `src` (the model file as a module), `init` (get_init_inputs()), `inputs` and `torch` that
computes what the selected code gives. Both sides build their modules from the same seed, so the
weights agree. Prints one JSON object: name -> {"ok": bool, "detail": str}.
"""
import importlib.util
import json
import sys
import traceback

import torch


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(a, b) -> str:
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return "the outputs' structure differs"
        return next((d for d in (same(x, y) for x, y in zip(a, b)) if d), "")
    if a.shape != b.shape or a.dtype != b.dtype:
        return "shape/dtype %s %s vs %s %s" % (tuple(a.shape), a.dtype, tuple(b.shape), b.dtype)
    if not torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
        return "max abs difference %g" % (a - b).abs().max().item()
    return ""


def check(case: dict) -> dict:
    src = load(case["model"], "src_" + case["name"])
    ref = load(case["reference"], "ref_" + case["name"])
    init = ref.get_init_inputs()
    torch.manual_seed(0)
    cases = [ref.get_inputs()]
    if hasattr(ref, "get_inputs_dyn_list"):
        cases += ref.get_inputs_dyn_list()
    for i, inputs in enumerate(cases):
        torch.manual_seed(1)
        model = ref.Model(*init)
        got = model(*[t.clone() if torch.is_tensor(t) else t for t in inputs])
        torch.manual_seed(1)
        expected = eval(case["expected"], {"src": src, "init": init, "torch": torch,
                                           "inputs": [t.clone() if torch.is_tensor(t) else t
                                                      for t in inputs]})
        diff = same(got, expected)
        if diff:
            return {"ok": False, "detail": "inputs case %d: %s" % (i, diff)}
    return {"ok": True, "detail": "%d input cases, init %r" % (len(cases), init)}


def main() -> None:
    results = {}
    for case in json.loads(sys.argv[1]):
        try:
            results[case["name"]] = check(case)
        except Exception:
            results[case["name"]] = {"ok": False, "detail": traceback.format_exc()[-1500:]}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
