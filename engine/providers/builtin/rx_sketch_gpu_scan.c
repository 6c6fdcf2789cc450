/*
 * rx_sketch_gpu_scan.c: the GPU's design of scans (cumsum / cumprod of an elementwise
 * expression of the inputs along D, inclusive or exclusive, forward or reverse) over the
 * view [O, D, I] of the inputs, for a target whose backend is "cuda".
 *
 * The CPU's design (rx_sketch_scan.c) gives each task four contiguous rows, four scalar
 * running values advanced one element at a time: on a GPU that is O / 4 programs each
 * using one lane. This design scans tiles instead:
 *  - contiguous rows (I == 1): one program per row, D walked in chunks of BLK elements:
 *    the chunk loaded (contiguous, so coalesced), cast to f64, scanned within the tile
 *    (`cumsum` / `cumprod`, the emitters' block scans), combined with the f64 carry of the
 *    chunks before, stored as f32; the carry then takes the chunk's total. A reverse scan
 *    walks the chunks from the end of the row and scans each in reverse; an exclusive scan
 *    scans each chunk exclusively (the carry holds everything before the chunk);
 *  - strided (I > 1): CH columns of one outer row per program, D walked in chunks of BD
 *    rows: a [BD, CH] tile (its rows contiguous along I) scanned along D, combined with a
 *    carry of CH f64 values, stored; the carry then takes the chunk's column totals. CH is
 *    small (64) so that I / CH programs fill the GPU; BD * CH f64 values fit the registers.
 * The accuracy rule is the CPU's: running values (the tile scans and the carries) in f64,
 * the output cast to f32 when stored.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

/* The loads of the inputs' region `region` into t0.. of extent `ext`, the elementwise
 * expression over them cast to f64 bound to v. */
static void load_elem(rx_sk *s, const char *ind, const char *ext, const char *region)
{
    akg_buf *b = s->b;
    rx_names n;
    memset(&n, 0, sizeof n);
    n.lit32 = 1;
    static const char *const t[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    for (int k = 0; k < s->n_in; k++) {
        n.in[k] = t[k];
        akg_buf_appendf(b, "%st%d = alloc([%s])\n", ind, k, ext);
        akg_buf_appendf(b, "%sload(%s[%s] -> t%d)\n", ind, s->in[k], region, k);
    }
    akg_buf_appendf(b, "%sv = cast(", ind);
    rx_expr(s, cJSON_GetObjectItem(s->p, "elem"), &n);
    akg_buf_puts(b, ", f64)\n");
}

/* One program per contiguous row: D in chunks of BLK, each scanned in the tile, the f64
 * carry of the chunks before added, the chunk's total carried on. */
static void scan_rows(rx_sk *s, int prod, int rev, int excl)
{
    akg_buf *b = s->b;
    const char *region = rev ? "o, D - d - min(BLK, D - d):D - d, 0" : "o, d:d+min(BLK, D - d), 0";
    akg_buf_appendf(b,
                    "  if I == 1:\n    # one program per row, D in chunks of BLK scanned in the "
                    "tile%s, an f64 carry\n    # of the chunks before\n",
                    rev ? " (from the end of the row)" : "");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    akg_buf_appendf(b, "      carry = fill([1], %s, dtype=f64)\n", prod ? "1.0" : "0.0");
    akg_buf_puts(b, "      for d in range(0, D, BLK):\n");
    load_elem(s, "        ", "min(BLK, D - d)", region);
    akg_buf_appendf(b, "        part = %s(v, axis=0%s%s)\n", prod ? "cumprod" : "cumsum",
                    rev ? ", reverse=True" : "", excl ? ", exclusive=True" : "");
    akg_buf_appendf(b, "        store(cast(%s(part, carry), f32) -> y[%s])\n", prod ? "mul" : "add",
                    region);
    akg_buf_appendf(b, "        carry = %s(carry, %s(v, axis=0))\n", prod ? "mul" : "add",
                    prod ? "reduce_prod" : "reduce_sum");
}

/* CH columns of one outer row per program: D in chunks of BD rows, each a [BD, CH] tile
 * (contiguous along I) scanned along D, the f64 carry a row of CH values. */
static void scan_columns(rx_sk *s, int prod, int rev, int excl)
{
    akg_buf *b = s->b;
    char region[160];
    snprintf(region, sizeof region, "o, %s, c:c+min(CH, I - c)",
             rev ? "D - d - min(BD, D - d):D - d" : "d:d+min(BD, D - d)");
    akg_buf_appendf(b,
                    "  else:\n    # CH columns of one outer row per program, D in chunks of BD "
                    "rows scanned in the\n    # [BD, CH] tile%s, an f64 carry per column\n",
                    rev ? " (from the end of D)" : "");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for o in range(0, O):\n");
    rx_loop_hints(s, "      ", 1);
    akg_buf_puts(b, "      for c in range(0, I, CH):\n");
    akg_buf_appendf(b, "        carry = fill([1, min(CH, I - c)], %s, dtype=f64)\n",
                    prod ? "1.0" : "0.0");
    akg_buf_puts(b, "        for d in range(0, D, BD):\n");
    load_elem(s, "          ", "min(BD, D - d), min(CH, I - c)", region);
    akg_buf_appendf(b, "          part = %s(v, axis=0%s%s)\n", prod ? "cumprod" : "cumsum",
                    rev ? ", reverse=True" : "", excl ? ", exclusive=True" : "");
    akg_buf_appendf(b, "          store(cast(%s(part, carry), f32) -> y[%s])\n",
                    prod ? "mul" : "add", region);
    akg_buf_appendf(b, "          carry = %s(carry, %s(v, axis=0))\n", prod ? "mul" : "add",
                    prod ? "reduce_prod" : "reduce_sum");
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
    char head[512];
    snprintf(head, sizeof head,
             "%s along dim %d on a GPU;\n# the inputs are viewed as [O, D, I] with D that dim "
             "(O, D, I are run-time sizes);\n# contiguous rows (I == 1): one program per row, "
             "BLK-element chunks scanned in the tile\n# with an f64 carry; strided (I > 1): CH "
             "columns per program, [BD, CH] chunks scanned along D",
             what, s->d0);
    rx_head(s, head, "O, D, I");
    akg_buf_puts(b, "  tensors: ");
    rx_input_tensors(s);
    akg_buf_puts(b, "y[O, D, I]: f32\n  constexpr: BLK = tune(1024, 128, 4096), BD = tune(32, 8, "
                    "128), CH = tune(64, 16, 256)");
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
    scan_rows(s, prod, rev, excl);
    scan_columns(s, prod, rev, excl);
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
