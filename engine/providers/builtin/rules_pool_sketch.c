/*
 * rules_pool_sketch.c: the sketches of the pooling family, complete and bound
 * to the task, for the spelling rules (rules_pool.c: nn.*Pool layers) and the
 * graph Designer (designer_graph_conv.c: any spelling of max_pool, avg_pool
 * and adaptive_avg_pool in the probe's op graph).
 *
 *  - Max and average pooling are direct: one output row per task, OWB outputs
 *    of the row at a time in a vector accumulator, every tap a vectorised pass
 *    over the valid span. With a layer the window is bound to the layer's
 *    attributes (ModelNew refuses a model with another window); without one
 *    it is the design's constants.
 *  - Adaptive average pooling reads the input's sizes at run time, so it
 *    holds for any size. When the input has the sizes the design was made for
 *    and they are multiples of the output's, it is a plain average pool
 *    (window = stride = I / O, constants; the loops above). Otherwise the
 *    windows vary from one output to the next
 *    (PyTorch: from floor(o * I / O) to ceil((o + 1) * I / O)): per output
 *    row, the input rows of its window are summed into one row (vectorised),
 *    then each output sums its span of that row, masked to its width, and
 *    divides by its window's size.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "rules_pool_sketch.h"

static const char *const pool_letters[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};

/* The sketch of a pooling layer: one output row per task (parallel over rows), at most OWB
 * outputs of the row at a time in an accumulator; every tap whose input row lies inside the
 * tensor is a vectorised pass over the outputs, reading the input with the layer's stride
 * (padded columns read as the identity of the combination: -inf for max, 0 for the sum);
 * average pooling divides by the window's size clipped as count_include_pad says. The
 * window (kernel, stride, padding, dilation), ceil_mode and count_include_pad are
 * specialised: constexprs bound to the layer, so a model with another window is refused, and
 * the valid span of every tap costs no division at run time. The input's sizes are read at
 * run time. The taps are vectorised 8 f32 lanes wide (256 bits): rows are short, and wider
 * vectors measured slower on them. */
