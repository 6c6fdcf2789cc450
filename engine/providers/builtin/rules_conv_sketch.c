/*
 * rules_conv_sketch.c: the sketches of the convolution family, complete and
 * bound to the task.
 *
 * Every layer is written in 3-D (a 1-D or 2-D layer has unit leading spatial
 * dims, bound as constants), so one text serves Conv1d/2d/3d. Geometry is read
 * from the layer at run time (stride, padding, dilation, groups, output
 * padding); 'same' padding and reflect padding are specialised.
 *
 *  - A layer with padding first writes its input with the padding spelled out
 *    (zeros, or reflections gathered from the row) into a "slow" buffer whose
 *    rows have slack for whole-panel reads, so the hot loops never leave it.
 *  - Implicit GEMM (every layer with more than one input channel per group):
 *    the weights are packed once per call into MR-row panels, k-major per tap
 *    ([G, OCG/MR, taps, ICG, MR]). A task is one output row of one image (and
 *    output depth); for each group and NR outputs of the row, each MR-row
 *    panel of output channels is an [MR, NR] accumulator in registers that
 *    sums, tap by tap, gemm(weights of the tap, input rows of the tap): with
 *    unit stride the input rows are read in place (NR consecutive floats), with
 *    another stride they are first gathered into a [taps, ICG, NR] panel that
 *    every MR-row panel reuses. Bias and the channel mask at the group's edge
 *    are applied as the tile is stored.
 *  - Depthwise (one input channel per group): a task is one output row of one
 *    channel; OWB outputs at a time in a register tile, each tap a vector
 *    multiply-add over them.
 *  - Transposed: per image and group, cols = W^T x as a GEMM (W is k-major
 *    already and x's rows are contiguous, so both are read in place), then
 *    col2im adds every tap's columns into the output rows at their strided
 *    places (each output channel of the group is one thread's).
 * A chain of layers writes each intermediate output into a "slow" tile.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "rules_conv_sketch.h"

/* the spatial letters of a layer with `dims` dims: the real ones are the last `dims` */
static const char *const SP[3] = {"D", "H", "W"};

static bool real_dim(int dims, int s)
{
    return s >= 3 - dims;
}

/* What a layer's comment calls it: "self.conv", or "weight w" without a layer. */
static const char *layer_label(const akg_conv_layer_spec *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", c->layer ? "self." : "weight ", c->layer ? c->layer : c->weight);
    return buf;
}

/* The dotted name of a layer's weight (what = "weight") or bias. */
static const char *param_name(const akg_conv_layer_spec *c, const char *what, char *buf, size_t len)
{
    const char *given = !strcmp(what, "weight") ? c->weight : c->bias_w;
    if (given)
        return given;
    snprintf(buf, len, "%s.%s", c->layer ? c->layer : "", what);
    return buf;
}

/* Appends "%*s" indentation then the formatted line. */
#define LINE(ind, ...)                                                                             \
    do {                                                                                           \
        akg_buf_appendf(b, "%*s", 2 * (ind), "");                                                  \
        akg_buf_appendf(b, __VA_ARGS__);                                                           \
        akg_buf_puts(b, "\n");                                                                     \
    } while (0)

static void symbols(akg_buf *b, const akg_conv_spec *s)
{
    akg_buf_puts(b, "  symbols: N");
    for (int li = 0; li < s->n_layers; li++) {
        const akg_conv_layer_spec *c = &s->layers[li];
        for (int k = 0; k < 3; k++)
            akg_buf_appendf(b, ", I%s%d, O%s%d", SP[k], li, SP[k], li);
        if (c->algo == CONV_TRANSPOSED || c->algo == CONV_POINTWISE)
            akg_buf_appendf(b, ", ISP%d", li);
        if (c->padded)
            akg_buf_appendf(b, ", DP%d, HP%d, WP%d", li, li, li);
        if (c->algo == CONV_GEMM || c->algo == CONV_POINTWISE)
            akg_buf_appendf(b, ", NB%d", li);
    }
    akg_buf_puts(b, ";\n");
}

/* The layer's specialised constants: channels, groups, the window's geometry per spatial dim
 * (unit for the leading dims a 1-D or 2-D layer does not have), the padding mode. */
