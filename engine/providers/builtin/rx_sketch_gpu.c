/*
 * rx_sketch_gpu.c: the GPU's sketches of reductions ("reduce") and row maps ("rowmap")
 * over the view [O, D, I] of the inputs (rx_sketch.h), written for a target whose backend
 * is "cuda" in place of the CPU's (rx_sketch_stats.c, rx_sketch_rowmap.c).
 *
 * The CPU designs give a task to each of a few cores: long rows split in 8 parts, strided
 * reductions in a few column groups, sums in f64. On a GPU that is a few programs where
 * 132 SMs want thousands. Here, in f32 (the Verifier judges long sums against float64):
 *  - contiguous rows (I == 1) up to 16384 elements: one row per program, the row in one
 *    block, read once (a row map computes its statistics and maps the row from the same
 *    registers);
 *  - longer rows, 256 or more of them: one row per program, BLK elements at a time into
 *    running [1] accumulators (an arg-extreme keeps the extreme and its first index);
 *  - fewer long rows (a reduction of all dims, a loss): each row in P parts, one program
 *    per part, the partials in a "slow" tile that a second launch combines (a row map's
 *    second launch combines them per part and maps that part);
 *  - strided (I > 1): CH columns of one outer row per program, the D rows BD at a time:
 *    each step loads a [BD, CH] tile (contiguous along I, masked where fewer rows or
 *    columns are left) and reduces it along axis 0 into [1, CH] accumulators, so that the
 *    block's threads share the rows of a step (CUDA C: a group of threads a column) and a
 *    Triton program reads BD * CH = 4096 elements a step. An arg-extreme takes each tile's
 *    extreme and its first row (positions ri[:, None]; a NaN counts as the extreme) and
 *    keeps the earlier block's on ties. When that gives fewer than 256 programs and
 *    D >= 512, the D rows are cut into P parts as well and a second launch combines the
 *    parts. A row map's strided branch computes its statistics so, then maps [BD, CH]
 *    tiles (Model's tensors along D as [BD, 1] tiles).
 * The tunables BLK, CH, BD and P are declared with the design's choice first.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

static void gpu_constexprs(rx_sk *s)
{
    akg_buf_puts(s->b, "  constexpr: BLK = tune(4096, 2048, 8192), CH = tune(64, 32, 128), "
                       "BD = tune(64, 16, 128), P = tune(256, 64, 1024)");
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    if (cJSON_GetObjectItem(dm, "from_init"))
        akg_buf_appendf(s->b, ", DIM = %d",
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dm, "value")));
    akg_buf_puts(s->b, "\n");
}

static void par(rx_sk *s, const char *ind)
{
    rx_loop_hints(s, ind, 1);
}

/* The accumulators of statistic k, of shape w: acc<k> (f32), or for an arg-extreme m<k>
 * (the extreme so far) and k<k> (its index, `first` before any better value). */
static void acc_init(rx_sk *s, const char *m, int k, const char *ind, const char *w,
                     const char *first)
{
    akg_buf *b = s->b;
    const char *hint = "llm_hint=[\"fastest\", \"accumulator\", ";
    if (rx_sumlike(m)) {
        akg_buf_appendf(b, "%sacc%d = alloc(%s, dtype=f32, %s\"init_zero\"])\n", ind, k, w, hint);
    } else if (rx_m_is(m, "prod")) {
        akg_buf_appendf(b, "%sacc%d = fill(%s, 1.0, dtype=f32)\n", ind, k, w);
    } else {
        const char *v = rx_argx(m) ? "m" : "acc";
        akg_buf_appendf(b, "%s%s%d = alloc(%s, dtype=f32, %s\"init_neg_inf\"])\n", ind, v, k, w,
                        hint);
        if (rx_m_is(m, "min") || rx_m_is(m, "argmin"))
            akg_buf_appendf(b, "%s%s%d = neg(%s%d)  # +inf\n", ind, v, k, v, k);
        if (rx_argx(m)) {
            akg_buf_appendf(b, "%sk%d = alloc(%s, dtype=i32, %s\"init_zero\"])\n", ind, k, w, hint);
            if (strcmp(first, "0") != 0)
                akg_buf_appendf(b, "%sk%d = add(k%d, %s)\n", ind, k, k, first);
        }
    }
}

