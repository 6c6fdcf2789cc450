#!/bin/sh
# compile_fixtures.sh AKG_CLI FIXTURE_DIR WORK_DIR [MUST_LOWER]: lowers every fixture sketch with
# `akg_cli sketch emit --backend cuda --dsl cuda` and compiles each kernel.cu with nvcc for
# sm_90, as the backend's build does (-O3 -std=c++17 -shared -Xcompiler -fPIC). No GPU is
# needed and nothing runs: it shows the emitted CUDA C compiles. nvcc is taken from $AKG_NVCC,
# then PATH, then a venv with PyPI's nvidia-cuda-nvcc and nvidia-cuda-cccl wheels at
# $AKG_SOURCE_DIR/.venv-nvcc (scripts/setup.sh test makes it from nvcc.lock); without one the
# test is skipped (exit 77) with a message, after the lowering.
# A sketch the backend refuses is listed and not counted as a failure (test_cuda_c holds the
# count that must lower), unless MUST_LOWER is given: then fewer lowered sketches than that fail
# the test, with or without nvcc. A kernel nvcc rejects fails the test.
set -u
cli=$1 fixtures=$2 work=$3 must=${4:-0}
nvcc=${AKG_NVCC:-}
[ -z "$nvcc" ] && nvcc=$(command -v nvcc 2>/dev/null || true)
if [ -z "$nvcc" ] && [ -n "${AKG_SOURCE_DIR:-}" ]; then
  for c in "$AKG_SOURCE_DIR"/.venv-nvcc/lib/python3*/site-packages/nvidia/cu*/bin/nvcc; do
    [ -x "$c" ] && nvcc=$c
  done
fi
rm -rf "$work" && mkdir -p "$work" || exit 2
lowered=0 refused=0 built=0 failed=0
for f in "$fixtures"/*.sketch; do
  b=$(basename "$f" .sketch)
  case $b in refused_*) continue ;; esac
  if "$cli" sketch emit --backend cuda --dsl cuda "$f" > "$work/$b.cu" 2> "$work/$b.err"; then
    lowered=$((lowered + 1))
    echo "$b" >> "$work/lowered.txt"
  else
    refused=$((refused + 1))
    echo "refused $b: $(head -c 300 "$work/$b.err")"
  fi
done
[ -f "$work/lowered.txt" ] || { echo "nothing lowered"; exit 1; }
if [ "$lowered" -lt "$must" ]; then
  echo "cuda fixtures: $lowered lowered, $refused refused; $must must lower"
  exit 1
fi
if [ -z "$nvcc" ]; then
  echo "skipped: nvcc is not installed (set AKG_NVCC, or let scripts/setup.sh test install" \
       "the pinned wheels of backends/cuda/cuda/nvcc.lock into .venv-nvcc)"
  exit 77
fi
jobs=${AKG_NVCC_JOBS:-2}
xargs -P "$jobs" -I{} sh -c "'$nvcc' -O3 -std=c++17 -shared -Xcompiler -fPIC -arch=sm_90 \
  -o '$work/{}.so' '$work/{}.cu' > '$work/{}.nvcc' 2>&1 || echo '{}' >> '$work/failed.txt'" \
  < "$work/lowered.txt"
[ -f "$work/failed.txt" ] && failed=$(wc -l < "$work/failed.txt")
built=$((lowered - failed))
if [ "$failed" -gt 0 ]; then
  for b in $(cat "$work/failed.txt"); do echo "nvcc failed on $b:"; head -20 "$work/$b.nvcc"; done
fi
echo "cuda fixtures: $lowered lowered, $refused refused, $built compiled by nvcc (sm_90)"
echo "$built passed, $failed failed"
[ "$failed" -eq 0 ]
