"""GFLOP/s of the GEMM and convolution kernels of a bench run, next to
PyTorch's (OpenBLAS for GEMMs) and the machine's peak (issue 4, must-show 3).

    build/akg_cli bench --filter matmul --output /tmp/mm.json
    /usr/bin/python3 bench/gflops.py /tmp/mm.json [more.json ...]

FLOPs per forward come from the reference itself: convolution layers by
formula (2 * output elements * input channels per group * kernel volume; for
transposed convolutions 2 * input elements * output channels per group *
kernel volume), everything else from torch.profiler's FLOP counts of
aten::mm/bmm/addmm. Peak = cores x clock x FLOPs per cycle, where a core
with two FMA pipes does 32 fp32 FLOPs per cycle with AVX2 and 64 with
AVX-512 (what the CPU flags say)."""
import importlib.util
import json
import os
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

CONV = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
CONV_T = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)


def machine_peak_gflops() -> float:
    mhz, flags = 0.0, ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz") and not mhz:
                mhz = float(line.split(":")[1])
            if line.startswith("flags") and not flags:
                flags = line
    per_cycle = 64 if " avx512f" in flags else 32 if " avx2" in flags and " fma" in flags else 8
    return os.cpu_count() * mhz / 1000.0 * per_cycle


def reference_flops(path: str) -> float:
    spec = importlib.util.spec_from_file_location("akg_ref", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    inputs = mod.get_inputs()
    total = [0.0]

    def hook(layer, args, out):
        k = 1
        for s in layer.kernel_size:
            k *= s
        if isinstance(layer, CONV_T):
            total[0] += 2.0 * args[0].numel() * (layer.out_channels // layer.groups) * k
        else:
            total[0] += 2.0 * out.numel() * (layer.in_channels // layer.groups) * k

    convs = [m for m in model.modules() if isinstance(m, CONV + CONV_T)]
    for m in convs:
        m.register_forward_hook(hook)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        model(*inputs)
    if not convs:
        total[0] = float(sum(e.flops for e in prof.key_averages()
                             if e.key in ("aten::mm", "aten::bmm", "aten::addmm")))
    return total[0]


def main(paths) -> int:
    peak = machine_peak_gflops()
    rows = []
    for p in paths:
        with open(p) as f:
            run = json.load(f)
        for op in run.get("ops", []):
            if op.get("family") not in ("matmul", "conv") or op.get("status") != "pass":
                continue
            flops = reference_flops(op["path"])
            if not flops:
                continue
            rows.append((op["family"], op["name"], flops / 1e9, op["ref_ms"], op["kernel_ms"],
                         flops / op["ref_ms"] / 1e6, flops / op["kernel_ms"] / 1e6))
    print(f"machine peak: {peak:.0f} GFLOP/s fp32 ({os.cpu_count()} cores)\n")
    print("| family | op | GFLOP | PyTorch ms | akg ms | PyTorch GFLOP/s | akg GFLOP/s | akg % of peak |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for fam, name, gf, rms, kms, rg, kg in rows:
        print(f"| {fam} | {name} | {gf:.3f} | {rms:.3f} | {kms:.3f} | {rg:.1f} | {kg:.1f} | "
              f"{100 * kg / peak:.0f}% |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