static void constants(akg_buf *b, const akg_conv_spec *s)
{
    for (int li = 0; li < s->n_layers; li++) {
        const akg_conv_layer_spec *c = &s->layers[li];
        long g = c->groups > 0 ? c->groups : 1;
        akg_buf_appendf(b,
                        "  constexpr: C%d = %ld, OC%d = %ld, G%d = %ld, ICG%d = %ld, OCG%d = %ld",
                        li, c->in_ch, li, c->out_ch, li, g, li, c->in_ch / g, li, c->out_ch / g);
        long taps = 1;
        for (int k = 0; k < 3; k++) {
            akg_buf_appendf(b, ", K%s%d = %ld, S%s%d = %ld, P%s%d = %ld, L%s%d = %ld", SP[k], li,
                            c->kernel[k], SP[k], li, c->stride[k], SP[k], li, c->padding[k], SP[k],
                            li, c->dilation[k]);
            if (c->algo == CONV_TRANSPOSED)
                akg_buf_appendf(b, ", Q%s%d = %ld", SP[k], li, c->output_padding[k]);
            taps *= c->kernel[k];
        }
        if (c->algo == CONV_TRANSPOSED)
            akg_buf_appendf(b, ", T%d = %ld", li, taps);
        akg_buf_appendf(b, ", RF%d = %d", li, c->reflect);
        if (c->same)
            akg_buf_appendf(b, ", SAME%d = 1", li);
        akg_buf_puts(b, ";\n");
    }
}

static void tensors(akg_buf *b, const akg_conv_spec *s)
{
    akg_buf_puts(b, "  tensors: ");
    const akg_conv_layer_spec *c0 = &s->layers[0];
    if (c0->algo == CONV_TRANSPOSED || c0->algo == CONV_POINTWISE)
        akg_buf_puts(b, "x[N, C0, ISP0]: f32; ");
    else
        akg_buf_puts(b, "x[N, C0, ID0, IH0, IW0]: f32; ");
    for (int li = 0; li < s->n_layers; li++) {
        const akg_conv_layer_spec *c = &s->layers[li];
        if (c->algo == CONV_TRANSPOSED)
            akg_buf_appendf(b, "w%d[C%d, OCG%d * T%d]: f32; ", li, li, li, li);
        else
            akg_buf_appendf(b, "w%d[OC%d, ICG%d, KD%d, KH%d, KW%d]: f32; ", li, li, li, li, li, li);
        if (c->bias)
            akg_buf_appendf(b, "bias%d[OC%d]: f32; ", li, li);
    }
    int l = s->n_layers - 1;
    for (int v = 0; v < s->n_vecs; v++)
        akg_buf_appendf(b, "v%d[OC%d]: f32; ", v, l);
    if (s->layers[l].algo == CONV_POINTWISE) /* its positions flattened, as its input's */
        akg_buf_appendf(b, "y[N, OC%d, ISP%d]: f32;\n", l, l);
    else
        akg_buf_appendf(b, "y[N, OC%d, OD%d, OH%d, OW%d]: f32;\n", l, l, l, l);
}

/* The bind items of layer li (its input dims are bound already). The layer's constants are
 * constexprs: the items binding them check that the model has the values the design was
 * made for (ModelNew refuses another). */
