/*
 * The sketch that bench/sketch_parse_bench.c times, also parsed by
 * tests/sketch/test_sketch_fast.c (which requires the parser's fast path to
 * take it, so the benchmark measures what production runs): a tiled
 * elementwise chain of about LINES lines. Returns a malloc'ed text and
 * stores its length, or NULL when out of memory.
 */
#ifndef AKG_SKETCH_BENCH_TEXT_H
#define AKG_SKETCH_BENCH_TEXT_H

#include <stdio.h>
#include <stdlib.h>

static inline char *sketch_bench_text(int lines, size_t *len) {
  size_t cap = (size_t)(lines > 0 ? lines : 0) * 96 + 1024, n = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  n += (size_t)snprintf(t + n, cap - n,
                        "sketch bench {\n  symbols: M, N;\n  tensors: x[M, N]: f32; y[M, N]: f32;\n"
                        "  constexpr: BM = tune(16, 32, 64), BN = 128;\n\n"
                        "  @llm_hint(\"parallel\", \"grididx\")\n  for i in range(0, M, BM):\n"
                        "    @llm_hint(\"parallel\", \"grididx\")\n    for j in range(0, N, BN):\n"
                        "      t0 = alloc([BM, BN], llm_hint=[\"fast\"])\n      load(x[i:i+BM, j:j+BN] -> t0)\n");
  int k = 0;
  for (int l = 12; l < lines - 2; l++, k++)
    n += (size_t)snprintf(t + n, cap - n, "      t%d = %s(t%d)\n", k + 1,
                          k % 3 == 0 ? "exp" : k % 3 == 1 ? "relu" : "neg", k);
  n += (size_t)snprintf(t + n, cap - n, "      store(t%d -> y[i:i+BM, j:j+BN])\n}\n", k);
  *len = n;
  return t;
}

#endif /* AKG_SKETCH_BENCH_TEXT_H */
