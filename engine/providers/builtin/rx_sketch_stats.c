/*
 * rx_sketch_stats.c: sketches of reductions ("reduce": out[o, i] = a
 * statistic of x over D) over the view [O, D, I] of the inputs, and the
 * accumulation of row statistics that the row maps (rx_sketch_rowmap.c)
 * share.
 *
 * The design, as the sketch states it:
 *  - contiguous rows (I == 1), one row per task: sums and products in BLK
 *    element blocks, each block reduced in 16 f32 lanes and folded into an f64
 *    accumulator; maxima in f32; argmax/argmin as the extreme, then the first
 *    index holding it (a NaN is the extreme);
 *  - few long rows (O small, D >= 65536): each row split into P parts run in
 *    parallel, each writing its partial statistic into a "slow" tile of
 *    partials that is reduced afterwards (parallel parts never update one
 *    accumulator);
 *  - strided reductions (I > 1): CH columns of accumulators with the D rows
 *    streamed through them, vectorised along I; with very few outer rows
 *    (O < 4) the D rows are split into P parts instead, each accumulating a
 *    whole [I] row of partials.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

int rx_read_stats(rx_sk *s, rx_stat_list *st)
{
    const cJSON *a = cJSON_GetObjectItem(s->p, "stats");
    st->n = cJSON_GetArraySize(a);
    if (st->n < 1 || st->n > RX_MAX_STATS)
        return rx_fail(s, "%d statistics (1 to %d are designed)", st->n, RX_MAX_STATS);
    for (int k = 0; k < st->n; k++) {
        const cJSON *o = cJSON_GetArrayItem(a, k);
        st->mode[k] = cJSON_GetStringValue(cJSON_GetObjectItem(o, "mode"));
        st->expr[k] = cJSON_GetObjectItem(o, "expr");
        static const char *const known[] = {"sum", "mean",   "norm2",  "prod", "max",
                                            "min", "argmax", "argmin", NULL};
        int ok = 0;
        for (int i = 0; st->mode[k] && known[i]; i++)
            ok |= !strcmp(known[i], st->mode[k]);
        if (!ok || !st->expr[k])
            return rx_fail(s, "a statistic '%s' the sketch writers do not know",
                           st->mode[k] ? st->mode[k] : "?");
    }
    return AKG_OK;
}

int rx_m_is(const char *m, const char *a)
{
    return !strcmp(m, a);
}
int rx_sumlike(const char *m)
{
    return rx_m_is(m, "sum") || rx_m_is(m, "mean") || rx_m_is(m, "norm2");
}
int rx_extreme(const char *m)
{
    return rx_m_is(m, "max") || rx_m_is(m, "min");
}
int rx_argx(const char *m)
{
    return rx_m_is(m, "argmax") || rx_m_is(m, "argmin");
}

/* The value a statistic accumulates: its expression, squared for a 2-norm. */
void rx_stat_value(rx_sk *s, const rx_stat_list *st, int k, const rx_names *n)
{
    if (rx_m_is(st->mode[k], "norm2")) {
        akg_buf_puts(s->b, "mul(");
        rx_expr(s, st->expr[k], n);
        akg_buf_puts(s->b, ", ");
        rx_expr(s, st->expr[k], n);
        akg_buf_puts(s->b, ")");
        return;
    }
    rx_expr(s, st->expr[k], n);
}

/* t<k> = alloc([ext]); load(IN_k[region] -> t<k>) for every input. */
void rx_load_inputs(rx_sk *s, const char *ind, const char *ext, const char *region)
{
    for (int k = 0; k < s->n_in; k++)
        akg_buf_appendf(s->b, "%st%d = alloc([%s])\n%sload(%s[%s] -> t%d)\n", ind, k, ext, ind,
                        s->in[k], region, k);
}