static void bind_layer(akg_buf *b, const akg_conv_spec *s, int li)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    const char *L = c->layer;
    bool tr = c->algo == CONV_TRANSPOSED;
    char pn[160];
    /* the weight: [OC, ICG, k...] (transposed: [IC, OCG, k...]) */
    akg_buf_appendf(b, "  bind: w%d = weight(\"%s\", [%s%d, %s%d", li,
                    param_name(c, "weight", pn, sizeof pn), tr ? "C" : "OC", li, tr ? "OCG" : "ICG",
                    li);
    for (int k = 0; k < 3; k++)
        if (real_dim(c->dims, k))
            akg_buf_appendf(b, ", K%s%d", SP[k], li);
    akg_buf_puts(b, "])");
    if (L) {
        akg_buf_appendf(b, ", G%d = attr(\"%s.groups\")", li, L);
        if (c->same)
            akg_buf_appendf(b, ", SAME%d = attr(\"%s.padding\", \"same\")", li, L);
        akg_buf_appendf(b, ", RF%d = attr(\"%s.padding_mode\", \"reflect\")", li, L);
    }
    akg_buf_puts(b, "\n");
    for (int k = 0; k < 3; k++) {
        const char *d = SP[k];
        int at = k - (3 - c->dims); /* index into the layer's tuples */
        akg_buf_puts(b, "  bind: ");
        if (L && real_dim(c->dims, k)) {
            akg_buf_appendf(b,
                            "S%s%d = attr(\"%s.stride\", %d), L%s%d = attr(\"%s.dilation\", %d), ",
                            d, li, L, at, d, li, L, at);
            if (!c->same)
                akg_buf_appendf(b, "P%s%d = attr(\"%s.padding\", %d), ", d, li, L, at);
            if (tr)
                akg_buf_appendf(b, "Q%s%d = attr(\"%s.output_padding\", %d), ", d, li, L, at);
        }
        /* the output size */
        if (tr)
            akg_buf_appendf(
                b, "O%s%d = (I%s%d - 1) * S%s%d - 2 * P%s%d + L%s%d * (K%s%d - 1) + Q%s%d + 1", d,
                li, d, li, d, li, d, li, d, li, d, li, d, li);
        else if (c->same)
            akg_buf_appendf(b, "O%s%d = I%s%d", d, li, d, li);
        else
            akg_buf_appendf(b, "O%s%d = (I%s%d + 2 * P%s%d - L%s%d * (K%s%d - 1) - 1) // S%s%d + 1",
                            d, li, d, li, d, li, d, li, d, li, d, li);
        akg_buf_puts(b, "\n");
    }
    if (c->algo == CONV_GEMM) /* the panel: NCOL outputs of a row, fewer for short rows */
        akg_buf_appendf(b, "  bind: NB%d = min(NCOL, ceil(OW%d, NR) * NR)\n", li, li);
    if (c->algo == CONV_POINTWISE) /* a task's positions */
        akg_buf_appendf(b, "  bind: NB%d = min(NCOL, ceil(ISP%d, NR) * NR)\n", li, li);
    if (c->padded) {
        /* the padded extents: what the taps reach ('same' pads more on the far side), and
         * slack after each row for whole-panel reads */
        char slack[16];
        if (c->algo == CONV_GEMM)
            snprintf(slack, sizeof slack, "NB%d", li);
        else
            snprintf(slack, sizeof slack, "NR");
        akg_buf_appendf(
            b,
            "  bind: DP%d = max(ID%d + 2 * PD%d, (OD%d - 1) * SD%d + LD%d * (KD%d - 1) + 1), "
            "HP%d = max(IH%d + 2 * PH%d, (OH%d - 1) * SH%d + LH%d * (KH%d - 1) + 1), "
            "WP%d = max(IW%d + 2 * PW%d, (OW%d - 1) * SW%d + LW%d * (KW%d - 1) + 1) + %s * SW%d\n",
            li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li, li,
            slack, li);
    }
    if (c->bias)
        akg_buf_appendf(b, "  bind: bias%d = weight(\"%s\", [OC%d])\n", li,
                        param_name(c, "bias", pn, sizeof pn), li);
    if (li + 1 < s->n_layers)
        akg_buf_appendf(b, "  bind: ID%d = OD%d, IH%d = OH%d, IW%d = OW%d\n", li + 1, li, li + 1,
                        li, li + 1, li);
}

static void binding(akg_buf *b, const akg_conv_spec *s)
{
    const akg_conv_layer_spec *c0 = &s->layers[0];
    akg_buf_appendf(b, "  bind: x = input(\"%s\", [N, C0", s->input);
    for (int k = 0; k < 3; k++)
        if (real_dim(c0->dims, k))
            akg_buf_appendf(b, ", I%s0", SP[k]);
    akg_buf_puts(b, "])");
    for (int k = 0; k < 3; k++)
        if (!real_dim(c0->dims, k))
            akg_buf_appendf(b, ", I%s0 = 1", SP[k]);
    if (c0->algo == CONV_TRANSPOSED || c0->algo == CONV_POINTWISE)
        akg_buf_puts(b, ", ISP0 = ID0 * IH0 * IW0");
    akg_buf_puts(b, "\n");
    for (int li = 0; li < s->n_layers; li++)
        bind_layer(b, s, li);
    int l = s->n_layers - 1;
    const akg_conv_layer_spec *cl = &s->layers[l];
    akg_buf_appendf(b, "  bind: y = output(0, [N, OC%d", l);
    for (int k = 0; k < 3; k++)
        if (real_dim(cl->dims, k))
            akg_buf_appendf(b, ", O%s%d", SP[k], l);
    akg_buf_puts(b, "])\n");
    for (int v = 0; v < s->n_vecs; v++) {
        const akg_conv_vector *vec = &s->vecs[v];
        akg_buf_appendf(b, "  bind: v%d = %s(\"%s\", [", v, vec->weight ? "weight" : "input",
                        vec->name);
        for (int k = 0; k < vec->rank; k++) {
            if (k == vec->chan)
                akg_buf_appendf(b, "%sOC%d", k ? ", " : "", l);
            else
                akg_buf_appendf(b, "%s1", k ? ", " : "");
        }
        akg_buf_puts(b, "])\n");
    }
}

/* The epilogue on tile `o` of the last layer (the vectors' tiles as `rows` rows starting at
 * channel `first`), leaving the value to store; "o" when there is none. */
