#!/bin/sh
# gpu_check.sh [AKG_CLI]: the cuda/cuda backend checked without the engine, in one command. Every
# sketch of the activation, reduction, norm, loss and matmul families (the Designer's snapshot in
# tests/sketch/fixtures/triton_cuda, or with FRESH=1 the Designer's current cuda designs, written by
# `akg_cli op --workflow design_only` first; and each with its row-split thresholds lowered) is
# lowered to CUDA C by `akg_cli sketch emit`, built by nvcc into its own .so for $ARCH (default
# sm_90a, the H100/H200's), and, on a machine where PyTorch sees a GPU, called on the device on two
# small cases and compared tensor by tensor with the sketch interpreter (the reference's semantics);
# without a GPU the kernels are only built. Then the same for the sketches of
# tests/sketch/fixtures/cuda_reduce (cooperative partial reductions), in a second table. tests/sketch/difftest/suite.py --dsl cuda does the work:
# a line a sketch, a table by family, a total; exit 0 when all passed (or, without a GPU, built),
# 1 on any mismatch, failure or refusal, 77 when nvcc, PyTorch or akg_cli is missing.
#
# akg_cli: $1, else $AKG_CLI, else build/akg_cli, else devbundle/bin/akg_cli (scripts/device-bundle.sh,
# with its libraries). Python: $AKG_PYTHON, else .venv-torch2/bin/python, else python3 (PyTorch with
# CUDA and NumPy). nvcc: $AKG_NVCC, PATH, .venv-nvcc, /usr/local/cuda/bin. Work folder: $WORK
# (default /tmp/akg-cuda-gpu-check; failures are saved under it). Parallel jobs: $JOBS. On a GPU
# machine without nvcc: PREBUILT=the work folder of a run where nvcc was (its kernel.so files are
# used where the kernel.cu and the arch are the same).
set -u
root=$(cd "$(dirname "$0")/../../../.." && pwd)
cli=${1:-${AKG_CLI:-}}
if [ -z "$cli" ]; then
  if [ -x "$root/build/akg_cli" ]; then
    cli=$root/build/akg_cli
  elif [ -x "$root/devbundle/bin/akg_cli" ]; then
    cli=$root/devbundle/bin/akg_cli
    LD_LIBRARY_PATH="$root/devbundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
  fi
fi
# a bundle's binary (devbundle/bin/akg_cli, however it was named) needs the bundle's libraries
if [ -n "$cli" ] && [ -d "$(dirname "$cli")/../lib" ]; then
  LD_LIBRARY_PATH="$(cd "$(dirname "$cli")/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
py=${AKG_PYTHON:-}
[ -z "$py" ] && [ -x "$root/.venv-torch2/bin/python" ] && py=$root/.venv-torch2/bin/python
[ -z "$py" ] && py=python3
cores=$(nproc 2>/dev/null || echo 2)
jobs=${JOBS:-$((cores > 8 ? 8 : cores))}
designs="--sketch-files $root/tests/sketch/fixtures/triton_cuda"
[ "${FRESH:-0}" = 1 ] && designs=
work=${WORK:-/tmp/akg-cuda-gpu-check}
# shellcheck disable=SC2086 # $designs is two words or none
"$py" "$root/tests/sketch/difftest/suite.py" --dsl cuda --arch "${ARCH:-sm_90a}" --split-variants \
  $designs --ops activation/ reduction/ norm/ loss/ matmul/ \
  ${cli:+--akg-cli "$cli"} ${PREBUILT:+--prebuilt "$PREBUILT"} --work "$work" --jobs "$jobs"
rc=$?
# then the partial reductions' fixtures (tests/sketch/fixtures/cuda_reduce: row and column
# reductions, argmax and argmin calls), each named <family>_<name> by the operator it computes;
# their work folder is $WORK-reduce (and PREBUILT's likewise)
red=$root/tests/sketch/fixtures/cuda_reduce
ops=$(for f in "$red"/*.sketch; do basename "$f" .sketch | sed 's|_|/|'; done)
# shellcheck disable=SC2086 # $ops is one word an operator
"$py" "$root/tests/sketch/difftest/suite.py" --dsl cuda --arch "${ARCH:-sm_90a}" \
  --sketch-files "$red" --ops $ops \
  ${cli:+--akg-cli "$cli"} ${PREBUILT:+--prebuilt "$PREBUILT-reduce"} --work "$work-reduce" \
  --jobs "$jobs"
rc2=$?
# 1 when either failed; 77 when both were skipped
if [ "$rc" = 1 ] || [ "$rc2" = 1 ]; then exit 1; fi
if [ "$rc" = 77 ] && [ "$rc2" = 77 ]; then exit 77; fi
[ "$rc" = 0 ] || [ "$rc" = 77 ] || exit "$rc"
[ "$rc2" = 0 ] || [ "$rc2" = 77 ] || exit "$rc2"
exit 0
