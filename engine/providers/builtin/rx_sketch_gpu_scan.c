/*
 * rx_sketch_gpu_scan.c: the GPU's design of scans (cumsum / cumprod of an elementwise
 * expression of the inputs along D, inclusive or exclusive, forward or reverse) over the
 * view [O, D, I] of the inputs, for a target whose backend is "cuda".
 *
 * The CPU's design (rx_sketch_scan.c) gives each task four contiguous rows, four scalar
 * running values advanced one element at a time: on a GPU that is O / 4 programs each
 * using one lane. The sketch language has scans within a tile (`cumsum`, `cumprod`), but
 * neither GPU emitter lowers them (Triton and CUDA C refuse the calls), so a block-wise
 * scan (load BLK elements, scan them, add the carry) cannot be said yet. This design
 * streams D instead, with a vector of running values, one per independent run:
 *  - contiguous rows (I == 1): RB rows per program, their running values a vector over
 *    the rows (the loads at stride D, each row's cache line reused by the next steps);
 *  - strided (I > 1): CH columns of one outer row per program, a running value per
 *    column, the loads contiguous along I.
 * The accuracy rules are the CPU's: running values in f64, the output cast to f32 when
 * stored; an exclusive scan stores before it adds; a reverse scan walks D from its end.
 * When a GPU emitter lowers `cumsum` / `cumprod` of a tile, the contiguous rows should
 * become one program per row, BLK elements at a time with a carry.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

/* The body of one program: `ext` running values streamed along D, one step reading and
 * writing the region `region_fmt` ("%s" is the position along D). */
static void scan_stream(rx_sk *s, int prod, int excl, const char *pos, const char *ind,
                        const char *ext, const char *region_fmt)
{
    akg_buf *b = s->b;
    char region[256];
    snprintf(region, sizeof region, region_fmt, pos);
    if (prod)
        akg_buf_appendf(b, "%srun = fill([%s], 1.0, dtype=f64)\n", ind, ext);
    else
        akg_buf_appendf(b,
                        "%srun = alloc([%s], dtype=f64, llm_hint=[\"fastest\", "
                        "\"accumulator\", \"init_zero\"])\n",
                        ind, ext);
    akg_buf_appendf(b, "%sfor d in range(0, D):\n", ind);
    rx_names n;
    memset(&n, 0, sizeof n);
    n.lit32 = 1;
    static const char *const t[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    for (int k = 0; k < s->n_in; k++) {
        n.in[k] = t[k];
        akg_buf_appendf(b, "%s  t%d = alloc([%s])\n", ind, k, ext);
        akg_buf_appendf(b, "%s  load(%s[%s] -> t%d)\n", ind, s->in[k], region, k);
    }
    if (excl)
        akg_buf_appendf(b, "%s  store(cast(run, f32) -> y[%s])\n", ind, region);
    akg_buf_appendf(b, "%s  run = %s(run, cast(", ind, prod ? "mul" : "add");
    rx_expr(s, cJSON_GetObjectItem(s->p, "elem"), &n);
    akg_buf_puts(b, ", f64))\n");
    if (!excl)
        akg_buf_appendf(b, "%s  store(cast(run, f32) -> y[%s])\n", ind, region);
}

int rx_scan_sketch_gpu(rx_sk *s, const char *what)
{
    akg_buf *b = s->b;
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "mode"));
    if (!mode || (strcmp(mode, "sum") && strcmp(mode, "prod")) ||
        !cJSON_GetObjectItem(s->p, "elem"))
        return rx_fail(s, "a scan the sketch writers do not know");
    int prod = !strcmp(mode, "prod");
    int rev = cJSON_IsTrue(cJSON_GetObjectItem(s->p, "reverse"));
    int excl = cJSON_IsTrue(cJSON_GetObjectItem(s->p, "exclusive"));
    const char *pos = rev ? "D - 1 - d" : "d";
    char head[512];
    snprintf(head, sizeof head,
             "%s along dim %d on a GPU;\n# the inputs are viewed as [O, D, I] with D that dim "
             "(O, D, I are run-time sizes);\n# D is streamed with a vector of f64 running "
             "values: RB rows (I == 1) or CH columns\n# (I > 1) per program",
             what, s->d0);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    akg_buf_puts(b, "y[O, D, I]: f32\n  constexpr: RB = tune(8, 1, 32), CH = tune(256, 64, 1024)");
    const cJSON *dm = cJSON_GetObjectItem(cJSON_GetObjectItem(s->p, "dims"), "dim");
    if (cJSON_GetObjectItem(dm, "from_init"))
        akg_buf_appendf(b, ", DIM = %d",
                        (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dm, "value")));
    akg_buf_puts(b, "\n");
    rx_params_line(s);
    rx_bind_inputs(s);
    akg_buf_puts(b, "  bind: y = output(0, ");
    rx_dims(s);
    akg_buf_puts(b, ")");
    rx_bind_dim(s);
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");

    akg_buf_appendf(b,
                    "  if I == 1:\n    # RB rows per program, a running value per row (a "
                    "vector over the rows)%s\n",
                    rev ? ", from the end of the rows" : "");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O, RB):\n");
    scan_stream(s, prod, excl, pos, "      ", "min(RB, O - o)", "o:o+min(RB, O - o), %s, 0");

    akg_buf_puts(b, "  else:\n    # CH columns of one outer row per program, a running value "
                    "per column\n");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    scan_stream(s, prod, excl, pos, "        ", "min(CH, I - c)", "o, %s, c:c+min(CH, I - c)");
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
