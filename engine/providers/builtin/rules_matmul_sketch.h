/*
 * rules_matmul_sketch.h: the matmul family's sketch writers (see the .c).
 */
#ifndef AKG_RULES_MATMUL_SKETCH_H
#define AKG_RULES_MATMUL_SKETCH_H

#include <stdbool.h>

#include "akg/akg.h"

typedef struct {
    const char *name;   /* the sketch's name */
    const char *a_name; /* forward's argument names of the operands */
    const char *b_name;
    int rank_a, rank_b;
    int trans_a, trans_b;
    int tri;                 /* 0, 1 tril, 2 triu */
    long diag;               /* tril/triu diagonal, when a constant */
    char diag_init[64];      /* or the constructor argument it comes from ("" if none) */
    long mr, nr, kc, mc, nc; /* the chosen tunables (first candidates) */
    long rows;               /* gemv / rowscale */
} akg_matmul_spec;

/* Each returns a malloc'd sketch text, or NULL when out of memory. */
char *akg_matmul_gemm_sketch(const akg_matmul_spec *s);
char *akg_matmul_gemv_sketch(const akg_matmul_spec *s);
char *akg_matmul_rowscale_sketch(const akg_matmul_spec *s);

#endif
