"""GFLOP/s of the GEMM and convolution kernels of a bench run, next to
PyTorch's (OpenBLAS for GEMMs) and the machine's peak (issue 4, must-show 3).

    build/akg_cli bench --filter matmul --output /tmp/mm.json
    /usr/bin/python3 bench/gflops.py /tmp/mm.json [more.json ...]

FLOPs per forward come from the reference itself: convolution layers by
formula (2 * output elements * input channels per group * kernel volume; for
transposed convolutions 2 * input elements * output channels per group *
kernel volume), everything else from torch.profiler's FLOP counts of
aten::mm/bmm/addmm. The peak is measured, not computed from a data sheet: a
loop of independent fused multiply-adds on the widest vectors the CPU reports
(AVX-512 or AVX2), on every core at once, compiled here with g++. A formula
(cores x clock x FLOPs per cycle) misleads on both sides: a VM reports the
base clock while the cores boost, and some AVX-512 cores (AMD Zen 4) split
each 512-bit FMA in two, so the flags overstate what they do per cycle."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

CONV = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
CONV_T = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)


PEAK_SOURCE = r"""
#include <chrono>
#include <cstdio>
#include <omp.h>
#ifdef __AVX512F__
typedef float vec __attribute__((vector_size(64)));
#else
typedef float vec __attribute__((vector_size(32)));
#endif
enum { CHAINS = 12, LANES = sizeof(vec) / sizeof(float) };

// CHAINS independent FMA chains per thread hide the FMA latency; nothing touches memory.
static float fma_loop(long iters, float seed) {
  vec acc[CHAINS], x, y;
  for (int j = 0; j < LANES; ++j) { x[j] = 1.0f + seed * 1e-7f; y[j] = 1e-7f; }
  for (int c = 0; c < CHAINS; ++c) acc[c] = x * (float)c;
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * x + y;  // unrolled: acc stays in registers
  }
  float s = 0;
  for (int c = 0; c < CHAINS; ++c) for (int j = 0; j < LANES; ++j) s += acc[c][j];
  return s;
}

int main() {
  const long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    float sink = 0;
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sink)
    sink += fma_loop(iters, (float)omp_get_thread_num());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double gflops = 2.0 * LANES * CHAINS * iters * omp_get_max_threads() / s / 1e9;
    if (gflops > best) best = gflops;
    if (sink == 42.0f) std::puts("");
  }
  std::printf("%.1f %d\n", best, (int)(8 * sizeof(vec)));
  return 0;
}
"""


def machine_peak_gflops():
    """(GFLOP/s, vector bits): fp32 FMA throughput on all cores, measured."""
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "peak.cpp"), os.path.join(tmp, "peak")
        with open(src, "w") as f:
            f.write(PEAK_SOURCE)
        subprocess.run(["g++", "-O2", "-march=native", "-fopenmp", "-o", exe, src], check=True)
        env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count()), OMP_PROC_BIND="spread")
        out = subprocess.run([exe], check=True, capture_output=True, text=True, env=env).stdout.split()
    return float(out[0]), int(out[1])


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
    peak, bits = machine_peak_gflops()
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
    print(f"machine peak: {peak:.0f} GFLOP/s fp32, measured ({os.cpu_count()} cores, {bits}-bit FMA)\n")
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