/* The extreme of an arg statistic ("max" for argmax) and its comparison ("gt"). */
static const char *arg_extreme(const char *m)
{
    return rx_m_is(m, "argmax") ? "max" : "min";
}

/* The first index of the extreme of the tile value of stat k along axis 0, its positions
 * `idx` (an i32 tile or arange): reduce_min(where(v == ext or v is NaN, idx, D)). */
static void first_index(rx_sk *s, const rx_stat_list *st, int k, const char *ext, const char *idx,
                        const rx_names *n)
{
    akg_buf_puts(s->b, "reduce_min(where(logical_or(eq(");
    rx_expr(s, st->expr[k], n);
    akg_buf_appendf(s->b, ", %s), ne(", ext);
    rx_expr(s, st->expr[k], n);
    akg_buf_puts(s->b, ", ");
    rx_expr(s, st->expr[k], n);
    akg_buf_appendf(s->b, ")), %s, D), axis=0)\n", idx);
}

/* Folds the tiles t<k> into the running accumulators of every statistic along axis 0:
 * a piece of a row into [1] accumulators, or a [BD, CH] block of rows into [1, CH] ones
 * (keepdim). `idx` is the tiles' positions along D (an i32 tile broadcast against t<k>). */
static void piece_update(rx_sk *s, const rx_stat_list *st, const char *ind, const char *idx)
{
    akg_buf *b = s->b;
    rx_names n = rx_tile_names();
    for (int k = 0; k < st->n; k++) {
        const char *m = st->mode[k];
        if (rx_argx(m)) {
            const char *ex = arg_extreme(m);
            akg_buf_appendf(b, "%smc = reduce_%s(", ind, ex);
            rx_expr(s, st->expr[k], &n);
            akg_buf_puts(b, ", axis=0)\n");
            akg_buf_appendf(b, "%skc = ", ind);
            first_index(s, st, k, "mc", idx, &n);
            akg_buf_appendf(b,
                            "%sbetter = logical_or(%s(mc, m%d), logical_and(ne(mc, mc), eq(m%d, "
                            "m%d)))\n",
                            ind, rx_m_is(m, "argmax") ? "gt" : "lt", k, k, k);
            akg_buf_appendf(b, "%sk%d = where(better, kc, k%d)\n%sm%d = where(better, mc, m%d)\n",
                            ind, k, k, ind, k, k);
            continue;
        }
        const char *fold = rx_m_is(m, "prod") ? "mul" : rx_extreme(m) ? m : "add";
        const char *red = rx_m_is(m, "prod") ? "prod" : rx_extreme(m) ? m : "sum";
        akg_buf_appendf(b, "%sacc%d = %s(acc%d, reduce_%s(", ind, k, fold, k, red);
        rx_stat_value(s, st, k, &n);
        akg_buf_puts(b, ", axis=0))\n");
    }
}

/* Whether a statistic is an arg-extreme (its update reads the positions along D). */
static int any_argx(const rx_stat_list *st)
{
    for (int k = 0; k < st->n; k++)
        if (rx_argx(st->mode[k]))
            return 1;
    return 0;
}

/* The statistics of row o over [lo, hi) in running accumulators, BLK elements at a time. */
static void row_chunks(rx_sk *s, const rx_stat_list *st, const char *ind, const char *lo,
                       const char *hi)
{
    char in2[64], ext[128], region[700], a[128], z[300];
    for (int k = 0; k < st->n; k++)
        acc_init(s, st->mode[k], k, ind, "[1]", lo);
    snprintf(in2, sizeof in2, "%s  ", ind);
    if (!strcmp(lo, "0")) {
        akg_buf_appendf(s->b, "%sfor q in range(0, %s, BLK):\n", ind, hi);
        snprintf(ext, sizeof ext, "min(BLK, %s - q)", hi);
        snprintf(a, sizeof a, "q");
    } else {
        akg_buf_appendf(s->b, "%sfor q in range(0, %s - %s, BLK):\n", ind, hi, lo);
        snprintf(ext, sizeof ext, "min(BLK, %s - %s - q)", hi, lo);
        snprintf(a, sizeof a, "%s + q", lo);
    }
    snprintf(z, sizeof z, "%s + %s", a, ext);
    snprintf(region, sizeof region, "o, %s:%s, 0", a, z);
    rx_load_inputs(s, in2, ext, region);
    char idx[600];
    snprintf(idx, sizeof idx, "arange(%s, %s)", a, z);
    piece_update(s, st, in2, idx);
}

