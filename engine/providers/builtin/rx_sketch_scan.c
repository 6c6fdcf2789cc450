/*
 * rx_sketch_scan.c: sketches of scans (cumsum / cumprod of an elementwise
 * expression of the inputs along D, inclusive or exclusive, forward or
 * reverse) over the view [O, D, I] of the inputs.
 *
 * A scan is a running value, so the sketch says it as one: a loop along D
 * that adds each element to an f64 running value and stores it (before the
 * addition for an exclusive scan). Contiguous rows (I == 1) are scanned four
 * at a time, four independent running values, so that the dependency chain
 * of one row does not bound the speed; strided scans (I > 1) keep a running
 * value per column of a CH-column chunk, vectorised along I.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

#define SCAN_ROWS 4 /* rows scanned together (independent running values) */

int rx_scan_sketch(rx_sk *s, const char *what)
{
    akg_buf *b = s->b;
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "mode"));
    const cJSON *elem = cJSON_GetObjectItem(s->p, "elem");
    if (!mode || (strcmp(mode, "sum") && strcmp(mode, "prod")) || !elem)
        return rx_fail(s, "a scan the sketch writers do not know");
    int prod = !strcmp(mode, "prod");
    int rev = cJSON_IsTrue(cJSON_GetObjectItem(s->p, "reverse"));
    int excl = cJSON_IsTrue(cJSON_GetObjectItem(s->p, "exclusive"));
    const char *op = prod ? "mul" : "add";
    const char *pos = rev ? "D - 1 - d" : "d";
    char head[512];
    snprintf(head, sizeof head,
             "%s along dim %d;\n# the inputs are viewed as [O, D, I] with D that dim (O, D, I "
             "are run-time sizes);\n# running values in f64",
             what, s->d0);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    for (int k = 0; k < s->n_in; k++)
        akg_buf_appendf(b, "%s[O, D, I]: %s; ", s->in[k], rx_dtype(rx_input_dtype(s, k)));
    akg_buf_puts(b, "y[O, D, I]: f32\n  constexpr: CH = tune(256, 64, 1024)");
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    const char *dim_init = cJSON_GetStringValue(cJSON_GetObjectItem(dm, "from_init"));
    if (dim_init)
        akg_buf_appendf(b, ", DIM = %d",
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dm, "value")));
    akg_buf_puts(b, "\n");
    rx_params_line(s);
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
    akg_buf_puts(b, "  bind: y = output(0, ");
    rx_dims(s);
    akg_buf_puts(b, ")");
    if (dim_init)
        akg_buf_appendf(b, ", DIM = init(\"%s\")", dim_init);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");

    /* ---- contiguous rows: four running values ---- */
    akg_buf_appendf(b,
                    "  if I == 1:\n    # %d rows per task, %d independent running values "
                    "(one per row)%s\n",
                    SCAN_ROWS, SCAN_ROWS, rev ? ", from the end of the rows" : "");
    rx_loop_hints(s, "    ", 1);
    akg_buf_appendf(b, "    for o in range(0, O, %d):\n", SCAN_ROWS);
    for (int j = 0; j < SCAN_ROWS; j++) {
        if (prod)
            akg_buf_appendf(b, "      r%d = fill([1], 1.0, dtype=f64)\n", j);
        else
            akg_buf_appendf(b,
                            "      r%d = alloc([1], dtype=f64, llm_hint=[\"fastest\", "
                            "\"accumulator\", \"init_zero\"])\n",
                            j);
    }
    akg_buf_puts(b, "      for d in range(0, D):\n");
    char names[SCAN_ROWS][RX_MAX_IN][16];
    for (int j = 0; j < SCAN_ROWS; j++) {
        rx_names n;
        memset(&n, 0, sizeof n);
        n.lit32 = 1;
        for (int k = 0; k < s->n_in; k++) {
            snprintf(names[j][k], sizeof names[j][k], "u%d_%d", j, k);
            n.in[k] = names[j][k];
            akg_buf_appendf(b, "        %s = alloc([1])\n", names[j][k]);
            if (j)
                akg_buf_appendf(b, "        load(%s[o + %d, %s, 0] -> %s)\n", s->in[k], j, pos,
                                names[j][k]);
            else
                akg_buf_appendf(b, "        load(%s[o, %s, 0] -> %s)\n", s->in[k], pos,
                                names[j][k]);
        }
        char row[16];
        snprintf(row, sizeof row, j ? "o + %d" : "o", j);
        if (excl)
            akg_buf_appendf(b, "        store(cast(r%d, f32) -> y[%s, %s, 0])\n", j, row, pos);
        akg_buf_appendf(b, "        r%d = %s(r%d, cast(", j, op, j);
        rx_expr(s, elem, &n);
        akg_buf_puts(b, ", f64))\n");
        if (!excl)
            akg_buf_appendf(b, "        store(cast(r%d, f32) -> y[%s, %s, 0])\n", j, row, pos);
    }

    /* ---- strided: a running value per column ---- */
    akg_buf_puts(b, "  else:\n    # CH columns per task, a running value per column, vectorised "
                    "along I\n");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    if (prod)
        akg_buf_puts(b, "        run = fill([min(CH, I - c)], 1.0, dtype=f64)\n");
    else
        akg_buf_puts(b, "        run = alloc([min(CH, I - c)], dtype=f64, llm_hint=[\"fastest\", "
                        "\"accumulator\", \"init_zero\"])\n");
    akg_buf_puts(b, "        for d in range(0, D):\n");
    rx_names n;
    memset(&n, 0, sizeof n);
    n.lit32 = 1;
    static const char *const t[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    for (int k = 0; k < s->n_in; k++) {
        n.in[k] = t[k];
        akg_buf_appendf(b, "          t%d = alloc([min(CH, I - c)])\n", k);
        akg_buf_appendf(b, "          load(%s[o, %s, c:c+min(CH, I - c)] -> t%d)\n", s->in[k], pos,
                        k);
    }
    if (excl)
        akg_buf_appendf(b,
                        "          @llm_hint(\"vectorize\", \"simd\")\n"
                        "          store(cast(run, f32) -> y[o, %s, c:c+min(CH, I - c)])\n",
                        pos);
    akg_buf_appendf(
        b, "          @llm_hint(\"vectorize\", \"simd\")\n          run = %s(run, cast(", op);
    rx_expr(s, elem, &n);
    akg_buf_puts(b, ", f64))\n");
    if (!excl)
        akg_buf_appendf(b,
                        "          @llm_hint(\"vectorize\", \"simd\")\n"
                        "          store(cast(run, f32) -> y[o, %s, c:c+min(CH, I - c)])\n",
                        pos);
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
