#!/bin/bash
# Copies akg_cli and the shared libraries a GPU machine without libuv, cJSON, tree-sitter, SQLite
# or libyaml lacks (an Ubuntu 24.04 image with CUDA, PyTorch and Triton, say) into devbundle/ of
# the repository (ignored by git), for bench/gpu/h200_ops.sh to run there with LD_LIBRARY_PATH.
# The binary is built here (Debian 12, glibc 2.36): it runs on any newer glibc.
#
#   scripts/device-bundle.sh BUILD_DIR      # BUILD_DIR: a configured and built cmake folder
set -eu
build=${1:?usage: scripts/device-bundle.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/devbundle/bin" "$root/devbundle/lib"
cp "$build/akg_cli" "$root/devbundle/bin/"
ldd "$build/akg_cli" | awk '/=> \//{print $1, $3}' | while read -r name path; do
    case "$name" in
        libuv.so*|libcjson.so*|libtree-sitter.so*|libsqlite3.so*|libyaml-0.so*)
            cp -L "$path" "$root/devbundle/lib/$name" ;;
    esac
done
ls -l "$root/devbundle/bin" "$root/devbundle/lib"