/* The statistics of the whole row o (D elements, one block): acc<k>, or m<k> and k<k>. */
static void row_whole(rx_sk *s, const rx_stat_list *st, const char *ind)
{
    akg_buf *b = s->b;
    rx_names n = rx_tile_names();
    rx_load_inputs(s, ind, "D", "o, :, 0");
    for (int k = 0; k < st->n; k++) {
        const char *m = st->mode[k];
        if (rx_argx(m)) {
            akg_buf_appendf(b, "%sm%d = reduce_%s(", ind, k, arg_extreme(m));
            rx_expr(s, st->expr[k], &n);
            akg_buf_puts(b, ", axis=0)\n");
            char ext[16];
            snprintf(ext, sizeof ext, "m%d", k);
            akg_buf_appendf(b, "%sk%d = ", ind, k);
            first_index(s, st, k, ext, "arange(0, D)", &n);
            continue;
        }
        const char *red = rx_m_is(m, "prod") ? "prod" : rx_extreme(m) ? m : "sum";
        akg_buf_appendf(b, "%sacc%d = reduce_%s(", ind, k, red);
        rx_stat_value(s, st, k, &n);
        akg_buf_puts(b, ", axis=0)\n");
    }
}

/* The statistics of CH columns (from c) of outer row o over the rows [lo, hi) of D, BD rows
 * at a time: [1, CH] accumulators, each step a [BD, CH] tile (contiguous along I) reduced
 * along axis 0 into them. `lo` is "0" for all of D (then hi is D). */
static void column_blocks(rx_sk *s, const rx_stat_list *st, const char *ind, const char *lo,
                          const char *hi)
{
    char in2[64], ext[128], shape[200], region[400];
    for (int k = 0; k < st->n; k++)
        acc_init(s, st->mode[k], k, ind, "[1, min(CH, I - c)]", lo);
    snprintf(in2, sizeof in2, "%s  ", ind);
    akg_buf_appendf(s->b, "%sfor r in range(%s, %s, BD):\n", ind, lo, hi);
    snprintf(ext, sizeof ext, "min(BD, %s - r)", hi);
    snprintf(shape, sizeof shape, "%s, min(CH, I - c)", ext);
    snprintf(region, sizeof region, "o, r:r + %s, c:c + min(CH, I - c)", ext);
    rx_load_inputs(s, in2, shape, region);
    if (any_argx(st))
        akg_buf_appendf(s->b, "%sri = arange(r, r + %s)\n", in2, ext);
    piece_update(s, st, in2, "ri[:, None]");
}

/* The partial tiles of the statistics: part<k> (or partv<k> and parti<k>) of shape `shape`. */
static void part_tiles(rx_sk *s, const rx_stat_list *st, const char *ind, const char *shape)
{
    for (int k = 0; k < st->n; k++) {
        if (rx_argx(st->mode[k]))
            akg_buf_appendf(s->b,
                            "%spartv%d = alloc(%s, dtype=f32, llm_hint=[\"slow\"])\n"
                            "%sparti%d = alloc(%s, dtype=i32, llm_hint=[\"slow\"])\n",
                            ind, k, shape, ind, k, shape);
        else
            akg_buf_appendf(s->b, "%spart%d = alloc(%s, dtype=f32, llm_hint=[\"slow\"])\n", ind, k,
                            shape);
    }
}

static void part_stores(rx_sk *s, const rx_stat_list *st, const char *ind, const char *region)
{
    for (int k = 0; k < st->n; k++) {
        if (rx_argx(st->mode[k]))
            akg_buf_appendf(s->b, "%sstore(m%d -> partv%d[%s])\n%sstore(k%d -> parti%d[%s])\n", ind,
                            k, k, region, ind, k, k, region);
        else
            akg_buf_appendf(s->b, "%sstore(acc%d -> part%d[%s])\n", ind, k, k, region);
    }
}