char *akg_pool_sketch(const akg_pool_spec *ps)
{
    int dims = ps->dims;
    const char *const *L = pool_letters[dims - 1];
    const char *w = L[dims - 1];
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(
        &b,
        "# %s: direct %s pooling. One output row per task, at most OWB outputs of the\n"
        "# row at a time in an accumulator, each window tap a vectorised pass over them.\n",
        ps->name, ps->is_max ? "max" : "average");
    akg_buf_appendf(&b, "sketch %s {\n  symbols: NB, C, NC", ps->name);
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s, O%s", L[i], L[i]);
    if (ps->divisor && ps->layer)
        akg_buf_puts(&b, ", DIVO");
    akg_buf_puts(&b, ";\n  tensors: x[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_puts(&b, "]: f32; y[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_appendf(&b, "]: f32;\n  constexpr: OWB = tune(%ld, 64, 1024), CEIL = %d", ps->owb,
                    ps->ceil_mode);
    if (!ps->is_max)
        akg_buf_appendf(&b, ", CIP = %d", ps->include_pad);
    akg_buf_puts(&b, ";\n  constexpr: ");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, "%sK%s = %ld, S%s = %ld, P%s = %ld, DL%s = %ld", i ? ", " : "", L[i],
                        ps->kernel[i], L[i], ps->stride[i], L[i], ps->padding[i], L[i],
                        ps->dilation[i]);
    if (ps->divisor && !ps->layer)
        akg_buf_appendf(&b, ", DIVO = %ld", ps->divisor_value);
    akg_buf_puts(&b, ";\n");
    /* binding: the input's batch and channel dims merged; the geometry from the layer */
    bool batch = ps->rank == dims + 2;
    akg_buf_appendf(&b, "  bind: x = input(\"%s\", [%s", ps->input, batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_appendf(&b, "])%s, NC = NB * C\n", batch ? "" : ", NB = 1");
    for (int i = 0; ps->layer && i < dims; i++) {
        akg_buf_appendf(
            &b,
            "  bind: K%s = attr(\"%s.kernel_size\", %d), S%s = attr(\"%s.stride\", %d), "
            "P%s = attr(\"%s.padding\", %d)",
            L[i], ps->layer, i, L[i], ps->layer, i, L[i], ps->layer, i);
        if (ps->is_max)
            akg_buf_appendf(&b, ", DL%s = attr(\"%s.dilation\", %d)\n", L[i], ps->layer, i);
        else
            akg_buf_puts(&b, "\n");
    }
    /* output sizes as PyTorch computes them (ceil_mode: a window must start inside the input
     * or its left padding) */
    akg_buf_puts(&b, "  bind: ");
    for (int i = 0; i < dims; i++) {
        const char *l = L[i];
        if (ps->ceil_mode)
            akg_buf_appendf(
                &b,
                "%sO%s = min((I%s + 2 * P%s - DL%s * (K%s - 1) - 1 + S%s - 1) // S%s + 1, "
                "(I%s + P%s - 1) // S%s + 1)",
                i ? ", " : "", l, l, l, l, l, l, l, l, l, l);
        else
            akg_buf_appendf(&b, "%sO%s = (I%s + 2 * P%s - DL%s * (K%s - 1) - 1) // S%s + 1",
                            i ? ", " : "", l, l, l, l, l, l);
    }
    akg_buf_appendf(&b, ", y = output(0, [%s", batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_puts(&b, "])");
    if (ps->layer) {
        akg_buf_appendf(&b, ", CEIL = attr(\"%s.ceil_mode\")", ps->layer);
        if (!ps->is_max)
            akg_buf_appendf(&b, ", CIP = attr(\"%s.count_include_pad\")", ps->layer);
        if (ps->divisor)
            akg_buf_appendf(&b, ", DIVO = attr(\"%s.divisor_override\")", ps->layer);
    }
    akg_buf_puts(&b, "\n\n  @llm_hint(\"parallel\", \"coreidx\")\n  for r in range(0, NC):\n");
    /* the output rows (all but the last spatial dim) */
    int depth = 2;
    char pre[96] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        akg_buf_appendf(&b, "%*sfor o%s in range(0, O%s):\n", 2 * depth, "", l, l);
        depth++;
        akg_buf_appendf(&b, "%*s%s0 = o%s * S%s - P%s\n", 2 * depth, "", l, l, l, l);
        if (!ps->is_max && !ps->divisor) {
            if (ps->include_pad)
                akg_buf_appendf(&b, "%*sd%s = min(%s0 + K%s, I%s + P%s) - %s0\n", 2 * depth, "", l,
                                l, l, l, l, l);
            else
                akg_buf_appendf(&b, "%*sd%s = min(%s0 + K%s, I%s) - max(%s0, 0)\n", 2 * depth, "",
                                l, l, l, l, l);
        }
        size_t n = strlen(pre);
        snprintf(pre + n, sizeof pre - n, "o%s, ", l);
    }
    akg_buf_appendf(&b, "%*sfor q0 in range(0, O%s, OWB):\n", 2 * depth, "", w);
    depth++;
    int d0 = depth;
    akg_buf_appendf(&b, "%*sqw = min(OWB, O%s - q0)\n", 2 * depth, "", w);
    akg_buf_appendf(&b, "%*sacc = alloc([qw], llm_hint=[\"fast\", \"accumulator\", \"%s\"])\n",
                    2 * depth, "", ps->is_max ? "init_neg_inf" : "init_zero");
    char region[256] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        akg_buf_appendf(&b, "%*sfor k%s in range(0, K%s):\n", 2 * depth, "", l, l);
        depth++;
        akg_buf_appendf(&b, "%*si%s = %s0 + k%s * DL%s\n", 2 * depth, "", l, l, l, l);
        akg_buf_appendf(&b, "%*sif i%s >= 0 and i%s < I%s:\n", 2 * depth, "", l, l, l);
        depth++;
        size_t n = strlen(region);
        snprintf(region + n, sizeof region - n, "i%s, ", l);
    }
    akg_buf_appendf(&b, "%*sfor k%s in range(0, K%s):\n", 2 * depth, "", w, w);
    depth++;
    akg_buf_appendf(&b, "%*sc0 = q0 * S%s - P%s + k%s * DL%s\n", 2 * depth, "", w, w, w, w);
    /* unit stride (contiguous input) and any other stride, as two branches */
    for (int unit = 1; unit >= 0; unit--) {
        if (unit)
            akg_buf_appendf(&b, "%*sif S%s == 1:\n", 2 * depth, "", w);
        else
            akg_buf_appendf(&b, "%*selse:\n", 2 * depth, "");
        akg_buf_appendf(&b, "%*st = alloc([qw])\n", 2 * depth + 2, "");
        if (unit)
            akg_buf_appendf(&b, "%*sload(x[r, %sc0:c0 + qw] -> t, other=%s)\n", 2 * depth + 2, "",
                            region, ps->is_max ? "-1e999" : "0.0");
        else
            akg_buf_appendf(&b, "%*sload(x[r, %sc0:c0 + qw * S%s:S%s] -> t, other=%s)\n",
                            2 * depth + 2, "", region, w, w, ps->is_max ? "-1e999" : "0.0");
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * depth + 2, "");
        akg_buf_appendf(&b, "%*sacc = %s(acc, t)\n", 2 * depth + 2, "",
                        ps->is_max ? "maximum" : "add");
    }
    if (ps->is_max) {
        akg_buf_appendf(&b, "%*sstore(acc -> y[r, %sq0:q0 + qw])\n}\n", 2 * d0, "", pre);
    } else if (ps->divisor) {
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*sstore(div(acc, DIVO) -> y[r, %sq0:q0 + qw])\n}\n", 2 * d0, "", pre);
    } else {
        /* the divisor of each output: the window clipped as count_include_pad says */
        akg_buf_appendf(&b, "%*sq = arange(q0, q0 + qw)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*s%s0 = q * S%s - P%s\n", 2 * d0, "", w, w, w);
        if (ps->include_pad)
            akg_buf_appendf(&b, "%*sd%s = minimum(%s0 + K%s, I%s + P%s) - %s0\n", 2 * d0, "", w, w,
                            w, w, w, w);
        else
            akg_buf_appendf(&b, "%*sd%s = minimum(%s0 + K%s, I%s) - maximum(%s0, 0)\n", 2 * d0, "",
                            w, w, w, w, w);
        akg_buf_appendf(&b, "%*scount = d%s", 2 * d0, "", w);
        for (int i = 0; i < dims - 1; i++)
            akg_buf_appendf(&b, " * d%s", L[i]);
        akg_buf_puts(&b, "\n");
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*sstore(div(acc, cast(count, f32)) -> y[r, %sq0:q0 + qw])\n}\n",
                        2 * d0, "", pre);
    }
    return akg_buf_take(&b);
}

