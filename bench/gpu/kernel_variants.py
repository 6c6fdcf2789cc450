"""Times variants of generated triton_cuda kernels against eager PyTorch on a GPU.

For every folder KERNELS/<op>/ written by `akg_cli op --backend cuda --dsl triton_cuda
--workflow kernelgen_only --output KERNELS/<op> REFS/<op>.py` (sketch.sketch, kernel_<hash>.py,
model_new.py), the reference REFS/<op>.py is built at the suite's GPU size (its first BATCH, ROWS
or N constant times --scale, as bench/ops/suite.yaml's size_scale does) and each variant of the
kernel replaces kernel_<hash>.py beside a copy of model_new.py:

  --mode precision   the kernel's text with every tl.dot's input_precision set to ieee, tf32x3 or
                     tf32 and the launches' num_warps to 4 or 8 (eager timed with cuDNN's TF32 on
                     and off);
  --mode tiles       the sketch with the order of its tune() values changed (the first value is
                     the one lowered), emitted by `akg_cli sketch emit`.

Each variant's output is compared with the float64 reference (err: the largest absolute
difference) and timed with triton.testing.do_bench (L2 flushed between runs, the median).
A measurement, not a verification: the Verifier (akg_cli op, akg_cli bench) judges kernels.

    python3 bench/gpu/kernel_variants.py --mode tiles --akg-cli devbundle/bin/akg_cli \
        KERNELS bench/ops/conv OUT.json
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List, Tuple

import torch

# --mode tiles: (label, [(the designer's tune() text, the variant's)]); a variant equal to one
# before it (the sketch has no such tune) is skipped.
BW64 = ("BW = tune(32, 64, 16)", "BW = tune(64, 32, 16)")
BW128 = ("BW = tune(32, 64, 16)", "BW = tune(128, 64, 32)")
TILES: List[Tuple[str, List[Tuple[str, str]]]] = [
    ("default", []),
    ("bw64", [BW64]),
    ("bw128", [BW128]),
    ("bw64_bn128", [BW64, ("BN = tune(64, 32, 128)", "BN = tune(128, 64, 32)")]),
    ("bw64_bk64", [BW64, ("BK = tune(32, 16, 64)", "BK = tune(64, 32, 16)")]),
    ("bw128_bk16", [BW128, ("BK = tune(32, 16, 64)", "BK = tune(16, 32, 64)")]),
]
PRECISIONS = [("ieee", 4), ("ieee", 8), ("tf32x3", 4), ("tf32", 4), ("tf32", 8)]


def load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timer(device: str) -> Callable[[Callable[[], Any]], float]:
    if device == "cuda":
        import triton

        return lambda fn: triton.testing.do_bench(fn, warmup=10, rep=60)

    def once(fn: Callable[[], Any]) -> float:  # under Triton's interpreter: a smoke run
        import time

        begin = time.perf_counter()
        fn()
        return (time.perf_counter() - begin) * 1e3

    return once


def variants(mode: str, folder: str, akg_cli: str) -> List[Tuple[str, str]]:
    """(label, kernel text) of every variant of the folder's kernel."""
    kernel = open(glob.glob(os.path.join(folder, "kernel_*.py"))[0]).read()
    out = []
    if mode == "precision":
        for prec, warps in PRECISIONS:
            text = kernel.replace('input_precision="ieee"', 'input_precision="%s"' % prec)
            text = text.replace("AKG_IDX=_akg_idx(", "num_warps=%d, AKG_IDX=_akg_idx(" % warps)
            out.append(("%s_w%d" % (prec, warps), text))
        return out
    sketch = open(os.path.join(folder, "sketch.sketch")).read()
    seen = set()
    for label, subs in TILES:
        text = sketch
        for a, b in subs:
            text = text.replace(a, b)
        if text in seen:
            continue
        seen.add(text)
        with tempfile.NamedTemporaryFile("w", suffix=".sketch", delete=False) as f:
            f.write(text)
        p = subprocess.run([akg_cli, "sketch", "emit", "--backend", "cuda", "--dsl", "triton_cuda", f.name],
                           capture_output=True, text=True)
        os.unlink(f.name)
        out.append((label, p.stdout if p.returncode == 0 else "ERROR " + p.stderr[-300:]))
    return out


def run_op(folder: str, refs: str, scale: int, device: str, mode: str, akg_cli: str, work: str) -> Dict[str, Any]:
    name = os.path.basename(folder.rstrip("/"))
    ref = load(os.path.join(refs, name + ".py"), "ref_" + name)
    for c in ("BATCH", "ROWS", "N"):
        if hasattr(ref, c):
            setattr(ref, c, getattr(ref, c) * scale)
            break
    bench = timer(device)
    torch.manual_seed(0)
    init = ref.get_init_inputs()
    model = ref.Model(*init).to(device)
    inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in ref.get_inputs()]
    row: Dict[str, Any] = {"op": name}
    with torch.no_grad():
        tf32 = torch.backends.cudnn.allow_tf32
        for flag, key in ((True, "eager_tf32"), (False, "eager_f32")):
            torch.backends.cudnn.allow_tf32 = flag
            got = model(*inputs)
            row[key + "_ms"] = bench(lambda: model(*inputs))
            row[key + "_out"] = got
        torch.backends.cudnn.allow_tf32 = tf32
        m64 = ref.Model(*init).to(device).double()
        m64.load_state_dict(model.state_dict())
        r64 = m64(*[t.double() if isinstance(t, torch.Tensor) else t for t in inputs]).double()
        del m64
        for key in ("eager_tf32", "eager_f32"):
            row[key + "_err"] = float((row.pop(key + "_out").double() - r64).abs().max())
        module = os.path.basename(glob.glob(os.path.join(folder, "kernel_*.py"))[0])[:-3]
        for label, text in variants(mode, folder, akg_cli):
            if text.startswith("ERROR "):
                row[label + "_error"] = text[6:]
                continue
            vd = os.path.join(work, "%s_%s" % (name, label))
            shutil.rmtree(vd, ignore_errors=True)
            os.makedirs(vd)
            with open(os.path.join(vd, module + ".py"), "w") as f:
                f.write(text)
            shutil.copy(os.path.join(folder, "model_new.py"), vd)
            sys.modules.pop(module, None)
            sys.path.insert(0, vd)
            try:
                mn = load(os.path.join(vd, "model_new.py"), "model_new_%s_%s" % (name, label))
                m = mn.ModelNew(*init).to(device)
                m.load_state_dict(model.state_dict())
                row[label + "_err"] = float((m(*inputs).double() - r64).abs().max())
                row[label + "_ms"] = bench(lambda: m(*inputs))
            except Exception as e:  # a variant that fails is a result too
                row[label + "_error"] = repr(e)[:300]
            finally:
                sys.path.remove(vd)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels")
    ap.add_argument("refs")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=("precision", "tiles"), default="tiles")
    ap.add_argument("--akg-cli", default="akg_cli")
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--work", default=None, help="where the variants are written (default: a new temporary folder)")
    a = ap.parse_args()
    a.work = a.work or tempfile.mkdtemp(prefix="akg-variants-")
    rows = []
    for folder in sorted(glob.glob(os.path.join(a.kernels, "*", "sketch.sketch"))):
        folder = os.path.dirname(folder)
        try:
            rows.append(run_op(folder, a.refs, a.scale, a.device, a.mode, a.akg_cli, a.work))
        except Exception as e:
            rows.append({"op": os.path.basename(folder), "error": repr(e)[:500]})
        print(json.dumps(rows[-1]), flush=True)
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
