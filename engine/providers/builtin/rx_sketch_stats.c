/*
 * rx_sketch_stats.c: sketches of reductions ("reduce": out[o, i] = a
 * statistic of x over D) and row maps ("rowmap": y = f(x, statistics of x's
 * row)), over the view [O, D, I] of the inputs.
 *
 * The design, as the sketch states it:
 *  - contiguous rows (I == 1), one row per task: sums and products in BLK
 *    element blocks, each block reduced in 16 f32 lanes and folded into an f64
 *    accumulator; maxima in f32; argmax/argmin as the extreme, then the first
 *    index holding it (a NaN is the extreme);
 *  - few long rows (O small, D >= 65536): each row split into P parts run in
 *    parallel, each writing its partial statistic into a "slow" tile of
 *    partials that is reduced afterwards (parallel parts never update one
 *    accumulator); a row map then runs its map over the parts in parallel too;
 *  - strided reductions (I > 1): CH columns of accumulators with the D rows
 *    streamed through them, vectorised along I; with very few outer rows
 *    (O < 4) the D rows are split into P parts instead, each accumulating a
 *    whole [I] row of partials.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

#define MAX_STATS 8
#define SPLIT_ROWS "65536" /* a row at least this long is split across cores when rows are few */

typedef struct {
    int n;
    const char *mode[MAX_STATS];
    const cJSON *expr[MAX_STATS];
} stat_list;