/* Appends indentation then the formatted text. */
static void line(akg_buf *b, int depth, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(akg_buf *b, int depth, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    akg_buf_appendf(b, "%*s%s\n", 2 * depth, "", text);
}

/* Even windows (every I = K * O, K the design's constants): window = stride = K, one output row
 * per pass, OWB outputs of it at a time in an accumulator, each tap a vectorised pass over
 * them. */
static void adaptive_even(akg_buf *b, const akg_pool_adaptive_spec *ps, int depth)
{
    int dims = ps->dims;
    const char *const *L = pool_letters[dims - 1];
    const char *w = L[dims - 1];
    char pre[96] = "", region[96] = "", taps[96] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        line(b, depth++, "for o%s in range(0, O%s):", l, l);
        size_t n = strlen(pre);
        snprintf(pre + n, sizeof pre - n, "o%s, ", l);
        n = strlen(taps);
        snprintf(taps + n, sizeof taps - n, "K%s * ", l);
    }
    line(b, depth++, "for q0 in range(0, O%s, OWB):", w);
    int d0 = depth;
    line(b, depth, "qw = min(OWB, O%s - q0)", w);
    line(b, depth, "acc = alloc([qw], llm_hint=[\"fast\", \"accumulator\", \"init_zero\"])");
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        line(b, depth++, "for k%s in range(0, K%s):", l, l);
        size_t n = strlen(region);
        snprintf(region + n, sizeof region - n, "o%s * K%s + k%s, ", l, l, l);
    }
    line(b, depth++, "for k%s in range(0, K%s):", w, w);
    line(b, depth, "c0 = q0 * K%s + k%s", w, w);
    for (int unit = 1; unit >= 0; unit--) {
        line(b, depth, unit ? "if K%s == 1:" : "else:", w);
        line(b, depth + 1, "t = alloc([qw])");
        if (unit)
            line(b, depth + 1, "load(x[r, %sc0:c0 + qw] -> t)", region);
        else
            line(b, depth + 1, "load(x[r, %sc0:c0 + qw * K%s:K%s] -> t)", region, w, w);
        line(b, depth + 1, "@llm_hint(\"vectorize\", \"simd\", 8)");
        line(b, depth + 1, "acc = add(acc, t)");
    }
    line(b, d0, "@llm_hint(\"vectorize\", \"simd\", 8)");
    line(b, d0, "store(div(acc, %sK%s) -> y[r, %sq0:q0 + qw])", taps, w, pre);
}

/* Any windows: per output row, the input rows of its window summed into one row, then each
 * output's span of it summed, masked to its width. */