static const char *epilogue(akg_buf *b, const akg_conv_spec *s, int li, int ind, const char *rows,
                            const char *first)
{
    if (li != s->n_layers - 1 || s->n_epilogue == 0)
        return "o";
    for (int v = 0; v < s->n_vecs; v++) {
        LINE(ind, "vt%d = alloc([%s, 1])", v, rows);
        LINE(ind, "load(v%d[%s:%s + %s] -> vt%d)", v, first, first, rows, v);
    }
    for (int i = 0; i < s->n_epilogue; i++)
        LINE(ind, "%s", s->epilogue[i]);
    return s->epilogue_out;
}

/* The padded copy of layer li's input: src -> xp<li>. */
static void padded_copy(akg_buf *b, const akg_conv_layer_spec *c, int li, const char *src)
{
    LINE(1, "# layer %d's input with its padding written out (%s)", li,
         c->reflect ? "reflections" : "zeros");
    LINE(1, "xp%d = alloc([N, C%d, DP%d, HP%d, WP%d], llm_hint=[\"slow\"])", li, li, li, li, li);
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for r in range(0, N * C%d):", li);
    LINE(2, "for d in range(0, DP%d):", li);
    LINE(3, "for h in range(0, HP%d):", li);
    if (!c->reflect) {
        LINE(4, "row = alloc([WP%d])", li);
        LINE(4, "load(%s[r // C%d, r %% C%d, d - PD%d, h - PH%d, 0 - PW%d:WP%d - PW%d] -> row)",
             src, li, li, li, li, li, li, li);
        LINE(4, "store(row -> xp%d[r // C%d, r %% C%d, d, h, :])", li, li, li);
        return;
    }
    /* reflect(i, n) = (n - 1) - |(n - 1) - |i||, clamped for the slack past the far edge */
    LINE(4, "ad = max(d - PD%d, PD%d - d)", li, li);
    LINE(4, "rd = min(max(ID%d - 1 - max(ID%d - 1 - ad, ad - (ID%d - 1)), 0), ID%d - 1)", li, li,
         li, li);
    LINE(4, "ah = max(h - PH%d, PH%d - h)", li, li);
    LINE(4, "rh = min(max(IH%d - 1 - max(IH%d - 1 - ah, ah - (IH%d - 1)), 0), IH%d - 1)", li, li,
         li, li);
    /* the row in place, then its borders: column PW - k mirrored to the left, IW - 2 - k
     * to the right (the slack past the far border repeats column 0) */
    LINE(4, "row = alloc([IW%d])", li);
    LINE(4, "load(%s[r // C%d, r %% C%d, rd, rh, :] -> row)", src, li, li);
    LINE(4, "store(row -> xp%d[r // C%d, r %% C%d, d, h, PW%d:PW%d + IW%d])", li, li, li, li, li,
         li);
    LINE(4, "if PW%d > 0:", li);
    LINE(5, "lc = arange(0, PW%d)", li);
    LINE(5, "store(gather(row, PW%d - lc, 0) -> xp%d[r // C%d, r %% C%d, d, h, 0:PW%d])", li, li,
         li, li, li);
    LINE(4, "rc = arange(PW%d + IW%d, WP%d)", li, li, li);
    LINE(4,
         "store(gather(row, maximum(2 * IW%d - 2 + PW%d - rc, 0), 0) -> xp%d[r // C%d, r %% C%d, "
         "d, h, "
         "PW%d + IW%d:WP%d])",
         li, li, li, li, li, li, li, li);
}

/* The epilogue of a GEMM tile: bias, and the mask at the group's edge. region: the output
 * region of the [MR, NR] tile, with two %d for the layer. */
static void gemm_epilogue(akg_buf *b, const akg_conv_spec *s, int li, int ind, const char *dst,
                          const char *region)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    char reg[200], first[64];
    snprintf(reg, sizeof reg, region, li, li);
    snprintf(first, sizeof first, "g * OCG%d + p * MR", li);
    if (c->bias) {
        LINE(ind, "bt = alloc([MR, 1])");
        LINE(ind, "load(bias%d[g * OCG%d + p * MR:g * OCG%d + p * MR + MR] -> bt)", li, li, li);
        LINE(ind, "o = add(acc, bt)");
    } else {
        LINE(ind, "o = acc");
    }
    const char *res = epilogue(b, s, li, ind, "MR", first);
    LINE(ind, "if p * MR + MR <= OCG%d:", li);
    LINE(ind + 1, "store(%s -> %s%s)", res, dst, reg);
    LINE(ind, "else:");
    LINE(ind + 1, "rows = arange(0, MR)");
    LINE(ind + 1, "store(%s -> %s%s, mask=lt(rows[:, None] + p * MR, OCG%d))", res, dst, reg, li);
}

/* The weights of GEMM layer li packed once into MR-row panels, k-major:
 * wp<li>[g, panel, tap * ICG + c, i] (rows past the group's channels zero). */
