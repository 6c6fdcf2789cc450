/*
 * designer_graph_rows.c: the graph Designer's streamed design of plain
 * statistics, the design of the reduction rules' sketches (rx_sketch_stats.c)
 * said over the op graph: sum, mean, prod, amax, amin and logsumexp of an
 * elementwise prologue over tensors of S's shape, over any set of dims, every
 * output of the reduced shape (an epilogue over the statistics may follow).
 *
 * S is read as runs of adjacent dims that are all reduced or all kept (a
 * sketch tensor is the row-major reshape of the task's, so each run is one
 * dim of the tensors as the sketch declares them). Then:
 *  - the last run reduced (rows): one task per index of the kept runs; the
 *    other reduced runs are loops, and the last run, contiguous, is read in
 *    blocks of BLK elements, each block reduced in 16 f32 lanes and folded into
 *    an f64 accumulator (extremes in the tensors' dtype); with few tasks and a
 *    long last run (O < 32, D >= 65536: a sum of everything), each task's run is
 *    split into P parts across cores instead, whose partials are combined;
 *  - the last run kept (columns): one task per index of the other kept runs
 *    and CH columns of the last, accumulators of CH lanes with every reduced
 *    index streamed through them, vectorised along the columns; with fewer than
 *    4 such tasks (a tall tensor summed over its rows) the first reduced run is
 *    split into P parts across cores, each filling a row of partial columns
 *    that are combined afterwards.
 * logsumexp takes two passes over its operand: the maximum, then the f64 sum of
 * exp(x - max). Nothing is held but the block being reduced (and P partials),
 * so a long reduced extent costs no memory and every load is contiguous.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph_reduce_int.h"
#include "graph_ops.h"
#include "rx_sketch.h"

#define MAX_STATS 8

static const char *const streamed_ops[] = {"sum",  "mean",      "prod", "amax",
                                           "amin", "logsumexp", NULL};

/* 1 for values computed from a reduction (the epilogue), into dep. */
static void mark_epilogue(const rctx *c, int *dep)
{
    const akg_graph *g = c->g;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        dep[i] = rg_is_reduction(v) || rg_is_composite(v);
        for (int k = 0; k < v->n_args && !dep[i] && !akg_graph_is_leaf(v); k++)
            if (v->args[k].kind == AKG_GRAPH_ARG_VALUE)
                dep[i] = dep[v->args[k].value];
    }
}

int rg_rows_fit(const rctx *c)
{
    const akg_graph *g = c->g;
    int dep[AKG_GRAPH_MAX_VALUES];
    if (g->n_values > AKG_GRAPH_MAX_VALUES)
        return 0;
    mark_epilogue(c, dep);
    int stats = 0;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (rg_is_tensor(c, v)) {
            if (v->rank != c->n || memcmp(v->shape, c->S, sizeof(long) * (size_t)c->n))
                return 0; /* a broadcast operand: the tile design */
            continue;
        }
        if (akg_graph_is_leaf(v) || c->view[i])
            continue;
        if (akg_graph_op_reduces(v)) {
            if (!rg_in_list(streamed_ops, v->op) || dep[v->args[0].value])
                return 0;
            stats++;
            continue;
        }
        /* the epilogue reads only statistics and numbers */
        for (int k = 0; k < v->n_args && dep[i]; k++)
            if (v->args[k].kind == AKG_GRAPH_ARG_VALUE && !dep[v->args[k].value])
                return 0;
    }
    for (int k = 0; k < c->n_out; k++)
        if (!c->red_out[k] || !dep[c->out[k]])
            return 0;
    return stats >= 1 && stats <= MAX_STATS;
}

/* ---------- the runs of S ---------- */

typedef struct {
    int n;                       /* runs */
    int lo[AKG_GRAPH_MAX_RANK];  /* first dim of run j */
    int hi[AKG_GRAPH_MAX_RANK];  /* one past its last */
    int red[AKG_GRAPH_MAX_RANK]; /* 1: reduced */
} runs;

static void read_runs(const rctx *c, runs *r)
{
    r->n = 0;
    for (int q = 0; q < c->n; q++) {
        if (r->n && r->red[r->n - 1] == c->red[q]) {
            r->hi[r->n - 1] = q + 1;
            continue;
        }
        r->lo[r->n] = q;
        r->hi[r->n] = q + 1;
        r->red[r->n] = c->red[q];
        r->n++;
    }
}