/* The accumulators again from the partials of `region` (tiles of shape `shape`). */
static void part_combine(rx_sk *s, const rx_stat_list *st, const char *ind, const char *shape,
                         const char *region)
{
    akg_buf *b = s->b;
    for (int k = 0; k < st->n; k++) {
        const char *m = st->mode[k];
        if (rx_argx(m)) {
            akg_buf_appendf(b, "%spv = alloc(%s)\n%sload(partv%d[%s] -> pv)\n", ind, shape, ind, k,
                            region);
            akg_buf_appendf(b, "%spk = alloc(%s, dtype=i32)\n%sload(parti%d[%s] -> pk)\n", ind,
                            shape, ind, k, region);
            akg_buf_appendf(b, "%sm%d = reduce_%s(pv, axis=0)\n", ind, k, arg_extreme(m));
            akg_buf_appendf(b,
                            "%sk%d = reduce_min(where(logical_or(eq(pv, m%d), ne(pv, pv)), pk, "
                            "D), axis=0)\n",
                            ind, k, k);
            continue;
        }
        akg_buf_appendf(b, "%spt = alloc(%s)\n%sload(part%d[%s] -> pt)\n", ind, shape, ind, k,
                        region);
        akg_buf_appendf(b, "%sacc%d = %s(pt, axis=0)\n", ind, k, rx_combine_op(m));
    }
}

/* lo and hi of part p of D rows. */
static void part_bounds(rx_sk *s, const char *ind)
{
    akg_buf_appendf(s->b, "%slo = p * ceil(D, P)\n%shi = min(lo + ceil(D, P), D)\n", ind, ind);
}

/* ---------- reduce ---------- */

static void reduce_header(rx_sk *s, const rx_stat_list *st, const char *what)
{
    akg_buf *b = s->b;
    int arg = rx_argx(st->mode[0]);
    char dims[64], head[512];
    rx_dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s over %s;\n# the inputs are viewed as [O, D, I] with D the reduced run of dims "
             "(O, D, I are\n# run-time sizes: one kernel serves every shape); designed for a "
             "GPU: many programs",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    akg_buf_appendf(b, "out[O, I]: %s\n", arg ? "i64" : "f32");
    gpu_constexprs(s);
    rx_params_line(s);
    rx_bind_inputs(s);
    int keep = cJSON_GetNumberValue(cJSON_GetObjectItem(s->p, "keepdim")) != 0;
    akg_buf_puts(b, "  bind: out = output(0, [");
    int first = 1;
    for (int i = 0; i < s->rank; i++) {
        int red = i >= s->d0 && i < s->d1;
        if (red && !keep)
            continue;
        akg_buf_appendf(b, "%s", first ? "" : ", ");
        first = 0;
        if (red)
            akg_buf_puts(b, "1");
        else
            akg_buf_appendf(b, "A%d", i);
    }
    akg_buf_puts(b, "])");
    rx_bind_dim(s);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");
}

static void reduce_store(rx_sk *s, const rx_stat_list *st, const char *ind, const char *region)
{
    int arg = rx_argx(st->mode[0]);
    akg_buf_appendf(s->b, "%sstore(", ind);
    rx_reduce_result(s, st->mode[0], arg ? "k0" : "acc0");
    akg_buf_appendf(s->b, " -> out[%s])\n", region);
}