static void pack_weights(akg_buf *b, int li)
{
    LINE(1,
         "# the weights packed once into MR-row panels, k-major: wp[g, panel, tap * ICG + c, i]");
    LINE(
        1,
        "wp%d = alloc([G%d, ceil(OCG%d, MR), KD%d * KH%d * KW%d * ICG%d, MR], llm_hint=[\"slow\"])",
        li, li, li, li, li, li, li);
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for gp in range(0, G%d * ceil(OCG%d, MR)):", li, li);
    LINE(2, "wg = gp // ceil(OCG%d, MR)", li);
    LINE(2, "wq = gp %% ceil(OCG%d, MR)", li);
    LINE(2, "for tp in range(0, KD%d * KH%d * KW%d):", li, li, li);
    LINE(3, "wt = alloc([MR, ICG%d])", li);
    LINE(3, "rows = arange(0, MR)");
    LINE(3,
         "load(w%d[wg * OCG%d + wq * MR:wg * OCG%d + wq * MR + MR, :, tp // (KH%d * KW%d), (tp // "
         "KW%d) "
         "%% KH%d, tp %% KW%d] -> wt, mask=lt(rows[:, None] + wq * MR, OCG%d))",
         li, li, li, li, li, li, li, li, li);
    LINE(3, "store(transpose(wt) -> wp%d[wg, wq, tp * ICG%d:tp * ICG%d + ICG%d, :])", li, li, li,
         li);
}

static void gemm_layer(akg_buf *b, const akg_conv_spec *s, int li, const char *src, const char *dst)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    char lb[160];
    const char *xs = src;
    char xpn[16];
    if (c->padded) {
        snprintf(xpn, sizeof xpn, "xp%d", li);
        xs = xpn;
    }
    LINE(1, "# layer %d (%s): implicit GEMM, K = taps * ICG", li, layer_label(c, lb, sizeof lb));
    pack_weights(b, li);
    LINE(1, "# one output row per task; per group and NB outputs of the row, the input rows of");
    LINE(1, "# every tap gathered once into a [taps * ICG, NB] panel (contiguous reads); then per");
    LINE(1, "# NR columns of it (they stay in L1) every MR-channel panel of the weights runs over");
    LINE(1, "# them, an [MR, NR] accumulator in registers over all of K");
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for z in range(0, N * OD%d * OH%d):", li, li);
    LINE(2, "n = z // (OD%d * OH%d)", li, li);
    LINE(2, "od = z // OH%d %% OD%d", li, li);
    LINE(2, "oh = z %% OH%d", li);
    LINE(2, "for g in range(0, G%d):", li);
    LINE(3, "for q0 in range(0, OW%d, NB%d):", li, li);
    LINE(4, "nc = min(NB%d, OW%d - q0)", li, li);
    LINE(4, "pb = alloc([KD%d * KH%d * KW%d * ICG%d, NB%d], llm_hint=[\"medium\"])", li, li, li, li,
         li);
    LINE(4, "for tp in range(0, KD%d * KH%d * KW%d):", li, li, li);
    /* without a padded copy the taps read the input itself: what falls in the padding
     * loads as zeros */
    char ow[24] = "", oh[24] = "", od[24] = "";
    if (!c->padded) {
        snprintf(ow, sizeof ow, " - PW%d", li);
        snprintf(oh, sizeof oh, " - PH%d", li);
        snprintf(od, sizeof od, " - PD%d", li);
    }
    LINE(5, "c1 = q0 * SW%d + tp %% KW%d * LW%d%s", li, li, li, ow);
    LINE(5, "ih = oh * SH%d + tp // KW%d %% KH%d * LH%d%s", li, li, li, li, oh);
    LINE(5, "id = od * SD%d + tp // (KH%d * KW%d) * LD%d%s", li, li, li, li, od);
    for (int unit = 1; unit >= 0; unit--) {
        LINE(5, unit ? "if SW%d == 1:" : "else:", li);
        if (unit)
            LINE(6,
                 "load(%s[n, g * ICG%d:g * ICG%d + ICG%d, id, ih, c1:c1 + NB%d] -> pb[tp * "
                 "ICG%d:tp * "
                 "ICG%d + ICG%d, :])",
                 xs, li, li, li, li, li, li, li);
        else
            LINE(6,
                 "load(%s[n, g * ICG%d:g * ICG%d + ICG%d, id, ih, c1:c1 + NB%d * SW%d:SW%d] -> "
                 "pb[tp "
                 "* ICG%d:tp * ICG%d + ICG%d, :])",
                 xs, li, li, li, li, li, li, li, li, li);
    }
    LINE(4, "for j in range(0, nc, NR):");
    LINE(5, "for p in range(0, ceil(OCG%d, MR)):", li);
    LINE(6, "acc = alloc([MR, NR], llm_hint=[\"fastest\", \"accumulator\", \"init_zero\"])");
    LINE(6, "for c0 in range(0, KD%d * KH%d * KW%d * ICG%d, KC):", li, li, li, li);
    LINE(7, "kc = min(KC, KD%d * KH%d * KW%d * ICG%d - c0)", li, li, li, li);
    LINE(7, "wa = alloc([kc, MR])");
    LINE(7, "load(wp%d[g, p, c0:c0 + kc, :] -> wa)", li);
    LINE(7, "xb = alloc([kc, NR])");
    LINE(7, "load(pb[c0:c0 + kc, j:j + NR] -> xb)");
    LINE(7, "@llm_hint(\"vectorize\", \"simd\", %d)", s->vw == 16 ? 16 : 8);
    LINE(7, "gemm(wa, xb, acc, trans_a=True)");
    gemm_epilogue(b, s, li, 6, dst,
                  "[n, g * OCG%d + p * MR:g * OCG%d + p * MR + MR, od, oh, q0 + j:q0 + j + NR]");
}