/* "A1 * A2" (wrapped in parentheses when `paren` and more than one). */
static void extent(akg_buf *b, const runs *r, int j, int paren)
{
    int many = r->hi[j] - r->lo[j] > 1;
    akg_buf_puts(b, many && paren ? "(" : "");
    for (int q = r->lo[j]; q < r->hi[j]; q++)
        akg_buf_appendf(b, "%sA%d", q > r->lo[j] ? " * " : "", q);
    akg_buf_puts(b, many && paren ? ")" : "");
}

/* ---------- the body ---------- */

typedef struct {
    rctx *c;
    akg_buf *b;
    runs r;
    int cols;      /* the last run is kept */
    const char *w; /* the lanes of an accumulator: "1" or "min(CH, I - c)" */
    int split_run; /* columns: the reduced run split into parts when tasks are few */
    int dep[AKG_GRAPH_MAX_VALUES];
} rows_ctx;

/* Marks into need the tensors and prologue values that value id reads. */
static void mark_need(const rows_ctx *s, int id, int *need)
{
    const akg_graph_value *v = &s->c->g->values[id];
    if (need[id])
        return;
    need[id] = 1;
    if (rg_is_tensor(s->c, v))
        return;
    for (int k = 0; k < v->n_args; k++)
        if (v->args[k].kind == AKG_GRAPH_ARG_VALUE)
            mark_need(s, v->args[k].value, need);
}

static void acc_init(rows_ctx *s, const char *ind, const char *name, const char *op)
{
    akg_buf *b = s->b;
    if (!strcmp(op, "prod")) {
        akg_buf_appendf(b, "%s%s = fill([%s], 1.0, dtype=f64)\n", ind, name, s->w);
    } else if (!strcmp(op, "amax") || !strcmp(op, "amin")) {
        akg_buf_appendf(b,
                        "%s%s = alloc([%s], dtype=%s, llm_hint=[\"fastest\", \"accumulator\", "
                        "\"init_neg_inf\"])\n",
                        ind, name, s->w, s->c->dt);
        if (!strcmp(op, "amin"))
            akg_buf_appendf(b, "%s%s = neg(%s)  # +inf\n", ind, name, name);
    } else {
        akg_buf_appendf(b,
                        "%s%s = alloc([%s], dtype=f64, llm_hint=[\"fastest\", \"accumulator\", "
                        "\"init_zero\"])\n",
                        ind, name, s->w);
    }
}

/* acc = acc (+) the statistic of operand a (an expression over the block's tiles). */
static void acc_update(rows_ctx *s, const char *ind, const char *acc, const char *op, const char *a)
{
    akg_buf *b = s->b;
    int ext = !strcmp(op, "amax") || !strcmp(op, "amin");
    const char *mm = !strcmp(op, "amin") ? "min" : "max";
    if (!ext && !strcmp(s->c->dt, "f32") && !s->cols)
        akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\", 16)\n", ind);
    else
        akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    if (s->cols) {
        if (ext)
            akg_buf_appendf(b, "%s%s = %s(%s, %s)\n", ind, acc, mm, acc, a);
        else
            akg_buf_appendf(b, "%s%s = %s(%s, cast(%s, f64))\n", ind, acc,
                            !strcmp(op, "prod") ? "mul" : "add", acc, a);
        return;
    }
    if (ext)
        akg_buf_appendf(b, "%s%s = %s(%s, reduce_%s(%s, axis=0))\n", ind, acc, mm, acc, mm, a);
    else if (!strcmp(op, "prod"))
        akg_buf_appendf(b, "%s%s = mul(%s, cast(reduce_prod(%s, axis=0), f64))\n", ind, acc, acc,
                        a);
    else
        akg_buf_appendf(b, "%s%s = add(%s, cast(reduce_sum(%s, axis=0), f64))\n", ind, acc, acc, a);
}

/* The accumulator of reduction v in pass `pass` (0: every statistic, a logsumexp's maximum;
 * 1: the logsumexp sums): 1 with its name and the statistic it accumulates, or 0. */