rx_names rx_tile_names(void)
{
    static const char *const t[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    rx_names n;
    memset(&n, 0, sizeof n);
    for (int k = 0; k < RX_MAX_IN; k++)
        n.in[k] = t[k];
    n.lit32 = 1;
    return n;
}

/* The accumulators acc<k> of the statistics over the contiguous run [lo, hi) of row o
 * (rows view x[o, :, 0]), all in one pass of BLK blocks; extremes and arg-extremes over
 * the whole run. `whole`: the run is the row. Leaves f64 [1] tiles acc<k> (for argmax
 * and argmin: m<k>, the extreme, and k<k>, its first index). */
void rx_row_accumulate(rx_sk *s, const rx_stat_list *st, const char *ind, const char *lo,
                       const char *hi, int whole)
{
    akg_buf *b = s->b;
    rx_names n = rx_tile_names();
    int blocks = 0;
    for (int k = 0; k < st->n; k++) {
        if (rx_sumlike(st->mode[k])) {
            akg_buf_appendf(b,
                            "%sacc%d = alloc([1], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_zero\"])\n",
                            ind, k);
            blocks = 1;
        } else if (rx_m_is(st->mode[k], "prod")) {
            akg_buf_appendf(b, "%sacc%d = fill([1], 1.0, dtype=f64)\n", ind, k);
            blocks = 1;
        }
    }
    if (blocks) {
        /* blocks at offsets q from lo (a loop from 0: its indices are known not to be
         * negative, which keeps the block loops free of sign tests) */
        char in2[64], ext[96], region[160];
        snprintf(in2, sizeof in2, "%s  ", ind);
        if (whole) {
            akg_buf_appendf(b, "%sfor q in range(0, %s, BLK):\n", ind, hi);
            snprintf(ext, sizeof ext, "min(BLK, %s - q)", hi);
            snprintf(region, sizeof region, "o, q:q+min(BLK, %s - q), 0", hi);
        } else {
            akg_buf_appendf(b, "%sfor q in range(0, %s - %s, BLK):\n", ind, hi, lo);
            snprintf(ext, sizeof ext, "min(BLK, %s - %s - q)", hi, lo);
            snprintf(region, sizeof region, "o, %s + q:%s + q + min(BLK, %s - %s - q), 0", lo, lo,
                     hi, lo);
        }
        rx_load_inputs(s, in2, ext, region);
        for (int k = 0; k < st->n; k++) {
            int prod = rx_m_is(st->mode[k], "prod");
            if (!rx_sumlike(st->mode[k]) && !prod)
                continue;
            akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\", 16)\n", in2);
            akg_buf_appendf(b, "%sacc%d = %s(acc%d, cast(reduce_%s(", in2, k, prod ? "mul" : "add",
                            k, prod ? "prod" : "sum");
            rx_stat_value(s, st, k, &n);
            akg_buf_puts(b, ", axis=0), f64))\n");
        }
    }
    int spans = 0;
    for (int k = 0; k < st->n; k++)
        spans |= rx_extreme(st->mode[k]) || rx_argx(st->mode[k]);
    if (!spans)
        return;
    char ext[96], region[160];
    if (whole) {
        snprintf(ext, sizeof ext, "D");
        snprintf(region, sizeof region, "o, :, 0");
    } else {
        snprintf(ext, sizeof ext, "%s - %s", hi, lo);
        snprintf(region, sizeof region, "o, %s:%s, 0", lo, hi);
    }
    rx_load_inputs(s, ind, ext, region);
    for (int k = 0; k < st->n; k++) {
        const char *m = st->mode[k];
        if (rx_extreme(m)) {
            akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
            akg_buf_appendf(b, "%sacc%d = cast(reduce_%s(", ind, k, m);
            rx_stat_value(s, st, k, &n);
            akg_buf_puts(b, ", axis=0), f64)\n");
        } else if (rx_argx(m)) {
            const char *ex = rx_m_is(m, "argmax") ? "max" : "min";
            akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n%sm%d = reduce_%s(", ind, ind,
                            k, ex);
            rx_expr(s, st->expr[k], &n);
            akg_buf_puts(b, ", axis=0)\n");
            akg_buf_appendf(b, "%s# the first index holding the extreme (a NaN is the extreme)\n",
                            ind);
            akg_buf_appendf(b,
                            "%s@llm_hint(\"vectorize\", \"simd\")\n%sk%d = reduce_min(where("
                            "logical_or(eq(",
                            ind, ind, k);
            rx_expr(s, st->expr[k], &n);
            akg_buf_appendf(b, ", m%d), ne(", k);
            rx_expr(s, st->expr[k], &n);
            akg_buf_puts(b, ", ");
            rx_expr(s, st->expr[k], &n);
            if (whole)
                akg_buf_puts(b, ")), arange(0, D), D), axis=0)\n");
            else
                akg_buf_appendf(b, ")), arange(%s, %s), D), axis=0)\n", lo, hi);
        }
    }
}

