/*
 * rules_reduction_sketch.c: the Unified Sketch text of the shared designs
 * of the reduction, norm, scan and loss rules: [O, D, I] views, tunables
 * ROWS / CH / LANES (the first candidate is the choice), parallel rows,
 * vectorised computation, f64 accumulators where sums need them.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "rules_reduction_core.h"

static const char *input_name(const akg_reference *ref, const cJSON *params, int k)
{
    int fi =
        (int)cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(params, "inputs"), k));
    return fi >= 0 && (size_t)fi < ref->n_forward_params ? ref->forward_params[fi].name : "x";
}

static const char *sketch_dtype(const char *dt)
{
    if (!dt || !strcmp(dt, "float32"))
        return "f32";
    if (!strcmp(dt, "int64"))
        return "i64";
    if (!strcmp(dt, "bool"))
        return "bool";
    return "f32";
}

void akg_rx_sketch_head(akg_buf *b, const akg_design *d, const akg_reference *ref, const char *what,
                        const char *in_shape, const char *out_decl)
{
    const cJSON *p = d->params;
    char dims[96];
    akg_rx_dims_text(p, dims, sizeof dims);
    akg_buf_appendf(b,
                    "# %s: %s over %s; inputs viewed as [O, D, I] with D the reduced run of dims\n",
                    d->op_name, what, dims);
    akg_buf_puts(b, "# (O, D, I are run-time sizes: one kernel serves every shape)\n");
    akg_buf_appendf(b, "sketch %s {\n  symbols: O, D, I;\n  tensors: ", d->op_name);
    int nin = cJSON_GetArraySize(cJSON_GetObjectItem(p, "inputs"));
    for (int k = 0; k < nin; k++)
        akg_buf_appendf(b, "%s%s: %s; ", input_name(ref, p, k), k == 0 ? in_shape : in_shape,
                        sketch_dtype(cJSON_GetStringValue(
                            cJSON_GetArrayItem(cJSON_GetObjectItem(p, "input_dtypes"), k))));
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(p, "tensors"))
        akg_buf_appendf(b, "%s[D]: f32; ", cJSON_GetStringValue(cJSON_GetObjectItem(t, "name")));
    akg_buf_appendf(b, "%s\n", out_decl);
    long rows = d->rows > 0 ? d->rows : 4, ch = d->block > 0 ? d->block : 256;
    akg_buf_appendf(
        b, "  constexpr: ROWS = tune(%ld%s), CH = tune(%ld%s), LANES = tune(16, 8, 32)\n", rows,
        rows == 4 ? ", 1, 16" : ", 4, 16", ch, ch == 256 ? ", 64, 1024" : ", 256, 1024");
    akg_rx_sketch_params(b, p);
    akg_buf_puts(b, "\n");
}

static const char *tiles[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};

static void sketch_loads(akg_buf *b, const akg_design *d, const akg_reference *ref,
                         const char *indent, const char *tile, const char *region)
{
    int nin = cJSON_GetArraySize(cJSON_GetObjectItem(d->params, "inputs"));
    for (int k = 0; k < nin && k < 8; k++) {
        akg_buf_appendf(b, "%s%s = alloc(%s, llm_hint=[\"fast\"])\n", indent, tiles[k], tile);
        akg_buf_appendf(b, "%sload(%s%s -> %s)\n", indent, input_name(ref, d->params, k), region,
                        tiles[k]);
    }
}

static void sketch_stat(akg_buf *b, const cJSON *params, int k, const char *axis)
{
    const cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(params, "stats"), k);
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(st, "mode"));
    const cJSON *e = cJSON_GetObjectItem(st, "expr");
    if (!strcmp(m, "norm2")) {
        akg_buf_puts(b, "sqrt(reduce_sum(mul(");
        akg_rx_sketch_expr(b, params, e, tiles);
        akg_buf_puts(b, ", ");
        akg_rx_sketch_expr(b, params, e, tiles);
        akg_buf_appendf(b, "), axis=%s))", axis);
        return;
    }
    if (!strcmp(m, "argmax") || !strcmp(m, "argmin"))
        akg_buf_appendf(b, "%s(", m);
    else
        akg_buf_appendf(b, "reduce_%s(", m);
    akg_rx_sketch_expr(b, params, e, tiles);
    akg_buf_appendf(b, ", axis=%s)", axis);
}

char *akg_rx_reduce_sketch(const akg_design *d, const akg_reference *ref, const char *what)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    const cJSON *p = d->params;
    const char *m = cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stats"), 0), "mode"));
    int arg = m && (!strcmp(m, "argmax") || !strcmp(m, "argmin"));
    const char *odt = arg ? "i64" : "f32";
    char out_decl[64];
    snprintf(out_decl, sizeof out_decl, "out[O, I]: %s;", odt);
    akg_rx_sketch_head(&b, d, ref, what, "[O, D, I]", out_decl);
    akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n  for o in range(0, O, ROWS):\n"
                     "    for c in range(0, I, CH):\n");
    if (arg) {
        sketch_loads(&b, d, ref, "      ", "[ROWS, D, CH]", "[o:o+ROWS, :, c:c+CH]");
        akg_buf_puts(&b, "      @llm_hint(\"vectorize\", \"simd\")\n      r = ");
        sketch_stat(&b, p, 0, "1, keepdim=False");
        akg_buf_puts(&b, "\n      store(cast(r, i64) -> out[o:o+ROWS, c:c+CH])\n}\n");
        return akg_buf_steal(&b);
    }
    int fl = !strcmp(m, "max") || !strcmp(m, "min");
    akg_buf_appendf(&b,
                    "      acc = alloc([ROWS, CH], dtype=%s, llm_hint=[\"fastest\", "
                    "\"accumulator\", \"%s\"])\n",
                    fl ? "f32" : "f64",
                    fl ? (!strcmp(m, "max") ? "init_neg_inf" : "reuse") : "init_zero");
    akg_buf_puts(&b, "      for d in range(0, D, LANES):\n");
    sketch_loads(&b, d, ref, "        ", "[ROWS, LANES, CH]", "[o:o+ROWS, d:d+LANES, c:c+CH]");
    akg_buf_puts(&b, "        @llm_hint(\"vectorize\", \"simd\")\n        part = ");
    const char *sm = !strcmp(m, "mean") ? "sum" : !strcmp(m, "norm2") ? "sum" : m;
    char saved[16];
    snprintf(saved, sizeof saved, "%s", m);
    cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "stats"), 0);
    /* the partial over LANES; mean and norm finish after the loop */
    akg_buf_appendf(&b, "reduce_%s(", sm);
    if (!strcmp(saved, "norm2")) {
        akg_buf_puts(&b, "mul(");
        akg_rx_sketch_expr(&b, p, cJSON_GetObjectItem(st, "expr"), tiles);
        akg_buf_puts(&b, ", ");
        akg_rx_sketch_expr(&b, p, cJSON_GetObjectItem(st, "expr"), tiles);
        akg_buf_puts(&b, ")");
    } else {
        akg_rx_sketch_expr(&b, p, cJSON_GetObjectItem(st, "expr"), tiles);
    }
    akg_buf_puts(&b, ", axis=1, keepdim=False)\n");
    if (fl)
        akg_buf_appendf(&b, "        acc = %s(acc, part)\n", sm);
    else if (!strcmp(sm, "prod"))
        akg_buf_puts(&b, "        acc = mul(acc, cast(part, f64))\n");
    else
        akg_buf_puts(&b, "        acc = add(acc, cast(part, f64))\n");
    const char *div = cJSON_GetStringValue(cJSON_GetObjectItem(p, "div"));
    if (!strcmp(saved, "mean"))
        akg_buf_puts(&b, "      res = cast(div(acc, D), f32)\n");
    else if (!strcmp(saved, "norm2"))
        akg_buf_puts(&b, "      res = cast(sqrt(acc), f32)\n");
    else if (div && !strcmp(div, "batch"))
        akg_buf_puts(&b, "      res = cast(div(acc, O), f32)  # batchmean: by the first dim\n");
    else
        akg_buf_appendf(&b, "      res = %s\n", fl ? "acc" : "cast(acc, f32)");
    akg_buf_puts(&b, "      store(res -> out[o:o+ROWS, c:c+CH])\n}\n");
    return akg_buf_steal(&b);
}

