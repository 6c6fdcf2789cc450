/* libFuzzer target over parse + check + print + re-parse of sketch text. */
#include "akg/sketch.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch **list = NULL;
  size_t n = 0;
  if (akg_sketch_parse_all((const char *)data, size, &list, &n, d) == 0) {
    for (size_t i = 0; i < n; i++) {
      akg_sketch_check(list[i], d);
      char *text = NULL;
      if (akg_sketch_print(list[i], &text) == 0) {
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
