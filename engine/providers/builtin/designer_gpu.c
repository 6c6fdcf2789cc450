/*
 * designer_gpu.c: the GPU designs of the built-in Designer (see designer_gpu.h): the
 * tunables' candidates, the softmax rows, and the hook that rewrites a family rule's
 * design for a GPU.
 *
 * Softmax over the view [O, D, I] (D the softmax dim):
 *  - contiguous rows (I == 1) whose RB rows fit one block (RB * D <= 16384 elements): RB
 *    rows per program, loaded once; the max, the exponentials and their sum stay in
 *    registers and the output is written once (the CPU design writes the exponentials and
 *    reads them back from the output, which on a GPU is two more passes over memory);
 *  - rows up to 16384 elements: one row per program, the same in one block;
 *  - longer rows: one program per row, CB columns at a time, in three passes (the max,
 *    the sum of exponentials, the scale);
 *  - strided (I > 1): CH columns of one outer row per program; with D * CH <= 16384 the
 *    D rows of them in one block, else streamed one row at a time through per-column
 *    running values, in three passes.
 *
 * Matrix products (the matmul rule's `gemm` kind): one program per BM x BN
 * tile of C (the grid over output tiles, batch items as a further grid axis), a loop over
 * K in BK-deep slices accumulating op(A) @ op(B) into an f32 tile with `gemm` (tl.dot:
 * every side a constant of at least 16); ragged edges are the bounds guards of the loads
 * (zeros outside A and B) and of the store. Transposed operands are loaded as stored and
 * transposed by gemm's trans_a/trans_b (strided in the kernel, no copy). A batch of
 * matrices times one matrix is one product over all rows, as on the CPU. A product kept
 * triangular (tril/triu of it, any diagonal) stores zeros for a tile wholly outside the
 * triangle without a product, and masks the tiles the diagonal cuts (where(rows against
 * columns)). The K loop is not cut short: the inputs' zeros are their values, not the
 * reference's promise, and a product of any two matrices must come out right.
 *
 * Scans (rx_sketch_gpu_scan.c): block scans of tiles with an f64 carry: a contiguous row
 * (I == 1) a program, BLK elements a chunk; strided ones in [BD, CH] tiles along D, a carry
 * per column.
 *
 * Convolutions (designer_gpu_conv.c; one forward layer, not depthwise): an implicit GEMM,
 * one program per [BN output channels of a group] x [BW output columns of a row], K walked
 * as BK input channels per tap, `gemm` into an f32 tile; zero padding is the loads' bounds
 * guards, reflect padding (1-D, 2-D) a padded copy written first. Transposed layers
 * (designer_gpu_conv_transposed.c): the gather form, one launch per phase of the output (its
 * position modulo the stride), an implicit GEMM over the taps that reach it. A depthwise layer
 * then a pointwise one (designer_gpu_conv_separable.c): two launches through a scratch tensor.
 * Other layers keep the CPU's design.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "designer_gpu.h"
#include "rules_reduction_core.h"

const long akg_gpu_blocks[3] = {2048, 1024, 4096};
const long akg_gpu_rows[3] = {1, 2, 4};

void akg_gpu_softmax_constexprs(akg_buf *b, const akg_design *d)
{
    akg_buf_appendf(b, "  constexpr: RB = tune(%ld", d->rows);
    for (int i = 0; i < 3; i++)
        if (akg_gpu_rows[i] != d->rows)
            akg_buf_appendf(b, ", %ld", akg_gpu_rows[i]);
    akg_buf_puts(b, "), CB = tune(4096, 2048, 8192), CH = tune(16, 8, 32)");
}

/* The output of a softmax from the tile t, its max m and the sum s of exp(t - m). */
static void softmax_value(akg_buf *b, const akg_design *d, const char *e)
{
    if (d->log_softmax)
        akg_buf_puts(b, "sub(sub(t, m), log(s))");
    else
        akg_buf_appendf(b, "div(%s, s)", e);
}

/* One row (or tile) in one block: load, max, exp, sum, store. */
static void softmax_block(akg_buf *b, const akg_design *d, const char *ind, const char *shape,
                          const char *region, int axis)
{
    akg_buf_appendf(b, "%st = alloc(%s)\n%sload(x[%s] -> t)\n", ind, shape, ind, region);
    akg_buf_appendf(b, "%sm = reduce_max(t, axis=%d)\n", ind, axis);
    if (d->log_softmax) {
        akg_buf_appendf(b, "%ss = reduce_sum(exp(sub(t, m)), axis=%d)\n", ind, axis);
    } else {
        akg_buf_appendf(b, "%se = exp(sub(t, m))\n", ind);
        akg_buf_appendf(b, "%ss = reduce_sum(e, axis=%d)\n", ind, axis);
    }
    akg_buf_appendf(b, "%sstore(", ind);
    softmax_value(b, d, "e");
    akg_buf_appendf(b, " -> y[%s])\n", region);
}

