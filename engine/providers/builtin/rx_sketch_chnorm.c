/*
 * rx_sketch_chnorm.c: sketches of channel normalisations over x viewed as
 * [N, C, S] (S the spatial dims flattened): group and instance norm
 * (statistics per sample and group of CG channels), batch norm in training
 * (per channel over N and S) and in inference (running statistics).
 *
 * The statistics are f64 sums of BLK blocks (each reduced in 16 f32 lanes)
 * of x and x^2, mean and biased variance from them; then each channel gets
 * one scale and shift, computed in f64, and one vectorised affine pass
 * y = x * scale + shift whose stores may bypass the caches (the output is
 * large and not read again soon). A group's channels are contiguous, so the
 * affine pass reads what the statistics pass just brought into cache.
 */
#include <stdio.h>
#include <string.h>

#include "rx_sketch.h"

static int slot(const rx_sk *s, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(s->p, key);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
}

/* acc0 += sum(x), acc1 += sum(x^2) over row x[n, c, :] in BLK blocks. */
static void plane_sums(rx_sk *s, const char *ind)
{
    akg_buf *b = s->b;
    akg_buf_appendf(b, "%sfor q in range(0, S, BLK):\n", ind);
    akg_buf_appendf(b, "%s  t = alloc([min(BLK, S - q)])\n", ind);
    akg_buf_appendf(b, "%s  load(%s[n, c, q:q+min(BLK, S - q)] -> t)\n", ind, s->in[0]);
    akg_buf_appendf(b, "%s  @llm_hint(\"vectorize\", \"simd\", 16)\n", ind);
    akg_buf_appendf(b, "%s  acc0 = add(acc0, cast(reduce_sum(t, axis=0), f64))\n", ind);
    akg_buf_appendf(b, "%s  @llm_hint(\"vectorize\", \"simd\", 16)\n", ind);
    akg_buf_appendf(b, "%s  acc1 = add(acc1, cast(reduce_sum(mul(t, t), axis=0), f64))\n", ind);
}

static void zero_sums(rx_sk *s, const char *ind)
{
    for (int k = 0; k < 2; k++)
        akg_buf_appendf(s->b,
                        "%sacc%d = alloc([1], dtype=f64, llm_hint=[\"fastest\", \"accumulator\", "
                        "\"init_zero\"])\n",
                        ind, k);
}

/* mean, biased variance (clamped at 0) and rstd = 1 / sqrt(var + eps) from the sums of
 * `count` elements. */
static void moments(rx_sk *s, const char *ind, const char *count, const char *eps)
{
    akg_buf_appendf(s->b,
                    "%smean = div(acc0, %s)\n"
                    "%svar = max(sub(div(acc1, %s), mul(mean, mean)), 0.0)\n"
                    "%srstd = rsqrt(add(var, %s))\n",
                    ind, count, ind, count, ind, eps);
}

/* sc, sh (f64 [1]) of channel c from rstd and mean (tiles or, for `mean_tile`, the
 * running mean's view), then the affine pass over x[n, c, :]. */
static void channel_affine(rx_sk *s, const char *ind, int w, int bias, const char *mean)
{
    akg_buf *b = s->b;
    if (w >= 0)
        akg_buf_appendf(b,
                        "%s%s_c = alloc([1])\n%sload(%s[c:c+1] -> %s_c)\n%ssc = mul(rstd, "
                        "cast(%s_c, f64))\n",
                        ind, s->pt[w], ind, s->pt[w], s->pt[w], ind, s->pt[w]);
    else
        akg_buf_appendf(b, "%ssc = rstd\n", ind);
    if (bias >= 0)
        akg_buf_appendf(b,
                        "%s%s_c = alloc([1])\n%sload(%s[c:c+1] -> %s_c)\n%ssh = sub(cast(%s_c, "
                        "f64), mul(%s, sc))\n",
                        ind, s->pt[bias], ind, s->pt[bias], s->pt[bias], ind, s->pt[bias], mean);
    else
        akg_buf_appendf(b, "%ssh = neg(mul(%s, sc))\n", ind, mean);
}

static void affine_store(rx_sk *s, const char *ind)
{
    akg_buf_appendf(s->b,
                    "%st = alloc([S])\n%sload(%s[n, c, :] -> t)\n"
                    "%s@llm_hint(\"vectorize\", \"simd\")\n"
                    "%sstore(add(mul(t, cast(sc, f32)), cast(sh, f32)) -> y[n, c, :], "
                    "llm_hint=[\"nontemporal\"])\n",
                    ind, ind, s->in[0], ind, ind);
}