/* The statistic's value from its accumulator (f64): mean divides by D, a 2-norm is a
 * square root. */
void rx_finish_stat(rx_sk *s, const char *m, const char *acc)
{
    if (rx_m_is(m, "mean"))
        akg_buf_appendf(s->b, "div(%s, D)", acc);
    else if (rx_m_is(m, "norm2"))
        akg_buf_appendf(s->b, "sqrt(%s)", acc);
    else
        akg_buf_puts(s->b, acc);
}

/* reduce: the output value (f32, or i64 for an index) of statistic 0 from acc0 / k0. */
void rx_reduce_result(rx_sk *s, const char *m, const char *acc)
{
    if (rx_argx(m)) {
        akg_buf_appendf(s->b, "cast(%s, i64)", acc);
        return;
    }
    const char *div = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "div"));
    int batch = div && !strcmp(div, "batch");
    akg_buf_puts(s->b, "cast(");
    if (batch)
        akg_buf_puts(s->b, "div(");
    rx_finish_stat(s, m, acc);
    if (batch)
        akg_buf_puts(s->b, ", A0)");
    akg_buf_puts(s->b, ", f32)");
}

/* The reduction that combines partials along axis 0 of a tile of them. */
const char *rx_combine_op(const char *m)
{
    if (rx_m_is(m, "prod"))
        return "reduce_prod";
    if (rx_m_is(m, "max"))
        return "reduce_max";
    if (rx_m_is(m, "min"))
        return "reduce_min";
    return "reduce_sum";
}

void rx_constexprs(rx_sk *s, int with_parts)
{
    akg_buf_puts(s->b, "  constexpr: BLK = tune(2048, 512, 8192), CH = tune(256, 64, 1024)");
    if (with_parts)
        akg_buf_puts(s->b, ", P = tune(8, 2, 32)");
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    if (cJSON_GetObjectItem(dm, "from_init"))
        akg_buf_appendf(s->b, ", DIM = %d",
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dm, "value")));
    akg_buf_puts(s->b, "\n");
}

/* bind: the inputs (each of the first's shape) and O, D, I. */
void rx_bind_inputs(rx_sk *s)
{
    akg_buf *b = s->b;
    akg_buf_appendf(b, "  bind: %s = input(\"%s\", ", s->in[0],
                    s->ref->forward_params[rx_input_index(s, 0)].name);
    rx_dims(s);
    akg_buf_puts(b, "), O = ");
    rx_prod(s, 0, s->d0);
    akg_buf_puts(b, ", D = ");
    rx_prod(s, s->d0, s->d1);
    akg_buf_puts(b, ", I = ");
    rx_prod(s, s->d1, s->rank);
    akg_buf_puts(b, "\n");
    for (int k = 1; k < s->n_in; k++) {
        akg_buf_appendf(b, "  bind: %s = input(\"%s\", ", s->in[k],
                        s->ref->forward_params[rx_input_index(s, k)].name);
        rx_dims(s);
        akg_buf_puts(b, ")\n");
    }
}

void rx_bind_dim(rx_sk *s)
{
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    const char *fi = cJSON_GetStringValue(cJSON_GetObjectItem(dm, "from_init"));
    if (fi)
        akg_buf_appendf(s->b, ", DIM = init(\"%s\")", fi);
}

void rx_input_tensors(rx_sk *s)
{
    for (int k = 0; k < s->n_in; k++)
        akg_buf_appendf(s->b, "%s[O, D, I]: %s; ", s->in[k], rx_dtype(rx_input_dtype(s, k)));
}

void rx_dims_comment(rx_sk *s, char *out, size_t n)
{
    const cJSON *dims = cJSON_GetObjectItem(s->p, "dims");
    if (!dims || cJSON_GetObjectItem(dims, "all"))
        snprintf(out, n, "all dims");
    else if (s->d1 - s->d0 > 1)
        snprintf(out, n, "dims %d..%d", s->d0, s->d1 - 1);
    else
        snprintf(out, n, "dim %d", s->d0);
}

/* ---------- reduce ---------- */