/* A 1x1 layer with unit stride and no padding reading the model's input and writing its
 * output: per image and group one GEMM over the flattened spatial positions,
 * y[n] (OCG x ISP) = W (OCG x ICG) x[n] (ICG x ISP); the input's channel rows are read in
 * place (NR consecutive positions each), no panel is packed. */
static void pointwise_layer(akg_buf *b, const akg_conv_spec *s, int li, const char *src,
                            const char *dst)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    char lb[160];
    LINE(1, "# layer %d (%s): 1x1, a GEMM per image and group over the flattened positions", li,
         layer_label(c, lb, sizeof lb));
    pack_weights(b, li);
    LINE(1, "# a task is NB positions of one image and group; per NR of them (they stay in L1)");
    LINE(1, "# every MR-channel panel of the weights runs over them, an [MR, NR] accumulator in");
    LINE(1, "# registers over all of ICG");
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for zq in range(0, N * G%d * ceil(ISP%d, NB%d)):", li, li, li);
    LINE(2, "n = zq // (G%d * ceil(ISP%d, NB%d))", li, li, li);
    LINE(2, "g = zq // ceil(ISP%d, NB%d) %% G%d", li, li, li);
    LINE(2, "q0 = zq %% ceil(ISP%d, NB%d) * NB%d", li, li, li);
    LINE(2, "nc = min(NB%d, ISP%d - q0)", li, li);
    LINE(2, "for j in range(0, nc, NR):");
    LINE(3, "for p in range(0, ceil(OCG%d, MR)):", li);
    LINE(4, "acc = alloc([MR, NR], llm_hint=[\"fastest\", \"accumulator\", \"init_zero\"])");
    LINE(4, "for c0 in range(0, ICG%d, KC):", li);
    LINE(5, "kc = min(KC, ICG%d - c0)", li);
    LINE(5, "wa = alloc([kc, MR])");
    LINE(5, "load(wp%d[g, p, c0:c0 + kc, :] -> wa)", li);
    LINE(5, "xb = alloc([kc, NR])");
    LINE(5, "load(%s[n, g * ICG%d + c0:g * ICG%d + c0 + kc, q0 + j:q0 + j + NR] -> xb)", src, li,
         li);
    LINE(5, "@llm_hint(\"vectorize\", \"simd\", %d)", s->vw == 16 ? 16 : 8);
    LINE(5, "gemm(wa, xb, acc, trans_a=True)");
    gemm_epilogue(b, s, li, 4, dst,
                  "[n, g * OCG%d + p * MR:g * OCG%d + p * MR + MR, q0 + j:q0 + j + NR]");
}