static int acc_of(const rows_ctx *s, const akg_graph_value *v, int pass, char *name, size_t len,
                  const char **kind)
{
    if (!akg_graph_op_reduces(v))
        return 0;
    int lse = !strcmp(v->op, "logsumexp");
    if (pass == 1 && !lse)
        return 0;
    if (lse)
        snprintf(name, len, pass == 0 ? "m%d" : "acc%d", v->id);
    else if (!strcmp(v->op, "amax") || !strcmp(v->op, "amin"))
        snprintf(name, len, "%s", s->c->names[v->id]);
    else
        snprintf(name, len, "acc%d", v->id);
    *kind = lse ? (pass == 0 ? "amax" : "sum") : v->op;
    return 1;
}

static void acc_inits(rows_ctx *s, const char *ind, int pass)
{
    const akg_graph *g = s->c->g;
    for (int i = 0; i < g->n_values; i++) {
        char acc[32];
        const char *kind;
        if (acc_of(s, &g->values[i], pass, acc, sizeof acc, &kind))
            acc_init(s, ind, acc, kind);
    }
}

/* One pass over the reduced extent: loops over the reduced runs, the tiles of the tensors
 * the pass reads, the prologue, the updates. split: the last run is the part [lo, hi) of
 * the task's p (rows only). */
static int stream(rows_ctx *s, int pass, const char *ind0, int split)
{
    rctx *c = s->c;
    const akg_graph *g = c->g;
    akg_buf *b = s->b;
    int need[AKG_GRAPH_MAX_VALUES];
    memset(need, 0, sizeof(int) * (size_t)g->n_values);
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!akg_graph_op_reduces(v) || (pass == 1 && strcmp(v->op, "logsumexp")))
            continue;
        mark_need(s, v->args[0].value, need);
    }
    char ind[64];
    snprintf(ind, sizeof ind, "%s", ind0);
    int last = s->r.n - 1;
    for (int j = 0; j < s->r.n; j++) {
        if (!s->r.red[j] || (!s->cols && j == last))
            continue;
        if (split && s->cols && j == s->split_run) {
            akg_buf_appendf(b, "%sfor r%d in range(lo, hi):\n", ind, j);
        } else {
            akg_buf_appendf(b, "%sfor r%d in range(0, ", ind, j);
            extent(b, &s->r, j, 0);
            akg_buf_puts(b, "):\n");
        }
        snprintf(ind + strlen(ind), sizeof ind - strlen(ind), "  ");
    }
    const char *tile = s->cols ? "min(CH, I - c)"
                       : split ? "min(BLK, hi - lo - q)"
                               : "min(BLK, D - q)";
    if (!s->cols) {
        akg_buf_appendf(b, "%sfor q in range(0, %s, BLK):\n", ind, split ? "hi - lo" : "D");
        snprintf(ind + strlen(ind), sizeof ind - strlen(ind), "  ");
    }
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!need[i] || !rg_is_tensor(c, v))
            continue;
        akg_buf_appendf(b, "%s%s = alloc([%s])\n%sload(%s[", ind, c->names[i], tile, ind,
                        c->tensor[i]);
        for (int j = 0; j < s->r.n; j++) {
            akg_buf_puts(b, j ? ", " : "");
            if (j == last && s->cols)
                akg_buf_puts(b, "c:c + min(CH, I - c)");
            else if (j == last && split && !s->cols)
                akg_buf_puts(b, "lo + q:lo + q + min(BLK, hi - lo - q)");
            else if (j == last)
                akg_buf_puts(b, "q:q + min(BLK, D - q)");
            else
                akg_buf_appendf(b, "%s%d", s->r.red[j] ? "r" : "k", j);
        }
        akg_buf_appendf(b, "] -> %s)\n", c->names[i]);
    }
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!need[i] || rg_is_tensor(c, v) || akg_graph_is_leaf(v))
            continue;
        char expr[256];
        const char *why = NULL;
        if (akg_graph_op_render(g, v, c->names, expr, sizeof expr, &why))
            return rg_decline(c, v, "%s", why);
        akg_buf_appendf(b, "%s%s = %s\n", ind, c->names[i], expr);
    }
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        char acc[32], expr[96];
        const char *kind;
        if (!acc_of(s, v, pass, acc, sizeof acc, &kind))
            continue;
        const char *a = c->names[v->args[0].value];
        if (pass == 1) {
            snprintf(expr, sizeof expr, "exp(sub(%s, m%d))", a, i);
            a = expr;
        }
        acc_update(s, ind, acc, kind, a);
    }
    return AKG_OK;
}