static int read_stats(rx_sk *s, stat_list *st)
{
    const cJSON *a = cJSON_GetObjectItem(s->p, "stats");
    st->n = cJSON_GetArraySize(a);
    if (st->n < 1 || st->n > MAX_STATS)
        return rx_fail(s, "%d statistics (1 to %d are designed)", st->n, MAX_STATS);
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

static int m_is(const char *m, const char *a)
{
    return !strcmp(m, a);
}
static int sumlike(const char *m)
{
    return m_is(m, "sum") || m_is(m, "mean") || m_is(m, "norm2");
}
static int extreme(const char *m)
{
    return m_is(m, "max") || m_is(m, "min");
}
static int argx(const char *m)
{
    return m_is(m, "argmax") || m_is(m, "argmin");
}

/* The value a statistic accumulates: its expression, squared for a 2-norm. */
static void stat_value(rx_sk *s, const stat_list *st, int k, const rx_names *n)
{
    if (m_is(st->mode[k], "norm2")) {
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
static void load_inputs(rx_sk *s, const char *ind, const char *ext, const char *region)
{
    for (int k = 0; k < s->n_in; k++)
        akg_buf_appendf(s->b, "%st%d = alloc([%s])\n%sload(%s[%s] -> t%d)\n", ind, k, ext, ind,
                        s->in[k], region, k);
}

static rx_names tile_names(void)
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
static void row_accumulate(rx_sk *s, const stat_list *st, const char *ind, const char *lo,
                           const char *hi, int whole)
{
    akg_buf *b = s->b;
    rx_names n = tile_names();
    int blocks = 0;
    for (int k = 0; k < st->n; k++) {
        if (sumlike(st->mode[k])) {
            akg_buf_appendf(b,
                            "%sacc%d = alloc([1], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_zero\"])\n",
                            ind, k);
            blocks = 1;
        } else if (m_is(st->mode[k], "prod")) {
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
        load_inputs(s, in2, ext, region);
        for (int k = 0; k < st->n; k++) {
            int prod = m_is(st->mode[k], "prod");
            if (!sumlike(st->mode[k]) && !prod)
                continue;
            akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\", 16)\n", in2);
            akg_buf_appendf(b, "%sacc%d = %s(acc%d, cast(reduce_%s(", in2, k, prod ? "mul" : "add",
                            k, prod ? "prod" : "sum");
            stat_value(s, st, k, &n);
            akg_buf_puts(b, ", axis=0), f64))\n");
        }
    }
    int spans = 0;
    for (int k = 0; k < st->n; k++)
        spans |= extreme(st->mode[k]) || argx(st->mode[k]);
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
    load_inputs(s, ind, ext, region);
    for (int k = 0; k < st->n; k++) {
        const char *m = st->mode[k];
        if (extreme(m)) {
            akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
            akg_buf_appendf(b, "%sacc%d = cast(reduce_%s(", ind, k, m);
            stat_value(s, st, k, &n);
            akg_buf_puts(b, ", axis=0), f64)\n");
        } else if (argx(m)) {
            const char *ex = m_is(m, "argmax") ? "max" : "min";
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
static void finish_stat(rx_sk *s, const char *m, const char *acc)
{
    if (m_is(m, "mean"))
        akg_buf_appendf(s->b, "div(%s, D)", acc);
    else if (m_is(m, "norm2"))
        akg_buf_appendf(s->b, "sqrt(%s)", acc);
    else
        akg_buf_puts(s->b, acc);
}

/* reduce: the output value (f32, or i64 for an index) of statistic 0 from acc0 / k0. */
static void reduce_result(rx_sk *s, const char *m, const char *acc)
{
    if (argx(m)) {
        akg_buf_appendf(s->b, "cast(%s, i64)", acc);
        return;
    }
    const char *div = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "div"));
    int batch = div && !strcmp(div, "batch");
    akg_buf_puts(s->b, "cast(");
    if (batch)
        akg_buf_puts(s->b, "div(");
    finish_stat(s, m, acc);
    if (batch)
        akg_buf_puts(s->b, ", A0)");
    akg_buf_puts(s->b, ", f32)");
}

/* The reduction that combines partials along axis 0 of a tile of them. */
static const char *combine_op(const char *m)
{
    if (m_is(m, "prod"))
        return "reduce_prod";
    if (m_is(m, "max"))
        return "reduce_max";
    if (m_is(m, "min"))
        return "reduce_min";
    return "reduce_sum";
}

static void constexprs(rx_sk *s, int with_parts)
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
static void bind_inputs(rx_sk *s)
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

static void bind_dim(rx_sk *s)
{
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    const char *fi = cJSON_GetStringValue(cJSON_GetObjectItem(dm, "from_init"));
    if (fi)
        akg_buf_appendf(s->b, ", DIM = init(\"%s\")", fi);
}

static void input_tensors(rx_sk *s)
{
    for (int k = 0; k < s->n_in; k++)
        akg_buf_appendf(s->b, "%s[O, D, I]: %s; ", s->in[k], rx_dtype(rx_input_dtype(s, k)));
}

static void dims_comment(rx_sk *s, char *out, size_t n)
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

static void reduce_columns_update(rx_sk *s, const stat_list *st, const char *ind)
{
    rx_names n = tile_names();
    const char *m = st->mode[0];
    akg_buf *b = s->b;
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    if (argx(m)) {
        akg_buf_appendf(b, "%sbetter = logical_or(%s(", ind, m_is(m, "argmax") ? "gt" : "lt");
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
    if (extreme(m)) {
        akg_buf_appendf(b, "%sacc = %s(acc, ", ind, m);
        rx_expr(s, st->expr[0], &n);
        akg_buf_puts(b, ")\n");
        return;
    }
    akg_buf_appendf(b, "%sacc = %s(acc, cast(", ind, m_is(m, "prod") ? "mul" : "add");
    stat_value(s, st, 0, &n);
    akg_buf_puts(b, ", f64))\n");
}

/* The accumulators of a strided reduction over `w` columns (before the row loop). */
static void reduce_columns_init(rx_sk *s, const stat_list *st, const char *ind, const char *w,
                                const char *tier, const char *first_row)
{
    akg_buf *b = s->b;
    const char *m = st->mode[0];
    if (argx(m)) {
        /* the first row holds the running extreme, index `first_row` */
        rx_names n = tile_names();
        char region[160];
        snprintf(region, sizeof region, "o, %s, %s", first_row,
                 !strcmp(w, "I") ? ":" : "c:c+min(CH, I - c)");
        load_inputs(s, ind, w, region);
        akg_buf_appendf(b, "%sbv = ", ind);
        rx_expr(s, st->expr[0], &n);
        /* i32 indices: the same lane width as the f32 values they follow */
        akg_buf_appendf(b, "\n%sbi = alloc([%s], dtype=i32, llm_hint=[\"%s\", \"init_zero\"])\n",
                        ind, w, tier);
        if (strcmp(first_row, "0") != 0)
            akg_buf_appendf(b, "%sbi = add(bi, %s)\n", ind, first_row);
        return;
    }
    if (m_is(m, "prod")) {
        akg_buf_appendf(b, "%sacc = fill([%s], 1.0, dtype=f64)\n", ind, w);
        return;
    }
    if (extreme(m)) {
        akg_buf_appendf(b,
                        "%sacc = alloc([%s], dtype=f32, llm_hint=[\"%s\", \"accumulator\", "
                        "\"init_neg_inf\"])\n",
                        ind, w, tier);
        if (m_is(m, "min"))
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
    stat_list st;
    int rc = read_stats(s, &st);
    if (rc)
        return rc;
    if (st.n != 1)
        return rx_fail(s, "a reduction of %d statistics", st.n);
    akg_buf *b = s->b;
    const char *m = st.mode[0];
    int arg = argx(m);
    char dims[64], head[512];
    dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s over %s;\n# the inputs are viewed as [O, D, I] with D the reduced run of dims "
             "(O, D, I are\n# run-time sizes: one kernel serves every shape)",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    input_tensors(s);
    akg_buf_appendf(b, "out[O, I]: %s\n", arg ? "i64" : "f32");
    constexprs(s, 1);
    rx_params_line(s);
    bind_inputs(s);
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
    bind_dim(s);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");

    /* ---- contiguous rows ---- */
    akg_buf_puts(b, "  if I == 1:\n    if O >= 32 or D < " SPLIT_ROWS ":\n"
                    "      # contiguous rows, one per task\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_accumulate(s, &st, "        ", "0", "D", 1);
    akg_buf_puts(b, "        store(");
    reduce_result(s, m, arg ? "k0" : "acc0");
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
    row_accumulate(s, &st, "          ", "lo", "hi", 0);
    if (arg)
        akg_buf_puts(b, "          store(m0 -> partv[p:p+1])\n"
                        "          store(k0 -> parti[p:p+1])\n");
    else
        akg_buf_puts(b, "          store(acc0 -> part[p:p+1])\n");
    if (arg) {
        akg_buf_appendf(b, "        m = reduce_%s(partv, axis=0)\n",
                        m_is(m, "argmax") ? "max" : "min");
        akg_buf_puts(b, "        k = reduce_min(where(logical_or(eq(partv, m), ne(partv, partv)), "
                        "parti, D), axis=0)\n        store(cast(k, i64) -> out[o, 0:1])\n");
    } else {
        akg_buf_appendf(b, "        acc = %s(part, axis=0)\n        store(", combine_op(m));
        reduce_result(s, m, "acc");
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
                        extreme(m) ? "f32" : "f64");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    reduce_columns_init(s, &st, "          ", "I", "fast", "lo");
    akg_buf_appendf(b, "          for d in range(%s, hi):\n", arg ? "lo + 1" : "lo");
    load_inputs(s, "            ", "I", "o, d, :");
    reduce_columns_update(s, &st, "            ");
    if (arg)
        akg_buf_puts(b, "          store(bv -> partv[p, :])\n          store(bi -> parti[p, :])\n");
    else
        akg_buf_puts(b, "          store(acc -> part[p, :])\n");
    akg_buf_puts(b, "        @llm_hint(\"vectorize\", \"simd\")\n");
    if (arg) {
        akg_buf_appendf(b, "        m = reduce_%s(partv, axis=0)\n",
                        m_is(m, "argmax") ? "max" : "min");
        akg_buf_puts(b, "        @llm_hint(\"vectorize\", \"simd\")\n"
                        "        k = reduce_min(where(logical_or(eq(partv, m), ne(partv, partv)), "
                        "parti, D), axis=0)\n        store(cast(k, i64) -> out[o:o+1, :])\n");
    } else {
        akg_buf_appendf(b, "        acc = %s(part, axis=0)\n        store(", combine_op(m));
        reduce_result(s, m, "acc");
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
    load_inputs(s, "            ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    reduce_columns_update(s, &st, "            ");
    akg_buf_puts(b, "          store(");
    reduce_result(s, m, arg ? "bi" : "acc");
    akg_buf_puts(b, " -> out[o, c:c+min(CH, I - c)])\n}\n");
    return AKG_OK;
}

/* ---------- rowmap ---------- */

/* Which statistics and row values the output expression (and the row values) read. */
static void mark_refs(const cJSON *e, int *st_used, int *rv_used)
{
    if (!cJSON_IsObject(e))
        return;
    const cJSON *v;
    if ((v = cJSON_GetObjectItem(e, "st")) && v->valuedouble >= 0 && v->valuedouble < MAX_STATS)
        st_used[(int)v->valuedouble] = 1;
    if ((v = cJSON_GetObjectItem(e, "rv")) && v->valuedouble >= 0 && v->valuedouble < 16)
        rv_used[(int)v->valuedouble] = 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(e, "a")) mark_refs(a, st_used, rv_used);
}

/* st<k> (f64) from the accumulators, the row values rv<k> (f64), and the f32 forms the
 * map reads (stf<k>, rvf<k>). */
static void row_values(rx_sk *s, const stat_list *st, const char *ind)
{
    akg_buf *b = s->b;
    for (int k = 0; k < st->n; k++) {
        char acc[16];
        snprintf(acc, sizeof acc, "acc%d", k);
        akg_buf_appendf(b, "%sst%d = ", ind, k);
        finish_stat(s, st->mode[k], acc);
        akg_buf_puts(b, "\n");
    }
    const cJSON *rvs = cJSON_GetObjectItem(s->p, "rowvals");
    int nrv = cJSON_GetArraySize(rvs);
    rx_names n;
    memset(&n, 0, sizeof n);
    n.st = "st%d";
    n.rv = "rv%d";
    for (int k = 0; k < nrv; k++) {
        akg_buf_appendf(b, "%srv%d = ", ind, k);
        rx_expr(s, cJSON_GetArrayItem(rvs, k), &n);
        akg_buf_puts(b, "\n");
    }
    int st_used[MAX_STATS] = {0}, rv_used[16] = {0};
    mark_refs(cJSON_GetObjectItem(s->p, "out"), st_used, rv_used);
    for (int k = 0; k < st->n; k++)
        if (st_used[k])
            akg_buf_appendf(b, "%sstf%d = cast(st%d, f32)\n", ind, k, k);
    for (int k = 0; k < nrv && k < 16; k++)
        if (rv_used[k])
            akg_buf_appendf(b, "%srvf%d = cast(rv%d, f32)\n", ind, k, k);
}

static void map_store(rx_sk *s, const char *ind, const char **ptiles, const char *region)
{
    rx_names n = tile_names();
    for (int k = 0; k < s->n_p; k++)
        n.pt[k] = ptiles[k];
    n.st = "stf%d";
    n.rv = "rvf%d";
    akg_buf_appendf(s->b, "%s@llm_hint(\"vectorize\", \"simd\")\n%sstore(", ind, ind);
    rx_expr(s, cJSON_GetObjectItem(s->p, "out"), &n);
    akg_buf_appendf(s->b, " -> y[%s])\n", region);
}

int rx_rowmap_sketch(rx_sk *s, const char *what)
{
    stat_list st;
    int rc = read_stats(s, &st);
    if (rc)
        return rc;
    for (int k = 0; k < st.n; k++)
        if (argx(st.mode[k]))
            return rx_fail(s, "an index statistic (%s) inside an elementwise map", st.mode[k]);
    if (!cJSON_GetObjectItem(s->p, "out"))
        return rx_fail(s, "a row map without an output expression");
    akg_buf *b = s->b;
    char dims[64], head[512];
    dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s;\n# statistics over %s, the inputs viewed as [O, D, I] with D that run of "
             "dims\n# (O, D, I are run-time sizes)",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    input_tensors(s);
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "%s[D]: f32; ", s->pt[k]);
    akg_buf_puts(b, "y[O, D, I]: f32\n");
    constexprs(s, 1);
    rx_params_line(s);
    bind_inputs(s);
    if (s->n_p) {
        /* Model's tensors run along the reduced dims */
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
    bind_dim(s);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");

    const char *whole_p[RX_MAX_P], *part_p[RX_MAX_P], *col_p[RX_MAX_P];
    char pw[RX_MAX_P][RX_NAME + 8], pc[RX_MAX_P][RX_NAME + 8];
    for (int k = 0; k < s->n_p; k++) {
        snprintf(pw[k], sizeof pw[k], "%s_t", s->pt[k]);
        snprintf(pc[k], sizeof pc[k], "%s_d", s->pt[k]);
        whole_p[k] = part_p[k] = pw[k];
        col_p[k] = pc[k];
    }
    /* ---- contiguous rows ---- */
    akg_buf_puts(b, "  if I == 1:\n    if O >= 16 or D < " SPLIT_ROWS ":\n"
                    "      # contiguous rows, one per task: the statistics in one pass of BLK "
                    "blocks,\n      # then the map\n");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "      %s = alloc([D])\n      load(%s[:] -> %s)\n", pw[k], s->pt[k],
                        pw[k]);
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    row_accumulate(s, &st, "        ", "0", "D", 1);
    row_values(s, &st, "        ");
    load_inputs(s, "        ", "D", "o, :, 0");
    map_store(s, "        ", whole_p, "o, :, 0");
    akg_buf_puts(b, "    else:\n      # few long rows: the statistics of P parts of the row in "
                    "parallel, their\n      # partials combined, then the map over the parts in "
                    "parallel\n");
    rx_loop_hints(s, "      ", 0);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    for (int k = 0; k < st.n; k++)
        akg_buf_appendf(b, "        part%d = alloc([P], dtype=f64, llm_hint=[\"slow\"])\n", k);
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    row_accumulate(s, &st, "          ", "lo", "hi", 0);
    for (int k = 0; k < st.n; k++)
        akg_buf_appendf(b, "          store(acc%d -> part%d[p:p+1])\n", k, k);
    for (int k = 0; k < st.n; k++)
        akg_buf_appendf(b, "        acc%d = %s(part%d, axis=0)\n", k, combine_op(st.mode[k]), k);
    row_values(s, &st, "        ");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    load_inputs(s, "          ", "hi - lo", "o, lo:hi, 0");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "          %s = alloc([hi - lo])\n          load(%s[lo:hi] -> %s)\n",
                        pw[k], s->pt[k], pw[k]);
    map_store(s, "          ", part_p, "o, lo:hi, 0");

    /* ---- strided ---- */
    akg_buf_puts(b, "  else:\n    # CH columns per task: the statistics of each column over the "
                    "D rows, then the map\n");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    const char *ind = "        ";
    rx_names n = tile_names();
    for (int k = 0; k < st.n; k++) {
        const char *m = st.mode[k];
        if (m_is(m, "prod"))
            akg_buf_appendf(b, "%sacc%d = fill([min(CH, I - c)], 1.0, dtype=f64)\n", ind, k);
        else if (extreme(m))
            akg_buf_appendf(b,
                            "%sacc%d = alloc([min(CH, I - c)], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_neg_inf\"])\n",
                            ind, k);
        else
            akg_buf_appendf(b,
                            "%sacc%d = alloc([min(CH, I - c)], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_zero\"])\n",
                            ind, k);
        if (m_is(m, "min"))
            akg_buf_appendf(b, "%sacc%d = neg(acc%d)  # +inf\n", ind, k, k);
    }
    akg_buf_appendf(b, "%sfor d in range(0, D):\n", ind);
    load_inputs(s, "          ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    for (int k = 0; k < s->n_p; k++)
        n.pt[k] = col_p[k];
    for (int k = 0; k < st.n; k++) {
        const char *m = st.mode[k];
        akg_buf_appendf(b, "          @llm_hint(\"vectorize\", \"simd\")\n          acc%d = ", k);
        if (extreme(m)) {
            akg_buf_appendf(b, "%s(acc%d, cast(", m, k);
            rx_expr(s, st.expr[k], &n);
            akg_buf_puts(b, ", f64))\n");
        } else {
            akg_buf_appendf(b, "%s(acc%d, cast(", m_is(m, "prod") ? "mul" : "add", k);
            stat_value(s, &st, k, &n);
            akg_buf_puts(b, ", f64))\n");
        }
    }
    row_values(s, &st, ind);
    akg_buf_appendf(b, "%sfor d in range(0, D):\n", ind);
    load_inputs(s, "          ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "          %s = alloc([1])\n          load(%s[d:d+1] -> %s)\n", pc[k],
                        s->pt[k], pc[k]);
    map_store(s, "          ", col_p, "o, d, c:c+min(CH, I - c)");
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