static void adaptive_general(akg_buf *b, const akg_pool_adaptive_spec *ps, int depth)
{
    int dims = ps->dims;
    const char *const *L = pool_letters[dims - 1];
    const char *w = L[dims - 1];
    char pre[96] = "", count[128] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        line(b, depth, "for o%s in range(0, O%s):", l, l);
        depth++;
        line(b, depth, "%s0 = o%s * I%s // O%s", l, l, l, l);
        line(b, depth, "%s1 = ceil((o%s + 1) * I%s, O%s)", l, l, l, l);
        size_t n = strlen(pre);
        snprintf(pre + n, sizeof pre - n, "o%s, ", l);
        n = strlen(count);
        snprintf(count + n, sizeof count - n, "(%s1 - %s0) * ", l, l);
    }
    int d0 = depth;
    line(b, d0, "rs = alloc([I%s + KWM], llm_hint=[\"fast\", \"accumulator\", \"init_zero\"])", w);
    char region[96] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        line(b, depth, "for i%s in range(%s0, %s1):", l, l, l);
        depth++;
        size_t n = strlen(region);
        snprintf(region + n, sizeof region - n, "i%s, ", l);
    }
    /* the row with KWM zeros after it (the load reads nothing past the tensor), so every
     * output's span below stays inside rs */
    line(b, depth, "t = alloc([I%s + KWM])", w);
    line(b, depth, "load(x[r, %s0:I%s + KWM] -> t)", region, w);
    line(b, depth, "@llm_hint(\"vectorize\", \"simd\", 8)");
    line(b, depth, "rs = add(rs, t)");
    line(b, d0, "lane = arange(0, KWM)");
    line(b, d0, "for o%s in range(0, O%s):", w, w);
    line(b, d0 + 1, "%s0 = o%s * I%s // O%s", w, w, w, w);
    line(b, d0 + 1, "%s1 = ceil((o%s + 1) * I%s, O%s)", w, w, w, w);
    line(b, d0 + 1, "s = alloc([KWM])");
    line(b, d0 + 1, "load(rs[%s0:%s0 + KWM] -> s)", w, w);
    line(b, d0 + 1, "v = reduce_sum(where(lt(lane, %s1 - %s0), s, 0.0), axis=0)", w, w);
    line(b, d0 + 1, "store(div(v, %s(%s1 - %s0)) -> y[r, %so%s:o%s + 1])", count, w, w, pre, w, w);
}

char *akg_pool_adaptive_sketch(const akg_pool_adaptive_spec *ps)
{
    int dims = ps->dims;
    const char *const *L = pool_letters[dims - 1];
    const char *w = L[dims - 1];
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b,
                    "# %s: adaptive average pooling. When every input size is a multiple of its\n"
                    "# output size, a plain average pool (window = stride = I / O); otherwise,\n"
                    "# per output row, the input rows of its window summed into one row\n"
                    "# (vectorised), then each output sums its span of that row, masked to its\n"
                    "# width, and divides by its window's size.\n",
                    ps->name);
    bool even = ps->even[0] > 0;
    akg_buf_appendf(&b, "sketch %s {\n  symbols: NB, C, NC", ps->name);
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_puts(&b, ", KWM;\n  tensors: x[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_puts(&b, "]: f32; y[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_appendf(&b, "]: f32;\n  constexpr: OWB = tune(%ld, 64, 1024), ", ps->owb);
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, "%sO%s = %ld", i ? ", " : "", L[i], ps->out[i]);
    for (int i = 0; even && i < dims; i++)
        akg_buf_appendf(&b, ", K%s = %ld", L[i], ps->even[i]);
    bool batch = ps->rank == dims + 2;
    akg_buf_appendf(&b, ";\n  bind: x = input(\"%s\", [%s", ps->input, batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_appendf(&b, "])%s, NC = NB * C\n  bind: ", batch ? "" : ", NB = 1");
    /* the widest window: ceil(I / O) + 1 at most */
    akg_buf_appendf(&b, "KWM = I%s // O%s + 2, y = output(0, [%s", w, w, batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_puts(&b, "])\n\n  @llm_hint(\"parallel\", \"coreidx\")\n  for r in range(0, NC):\n");
    if (!even) {
        adaptive_general(&b, ps, 2);
        akg_buf_puts(&b, "}\n");
        return akg_buf_take(&b);
    }
    /* the input sizes the design was made for: even windows of the constant K */
    akg_buf_puts(&b, "    if ");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, "%sI%s == K%s * O%s", i ? " and " : "", L[i], L[i], L[i]);
    akg_buf_puts(&b, ":\n");
    adaptive_even(&b, ps, 3);
    akg_buf_puts(&b, "    else:\n");
    adaptive_general(&b, ps, 3);
    akg_buf_puts(&b, "}\n");
    return akg_buf_take(&b);
}