char *akg_rx_rowmap_sketch(const akg_design *d, const akg_reference *ref, const char *what)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    const cJSON *p = d->params;
    akg_rx_sketch_head(&b, d, ref, what, "[O, D, I]", "out[O, D, I]: f32;");
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(p, "tensors"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(t, "name"));
        akg_buf_appendf(&b, "  %s_t = alloc([D, 1], llm_hint=[\"fast\", \"reuse\"])\n", n);
        akg_buf_appendf(&b, "  load(%s[:] -> %s_t)\n", n, n);
    }
    akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n  for o in range(0, O, ROWS):\n"
                     "    for c in range(0, I, CH):\n");
    sketch_loads(&b, d, ref, "      ", "[ROWS, D, CH]", "[o:o+ROWS, :, c:c+CH]");
    int ns = cJSON_GetArraySize(cJSON_GetObjectItem(p, "stats"));
    for (int k = 0; k < ns; k++) {
        akg_buf_appendf(&b, "      st%d = ", k);
        sketch_stat(&b, p, k, "1");
        akg_buf_puts(&b, "\n");
    }
    int nr = cJSON_GetArraySize(cJSON_GetObjectItem(p, "rowvals"));
    for (int k = 0; k < nr; k++) {
        akg_buf_appendf(&b, "      rv%d = ", k);
        akg_rx_sketch_expr(&b, p, cJSON_GetArrayItem(cJSON_GetObjectItem(p, "rowvals"), k), tiles);
        akg_buf_puts(&b, "\n");
    }
    akg_buf_puts(&b, "      @llm_hint(\"vectorize\", \"simd\")\n      r = ");
    akg_rx_sketch_expr(&b, p, cJSON_GetObjectItem(p, "out"), tiles);
    akg_buf_puts(&b, "\n      store(r -> out[o:o+ROWS, :, c:c+CH])\n}\n");
    return akg_buf_steal(&b);
}