/* A pass split into P parts of the last run (rows) or of the first reduced run (columns),
 * run in parallel, each writing its partial statistics into a "slow" tile of partials that
 * is combined afterwards (parallel parts never update one accumulator). */
static int stream_split(rows_ctx *s, int pass, const char *ind)
{
    const akg_graph *g = s->c->g;
    akg_buf *b = s->b;
    for (int i = 0; i < g->n_values; i++) {
        char acc[32];
        const char *kind;
        if (!acc_of(s, &g->values[i], pass, acc, sizeof acc, &kind))
            continue;
        int ext = !strcmp(kind, "amax") || !strcmp(kind, "amin");
        akg_buf_appendf(b, "%spart_%s = alloc([P%s], dtype=%s, llm_hint=[\"slow\"])\n", ind, acc,
                        s->cols ? ", min(CH, I - c)" : "", ext ? s->c->dt : "f64");
    }
    akg_buf tmp;
    akg_buf_init(&tmp, 256);
    if (s->cols)
        extent(&tmp, &s->r, s->split_run, 1);
    const char *e = s->cols ? (tmp.data ? tmp.data : "1") : "D";
    akg_buf_appendf(b,
                    "%s@llm_hint(\"parallel\", \"coreidx\")\n%sfor p in range(0, P):\n"
                    "%s  lo = p * ceil(%s, P)\n%s  hi = min(lo + ceil(%s, P), %s)\n",
                    ind, ind, ind, e, ind, e, e);
    akg_buf_free(&tmp);
    char in2[64];
    snprintf(in2, sizeof in2, "%s  ", ind);
    acc_inits(s, in2, pass);
    int rc = stream(s, pass, in2, 1);
    if (rc)
        return rc;
    for (int i = 0; i < g->n_values; i++) {
        char acc[32];
        const char *kind;
        if (acc_of(s, &g->values[i], pass, acc, sizeof acc, &kind))
            akg_buf_appendf(b, "%sstore(%s -> part_%s[p%s])\n", in2, acc, acc,
                            s->cols ? ", :" : ":p + 1");
    }
    for (int i = 0; i < g->n_values; i++) {
        char acc[32];
        const char *kind;
        if (!acc_of(s, &g->values[i], pass, acc, sizeof acc, &kind))
            continue;
        const char *comb = !strcmp(kind, "amax")   ? "reduce_max"
                           : !strcmp(kind, "amin") ? "reduce_min"
                           : !strcmp(kind, "prod") ? "reduce_prod"
                                                   : "reduce_sum";
        akg_buf_appendf(b, "%s%s = %s(part_%s, axis=0%s)\n", ind, acc, comb, acc,
                        s->cols ? ", keepdim=False" : "");
    }
    return AKG_OK;
}

/* The task's indices of the kept runs (but the columns' run), from o. */
static void task_indices(rows_ctx *s, const char *ind)
{
    akg_buf *b = s->b;
    int last_kept = s->cols ? s->r.n - 1 : s->r.n;
    int later = 0;
    for (int j = last_kept - 1; j >= 0; j--) {
        if (s->r.red[j])
            continue;
        akg_buf_appendf(b, "%sk%d = o", ind, j);
        if (later) {
            akg_buf_puts(b, " // (1");
            for (int p = j + 1; p < last_kept; p++)
                if (!s->r.red[p]) {
                    akg_buf_puts(b, " * ");
                    extent(b, &s->r, p, 0);
                }
            akg_buf_puts(b, ")");
        }
        akg_buf_puts(b, " % ");
        extent(b, &s->r, j, 1);
        akg_buf_puts(b, "\n");
        later = 1;
    }
}

