#!/bin/bash
# Runs `akg_cli bench` on an NVIDIA GPU for the given families of bench/ops (at the suite's cuda
# size scale, bench/ops/suite.yaml) and writes the record to OUT/bench-<dsl>.json, with the run
# folders' logs in OUT/runs-<dsl>.tgz. Run from the repository root on the GPU machine with the
# binaries of scripts/device-bundle.sh in devbundle/ (that machine has no libuv, cJSON,
# tree-sitter or libyaml) and a python3 holding PyTorch 2 and Triton. No bubblewrap there: the
# candidates run in the harness's child processes without an operating-system sandbox
# (AKG_SANDBOX_MODE=none). WORKERS harness workers share GPU 0 (a profile runs alone on it);
# DEADLINE seconds after the start the bench is interrupted (SIGINT) and records what ran.
#
#   bench/gpu/h200_bench.sh OUT DSL "activation reduction norm loss" [extra akg_cli bench flags]
set -u
out=${1:?OUT}; dsl=${2:?DSL}; families=${3:?FAMILIES}; shift 3
root=$(pwd)
export LD_LIBRARY_PATH="$root/devbundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AKG_HOME="$root" AKG_PYTHON=${AKG_PYTHON:-python3} PYTHONUNBUFFERED=1 AKG_SANDBOX_MODE=none
workers=${WORKERS:-4}
ids=$(for _ in $(seq "$workers"); do printf "0,"; done)
suite=/tmp/akg-gpu-suite-$dsl runs=/tmp/akg-gpu-runs-$dsl
rm -rf "$suite" "$runs"; mkdir -p "$suite" "$runs" "$out"
for f in $families; do cp -r "bench/ops/$f" "$suite/"; done
cp bench/ops/suite.yaml "$suite/"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$out/gpu.txt"
timeout -s INT "${DEADLINE:-520}" "$root/devbundle/bin/akg_cli" bench --suite "$suite" --backend cuda \
    --dsl "$dsl" --python "$AKG_PYTHON" --devices "$ids" --jobs "$workers" --output "$out/bench-$dsl.json" \
    --runs-dir "$runs" --store "$runs/akg.db" "$@" > "$out/bench-$dsl.txt" 2> "$out/bench-$dsl.err"
echo "bench exit $?" | tee -a "$out/bench-$dsl.txt"
tail -40 "$out/bench-$dsl.txt"
tar czf "$out/runs-$dsl.tgz" -C /tmp --exclude='*.so' --exclude='akg.db*' "$(basename "$runs")"