int rx_reduce_sketch_gpu(rx_sk *s, const char *what)
{
    rx_stat_list st;
    int rc = rx_read_stats(s, &st);
    if (rc)
        return rc;
    if (st.n != 1)
        return rx_fail(s, "a reduction of %d statistics", st.n);
    akg_buf *b = s->b;
    reduce_header(s, &st, what);
    const char *cols = "c:c + min(CH, I - c)";
    char region[160];

    akg_buf_puts(b, "  if I == 1:\n    if D <= 16384:\n"
                    "      # short rows: one row per program, the row in one block\n");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_whole(s, &st, "        ");
    reduce_store(s, &st, "        ", "o, 0:1");
    akg_buf_puts(b, "    elif O >= 256:\n"
                    "      # many long rows: one row per program, BLK elements at a time\n");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_chunks(s, &st, "        ", "0", "D");
    reduce_store(s, &st, "        ", "o, 0:1");
    akg_buf_puts(b, "    else:\n      # few long rows: P parts of each row, one program each; "
                    "their partials in a tile\n      # that a second launch combines\n");
    part_tiles(s, &st, "      ", "[O, P]");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for p in range(0, P):\n");
    part_bounds(s, "          ");
    row_chunks(s, &st, "          ", "lo", "hi");
    part_stores(s, &st, "          ", "o, p:p + 1");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    part_combine(s, &st, "        ", "[P]", "o, :");
    reduce_store(s, &st, "        ", "o, 0:1");

    akg_buf_puts(b, "  else:\n    if D < 512 or O * ceil(I, CH) >= 256:\n"
                    "      # CH columns of one outer row per program, the D rows BD at a time: "
                    "[BD, CH] tiles\n      # reduced along axis 0 into per-column "
                    "accumulators\n");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for c in range(0, I, CH):\n");
    column_blocks(s, &st, "          ", "0", "D");
    snprintf(region, sizeof region, "o, %s", cols);
    reduce_store(s, &st, "          ", region);
    akg_buf_puts(b, "    else:\n      # few column groups: the D rows in P parts as well, one "
                    "program per part and\n      # group; a second launch combines the parts\n");
    part_tiles(s, &st, "      ", "[O, P, I]");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for p in range(0, P):\n");
    par(s, "          ");
    akg_buf_puts(b, "          for c in range(0, I, CH):\n");
    part_bounds(s, "            ");
    column_blocks(s, &st, "            ", "lo", "hi");
    snprintf(region, sizeof region, "o, p, %s", cols);
    part_stores(s, &st, "            ", region);
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for c in range(0, I, CH):\n");
    snprintf(region, sizeof region, "o, :, %s", cols);
    part_combine(s, &st, "          ", "[P, min(CH, I - c)]", region);
    snprintf(region, sizeof region, "o, %s", cols);
    reduce_store(s, &st, "          ", region);
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}

/* ---------- rowmap ---------- */

/* Whether e reads an element of one of Model's tensors ({"p": k}). */
static int reads_param(const cJSON *e)
{
    if (!cJSON_IsObject(e))
        return 0;
    if (cJSON_GetObjectItem(e, "p"))
        return 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(e, "a")) if (reads_param(a)) return 1;
    return 0;
}

/* Model's tensors' tiles of the map over `ext` elements from `from` along D (names n_t). */
static void load_param_tiles(rx_sk *s, const char *ind, const char *ext, const char *region,
                             char names[][RX_NAME + 8])
{
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(s->b, "%s%s = alloc([%s])\n%sload(%s[%s] -> %s)\n", ind, names[k], ext, ind,
                        s->pt[k], region, names[k]);
}

/* The map of row o over [a, a + ext) in BLK pieces (`lo` the start of the run). */
static void map_chunks(rx_sk *s, const char *ind, const char *lo, const char *hi,
                       const char **ptiles, char names[][RX_NAME + 8])
{
    char in2[64], ext[128], a[128], region[400], pregion[400];
    snprintf(in2, sizeof in2, "%s  ", ind);
    if (!strcmp(lo, "0")) {
        akg_buf_appendf(s->b, "%sfor q in range(0, %s, BLK):\n", ind, hi);
        snprintf(ext, sizeof ext, "min(BLK, %s - q)", hi);
        snprintf(a, sizeof a, "q");
    } else {
        akg_buf_appendf(s->b, "%sfor q in range(0, %s - %s, BLK):\n", ind, hi, lo);
        snprintf(ext, sizeof ext, "min(BLK, %s - %s - q)", hi, lo);
        snprintf(a, sizeof a, "%s + q", lo);
    }
    snprintf(region, sizeof region, "o, %s:%s + %s, 0", a, a, ext);
    snprintf(pregion, sizeof pregion, "%s:%s + %s", a, a, ext);
    rx_load_inputs(s, in2, ext, region);
    load_param_tiles(s, in2, ext, pregion, names);
    rx_map_store(s, in2, ptiles, region);
}

