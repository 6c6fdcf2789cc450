/* libFuzzer target over parse + check + print + re-parse of sketch text, and
 * the fast-path parser against the tree-sitter path: whenever the fast path
 * accepts a text (or the printed form of a sketch), tree-sitter must accept
 * it and build an identical IR. */
#include "akg/sketch.h"
#include "sketch_internal.h"

#include <stdlib.h>
#include <string.h>

/* Aborts when the fast path accepts text with a different IR than tree-sitter's. */
static void differential(const char *text, size_t len) {
  akg_sketch *fast = NULL;
  if (sketch_parse_fast(text, len, &fast) != 0) return;
  akg_sketch **ts = NULL;
  size_t n = 0;
  if (sketch_parse_ts(text, len, &ts, &n, NULL) != 0 || n != 1) abort();
  char why[160];
  if (!sketch_ir_identical(fast, ts[0], why, sizeof why)) abort();
  akg_sketch_free(ts[0]);
  free(ts);
  akg_sketch_free(fast);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  differential((const char *)data, size);
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch **list = NULL;
  size_t n = 0;
  if (akg_sketch_parse_all((const char *)data, size, &list, &n, d) == 0) {
    for (size_t i = 0; i < n; i++) {
      akg_sketch_check(list[i], d);
      char *text = NULL;
      if (akg_sketch_print(list[i], &text) == 0) {
        differential(text, strlen(text));
        akg_sketch *again = NULL;
        /* the printed form must parse back to the same IR and print the same
         * (comments and blank lines included) */
        if (akg_sketch_parse(text, strlen(text), &again, NULL) != 0 || !akg_sketch_equal(list[i], again)) abort();
        char *text2 = NULL;
        if (akg_sketch_print(again, &text2) == 0 && strcmp(text, text2) != 0) abort();
        free(text2);
        akg_sketch_free(again);
      }
      free(text);
      akg_sketch_free(list[i]);
    }
    free(list);
  }
  for (size_t i = 0; i < akg_sketch_diag_count(d); i++) free(akg_sketch_diag_format("f", akg_sketch_diag_at(d, i)));
  akg_sketch_diag_list_free(d);
  return 0;
}