static void reduce_columns_update(rx_sk *s, const rx_stat_list *st, const char *ind)
{
    rx_names n = rx_tile_names();
    const char *m = st->mode[0];
    akg_buf *b = s->b;
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    if (rx_argx(m)) {
        akg_buf_appendf(b, "%sbetter = logical_or(%s(", ind, rx_m_is(m, "argmax") ? "gt" : "lt");
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, ", bv), logical_and(ne(");
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, ", ");
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, "), eq(bv, bv)))\n");
        akg_buf_appendf(b, "%sbi = where(better, d, bi)\n%sbv = where(better, ", ind, ind);
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, ", bv)\n");
        return;
    }
    if (rx_extreme(m)) {
        akg_buf_appendf(b, "%sacc = %s(acc, ", ind, m);
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, ")\n");
        return;
    }
    akg_buf_appendf(b, "%sacc = %s(acc, cast(", ind, rx_m_is(m, "prod") ? "mul" : "add");
    rx_stat_value(s, st, 0, &n);
    akg_buf_puts(b, ", f64))\n");
}

/* The accumulators of a strided reduction over `w` columns (before the row loop). */
static void reduce_columns_init(rx_sk *s, const rx_stat_list *st, const char *ind, const char *w,
                                const char *tier, const char *first_row)
{
    akg_buf *b = s->b;
    const char *m = st->mode[0];
    if (rx_argx(m)) {
        /* the first row holds the running extreme, index `first_row` */
        rx_names n = rx_tile_names();
        char region[160];
        snprintf(region, sizeof region, "o, %s, %s", first_row,
                 !strcmp(w, "I") ? ":" : "c:c+min(CH, I - c)");
        rx_load_inputs(s, ind, w, region);
        akg_buf_appendf(b, "%sbv = ", ind);
        rx_expr(s, st->expr[0], &n);
        /* i32 indices: the same lane width as the f32 values they follow */
        akg_buf_appendf(b, "\n%sbi = alloc([%s], dtype=i32, llm_hint=[\"%s\", \"init_zero\"])\n",
                        ind, w, tier);
        if (strcmp(first_row, "0") != 0)
            akg_buf_appendf(b, "%sbi = add(bi, %s)\n", ind, first_row);
        return;
    }
    if (rx_m_is(m, "prod")) {
        akg_buf_appendf(b, "%sacc = fill([%s], 1.0, dtype=f64)\n", ind, w);
        return;
    }
    if (rx_extreme(m)) {
        akg_buf_appendf(b,
                        "%sacc = alloc([%s], dtype=f32, llm_hint=[\"%s\", \"accumulator\", "
                        "\"init_neg_inf\"])\n",
                        ind, w, tier);
        if (rx_m_is(m, "min"))
            akg_buf_appendf(b, "%sacc = neg(acc)  # +inf\n", ind);
        return;
    }
    akg_buf_appendf(b,
                    "%sacc = alloc([%s], dtype=f64, llm_hint=[\"%s\", \"accumulator\", "
                    "\"init_zero\"])\n",
                    ind, w, tier);
}

