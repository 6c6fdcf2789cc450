#!/bin/bash
# One call on the GPU machine: what it has (GPU, driver, torch, triton, nvcc), with CUDA_CHECK=1
# the CUDA C check (gpu_check.sh, CUDA_CHECK_S seconds at most), a smoke run of one
# operator through `akg_cli op` for DSL (stops the call early when even that fails, so a broken
# build costs a minute of device time and not ten), then bench/gpu/h200_bench.sh for FAMILIES.
# Everything it writes lands in OUT (at most 8 files, the device tool's limit).
#
#   bench/gpu/h200_session.sh OUT DSL "activation loss norm reduction" [extra akg_cli bench flags]
#
# Needs devbundle/ (scripts/device-bundle.sh) in the working tree; nvcc is looked for on PATH,
# then in /usr/local/cuda/bin.
set -u
out=${1:?OUT}; dsl=${2:?DSL}; families=${3:?FAMILIES}; shift 3
root=$(pwd)
mkdir -p "$out"
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
export PATH LD_LIBRARY_PATH="$root/devbundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, torch.cuda.get_device_name())'
    command -v nvcc && nvcc --version | tail -2
    nproc
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
if [ "${CUDA_CHECK:-0}" = 1 ]; then
    # the CUDA C emitter's sketches built by nvcc and run against the sketch interpreter
    # (backends/cuda/cuda/tests/gpu_check.sh), bounded: a few minutes on 16 cores
    JOBS=$(nproc) AKG_PYTHON=python3 WORK=/tmp/akg-cuda-check timeout "${CUDA_CHECK_S:-240}" \
        sh "$root/backends/cuda/cuda/tests/gpu_check.sh" "$root/devbundle/bin/akg_cli" \
        > "$out/cuda-gpu-check.txt" 2>&1
    echo "gpu_check exit $?" | tee -a "$out/cuda-gpu-check.txt"
    tail -12 "$out/cuda-gpu-check.txt"
fi
smoke=/tmp/akg-smoke-$dsl
rm -rf "$smoke"
timeout 150 "$root/devbundle/bin/akg_cli" op --backend cuda --dsl "$dsl" --python python3 --sandbox none \
    --min-speedup 0 --store "$smoke.db" --output "$smoke" bench/ops/activation/relu.py > "$out/smoke.log" 2>&1
rc=$?
echo "smoke exit $rc" | tee -a "$out/smoke.log"
tail -15 "$out/smoke.log"
if [ "$rc" != 0 ]; then
    [ -f "$smoke/report.json" ] && cp "$smoke/report.json" "$out/smoke-report.json"
    exit 3
fi
AKG_PYTHON=python3 bash "$root/bench/gpu/h200_bench.sh" "$out" "$dsl" "$families" "$@"