/* Three passes over a row or a group of columns, `ext` elements at a time from the loop
 * `head`: the running max m and sum s (tiles of shape `acc`), then the scale. `reduce`:
 * each piece is reduced along axis 0 into [1] accumulators (else per-column running
 * values). */
static void softmax_passes(akg_buf *b, const akg_design *d, const char *ind, const char *head,
                           const char *shape, const char *region, const char *acc, int reduce)
{
    akg_buf_appendf(b,
                    "%sm = alloc(%s, dtype=f32, llm_hint=[\"fastest\", \"accumulator\", "
                    "\"init_neg_inf\"])\n",
                    ind, acc);
    akg_buf_appendf(b, "%s%s\n%s  t = alloc(%s)\n%s  load(x[%s] -> t)\n", ind, head, ind, shape,
                    ind, region);
    if (reduce)
        akg_buf_appendf(b, "%s  m = max(m, reduce_max(t, axis=0))\n", ind);
    else
        akg_buf_appendf(b, "%s  m = max(m, t)\n", ind);
    akg_buf_appendf(b,
                    "%ss = alloc(%s, dtype=f32, llm_hint=[\"fastest\", \"accumulator\", "
                    "\"init_zero\"])\n",
                    ind, acc);
    akg_buf_appendf(b, "%s%s\n%s  t = alloc(%s)\n%s  load(x[%s] -> t)\n", ind, head, ind, shape,
                    ind, region);
    if (reduce)
        akg_buf_appendf(b, "%s  s = add(s, reduce_sum(exp(sub(t, m)), axis=0))\n", ind);
    else
        akg_buf_appendf(b, "%s  s = add(s, exp(sub(t, m)))\n", ind);
    akg_buf_appendf(b, "%s%s\n%s  t = alloc(%s)\n%s  load(x[%s] -> t)\n", ind, head, ind, shape,
                    ind, region);
    akg_buf_appendf(b, "%s  store(", ind);
    softmax_value(b, d, "exp(sub(t, m))");
    akg_buf_appendf(b, " -> y[%s])\n", region);
}

void akg_gpu_softmax_body(akg_buf *b, const akg_design *d)
{
    const char *par = "@llm_hint(\"parallel\", \"grididx\")\n";
    if (d->math == AKG_MATH_PRECISE)
        akg_buf_puts(b, "  @llm_hint(\"math\", \"precise\")\n");
    akg_buf_puts(b, "  if I == 1:\n    if RB * D <= 16384:\n"
                    "      # RB rows per program in one block: max, exp and sum in registers, "
                    "one write\n");
    akg_buf_appendf(b, "      %s      for o in range(0, O, RB):\n", par);
    softmax_block(b, d, "        ", "[min(RB, O - o), D]", "o:o + min(RB, O - o), :, 0", 1);
    akg_buf_puts(b, "    elif D <= 16384:\n      # one row per program, the row in one block\n");
    akg_buf_appendf(b, "      %s      for o in range(0, O):\n", par);
    softmax_block(b, d, "        ", "[D]", "o, :, 0", 0);
    akg_buf_puts(b, "    else:\n      # long rows: one program per row, CB columns at a time: "
                    "the max, the sum, the scale\n");
    akg_buf_appendf(b, "      %s      for o in range(0, O):\n", par);
    softmax_passes(b, d, "        ", "for q in range(0, D, CB):", "[min(CB, D - q)]",
                   "o, q:q + min(CB, D - q), 0", "[1]", 1);
    akg_buf_puts(b, "  else:\n    if D * CH <= 16384:\n"
                    "      # CH columns of one outer row per program, their D rows in one "
                    "block\n");
    akg_buf_appendf(b, "      %s      for o in range(0, O):\n", par);
    akg_buf_appendf(b, "        %s        for c in range(0, I, CH):\n", par);
    softmax_block(b, d, "          ", "[D, min(CH, I - c)]", "o, :, c:c + min(CH, I - c)", 0);
    akg_buf_puts(b, "    else:\n      # long columns: CH columns per program, the D rows "
                    "streamed through running values\n");
    akg_buf_appendf(b, "      %s      for o in range(0, O):\n", par);
    akg_buf_appendf(b, "        %s        for c in range(0, I, CH):\n", par);
    softmax_passes(b, d, "          ", "for r in range(0, D):", "[min(CH, I - c)]",
                   "o, r, c:c + min(CH, I - c)", "[min(CH, I - c)]", 0);
    akg_buf_puts(b, "}\n");
}

static int param_int(const cJSON *p, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(p, key);
    return cJSON_IsNumber(v) ? v->valueint : 0;
}

