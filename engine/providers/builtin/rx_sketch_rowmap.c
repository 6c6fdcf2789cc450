/*
 * rx_sketch_rowmap.c: sketches of row maps ("rowmap": y = f(x, statistics of
 * x's row)) over the view [O, D, I] of the inputs, for the norm rules
 * (LayerNorm, RMSNorm, L2 normalisation, softmax written by hand).
 *
 * The design, as the sketch states it:
 *  - contiguous rows (I == 1), one row per task: the statistics in one pass of
 *    BLK blocks (f32 lanes folded into f64, as rx_sketch_stats.c reduces),
 *    the row values from them, then the map over the row;
 *  - few long rows (O small, D >= 65536): the statistics of P parts of the
 *    row in parallel, their partials combined, then the map over the parts in
 *    parallel;
 *  - strided rows (I > 1): CH columns per task, the statistics of each column
 *    over the D rows, then the map.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

/* Which statistics and row values the output expression (and the row values) read. */
static void mark_refs(const cJSON *e, int *st_used, int *rv_used)
{
    if (!cJSON_IsObject(e))
        return;
    const cJSON *v;
    if ((v = cJSON_GetObjectItem(e, "st")) && v->valuedouble >= 0 && v->valuedouble < RX_MAX_STATS)
        st_used[(int)v->valuedouble] = 1;
    if ((v = cJSON_GetObjectItem(e, "rv")) && v->valuedouble >= 0 && v->valuedouble < 16)
        rv_used[(int)v->valuedouble] = 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(e, "a")) mark_refs(a, st_used, rv_used);
}

/* st<k> (f64) from the accumulators, the row values rv<k> (f64), and the f32 forms the
 * map reads (stf<k>, rvf<k>). */