int rx_reduce_sketch(rx_sk *s, const char *what)
{
    rx_stat_list st;
    int rc = rx_read_stats(s, &st);
    if (rc)
        return rc;
    if (st.n != 1)
        return rx_fail(s, "a reduction of %d statistics", st.n);
    akg_buf *b = s->b;
    const char *m = st.mode[0];
    int arg = rx_argx(m);
    char dims[64], head[512];
    rx_dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s over %s;\n# the inputs are viewed as [O, D, I] with D the reduced run of dims "
             "(O, D, I are\n# run-time sizes: one kernel serves every shape)",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    akg_buf_appendf(b, "out[O, I]: %s\n", arg ? "i64" : "f32");
    rx_constexprs(s, 1);
    rx_params_line(s);
    rx_bind_inputs(s);
    /* the output's shape: the input's without (or with unit) reduced dims */
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

    /* ---- contiguous rows ---- */
    akg_buf_puts(b, "  if I == 1:\n    if O >= 32 or D < " RX_SPLIT_ROWS ":\n"
                    "      # contiguous rows, one per task\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    rx_row_accumulate(s, &st, "        ", "0", "D", 1);
    akg_buf_puts(b, "        store(");
    rx_reduce_result(s, m, arg ? "k0" : "acc0");
    akg_buf_puts(b, " -> out[o, 0:1])\n");
    akg_buf_puts(b, "    else:\n      # few long rows: each row split into P parts across cores, "
                    "their partials\n      # written to a tile and combined afterwards\n");
    rx_loop_hints(s, "      ", 0);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    if (arg)
        akg_buf_puts(b, "        partv = alloc([P], dtype=f32, llm_hint=[\"slow\"])\n"
                        "        parti = alloc([P], dtype=i32, llm_hint=[\"slow\"])\n");
    else
        akg_buf_puts(b, "        part = alloc([P], dtype=f64, llm_hint=[\"slow\"])\n");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    rx_row_accumulate(s, &st, "          ", "lo", "hi", 0);
    if (arg)
        akg_buf_puts(b, "          store(m0 -> partv[p:p+1])\n"
                        "          store(k0 -> parti[p:p+1])\n");
    else
        akg_buf_puts(b, "          store(acc0 -> part[p:p+1])\n");
    if (arg) {
        akg_buf_appendf(b, "        m = reduce_%s(partv, axis=0)\n",
                        rx_m_is(m, "argmax") ? "max" : "min");
        akg_buf_puts(b, "        k = reduce_min(where(logical_or(eq(partv, m), ne(partv, partv)), "
                        "parti, D), axis=0)\n        store(cast(k, i64) -> out[o, 0:1])\n");
    } else {
        akg_buf_appendf(b, "        acc = %s(part, axis=0)\n        store(", rx_combine_op(m));
        rx_reduce_result(s, m, "acc");
        akg_buf_puts(b, " -> out[o, 0:1])\n");
    }

    /* ---- strided ---- */
    akg_buf_puts(b, "  else:\n    if O < 4 and D >= 64:\n"
                    "      # few outer rows: the D rows split into P parts across cores, each "
                    "accumulating\n      # whole rows of I partials; the parts are combined "
                    "afterwards\n");
    rx_loop_hints(s, "      ", 0);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    if (arg)
        akg_buf_puts(b, "        partv = alloc([P, I], dtype=f32, llm_hint=[\"slow\"])\n"
                        "        parti = alloc([P, I], dtype=i32, llm_hint=[\"slow\"])\n");
    else
        akg_buf_appendf(b, "        part = alloc([P, I], dtype=%s, llm_hint=[\"slow\"])\n",
                        rx_extreme(m) ? "f32" : "f64");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    reduce_columns_init(s, &st, "          ", "I", "fast", "lo");
    akg_buf_appendf(b, "          for d in range(%s, hi):\n", arg ? "lo + 1" : "lo");
    rx_load_inputs(s, "            ", "I", "o, d, :");
    reduce_columns_update(s, &st, "            ");
    if (arg)
        akg_buf_puts(b, "          store(bv -> partv[p, :])\n          store(bi -> parti[p, :])\n");
    else
        akg_buf_puts(b, "          store(acc -> part[p, :])\n");
    akg_buf_puts(b, "        @llm_hint(\"vectorize\", \"simd\")\n");
    if (arg) {
        akg_buf_appendf(b, "        m = reduce_%s(partv, axis=0)\n",
                        rx_m_is(m, "argmax") ? "max" : "min");
        akg_buf_puts(b, "        @llm_hint(\"vectorize\", \"simd\")\n"
                        "        k = reduce_min(where(logical_or(eq(partv, m), ne(partv, partv)), "
                        "parti, D), axis=0)\n        store(cast(k, i64) -> out[o:o+1, :])\n");
    } else {
        akg_buf_appendf(b, "        acc = %s(part, axis=0)\n        store(", rx_combine_op(m));
        rx_reduce_result(s, m, "acc");
        akg_buf_puts(b, " -> out[o:o+1, :])\n");
    }
    akg_buf_puts(b, "    else:\n      # CH columns of accumulators per task, the D rows streamed "
                    "through them\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for c in range(0, I, CH):\n");
    reduce_columns_init(s, &st, "          ", "min(CH, I - c)", "fastest", "0");
    akg_buf_appendf(b, "          for d in range(%s, D):\n", arg ? "1" : "0");
    rx_load_inputs(s, "            ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    reduce_columns_update(s, &st, "            ");
    akg_buf_puts(b, "          store(");
    rx_reduce_result(s, m, arg ? "bi" : "acc");
    akg_buf_puts(b, " -> out[o, c:c+min(CH, I - c)])\n}\n");
    return AKG_OK;
}