/* The statistics from their accumulators, the epilogue over them, the stores. */
static int finish(rows_ctx *s, const char *ind)
{
    rctx *c = s->c;
    const akg_graph *g = c->g;
    akg_buf *b = s->b;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        const char *t = c->names[i];
        if (akg_graph_op_reduces(v)) {
            if (!strcmp(v->op, "sum") || !strcmp(v->op, "prod"))
                akg_buf_appendf(b, "%s%s = cast(acc%d, %s)\n", ind, t, i, c->dt);
            else if (!strcmp(v->op, "mean"))
                akg_buf_appendf(b, "%s%s = cast(div(acc%d, NR), %s)\n", ind, t, i, c->dt);
            else if (!strcmp(v->op, "logsumexp"))
                akg_buf_appendf(b, "%s%s = add(m%d, log(cast(acc%d, %s)))\n", ind, t, i, i, c->dt);
            continue;
        }
        if (!s->dep[i] || akg_graph_is_leaf(v) || c->view[i])
            continue;
        char expr[256];
        const char *why = NULL;
        if (akg_graph_op_render(g, v, c->names, expr, sizeof expr, &why))
            return rg_decline(c, v, "%s", why);
        akg_buf_appendf(b, "%s%s = %s\n", ind, t, expr);
    }
    for (int k = 0; k < c->n_out; k++) {
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        if (s->cols)
            akg_buf_appendf(b, "%sstore(%s -> %s[o, c:c + min(CH, I - c)])\n", ind,
                            c->names[c->out[k]], rn);
        else
            akg_buf_appendf(b, "%sstore(%s -> %s[o:o + 1])\n", ind, c->names[c->out[k]], rn);
    }
    return AKG_OK;
}

static void header(rows_ctx *s, const char *name, int need_nr)
{
    rctx *c = s->c;
    akg_buf *b = s->b;
    char dims[64];
    rg_dims_text(c->red, c->n, dims, sizeof dims);
    akg_buf_appendf(b,
                    "# %s: statistics over dims [%s] of the shape [A0..A%d], streamed: the dims "
                    "are read as\n# runs of adjacent reduced or kept dims; ",
                    name, dims, c->n - 1);
    if (s->cols)
        akg_buf_puts(b, "the last run is kept, so each task takes CH columns\n# of it and "
                        "streams every reduced index through CH lanes of accumulators\n");
    else
        akg_buf_puts(b, "the last run is reduced, so each task (an index of the\n# kept runs) "
                        "reads it in BLK blocks, reduced in f32 lanes and folded into f64\n");
    akg_buf_appendf(b, "sketch %s {\n  symbols: O, %s", name, s->cols ? "I" : "D");
    if (need_nr)
        akg_buf_puts(b, ", NR");
    for (int q = 0; q < c->n; q++)
        akg_buf_appendf(b, ", A%d", q);
    rg_view_symbols(b, c);
    akg_buf_puts(b, ";\n  tensors: ");
    for (int i = 0; i < c->g->n_values; i++) {
        if (!rg_is_tensor(c, &c->g->values[i]))
            continue;
        akg_buf_appendf(b, "%s[", c->tensor[i]);
        for (int j = 0; j < s->r.n; j++) {
            akg_buf_puts(b, j ? ", " : "");
            extent(b, &s->r, j, 0);
        }
        akg_buf_appendf(b, "]: %s; ", c->dt);
    }
    for (int k = 0; k < c->n_out; k++) {
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        akg_buf_appendf(b, "%s[O%s]: %s%s", rn, s->cols ? ", I" : "", c->dt,
                        k + 1 < c->n_out ? "; " : ";\n");
    }
    akg_buf_puts(b, s->cols ? "  constexpr: CH = tune(256, 64, 1024), P = tune(8, 2, 32);\n"
                            : "  constexpr: BLK = tune(2048, 512, 8192), P = tune(8, 2, 32);\n");
    rg_bind_tensors(b, c);
    akg_buf_puts(b, "  bind: O = 1");
    for (int j = 0; j < s->r.n - (s->cols ? 1 : 0); j++)
        if (!s->r.red[j]) {
            akg_buf_puts(b, " * ");
            extent(b, &s->r, j, 0);
        }
    akg_buf_appendf(b, ", %s = ", s->cols ? "I" : "D");
    extent(b, &s->r, s->r.n - 1, 0);
    if (need_nr) {
        akg_buf_puts(b, ", NR = 1");
        for (int q = 0; q < c->n; q++)
            if (c->red[q])
                akg_buf_appendf(b, " * A%d", q);
    }
    for (int k = 0; k < c->n_out; k++) {
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        akg_buf_appendf(b, ", %s = output(%d, ", rn, k);
        rg_output_shape(b, c, k);
        akg_buf_puts(b, ")");
    }
    akg_buf_puts(b, "\n\n");
}

