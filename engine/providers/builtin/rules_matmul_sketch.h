/*
 * rules_matmul_sketch.h: the matmul family's sketch writers (see the .c).
 */
#ifndef AKG_RULES_MATMUL_SKETCH_H
#define AKG_RULES_MATMUL_SKETCH_H

#include <stdbool.h>

#include "akg/akg.h"

#define AKG_MATMUL_MAX_EPILOGUE 48
#define AKG_MATMUL_MAX_VECTORS 4

typedef struct {
    const char *name;   /* the sketch's name */
    const char *a_name; /* forward's argument (or weight) names of the operands */
    const char *b_name;
    int rank_a, rank_b;
    int trans_a, trans_b;
    int tri;                 /* 0, 1 tril, 2 triu */
    long diag;               /* tril/triu diagonal, when a constant */
    char diag_init[64];      /* or the constructor argument it comes from ("" if none) */
    long mr, nr, kc, mc, nc; /* the chosen tunables (first candidates) */
    int vw;                  /* f32 lanes of the register tile's vectors (8 or 16) */
    long rows;               /* gemv / rowscale */
    /* GEMM only. An operand bound as weight(a_name/b_name) instead of input(): */
    int a_weight, b_weight;
    /* An epilogue run on each register tile after its last K slice (n_epilogue 0: none):
     * statements, one a line, that read the tile's value `o`, the tiles vt0.. of the
     * vectors below and rt0.. of the matrices (each [1, NR]: a 1-D tensor of N broadcast along the
     * rows), and leave the result in epilogue_out. Not with tri. */
    const char *epilogue[AKG_MATMUL_MAX_EPILOGUE];
    int n_epilogue;
    const char *epilogue_out;
    const char *vec_names[AKG_MATMUL_MAX_VECTORS]; /* forward argument or weight name */
    int vec_weight[AKG_MATMUL_MAX_VECTORS];        /* 1: weight(), 0: input() */
    int n_vecs;
    /* Matrices of the product's shape read by the epilogue (a residual `x + x @ w`): tensor
     * res<i>, declared and bound like c, its tile rt<i> ([MR, NR], the region of c) loaded
     * before the statements. */
    const char *mat_names[AKG_MATMUL_MAX_VECTORS]; /* forward argument or weight name */
    int mat_weight[AKG_MATMUL_MAX_VECTORS];        /* 1: weight(), 0: input() */
    int n_mats;
} akg_matmul_spec;

/* Sets the register tile for vectors of vw f32 lanes (akg_rule_vector_floats): vw, MR and NR.
 * 8 lanes: 6 x 16 (12 accumulators of 16 AVX2 registers); 16 lanes: 6 x 64 (24 of 32 AVX-512
 * registers, four B vectors per k against six broadcasts of A). */
void akg_matmul_spec_registers(akg_matmul_spec *s, int vw);

/* Each returns a malloc'd sketch text, or NULL when out of memory. */
char *akg_matmul_gemm_sketch(const akg_matmul_spec *s);
char *akg_matmul_gemv_sketch(const akg_matmul_spec *s);
char *akg_matmul_rowscale_sketch(const akg_matmul_spec *s);

#endif