static void gemm_dims(akg_buf *b, int n)
{
    for (int i = 0; i < n; i++)
        akg_buf_appendf(b, "Z%d, ", i);
}

/* The GPU sketch of the matmul rule's design d (see the file comment), or NULL (no memory,
 * or operands this writer does not name). */
static char *gpu_gemm_sketch(const akg_design *d, const akg_reference *ref)
{
    const cJSON *p = d->params;
    int ia = param_int(p, "a"), ib = param_int(p, "b");
    int ta = param_int(p, "trans_a"), tb = param_int(p, "trans_b");
    int ra = param_int(p, "rank_a"), rb = param_int(p, "rank_b");
    if (ia < 0 || ib < 0 || (size_t)ia >= ref->n_forward_params ||
        (size_t)ib >= ref->n_forward_params || ra < 2 || rb < 2 || (rb > 2 && rb != ra))
        return NULL;
    int tri = param_int(p, "tri");
    if (tri && rb > 2 && ra != rb)
        return NULL;
    int nbatch = ra - 2;
    int fold = ra > 2 && rb == 2 && !ta && !tri; /* batch rows of A: one product of R rows */
    int zloop = nbatch > 0 && !fold;
    int zb = zloop && rb > 2;
    const char *rows = fold ? "R" : "M";
    const char *zi = zloop ? "z, " : "", *zbi = zb ? "z, " : "";
    akg_buf b;
    akg_buf_init(&b, 1 << 14);
    akg_buf_appendf(&b,
                    "# %s on a GPU: one program per BM x BN tile of C (the grid over output "
                    "tiles%s), a loop\n# over K in BK-deep slices accumulating op(A) @ op(B) "
                    "in an f32 tile (tl.dot); ragged\n# edges are the bounds guards of the "
                    "loads (zeros outside A and B) and of the store.\n",
                    d->op_name, zloop ? ", batch items a grid axis" : "");
    if (fold)
        akg_buf_puts(&b, "# A's batch dims are rows: one product of R = batch * M rows.\n");
    if (tri)
        akg_buf_appendf(&b,
                        "# %s: a tile wholly outside the triangle is stored as zeros without a "
                        "product; the\n# others keep the triangle's entries of the product "
                        "(a mask of rows against columns).\n",
                        tri == 1 ? "tril" : "triu");
    akg_buf_appendf(&b, "sketch %s {\n  symbols: M, N, K%s%s%s", d->op_name, fold ? ", R" : "",
                    zloop ? ", Z" : "", tri ? ", DG" : "");
    for (int i = 0; i < nbatch; i++)
        akg_buf_appendf(&b, ", Z%d", i);
    akg_buf_puts(&b, ";\n  tensors: ");
    if (fold)
        akg_buf_puts(&b, "a[R, K]: f32; ");
    else
        akg_buf_appendf(&b, "a[%s%s]: f32; ", zloop ? "Z, " : "", ta ? "K, M" : "M, K");
    akg_buf_appendf(&b, "b[%s%s]: f32; c[%s%s, N]: f32;\n", zb ? "Z, " : "", tb ? "N, K" : "K, N",
                    zloop ? "Z, " : "", rows);
    akg_buf_puts(&b, "  constexpr: BM = tune(128, 64, 32), BN = tune(128, 64, 32), "
                     "BK = tune(32, 16, 64);\n");
    akg_buf_appendf(&b, "  bind: a = input(\"%s\", [", ref->forward_params[ia].name);
    gemm_dims(&b, nbatch);
    akg_buf_appendf(&b, "%s]), b = input(\"%s\", [", ta ? "K, M" : "M, K",
                    ref->forward_params[ib].name);
    gemm_dims(&b, rb - 2);
    akg_buf_appendf(&b, "%s])", tb ? "N, K" : "K, N");
    if (fold || zloop) {
        akg_buf_appendf(&b, ", %s = 1", fold ? "R" : "Z");
        for (int i = 0; i < nbatch; i++)
            akg_buf_appendf(&b, " * Z%d", i);
        if (fold)
            akg_buf_puts(&b, " * M");
    }
    akg_buf_puts(&b, ", c = output(0, [");
    gemm_dims(&b, nbatch);
    akg_buf_puts(&b, "M, N])");
    if (tri) { /* tril keeps column <= row + DG, triu column >= row + DG */
        const char *init = cJSON_GetStringValue(cJSON_GetObjectItem(p, "diagonal_from_init"));
        if (init)
            akg_buf_appendf(&b, ", DG = init(\"%s\")", init);
        else
            akg_buf_appendf(&b, ", DG = %d", param_int(p, "diagonal"));
    }
    akg_buf_puts(&b, "\n\n");
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    const char *ind = "  ";
    if (zloop) {
        akg_buf_appendf(&b, "  %s\n  for z in range(0, Z):\n", par);
        ind = "    ";
    }
    akg_buf_appendf(&b, "%s%s\n%sfor i in range(0, %s, BM):\n", ind, par, ind, rows);
    akg_buf_appendf(&b, "%s  %s\n%s  for j in range(0, N, BN):\n", ind, par, ind);
    char tind[16];
    if (tri) {
        akg_buf_appendf(&b, "%s    if %s:\n", ind,
                        tri == 1 ? "j > i + BM - 1 + DG" : "j + BN - 1 < i + DG");
        akg_buf_appendf(&b, "%s      store(fill([BM, BN], 0.0) -> c[%si:i+BM, j:j+BN])\n", ind, zi);
        akg_buf_appendf(&b, "%s    else:\n", ind);
        snprintf(tind, sizeof tind, "%s  ", ind);
        ind = tind;
    }
    akg_buf_appendf(&b,
                    "%s    acc = alloc([BM, BN], dtype=f32, llm_hint=[\"fastest\", "
                    "\"accumulator\", \"init_zero\"])\n",
                    ind);
    akg_buf_appendf(&b, "%s    @llm_hint(\"pipeline\")\n%s    for k in range(0, K, BK):\n", ind,
                    ind);
    akg_buf_appendf(&b, "%s      ta = alloc([%s], dtype=f32, llm_hint=[\"fast\"])\n", ind,
                    ta ? "BK, BM" : "BM, BK");
    akg_buf_appendf(&b, "%s      tb = alloc([%s], dtype=f32, llm_hint=[\"fast\"])\n", ind,
                    tb ? "BN, BK" : "BK, BN");
    if (ta)
        akg_buf_appendf(&b, "%s      load(a[%sk:k+BK, i:i+BM] -> ta)\n", ind, zi);
    else
        akg_buf_appendf(&b, "%s      load(a[%si:i+BM, k:k+BK] -> ta)\n", ind, zi);
    if (tb)
        akg_buf_appendf(&b, "%s      load(b[%sj:j+BN, k:k+BK] -> tb)\n", ind, zbi);
    else
        akg_buf_appendf(&b, "%s      load(b[%sk:k+BK, j:j+BN] -> tb)\n", ind, zbi);
    akg_buf_appendf(&b, "%s      acc = gemm(ta, tb, acc%s%s)\n", ind, ta ? ", trans_a=True" : "",
                    tb ? ", trans_b=True" : "");
    if (tri) {
        akg_buf_appendf(
            &b, "%s    cols = arange(j, j + BN)\n%s    rows = arange(i + DG, i + DG + BM)\n", ind,
            ind);
        akg_buf_appendf(&b, "%s    keep = %s(cols[None, :], rows[:, None])\n", ind,
                        tri == 1 ? "le" : "ge");
        akg_buf_appendf(&b, "%s    store(where(keep, acc, 0.0) -> c[%si:i+BM, j:j+BN])\n}\n", ind,
                        zi);
    } else {
        akg_buf_appendf(&b, "%s    store(acc -> c[%si:i+BM, j:j+BN])\n}\n", ind, zi);
    }
    return akg_buf_take(&b);
}