/* One task's reduction at ind: the accumulators, the streamed pass (and logsumexp's second
 * pass), then the results. */
static int whole_runs(rows_ctx *s, int lse, const char *ind)
{
    acc_inits(s, ind, 0);
    int rc = stream(s, 0, ind, 0);
    if (!rc && lse) {
        acc_inits(s, ind, 1);
        rc = stream(s, 1, ind, 0);
    }
    return rc ? rc : finish(s, ind);
}

/* The same with the first reduced run split into P parts across cores. */
static int split_runs(rows_ctx *s, int lse, const char *ind)
{
    int rc = stream_split(s, 0, ind);
    if (!rc && lse)
        rc = stream_split(s, 1, ind);
    return rc ? rc : finish(s, ind);
}

int rg_write_rows(rctx *c, int precise, akg_buf *b, const char *name)
{
    rows_ctx s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.b = b;
    read_runs(c, &s.r);
    s.cols = c->col >= 0;
    s.w = s.cols ? "min(CH, I - c)" : "1";
    mark_epilogue(c, s.dep);
    const akg_graph *g = c->g;
    int need_nr = 0, lse = 0;
    for (int i = 0; i < g->n_values; i++) {
        need_nr |= g->values[i].kind == AKG_GRAPH_OP && !strcmp(g->values[i].op, "mean");
        lse |= g->values[i].kind == AKG_GRAPH_OP && !strcmp(g->values[i].op, "logsumexp");
    }
    header(&s, name, need_nr);
    int rc = AKG_OK;
    if (s.cols) {
        for (int j = s.r.n - 1; j >= 0; j--)
            if (s.r.red[j])
                s.split_run = j;
        akg_buf_puts(b, "  if O * ceil(I, CH) >= 4 or ");
        extent(b, &s.r, s.split_run, 1);
        akg_buf_puts(b, " < 64:\n    # a task per index of the kept runs and CH columns\n"
                        "    @llm_hint(\"parallel\", \"coreidx\")\n");
        if (precise)
            akg_buf_puts(b, "    @llm_hint(\"math\", \"precise\")\n");
        akg_buf_puts(b, "    for o in range(0, O):\n");
        task_indices(&s, "      ");
        akg_buf_puts(b, "      @llm_hint(\"parallel\", \"coreidx\")\n"
                        "      for c in range(0, I, CH):\n");
        rc = whole_runs(&s, lse, "        ");
        if (rc)
            return rc;
        akg_buf_puts(b, "  else:\n    # few tasks: the first reduced run split into P parts across "
                        "cores, their\n    # partials written to tiles and combined afterwards\n");
        if (precise)
            akg_buf_puts(b, "    @llm_hint(\"math\", \"precise\")\n");
        akg_buf_puts(b, "    for o in range(0, O):\n");
        task_indices(&s, "      ");
        akg_buf_puts(b, "      for c in range(0, I, CH):\n");
        rc = split_runs(&s, lse, "        ");
        akg_buf_puts(b, "}\n");
        return rc;
    }
    akg_buf_puts(b, "  if O >= 32 or D < " RX_SPLIT_ROWS ":\n"
                    "    # a task per index of the kept runs\n");
    akg_buf_puts(b, "    @llm_hint(\"parallel\", \"coreidx\")\n");
    if (precise)
        akg_buf_puts(b, "    @llm_hint(\"math\", \"precise\")\n");
    akg_buf_puts(b, "    for o in range(0, O):\n");
    task_indices(&s, "      ");
    rc = whole_runs(&s, lse, "      ");
    if (rc)
        return rc;
    akg_buf_puts(b, "  else:\n    # few long runs: each split into P parts across cores, their "
                    "partials\n    # written to tiles and combined afterwards\n");
    if (precise)
        akg_buf_puts(b, "    @llm_hint(\"math\", \"precise\")\n");
    akg_buf_puts(b, "    for o in range(0, O):\n");
    task_indices(&s, "      ");
    rc = split_runs(&s, lse, "      ");
    akg_buf_puts(b, "}\n");
    return rc;
}