int rx_chnorm_sketch(rx_sk *s)
{
    akg_buf *b = s->b;
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(s->p, "mode"));
    int w = slot(s, "weight"), bias = slot(s, "bias"), eps = slot(s, "eps");
    int groups = slot(s, "groups"), rm = slot(s, "running_mean"), rvr = slot(s, "running_var");
    if (!mode || eps < 0 || eps >= s->n_s || w >= s->n_p || bias >= s->n_p || rm >= s->n_p ||
        rvr >= s->n_p)
        return rx_fail(s, "a channel normalisation the sketch writers cannot read");
    int group = !strcmp(mode, "group"), inst = !strcmp(mode, "instance");
    int batch = !strcmp(mode, "batch"), eval = !strcmp(mode, "eval");
    if (!group && !inst && !batch && !eval)
        return rx_fail(s, "a channel normalisation of mode '%s'", mode);
    if (eval && (rm < 0 || rvr < 0))
        return rx_fail(s, "batch_norm in inference without running statistics");
    if (s->rank < 2)
        return rx_fail(s, "a channel normalisation of a tensor of rank %d", s->rank);
    const cJSON *gs = group && groups >= 0 && groups < s->n_s
                          ? cJSON_GetArrayItem(cJSON_GetObjectItem(s->p, "scalars"), groups)
                          : NULL;
    if (gs)
        s->skip_scalar |= 1u << groups;
    char head[512];
    snprintf(head, sizeof head,
             "%s statistics; x viewed as [N, C, S] (S the spatial dims):\n# %s, then a scale and "
             "shift per channel (f64) and one vectorised affine pass",
             mode,
             eval    ? "the running statistics"
             : batch ? "f64 sums of x and x^2 per channel over N and S"
                     : "f64 sums of x and x^2 per sample and group of CG channels");
    rx_head(s, head, group || inst ? "N, C, S, G, CG" : "N, C, S");
    akg_buf_appendf(b, "  tensors: %s[N, C, S]: f32; ", s->in[0]);
    for (int k = 0; k < s->n_p; k++)
        akg_buf_appendf(b, "%s[C]: f32; ", s->pt[k]);
    akg_buf_puts(b, "y[N, C, S]: f32\n");
    if (!eval)
        akg_buf_puts(b, "  constexpr: BLK = tune(2048, 512, 8192)\n");
    rx_params_line(s);
    akg_buf_appendf(b, "  bind: %s = input(\"%s\", ", s->in[0],
                    s->ref->forward_params[rx_input_index(s, 0)].name);
    rx_dims(s);
    akg_buf_puts(b, "), N = A0, C = A1, S = ");
    rx_prod(s, 2, s->rank);
    akg_buf_puts(b, "\n");
    if (group) {
        const char *fi = gs ? cJSON_GetStringValue(cJSON_GetObjectItem(gs, "from_init")) : NULL;
        if (fi)
            akg_buf_appendf(b, "  bind: G = init(\"%s\"), CG = C // G\n", fi);
        else
            akg_buf_appendf(b, "  bind: G = %d, CG = C // G\n",
                            gs ? (int)cJSON_GetNumberValue(cJSON_GetObjectItem(gs, "value")) : 1);
    } else if (inst) {
        akg_buf_puts(b, "  bind: G = C, CG = 1\n");
    }
    if (s->n_p) {
        akg_buf_puts(b, "  bind: ");
        rx_bind_tensors(s, "[A1]");
        akg_buf_puts(b, "\n");
    }
    akg_buf_puts(b, "  bind: y = output(0, ");
    rx_dims(s);
    akg_buf_puts(b, ")");
    rx_bind_scalars(s);
    akg_buf_puts(b, "\n\n");
    const char *epsn = s->sc[eps];

    if (eval) {
        akg_buf_puts(b, "  # one task per (n, c) plane: the channel's scale and shift, the affine "
                        "pass\n");
        rx_loop_hints(s, "  ", 1);
        akg_buf_puts(b, "  for n in range(0, N):\n");
        rx_loop_hints(s, "    ", 1);
        akg_buf_puts(b, "    for c in range(0, C):\n");
        akg_buf_appendf(b,
                        "      %s_c = alloc([1])\n      load(%s[c:c+1] -> %s_c)\n"
                        "      %s_c = alloc([1])\n      load(%s[c:c+1] -> %s_c)\n"
                        "      rstd = rsqrt(add(cast(%s_c, f64), %s))\n"
                        "      mean = cast(%s_c, f64)\n",
                        s->pt[rm], s->pt[rm], s->pt[rm], s->pt[rvr], s->pt[rvr], s->pt[rvr],
                        s->pt[rvr], epsn, s->pt[rm]);
        channel_affine(s, "      ", w, bias, "mean");
        affine_store(s, "      ");
        akg_buf_puts(b, "}\n");
        return AKG_OK;
    }
    if (batch) {
        akg_buf_puts(b, "  # one task per channel: its sums over every sample, then its affine "
                        "pass\n");
        rx_loop_hints(s, "  ", 1);
        akg_buf_puts(b, "  for c in range(0, C):\n");
        zero_sums(s, "    ");
        akg_buf_puts(b, "    for n in range(0, N):\n");
        plane_sums(s, "      ");
        moments(s, "    ", "N * S", epsn);
        channel_affine(s, "    ", w, bias, "mean");
        akg_buf_puts(b, "    for n in range(0, N):\n");
        affine_store(s, "      ");
        akg_buf_puts(b, "}\n");
        return AKG_OK;
    }
    akg_buf_puts(b, "  # one task per (n, group): the group's channels are contiguous, so the "
                    "affine\n  # pass reads what the statistics pass brought into cache\n");
    rx_loop_hints(s, "  ", 1);
    akg_buf_puts(b, "  for n in range(0, N):\n");
    rx_loop_hints(s, "    ", 1);
    akg_buf_puts(b, "    for g in range(0, G):\n");
    zero_sums(s, "      ");
    akg_buf_puts(b, "      for c in range(g * CG, g * CG + CG):\n");
    plane_sums(s, "        ");
    moments(s, "      ", "CG * S", epsn);
    akg_buf_puts(b, "      for c in range(g * CG, g * CG + CG):\n");
    channel_affine(s, "        ", w, bias, "mean");
    affine_store(s, "        ");
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