static void depthwise_layer(akg_buf *b, const akg_conv_spec *s, int li, const char *src,
                            const char *dst)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    char lb[160];
    const char *xs = src;
    char xpn[16];
    if (c->padded) {
        snprintf(xpn, sizeof xpn, "xp%d", li);
        xs = xpn;
    }
    LINE(1, "# layer %d (%s): depthwise, one output row of one channel per task, OWB outputs", li,
         layer_label(c, lb, sizeof lb));
    LINE(1, "# of the row in a register tile, each tap a vector multiply-add over them");
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for z in range(0, N * OC%d * OD%d * OH%d):", li, li, li);
    LINE(2, "n = z // (OC%d * OD%d * OH%d)", li, li, li);
    LINE(2, "oc = z // (OD%d * OH%d) %% OC%d", li, li, li);
    LINE(2, "od = z // OH%d %% OD%d", li, li);
    LINE(2, "oh = z %% OH%d", li);
    LINE(2, "for q0 in range(0, OW%d, OWB):", li);
    LINE(3, "acc = alloc([1, OWB], llm_hint=[\"fastest\", \"accumulator\", \"init_zero\"])");
    LINE(3, "for kd in range(0, KD%d):", li);
    LINE(4, "for kh in range(0, KH%d):", li);
    LINE(5, "for kw in range(0, KW%d):", li);
    LINE(6, "wt = alloc([1, 1])");
    LINE(6, "load(w%d[oc, 0, kd, kh, kw] -> wt)", li);
    LINE(6, "c1 = q0 * SW%d + kw * LW%d", li, li);
    const char *pd = c->padded ? "" : " - PD";
    (void)pd;
    for (int unit = 1; unit >= 0; unit--) {
        LINE(6, unit ? "if SW%d == 1:" : "else:", li);
        LINE(7, "t = alloc([1, OWB])");
        if (unit)
            LINE(7,
                 "load(%s[n, oc // OCG%d, od * SD%d + kd * LD%d, oh * SH%d + kh * LH%d, c1:c1 + "
                 "OWB] -> t)",
                 xs, li, li, li, li, li);
        else
            LINE(7,
                 "load(%s[n, oc // OCG%d, od * SD%d + kd * LD%d, oh * SH%d + kh * LH%d, c1:c1 + "
                 "OWB * "
                 "SW%d:SW%d] -> t)",
                 xs, li, li, li, li, li, li, li);
        LINE(7, "@llm_hint(\"vectorize\", \"simd\", 8)");
        LINE(7, "acc = add(acc, mul(t, wt))");
    }
    if (li == s->n_layers - 1 && s->n_epilogue > 0) {
        if (c->bias) {
            LINE(3, "bt = alloc([1, 1])");
            LINE(3, "load(bias%d[oc:oc + 1] -> bt)", li);
            LINE(3, "o = add(acc, bt)");
        } else {
            LINE(3, "o = acc");
        }
        const char *res = epilogue(b, s, li, 3, "1", "oc");
        LINE(3, "store(%s -> %s[n, oc:oc + 1, od, oh, q0:q0 + OWB])", res, dst);
    } else if (c->bias) {
        LINE(3, "bt = alloc([1, 1])");
        LINE(3, "load(bias%d[oc:oc + 1] -> bt)", li);
        LINE(3, "store(add(acc, bt) -> %s[n, oc:oc + 1, od, oh, q0:q0 + OWB])", dst);
    } else {
        LINE(3, "store(acc -> %s[n, oc:oc + 1, od, oh, q0:q0 + OWB])", dst);
    }
}

static void transposed_layer(akg_buf *b, const akg_conv_spec *s, int li, const char *src,
                             const char *dst)
{
    const akg_conv_layer_spec *c = &s->layers[li];
    char lb[160];
    LINE(1, "# layer %d (%s): transposed; per image and group cols = W^T x as a GEMM, then", li,
         layer_label(c, lb, sizeof lb));
    LINE(1, "# every tap's columns added into the output rows at their strided places");
    LINE(1, "@llm_hint(\"parallel\", \"coreidx\")");
    LINE(1, "for ng in range(0, N * G%d):", li);
    LINE(2, "n = ng // G%d", li);
    LINE(2, "g = ng %% G%d", li);
    LINE(2, "cols = alloc([OCG%d * T%d, ISP%d], llm_hint=[\"slow\"])", li, li, li);
    LINE(2, "for m0 in range(0, OCG%d * T%d, MR):", li, li);
    LINE(3, "for q0 in range(0, ISP%d, NR):", li);
    LINE(4, "acc = alloc([MR, NR], llm_hint=[\"fastest\", \"accumulator\", \"init_zero\"])");
    LINE(4, "for c0 in range(0, ICG%d, KC):", li);
    LINE(5, "kc = min(KC, ICG%d - c0)", li);
    LINE(5, "wa = alloc([kc, MR])");
    LINE(5, "load(w%d[g * ICG%d + c0:g * ICG%d + c0 + kc, m0:m0 + MR] -> wa)", li, li, li);
    LINE(5, "xb = alloc([kc, NR])");
    LINE(5, "load(%s[n, g * ICG%d + c0:g * ICG%d + c0 + kc, q0:q0 + NR] -> xb)", src, li, li);
    LINE(5, "@llm_hint(\"vectorize\", \"simd\", %d)", s->vw == 16 ? 16 : 8);
    LINE(5, "gemm(wa, xb, acc, trans_a=True)");
    LINE(4, "store(acc -> cols[m0:m0 + MR, q0:q0 + NR])");
    LINE(2, "for m in range(0, OCG%d):", li);
    LINE(3, "oc = g * OCG%d + m", li);
    if (c->bias) {
        LINE(3, "bt = alloc([1, 1, 1])");
        LINE(3, "load(bias%d[oc:oc + 1] -> bt)", li);
        LINE(3, "store(add(fill([OD%d, OH%d, OW%d], 0.0), bt) -> %s[n, oc, :, :, :])", li, li, li,
             dst);
    } else {
        LINE(3, "store(fill([OD%d, OH%d, OW%d], 0.0) -> %s[n, oc, :, :, :])", li, li, li, dst);
    }
    LINE(3, "for t in range(0, T%d):", li);
    LINE(4, "kd = t // (KH%d * KW%d)", li, li);
    LINE(4, "kh = t // KW%d %% KH%d", li, li);
    LINE(4, "kw = t %% KW%d", li);
    LINE(4, "c1 = kw * LW%d - PW%d", li, li);
    LINE(4, "for id in range(0, ID%d):", li);
    LINE(5, "od = id * SD%d - PD%d + kd * LD%d", li, li, li);
    LINE(5, "if od >= 0 and od < OD%d:", li);
    LINE(6, "for ih in range(0, IH%d):", li);
    LINE(7, "oh = ih * SH%d - PH%d + kh * LH%d", li, li, li);
    LINE(7, "if oh >= 0 and oh < OH%d:", li);
    LINE(8, "s0 = (id * IH%d + ih) * IW%d", li, li);
    LINE(8, "cr = alloc([IW%d])", li);
    LINE(8, "load(cols[m * T%d + t, s0:s0 + IW%d] -> cr)", li, li);
    LINE(8, "yo = alloc([IW%d])", li);
    LINE(8, "load(%s[n, oc, od, oh, c1:c1 + IW%d * SW%d:SW%d] -> yo)", dst, li, li, li);
    LINE(8, "@llm_hint(\"vectorize\", \"simd\")");
    LINE(8, "store(add(yo, cr) -> %s[n, oc, od, oh, c1:c1 + IW%d * SW%d:SW%d])", dst, li, li, li);
}

