/*
 * rx_sketch_loss.c: sketches of row losses over [B, D] inputs: each row's
 * loss in one task (rows across cores), written to a "slow" tile of per-row
 * losses (parallel rows never update one accumulator), then their f64 mean.
 *
 *  - cross_entropy: the row's max and the sum of exp(x - max) (f32, one
 *    vectorised pass each), logsumexp in f64 minus the target's logit, read
 *    with gather at the row's int64 class index;
 *  - cosine: 1 - x.y / sqrt(max(|x|^2 |y|^2, eps^2)), eps = 1e-8;
 *  - triplet: max(|a - p + 1e-6| - |a - n + 1e-6| + margin, 0) (p = 2).
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

static void load_row(rx_sk *s, int k, const char *tile)
{
    akg_buf_appendf(s->b, "    %s = alloc([D])\n    load(%s[r, :] -> %s)\n", tile, s->in[k], tile);
}

int rx_rowloss_sketch(rx_sk *s)
{
    akg_buf *b = s->b;
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "kind"));
    int ce = kind && !strcmp(kind, "cross_entropy");
    int cos = kind && !strcmp(kind, "cosine");
    int tri = kind && !strcmp(kind, "triplet");
    if (!ce && !cos && !tri)
        return rx_fail(s, "a row loss of kind '%s' (known: cross_entropy, cosine, triplet)",
                       kind ? kind : "?");
    int need = ce || cos ? 2 : 3;
    if (s->n_in != need || s->rank != 2)
        return rx_fail(s,
                       "a %s loss of %d inputs of rank %d (%d inputs [batch, features] are "
                       "designed)",
                       kind, s->n_in, s->rank, need);
    int margin = -1;
    if (tri) {
        const cJSON *mv = cJSON_GetObjectItem(s->p, "margin");
        margin = cJSON_IsNumber(mv) ? (int)mv->valuedouble : -1;
        if (margin < 0 || margin >= s->n_s)
            return rx_fail(s, "a triplet margin loss whose margin cannot be read");
    }
    const char *what = ce    ? "cross entropy against int64 class indices"
                       : cos ? "mean of 1 - cosine similarity along dim 1"
                             : "triplet margin loss (p = 2)";
    char head[512];
    snprintf(head, sizeof head,
             "%s: one loss per row of the [B, D] inputs\n# (one pass over the row), the row losses "
             "kept in a tile, then their mean in f64",
             what);
    rx_head(s, head, "B, D");
    akg_buf_puts(b, "  tensors: ");
    for (int k = 0; k < s->n_in; k++) {
        if (ce && k == 1)
            akg_buf_appendf(b, "%s[B]: %s; ", s->in[k], rx_dtype(rx_input_dtype(s, k)));
        else
            akg_buf_appendf(b, "%s[B, D]: f32; ", s->in[k]);
    }
    akg_buf_puts(b, "out[1]: f32\n");
    rx_params_line(s);
    akg_buf_appendf(b, "  bind: %s = input(\"%s\", [A0, A1]), B = A0, D = A1\n", s->in[0],
                    s->ref->forward_params[rx_input_index(s, 0)].name);
    for (int k = 1; k < s->n_in; k++)
        akg_buf_appendf(b, "  bind: %s = input(\"%s\", %s)\n", s->in[k],
                        s->ref->forward_params[rx_input_index(s, k)].name,
                        ce ? "[A0]" : "[A0, A1]");
    akg_buf_puts(b, "  bind: out = output(0, [])");
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n  lv = alloc([B], dtype=f64, llm_hint=[\"slow\"])\n");
    rx_loop_hints(s, "  ", 1);
    akg_buf_puts(b, "  for r in range(0, B):\n");
    if (ce) {
        load_row(s, 0, "t0");
        akg_buf_appendf(b,
                        "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    m = reduce_max(t0, axis=0)\n"
                        "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    se = reduce_sum(exp(sub(t0, m)), axis=0)\n"
                        "    k = alloc([1], dtype=%s)\n    load(%s[r:r+1] -> k)\n"
                        "    # the target's logit\n    g = gather(t0, k, 0)\n"
                        "    store(sub(add(cast(m, f64), log(cast(se, f64))), cast(g, f64)) -> "
                        "lv[r:r+1])\n",
                        rx_dtype(rx_input_dtype(s, 1)), s->in[1]);
    } else if (cos) {
        load_row(s, 0, "t0");
        load_row(s, 1, "t1");
        akg_buf_puts(b, "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    w12 = reduce_sum(mul(t0, t1), axis=0)\n"
                        "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    w1 = reduce_sum(mul(t0, t0), axis=0)\n"
                        "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    w2 = reduce_sum(mul(t1, t1), axis=0)\n"
                        "    store(sub(1.0, div(cast(w12, f64), sqrt(max(mul(cast(w1, f64), "
                        "cast(w2, f64)), 1e-16)))) -> lv[r:r+1])\n");
    } else {
        load_row(s, 0, "t0");
        load_row(s, 1, "t1");
        load_row(s, 2, "t2");
        /* |a - p + eps|^2 with eps = 1e-6 (an f32 constant) */
        akg_buf_puts(b, "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    dp = reduce_sum(mul(add(sub(t0, t1), cast(1e-06, f32)), "
                        "add(sub(t0, t1), cast(1e-06, f32))), axis=0)\n"
                        "    @llm_hint(\"vectorize\", \"simd\", 16)\n"
                        "    dn = reduce_sum(mul(add(sub(t0, t2), cast(1e-06, f32)), "
                        "add(sub(t0, t2), cast(1e-06, f32))), axis=0)\n");
        akg_buf_appendf(b,
                        "    store(relu(add(sub(sqrt(cast(dp, f64)), sqrt(cast(dn, f64))), %s)) "
                        "-> lv[r:r+1])\n",
                        s->sc[margin]);
    }
    akg_buf_puts(b, "  @llm_hint(\"vectorize\", \"simd\")\n  total = reduce_sum(lv, axis=0)\n"
                    "  store(cast(div(total, B), f32) -> out[0:1])\n}\n");
    return AKG_OK;
}
