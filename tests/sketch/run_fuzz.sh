#!/bin/sh
# Builds the sketch fuzzer with clang (libFuzzer + ASan + UBSan) and runs it
# for SECONDS seconds, seeded with the corpus and fixture sketches.
# Crashes land in tests/sketch/fuzz-artifacts/; turn each into a test case.
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$root/build/sketch-fuzz}
mkdir -p "$out/seeds" "$root/tests/sketch/fuzz-artifacts"
# fixture folders reuse names (an operator's sketch per backend): a seed is named by its folder
for f in "$root"/tests/sketch/fixtures/*/*.sketch; do
  cp "$f" "$out/seeds/$(basename "$(dirname "$f")")_$(basename "$f")"
done
i=0
for f in "$root"/sketch-grammar/test/corpus/*.txt; do
  awk -v dir="$out/seeds" -v base="$(basename "$f" .txt)" '
    /^={3,}$/ { if (state == 2) close(file); state = (state == 0 || state == 2) ? 1 : 3; next }
    state == 1 { n++; state = 3; next }
    state == 3 && /^---$/ { state = 2; next }
    state == 3 { file = dir "/" base "_" n ".sketch"; print > file }
  ' "$f"
  i=$((i + 1))
done
# The parser, checker and printer only: other files of engine/sketch (the CLI, JSON export,
# wrappers) need the rest of the engine, and the fuzz target calls none of them.
sk="$root/engine/sketch"
clang -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/engine/include" -I"$root/engine/sketch" -I"$root/sketch-grammar/src" \
  "$root"/tests/sketch/fuzz_sketch.c "$sk"/sketch_ir.c "$sk"/sketch_parse.c "$sk"/sketch_fast.c \
  "$sk"/sketch_fast_expr.c "$sk"/sketch_identical.c "$sk"/sketch_ops.c "$sk"/sketch_check.c \
  "$sk"/sketch_check_bind.c "$sk"/sketch_print.c \
  "$root"/sketch-grammar/src/parser.c "$root"/sketch-grammar/src/scanner.c \
  $(pkg-config --cflags --libs tree-sitter) -o "$out/fuzz_sketch"
mkdir -p "$out/corpus"
"$out/fuzz_sketch" -max_total_time="$secs" -max_len=4096 -timeout=10 \
  -artifact_prefix="$root/tests/sketch/fuzz-artifacts/" "$out/corpus" "$out/seeds"