char *akg_conv_sketch(const akg_conv_spec *s)
{
    akg_buf buf;
    akg_buf *b = &buf;
    akg_buf_init(b, 1 << 18);
    if (s->layers[0].layer)
        akg_buf_appendf(b,
                        "# %s: %d convolution layer%s, written in 3-D (1-D and 2-D layers have "
                        "unit\n# leading dims); the geometry is read from the layers at run "
                        "time.\n",
                        s->name, s->n_layers,
                        s->n_layers > 1 ? "s, each writing the next one's input" : "");
    else
        akg_buf_appendf(b,
                        "# %s: a convolution written in 3-D (1-D and 2-D ones have unit leading\n"
                        "# dims); its geometry is the design's constants.\n",
                        s->name);
    if (s->n_epilogue > 0)
        akg_buf_puts(b, "# Each output tile goes through the epilogue before it is stored.\n");
    akg_buf_appendf(b, "sketch %s {\n", s->name);
    symbols(b, s);
    tensors(b, s);
    akg_buf_appendf(
        b,
        "  constexpr: MR = tune(%ld, %ld), NR = tune(%ld, %s), KC = tune(%ld, 256, 1024), "
        "NCOL = tune(256, 64, 512), OWB = tune(%ld, 32, 128);\n",
        s->mr, s->mr == 4 ? 6L : 4L, s->nr, s->nr == 32 ? "16, 64" : "8, 24", s->kc, s->owb);
    constants(b, s);
    binding(b, s);
    akg_buf_puts(b, "\n");
    for (int li = 0; li < s->n_layers; li++) {
        const akg_conv_layer_spec *c = &s->layers[li];
        char src[16], dst[16];
        snprintf(src, sizeof src, li == 0 ? "x" : "t%d", li - 1);
        snprintf(dst, sizeof dst, li == s->n_layers - 1 ? "y" : "t%d", li);
        if (li + 1 < s->n_layers)
            LINE(
                1,
                "t%d = alloc([N, OC%d, OD%d, OH%d, OW%d], llm_hint=[\"slow\", \"temp_workspace\"])",
                li, li, li, li, li);
        if (c->padded && c->algo != CONV_TRANSPOSED)
            padded_copy(b, c, li, src);
        if (c->algo == CONV_TRANSPOSED)
            transposed_layer(b, s, li, src, dst);
        else if (c->algo == CONV_DEPTHWISE)
            depthwise_layer(b, s, li, src, dst);
        else if (c->algo == CONV_POINTWISE)
            pointwise_layer(b, s, li, src, dst);
        else
            gemm_layer(b, s, li, src, dst);
    }
    akg_buf_puts(b, "}\n");
    return akg_buf_take(b);
}