int akg_gpu_redesign_family(akg_design *d, const akg_reference *ref, const cJSON *probe,
                            const cJSON *feedback)
{
    const char *mm = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "kind"));
    if (!strcmp(d->family, "matmul") && mm && !strcmp(mm, "gemm")) {
        char *text = gpu_gemm_sketch(d, ref);
        if (!text)
            return AKG_OK; /* the CPU's sketch stays, correct there */
        free(d->sketch_text);
        d->sketch_text = text;
        d->gpu = 1;
        return AKG_OK;
    }
    if (!strcmp(d->family, "conv")) {
        char *text = akg_gpu_conv_sketch(d, ref);
        if (text) { /* else the CPU's sketch stays (see designer_gpu_conv.c) */
            free(d->sketch_text);
            d->sketch_text = text;
            d->gpu = 1;
        }
        return AKG_OK;
    }
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "design"));
    const char *what = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "what"));
    if (!kind || !what ||
        (strcmp(kind, "reduce") && strcmp(kind, "rowmap") && strcmp(kind, "scan")))
        return AKG_OK; /* no GPU writer for this kind yet: the CPU's sketch, correct there */
    char err[512];
    int rc = akg_rx_write_sketch_gpu(d, ref, probe, akg_rx_numeric_retry(feedback), what, err,
                                     sizeof err);
    if (rc == AKG_ENOMEM)
        return rc;
    if (rc == AKG_OK)
        d->gpu = 1;
    /* else the writer could not say it for a GPU: the CPU's sketch stays, correct there */
    return AKG_OK;
}