void rx_row_values(rx_sk *s, const rx_stat_list *st, const char *ind)
{
    akg_buf *b = s->b;
    for (int k = 0; k < st->n; k++) {
        char acc[16];
        snprintf(acc, sizeof acc, "acc%d", k);
        akg_buf_appendf(b, "%sst%d = ", ind, k);
        rx_finish_stat(s, st->mode[k], acc);
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
    int st_used[RX_MAX_STATS] = {0}, rv_used[16] = {0};
    mark_refs(cJSON_GetObjectItem(s->p, "out"), st_used, rv_used);
    for (int k = 0; k < st->n; k++)
        if (st_used[k])
            akg_buf_appendf(b, "%sstf%d = cast(st%d, f32)\n", ind, k, k);
    for (int k = 0; k < nrv && k < 16; k++)
        if (rv_used[k])
            akg_buf_appendf(b, "%srvf%d = cast(rv%d, f32)\n", ind, k, k);
}

void rx_map_store(rx_sk *s, const char *ind, const char **ptiles, const char *region)
{
    rx_names n = rx_tile_names();
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
    rx_stat_list st;
    int rc = rx_read_stats(s, &st);
    if (rc)
        return rc;
    for (int k = 0; k < st.n; k++)
        if (rx_argx(st.mode[k]))
            return rx_fail(s, "an index statistic (%s) inside an elementwise map", st.mode[k]);
    if (!cJSON_GetObjectItem(s->p, "out"))
        return rx_fail(s, "a row map without an output expression");
    akg_buf *b = s->b;
    char dims[64], head[512];
    rx_dims_comment(s, dims, sizeof dims);
    snprintf(head, sizeof head,
             "%s;\n# statistics over %s, the inputs viewed as [O, D, I] with D that run of "
             "dims\n# (O, D, I are run-time sizes)",
             what, dims);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "%s[D]: f32; ", s->pt[k]);
    akg_buf_puts(b, "y[O, D, I]: f32\n");
    rx_constexprs(s, 1);
    rx_params_line(s);
    rx_bind_inputs(s);
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
    rx_bind_dim(s);
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
    akg_buf_puts(b, "  if I == 1:\n    if O >= 16 or D < " RX_SPLIT_ROWS ":\n"
                    "      # contiguous rows, one per task: the statistics in one pass of BLK "
                    "blocks,\n      # then the map\n");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "      %s = alloc([D])\n      load(%s[:] -> %s)\n", pw[k], s->pt[k],
                        pw[k]);
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for o in range(0, O):\n");
    rx_row_accumulate(s, &st, "        ", "0", "D", 1);
    rx_row_values(s, &st, "        ");
    rx_load_inputs(s, "        ", "D", "o, :, 0");
    rx_map_store(s, "        ", whole_p, "o, :, 0");
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
    rx_row_accumulate(s, &st, "          ", "lo", "hi", 0);
    for (int k = 0; k < st.n; k++)
        akg_buf_appendf(b, "          store(acc%d -> part%d[p:p+1])\n", k, k);
    for (int k = 0; k < st.n; k++)
        akg_buf_appendf(b, "        acc%d = %s(part%d, axis=0)\n", k, rx_combine_op(st.mode[k]), k);
    rx_row_values(s, &st, "        ");
    rx_loop_hints(s, "        ", 1);
    akg_buf_puts(b, "        for p in range(0, P):\n"
                    "          lo = p * ceil(D, P)\n"
                    "          hi = min(lo + ceil(D, P), D)\n");
    rx_load_inputs(s, "          ", "hi - lo", "o, lo:hi, 0");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "          %s = alloc([hi - lo])\n          load(%s[lo:hi] -> %s)\n",
                        pw[k], s->pt[k], pw[k]);
    rx_map_store(s, "          ", part_p, "o, lo:hi, 0");

    /* ---- strided ---- */
    akg_buf_puts(b, "  else:\n    # CH columns per task: the statistics of each column over the "
                    "D rows, then the map\n");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    const char *ind = "        ";
    rx_names n = rx_tile_names();
    for (int k = 0; k < st.n; k++) {
        const char *m = st.mode[k];
        if (rx_m_is(m, "prod"))
            akg_buf_appendf(b, "%sacc%d = fill([min(CH, I - c)], 1.0, dtype=f64)\n", ind, k);
        else if (rx_extreme(m))
            akg_buf_appendf(b,
                            "%sacc%d = alloc([min(CH, I - c)], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_neg_inf\"])\n",
                            ind, k);
        else
            akg_buf_appendf(b,
                            "%sacc%d = alloc([min(CH, I - c)], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_zero\"])\n",
                            ind, k);
        if (rx_m_is(m, "min"))
            akg_buf_appendf(b, "%sacc%d = neg(acc%d)  # +inf\n", ind, k, k);
    }
    akg_buf_appendf(b, "%sfor d in range(0, D):\n", ind);
    rx_load_inputs(s, "          ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    for (int k = 0; k < s->n_p; k++)
        n.pt[k] = col_p[k];
    for (int k = 0; k < st.n; k++) {
        const char *m = st.mode[k];
        akg_buf_appendf(b, "          @llm_hint(\"vectorize\", \"simd\")\n          acc%d = ", k);
        if (rx_extreme(m)) {
            akg_buf_appendf(b, "%s(acc%d, cast(", m, k);
            rx_expr(s, st.expr[k], &n);
            akg_buf_puts(b, ", f64))\n");
        } else {
            akg_buf_appendf(b, "%s(acc%d, cast(", rx_m_is(m, "prod") ? "mul" : "add", k);
            rx_stat_value(s, &st, k, &n);
            akg_buf_puts(b, ", f64))\n");
        }
    }
    rx_row_values(s, &st, ind);
    akg_buf_appendf(b, "%sfor d in range(0, D):\n", ind);
    rx_load_inputs(s, "          ", "min(CH, I - c)", "o, d, c:c+min(CH, I - c)");
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "          %s = alloc([1])\n          load(%s[d:d+1] -> %s)\n", pc[k],
                        s->pt[k], pc[k]);
    rx_map_store(s, "          ", col_p, "o, d, c:c+min(CH, I - c)");
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