int rx_rowmap_sketch_gpu(rx_sk *s, const char *what)
{
    rx_stat_list st;
    int rc = rx_read_stats(s, &st);
    if (rc)
        return rc;
    for (int k = 0; k < st.n; k++) {
        if (rx_argx(st.mode[k]))
            return rx_fail(s, "an index statistic (%s) inside an elementwise map", st.mode[k]);
        if (reads_param(st.expr[k]))
            return rx_fail(s, "a statistic of Model's tensors (the GPU writer reads only inputs)");
    }
    if (!cJSON_GetObjectItem(s->p, "out"))
        return rx_fail(s, "a row map without an output expression");
    akg_buf *b = s->b;
    char dims[64], head[512];
    rx_dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s;\n# statistics over %s, the inputs viewed as [O, D, I] with D that run of "
             "dims\n# (O, D, I are run-time sizes); designed for a GPU: many programs",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "%s[D]: f32; ", s->pt[k]);
    akg_buf_puts(b, "y[O, D, I]: f32\n");
    gpu_constexprs(s);
    rx_params_line(s);
    rx_bind_inputs(s);
    if (s->n_p) {
        char shape[160];
        int at = snprintf(shape, sizeof shape, "[");
        for (int i = s->d0; i < s->d1 && at < (int)sizeof shape - 8; i++)
            at +=
                snprintf(shape + at, sizeof shape - (size_t)at, "%sA%d", i > s->d0 ? ", " : "", i);
        snprintf(shape + at, sizeof shape - (size_t)at, "]");
        akg_buf_puts(b, "  bind: ");
        rx_bind_tensors(s, shape);
        akg_buf_puts(b, "\n");
    }
    akg_buf_puts(b, "  bind: y = output(0, ");
    rx_dims(s);
    akg_buf_puts(b, ")");
    rx_bind_dim(s);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");

    const char *ptiles[RX_MAX_P], *col_p[RX_MAX_P];
    char pw[RX_MAX_P][RX_NAME + 8], pc[RX_MAX_P][RX_NAME + 8];
    for (int k = 0; k < s->n_p; k++) {
        snprintf(pw[k], sizeof pw[k], "%s_t", s->pt[k]);
        snprintf(pc[k], sizeof pc[k], "%s_d", s->pt[k]);
        ptiles[k] = pw[k];
        col_p[k] = pc[k];
    }
    /* ---- contiguous rows ---- */
    akg_buf_puts(b, "  if I == 1:\n    if D <= 16384:\n"
                    "      # short rows: one row per program, the row in one block: its "
                    "statistics, then the map\n");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_whole(s, &st, "        ");
    rx_row_values(s, &st, "        ");
    load_param_tiles(s, "        ", "D", ":", pw);
    rx_map_store(s, "        ", ptiles, "o, :, 0");
    akg_buf_puts(b, "    elif O >= 256:\n      # many long rows: one row per program, the "
                    "statistics BLK elements at a time, then the map\n");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_chunks(s, &st, "        ", "0", "D");
    rx_row_values(s, &st, "        ");
    map_chunks(s, "        ", "0", "D", ptiles, pw);
    akg_buf_puts(b, "    else:\n      # few long rows: the statistics of P parts of each row, "
                    "one program each; a second\n      # launch combines them for each part "
                    "and maps that part\n");
    part_tiles(s, &st, "      ", "[O, P]");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for p in range(0, P):\n");
    part_bounds(s, "          ");
    row_chunks(s, &st, "          ", "lo", "hi");
    part_stores(s, &st, "          ", "o, p:p + 1");
    par(s, "      ");
    akg_buf_puts(b, "      for o in range(0, O):\n");
    par(s, "        ");
    akg_buf_puts(b, "        for p in range(0, P):\n");
    part_combine(s, &st, "          ", "[P]", "o, :");
    rx_row_values(s, &st, "          ");
    part_bounds(s, "          ");
    map_chunks(s, "          ", "lo", "hi", ptiles, pw);

    /* ---- strided ---- */
    akg_buf_puts(b, "  else:\n    # CH columns of one outer row per program: the statistics of "
                    "each column over the D rows,\n    # BD rows at a time ([BD, CH] tiles "
                    "reduced along axis 0), then the map, BD rows at a time\n");
    par(s, "    ");
    akg_buf_puts(b, "    for o in range(0, O):\n");
    par(s, "      ");
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    const char *ind = "        ";
    column_blocks(s, &st, ind, "0", "D");
    rx_row_values(s, &st, ind);
    akg_buf_appendf(b, "%sfor r in range(0, D, BD):\n", ind);
    const char *ext = "min(BD, D - r)", *region = "o, r:r + min(BD, D - r), c:c + min(CH, I - c)";
    rx_load_inputs(s, "          ", "min(BD, D - r), min(CH, I - c)", region);
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "          %s = alloc([%s, 1])\n          load(%s[r:r + %s] -> %s)\n",
                        pc[k], ext, s->pt[k], ext, pc[k]);
    rx_map_store(s, "          ", col_p, region);
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
