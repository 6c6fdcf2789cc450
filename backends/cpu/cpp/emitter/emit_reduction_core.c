/*
 * emit_reduction_core.c: C++ for reductions, row normalisations, scans,
 * channel normalisations and losses (see emit_reduction_core.h).
 *
 * Accuracy: sums and products accumulate in double in LANES independent
 * accumulators (vectorised, and no long dependency chain); maxima in float.
 * Contiguous rows (I == 1) run one row per iteration, rows split across
 * cores; when there are too few rows to fill the cores, each row's
 * statistics are split across cores instead. Strided reductions (I > 1)
 * keep a chunk of CH columns of accumulators and stream the D rows through
 * them, vectorised along I.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_reduction_core.h"

#define CH_MAX 4096

void akg_rx_read_choices(const akg_sketch *sk, int safe_mode, akg_rx_choices *ch)
{
    ch->rows = akg_sketch_const_by_name(sk, "ROWS", 4);
    ch->ch = akg_sketch_const_by_name(sk, "CH", 256);
    ch->lanes = akg_sketch_const_by_name(sk, "LANES", 16);
    if (ch->rows < 1)
        ch->rows = 1;
    if (ch->ch < 8)
        ch->ch = 8;
    if (ch->ch > CH_MAX)
        ch->ch = CH_MAX;
    if (ch->lanes < 1)
        ch->lanes = 1;
    if (ch->lanes > 64)
        ch->lanes = 64;
    ch->parallel = !safe_mode && akg_sketch_has_hint(sk, "parallel");
    ch->simd = !safe_mode && akg_sketch_has_hint(sk, "vectorize");
}

/* ---------- expressions to C ---------- */

typedef struct {
    const cJSON *params;
    const char *idx;  /* element index */
    const char *pidx; /* parameter index */
    const char *lane; /* "" or "[i]": statistics kept per column */
    int dbl;          /* double context (row values) */
} cg;

static const char *input_dtype(const cJSON *params, int k)
{
    const char *dt =
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(params, "input_dtypes"), k));
    return dt ? dt : "float32";
}

static int cexpr(akg_buf *b, const cg *g, const cJSON *e, char *err, size_t errlen);

static int cargs(akg_buf *b, const cg *g, const cJSON *e, const char *fmt, char *err, size_t errlen)
{
    const cJSON *a = cJSON_GetObjectItem(e, "a");
    for (const char *p = fmt; *p; p++) {
        if (*p == '%' && p[1] >= '0' && p[1] <= '2') {
            const cJSON *arg = cJSON_GetArrayItem(a, p[1] - '0');
            if (!arg)
                return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: op %s lacks an argument",
                                cJSON_GetStringValue(cJSON_GetObjectItem(e, "op")));
            akg_buf_puts(b, "(");
            int rc = cexpr(b, g, arg, err, errlen);
            if (rc)
                return rc;
            akg_buf_puts(b, ")");
            p++;
        } else {
            akg_buf_append(b, p, 1);
        }
    }
    return AKG_OK;
}

static const struct {
    const char *op, *f, *d; /* float and double forms */
} cops[] = {
    {"add", "%0 + %1", "%0 + %1"},
    {"sub", "%0 - %1", "%0 - %1"},
    {"mul", "%0 * %1", "%0 * %1"},
    {"div", "%0 / %1", "%0 / %1"},
    {"neg", "-%0", "-%0"},
    {"square", "%0 * %0", "%0 * %0"},
    {"abs", "std::fabs(%0)", "std::fabs(%0)"},
    {"sqrt", "std::sqrt(%0)", "std::sqrt(%0)"},
    {"rsqrt", "1.0f / std::sqrt(%0)", "1.0 / std::sqrt(%0)"},
    {"reciprocal", "1.0f / %0", "1.0 / %0"},
    {"exp", "AKG_EXP(%0)", "std::exp(%0)"},
    {"log", "AKG_LOG(%0)", "std::log(%0)"},
    {"max", "(%0 != %0 || %0 > %1) ? %0 : %1", "(%0 != %0 || %0 > %1) ? %0 : %1"},
    {"min", "(%0 != %0 || %0 < %1) ? %0 : %1", "(%0 != %0 || %0 < %1) ? %0 : %1"},
    {"relu", "%0 < 0.0f ? 0.0f : %0", "%0 < 0.0 ? 0.0 : %0"},
    {"sign", "%0 > 0.0f ? 1.0f : (%0 < 0.0f ? -1.0f : %0)",
     "%0 > 0.0 ? 1.0 : (%0 < 0.0 ? -1.0 : %0)"},
    {"sigmoid", "1.0f / (1.0f + AKG_EXP(-%0))", "1.0 / (1.0 + std::exp(-%0))"},
    {"tanh", "AKG_TANH(%0)", "std::tanh(%0)"},
    {"pow", "std::pow(%0, %1)", "std::pow(%0, %1)"},
    /* smooth_l1(d, beta), huber(d, delta), xlogx(t) = t log t (0 at t = 0) */
    {"smooth_l1", "std::fabs(%0) < %1 ? 0.5f * %0 * %0 / %1 : std::fabs(%0) - 0.5f * %1",
     "std::fabs(%0) < %1 ? 0.5 * %0 * %0 / %1 : std::fabs(%0) - 0.5 * %1"},
    {"huber", "std::fabs(%0) < %1 ? 0.5f * %0 * %0 : %1 * (std::fabs(%0) - 0.5f * %1)",
     "std::fabs(%0) < %1 ? 0.5 * %0 * %0 : %1 * (std::fabs(%0) - 0.5 * %1)"},
    {"xlogx", "%0 > 0.0f ? %0 * AKG_LOG(%0) : (%0 == 0.0f ? 0.0f : NAN)",
     "%0 > 0.0 ? %0 * std::log(%0) : (%0 == 0.0 ? 0.0 : NAN)"},
};

static int cexpr(akg_buf *b, const cg *g, const cJSON *e, char *err, size_t errlen)
{
    if (cJSON_IsNumber(e)) {
        if (g->dbl)
            akg_buf_appendf(b, "%.17g", e->valuedouble);
        else
            akg_cpp_float_literal(b, e->valuedouble);
        return AKG_OK;
    }
    const cJSON *v;
    if ((v = cJSON_GetObjectItem(e, "in"))) {
        int k = (int)v->valuedouble;
        if (strcmp(input_dtype(g->params, k), "float32") != 0)
            akg_buf_appendf(b, "(float)in%d[%s]", k, g->idx);
        else
            akg_buf_appendf(b, "in%d[%s]", k, g->idx);
        return AKG_OK;
    }
    if ((v = cJSON_GetObjectItem(e, "p"))) {
        akg_buf_appendf(b, "p%d[%s]", (int)v->valuedouble, g->pidx);
        return AKG_OK;
    }
    if ((v = cJSON_GetObjectItem(e, "s"))) {
        akg_buf_appendf(b, g->dbl ? "(double)s%d" : "s%d", (int)v->valuedouble);
        return AKG_OK;
    }
    if ((v = cJSON_GetObjectItem(e, "st"))) {
        akg_buf_appendf(b, g->dbl ? "st%d%s" : "stf%d%s", (int)v->valuedouble, g->lane);
        return AKG_OK;
    }
    if ((v = cJSON_GetObjectItem(e, "rv"))) {
        akg_buf_appendf(b, g->dbl ? "rv%d%s" : "rvf%d%s", (int)v->valuedouble, g->lane);
        return AKG_OK;
    }
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(e, "op"));
    for (size_t i = 0; op && i < sizeof cops / sizeof cops[0]; i++)
        if (!strcmp(cops[i].op, op))
            return cargs(b, g, e, g->dbl ? cops[i].d : cops[i].f, err, errlen);
    return akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: no lowering for op %s",
                    op ? op : "?");
}

/* ---------- shared pieces ---------- */

static int count(const cJSON *params, const char *key)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(params, key));
}

static const char *design_kind(const cJSON *params)
{
    const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(params, "design"));
    return k ? k : "";
}

static int out_is_int64(const cJSON *params)
{
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(params, "out_dtype"));
    return dt && !strcmp(dt, "int64");
}

static void c_signature(akg_buf *b, const cJSON *params)
{
    akg_buf_puts(b, "extern \"C\" int akg_kernel(");
    int nin = count(params, "inputs");
    for (int k = 0; k < nin; k++) {
        const char *dt = input_dtype(params, k);
        const char *ct = !strcmp(dt, "float32") ? "float"
                         : !strcmp(dt, "int64") ? "int64_t"
                         : !strcmp(dt, "bool")  ? "uint8_t"
                                                : "float";
        akg_buf_appendf(b, "const %s *__restrict in%d, ", ct, k);
    }
    akg_buf_appendf(b, "%s *__restrict out, ", out_is_int64(params) ? "int64_t" : "float");
    for (int k = 0; k < count(params, "tensors"); k++)
        akg_buf_appendf(b, "const float *__restrict p%d, ", k);
    akg_buf_puts(b, "int64_t O, int64_t D, int64_t I, double div");
    for (int k = 0; k < count(params, "scalars"); k++)
        akg_buf_appendf(b, ", float s%d", k);
    akg_buf_puts(b, ") {\n");
}

static const char *stat_mode(const cJSON *params, int k)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(params, "stats"), k), "mode"));
}

static const cJSON *stat_expr(const cJSON *params, int k)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(params, "stats"), k), "expr");
}

static int is_float_acc(const char *mode)
{
    return !strcmp(mode, "max") || !strcmp(mode, "min") || !strcmp(mode, "argmax") ||
           !strcmp(mode, "argmin");
}

static int is_sum_like(const char *mode)
{
    return !strcmp(mode, "sum") || !strcmp(mode, "mean") || !strcmp(mode, "norm2");
}

static const char *acc_init(const char *mode)
{
    if (!strcmp(mode, "max") || !strcmp(mode, "argmax"))
        return "-INFINITY";
    if (!strcmp(mode, "min") || !strcmp(mode, "argmin"))
        return "INFINITY";
    if (!strcmp(mode, "prod"))
        return "1.0";
    return "0.0";
}

/* acc = combine(acc, e) for a value named e */
static void acc_update(akg_buf *b, const char *mode, const char *acc)
{
    if (!strcmp(mode, "max") || !strcmp(mode, "argmax"))
        akg_buf_appendf(b, "%s = (e > %s || e != e) ? e : %s;", acc, acc, acc);
    else if (!strcmp(mode, "min") || !strcmp(mode, "argmin"))
        akg_buf_appendf(b, "%s = (e < %s || e != e) ? e : %s;", acc, acc, acc);
    else if (!strcmp(mode, "prod"))
        akg_buf_appendf(b, "%s *= (double)e;", acc);
    else if (!strcmp(mode, "norm2"))
        akg_buf_appendf(b, "%s += (double)e * (double)e;", acc);
    else
        akg_buf_appendf(b, "%s += (double)e;", acc);
}

/* combine two partial accumulators a and b into a */
static void acc_merge(akg_buf *b, const char *mode, const char *a, const char *o)
{
    if (!strcmp(mode, "max") || !strcmp(mode, "argmax"))
        akg_buf_appendf(b, "%s = (%s > %s || %s != %s) ? %s : %s;", a, o, a, o, o, o, a);
    else if (!strcmp(mode, "min") || !strcmp(mode, "argmin"))
        akg_buf_appendf(b, "%s = (%s < %s || %s != %s) ? %s : %s;", a, o, a, o, o, o, a);
    else if (!strcmp(mode, "prod"))
        akg_buf_appendf(b, "%s *= %s;", a, o);
    else
        akg_buf_appendf(b, "%s += %s;", a, o);
}

/* the statistic's final value from its accumulator (double) */
static void acc_final(akg_buf *b, const char *mode, const char *acc)
{
    if (!strcmp(mode, "mean"))
        akg_buf_appendf(b, "(double)%s / (double)D", acc);
    else if (!strcmp(mode, "norm2"))
        akg_buf_appendf(b, "std::sqrt((double)%s)", acc);
    else
        akg_buf_appendf(b, "(double)%s", acc);
}

/* Emits the statistics of the contiguous run [base, base + len) into
 * variables st<k> (double), lanes-wide accumulation; with par, the run is
 * split across threads (inside an existing serial loop). */
static int emit_row_stats(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, int par,
                          const char *indent, char *err, size_t errlen)
{
    int ns = count(params, "stats");
    long L = ch->lanes;
    cg g = {params, "k", "(k - base)", "", 0};
    for (int s = 0; s < ns; s++) {
        const char *m = stat_mode(params, s);
        akg_buf_appendf(b, "%s%s acc%d = %s;\n", indent, is_float_acc(m) ? "float" : "double", s,
                        acc_init(m));
    }
    if (par)
        akg_buf_appendf(b, "%s#pragma omp parallel\n%s{\n", indent, indent);
    else
        akg_buf_appendf(b, "%s{\n", indent);
    for (int s = 0; s < ns; s++) {
        const char *m = stat_mode(params, s);
        akg_buf_appendf(b, "%s  %s a%d[%ld];\n%s  for (int j = 0; j < %ld; ++j) a%d[j] = %s;\n",
                        indent, is_float_acc(m) ? "float" : "double", s, L, indent, L, s,
                        acc_init(m));
    }
    /* sums run in float lanes over blocks of 32 * LANES elements, each
     * block's lanes then added in double: 8-wide adds, double accuracy */
    akg_buf_appendf(b, "%s  const int64_t nfull = len / %ld, nblk = (nfull + 31) / 32;\n", indent,
                    L);
    if (par)
        akg_buf_appendf(b, "%s#pragma omp for schedule(static) nowait\n", indent);
    akg_buf_appendf(b, "%s  for (int64_t qb = 0; qb < nblk; ++qb) {\n", indent);
    akg_buf_appendf(b, "%s   const int64_t qe = qb * 32 + 32 < nfull ? qb * 32 + 32 : nfull;\n",
                    indent);
    for (int s = 0; s < ns; s++)
        if (is_sum_like(stat_mode(params, s)) || !strcmp(stat_mode(params, s), "prod"))
            akg_buf_appendf(
                b, "%s   float f%d[%ld];\n%s   for (int j = 0; j < %ld; ++j) f%d[j] = %s;\n",
                indent, s, L, indent, L, s,
                !strcmp(stat_mode(params, s), "prod") ? "1.0f" : "0.0f");
    akg_buf_appendf(b, "%s   for (int64_t q = qb * 32; q < qe; ++q) {\n", indent);
    if (ch->simd)
        akg_buf_appendf(b, "%s#pragma omp simd\n", indent);
    akg_buf_appendf(b, "%s    for (int j = 0; j < %ld; ++j) {\n", indent, L);
    akg_buf_appendf(b, "%s      const int64_t k = base + q * %ld + j;\n", indent, L);
    akg_buf_appendf(b, "%s      (void)k;\n", indent);
    for (int s = 0; s < ns; s++) {
        akg_buf_appendf(b, "%s      { const float e = ", indent);
        int rc = cexpr(b, &g, stat_expr(params, s), err, errlen);
        if (rc)
            return rc;
        char acc[32];
        const char *m = stat_mode(params, s);
        akg_buf_puts(b, "; ");
        if (is_sum_like(m)) {
            akg_buf_appendf(b, "f%d[j] += %s;", s, !strcmp(m, "norm2") ? "e * e" : "e");
        } else if (!strcmp(m, "prod")) {
            akg_buf_appendf(b, "f%d[j] *= e;", s);
        } else {
            snprintf(acc, sizeof acc, "a%d[j]", s);
            acc_update(b, m, acc);
        }
        akg_buf_puts(b, " }\n");
    }
    akg_buf_appendf(b, "%s    }\n%s   }\n", indent, indent);
    for (int s = 0; s < ns; s++)
        if (is_sum_like(stat_mode(params, s)) || !strcmp(stat_mode(params, s), "prod"))
            akg_buf_appendf(b, "%s   for (int j = 0; j < %ld; ++j) a%d[j] %s= (double)f%d[j];\n",
                            indent, L, s, !strcmp(stat_mode(params, s), "prod") ? "*" : "+", s);
    akg_buf_appendf(b, "%s  }\n", indent);
    if (par)
        akg_buf_appendf(b, "%s#pragma omp critical\n", indent);
    akg_buf_appendf(b, "%s  {\n", indent);
    for (int s = 0; s < ns; s++) {
        char a[32], o[32];
        snprintf(a, sizeof a, "acc%d", s);
        snprintf(o, sizeof o, "a%d[j]", s);
        akg_buf_appendf(b, "%s    for (int j = 0; j < %ld; ++j) { ", indent, L);
        acc_merge(b, stat_mode(params, s), a, o);
        akg_buf_puts(b, " }\n");
    }
    akg_buf_appendf(b, "%s  }\n%s}\n", indent, indent);
    /* the tail */
    akg_buf_appendf(b, "%sfor (int64_t k = base + (len / %ld) * %ld; k < base + len; ++k) {\n",
                    indent, L, L);
    for (int s = 0; s < ns; s++) {
        akg_buf_appendf(b, "%s  { const float e = ", indent);
        int rc = cexpr(b, &g, stat_expr(params, s), err, errlen);
        if (rc)
            return rc;
        char acc[32];
        snprintf(acc, sizeof acc, "acc%d", s);
        akg_buf_puts(b, "; ");
        acc_update(b, stat_mode(params, s), acc);
        akg_buf_puts(b, " }\n");
    }
    akg_buf_appendf(b, "%s}\n", indent);
    for (int s = 0; s < ns; s++) {
        akg_buf_appendf(b, "%sconst double st%d = ", indent, s);
        char acc[32];
        snprintf(acc, sizeof acc, "acc%d", s);
        acc_final(b, stat_mode(params, s), acc);
        akg_buf_appendf(b, ";\n%sconst float stf%d = (float)st%d; (void)stf%d;\n", indent, s, s, s);
    }
    return AKG_OK;
}

/* Row values rv<k> (double) and rvf<k> (float) from the statistics. */
static int emit_rowvals(akg_buf *b, const cJSON *params, const char *indent, const char *lane,
                        char *err, size_t errlen)
{
    cg g = {params, "?", "?", lane, 1};
    int n = count(params, "rowvals");
    for (int k = 0; k < n; k++) {
        akg_buf_appendf(b, "%s%s rv%d%s = ", indent, lane[0] ? "" : "const double", k, lane);
        int rc = cexpr(b, &g, cJSON_GetArrayItem(cJSON_GetObjectItem(params, "rowvals"), k), err,
                       errlen);
        if (rc)
            return rc;
        akg_buf_appendf(b, ";\n%s%s rvf%d%s = (float)rv%d%s;\n", indent,
                        lane[0] ? "" : "const float", k, lane, k, lane);
    }
    return AKG_OK;
}

/* ---------- reduce: out[o, i] = stat over D ---------- */

/* argmax / argmin of one contiguous row in one pass: LANES lanes keep their
 * best value and the block it came from; lanes merge by value, then by the
 * earliest index (a NaN wins, as in PyTorch). Writes out[o]. */
static int emit_row_arg(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                        size_t errlen)
{
    const char *m = stat_mode(params, 0);
    const char *cmp = !strcmp(m, "argmax") ? ">" : "<";
    long L = ch->lanes;
    cg g = {params, "k", "(k - base)", "", 0};
    akg_buf_appendf(b, "        float bv[%ld]; int32_t bq[%ld];\n", L, L);
    akg_buf_appendf(b, "        for (int j = 0; j < %ld; ++j) { bv[j] = %s; bq[j] = 0; }\n", L,
                    acc_init(m));
    akg_buf_appendf(b, "        const int64_t nfull = len / %ld;\n", L);
    akg_buf_puts(b, "        for (int64_t q = 0; q < nfull; ++q) {\n");
    if (ch->simd)
        akg_buf_puts(b, "#pragma omp simd\n");
    akg_buf_appendf(b, "          for (int j = 0; j < %ld; ++j) {\n", L);
    akg_buf_appendf(
        b, "            const int64_t k = base + q * %ld + j;\n            const float e = ", L);
    int rc = cexpr(b, &g, stat_expr(params, 0), err, errlen);
    if (rc)
        return rc;
    akg_buf_appendf(
        b,
        ";\n            const int t = (e %s bv[j]) || (e != e && bv[j] == bv[j]);\n"
        "            bv[j] = t ? e : bv[j];\n            bq[j] = t ? (int32_t)q : bq[j];\n"
        "          }\n        }\n",
        cmp);
    akg_buf_appendf(b,
                    "        float best = %s;\n        int64_t at = 0;\n        int first = 1;\n",
                    acc_init(m));
    akg_buf_appendf(b, "        for (int j = 0; j < %ld && nfull > 0; ++j) {\n", L);
    akg_buf_appendf(b,
                    "          const float v = bv[j];\n          const int64_t idx = "
                    "(int64_t)bq[j] * %ld + j;\n",
                    L);
    akg_buf_appendf(b,
                    "          const int take = first || (v != v ? (best == best || idx < at)\n"
                    "                               : (best == best && (v %s best || (v == best && "
                    "idx < at))));\n"
                    "          if (take) { best = v; at = idx; first = 0; }\n        }\n",
                    cmp);
    akg_buf_appendf(b,
                    "        for (int64_t k = base + nfull * %ld; k < base + len; ++k) {\n         "
                    " const float e = ",
                    L);
    if ((rc = cexpr(b, &g, stat_expr(params, 0), err, errlen)))
        return rc;
    akg_buf_appendf(b,
                    ";\n          if (first || (e %s best) || (e != e && best == best)) { best = "
                    "e; at = k - base; first = 0; }\n"
                    "        }\n        out[o] = at;\n",
                    cmp);
    return AKG_OK;
}

static int emit_reduce(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                       size_t errlen)
{
    const char *m = stat_mode(params, 0);
    int arg = !strcmp(m, "argmax") || !strcmp(m, "argmin");
    const char *par = ch->parallel ? "" : "//";
    c_signature(b, params);
    akg_buf_puts(b, "  (void)div;\n  if (I == 1) {\n");
    /* rows across cores, or one row's run across cores when rows are few */
    akg_buf_appendf(b, "    if (O >= %ld || D < 65536) {\n", ch->rows * 8);
    akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static) if (O * D > 32768)\n", par);
    akg_buf_puts(b, "      for (int64_t o = 0; o < O; ++o) {\n");
    akg_buf_puts(b, "        const int64_t base = o * D, len = D;\n");
    akg_rx_choices serial = *ch;
    int rc;
    if (arg) {
        if ((rc = emit_row_arg(b, params, ch, err, errlen)))
            return rc;
    } else {
        if ((rc = emit_row_stats(b, params, &serial, 0, "        ", err, errlen)))
            return rc;
        akg_buf_puts(b, "        out[o] = (float)(st0 / div);\n");
    }
    akg_buf_puts(b, "      }\n    } else {\n");
    akg_buf_puts(b, "      for (int64_t o = 0; o < O; ++o) {\n");
    akg_buf_puts(b, "        const int64_t base = o * D, len = D;\n");
    if ((rc = emit_row_stats(b, params, ch, ch->parallel && !arg, "        ", err, errlen)))
        return rc;
    if (arg) {
        akg_buf_puts(b, "        int64_t at = 0;\n"
                        "        for (int64_t k = base; k < base + len; ++k) {\n"
                        "          const float e = ");
        cg g = {params, "k", "(k - base)", "", 0};
        if ((rc = cexpr(b, &g, stat_expr(params, 0), err, errlen)))
            return rc;
        akg_buf_puts(
            b, ";\n          if (e == acc0 || (acc0 != acc0 && e != e)) { at = k - base; break; }\n"
               "        }\n        out[o] = at;\n");
    } else {
        akg_buf_puts(b, "        out[o] = (float)(st0 / div);\n");
    }
    akg_buf_puts(b, "      }\n    }\n    return 0;\n  }\n");
    /* I > 1 with few outer rows: the D rows split across cores, each core
     * streaming whole rows into private accumulators, merged at the end */
    int facc0 = is_float_acc(m);
    const char *at = facc0 ? "float" : "double";
    akg_buf_appendf(b, "  if (O < 4 && D >= 64 && I <= (1 << 20)) {\n");
    akg_buf_appendf(b, "    %s *tot = new %s[I];\n    int64_t *tat = new int64_t[I];\n", at, at);
    akg_buf_puts(b, "    for (int64_t o = 0; o < O; ++o) {\n");
    akg_buf_appendf(b, "      for (int64_t i = 0; i < I; ++i) { tot[i] = %s; tat[i] = 0; }\n",
                    acc_init(m));
    akg_buf_appendf(b, "%s#pragma omp parallel\n      {\n", par);
    akg_buf_appendf(b, "        %s *acc = new %s[I];\n        int64_t *pat = new int64_t[I];\n", at,
                    at);
    akg_buf_appendf(b, "        for (int64_t i = 0; i < I; ++i) { acc[i] = %s; pat[i] = 0; }\n",
                    acc_init(m));
    akg_buf_appendf(b, "%s#pragma omp for schedule(static) nowait\n", par);
    akg_buf_puts(b, "        for (int64_t d = 0; d < D; ++d) {\n"
                    "          const int64_t row = (o * D + d) * I;\n");
    if (ch->simd)
        akg_buf_puts(b, "#pragma omp simd\n");
    akg_buf_puts(b, "          for (int64_t i = 0; i < I; ++i) {\n            const float e = ");
    {
        cg gd = {params, "row + i", "d", "", 0};
        if ((rc = cexpr(b, &gd, stat_expr(params, 0), err, errlen)))
            return rc;
    }
    akg_buf_puts(b, ";\n            ");
    if (arg) {
        const char *cmp = !strcmp(m, "argmax") ? ">" : "<";
        akg_buf_appendf(b,
                        "const int t = (e %s acc[i] || (e != e && acc[i] == acc[i]));\n"
                        "            acc[i] = t ? e : acc[i];\n"
                        "            pat[i] = t ? d : pat[i];\n",
                        cmp);
    } else {
        acc_update(b, m, "acc[i]");
        akg_buf_puts(b, "\n");
    }
    akg_buf_puts(b, "          }\n        }\n");
    akg_buf_appendf(b, "%s#pragma omp critical\n        {\n", par);
    akg_buf_puts(b, "          for (int64_t i = 0; i < I; ++i) {\n");
    if (arg) {
        const char *cmp = !strcmp(m, "argmax") ? ">" : "<";
        akg_buf_appendf(b,
                        "            const int t = (acc[i] %s tot[i] || (acc[i] == tot[i] && "
                        "pat[i] < tat[i]) ||\n"
                        "                           (acc[i] != acc[i] && (tot[i] == tot[i] || "
                        "pat[i] < tat[i])));\n"
                        "            if (t) { tot[i] = acc[i]; tat[i] = pat[i]; }\n",
                        cmp);
    } else {
        akg_buf_puts(b, "            ");
        acc_merge(b, m, "tot[i]", "acc[i]");
        akg_buf_puts(b, "\n");
    }
    akg_buf_puts(b,
                 "          }\n        }\n        delete[] acc;\n        delete[] pat;\n      }\n");
    if (arg)
        akg_buf_puts(b, "      for (int64_t i = 0; i < I; ++i) out[o * I + i] = tat[i];\n");
    else {
        akg_buf_puts(b, "      for (int64_t i = 0; i < I; ++i) out[o * I + i] = (float)((");
        acc_final(b, m, "tot[i]");
        akg_buf_puts(b, ") / div);\n");
    }
    akg_buf_puts(b, "    }\n    delete[] tot;\n    delete[] tat;\n    return 0;\n  }\n");
    /* I > 1: CH columns of accumulators, D rows streamed through them */
    akg_buf_appendf(b, "  const int64_t CH = %ld;\n", ch->ch);
    akg_buf_puts(b, "  const int64_t nch = (I + CH - 1) / CH;\n");
    akg_buf_appendf(b, "%s#pragma omp parallel for collapse(2) schedule(static)\n", par);
    akg_buf_puts(b, "  for (int64_t o = 0; o < O; ++o) {\n"
                    "    for (int64_t c = 0; c < nch; ++c) {\n"
                    "      const int64_t i0 = c * CH, w = I - i0 < CH ? I - i0 : CH;\n");
    int facc = is_float_acc(m);
    akg_buf_appendf(b, "      %s acc[%ld];\n", facc ? "float" : "double", ch->ch);
    if (arg)
        akg_buf_appendf(b, "      int32_t at[%ld];\n", ch->ch);
    akg_buf_appendf(b, "      for (int64_t i = 0; i < w; ++i) acc[i] = %s;\n", acc_init(m));
    if (arg)
        akg_buf_puts(b, "      for (int64_t i = 0; i < w; ++i) at[i] = 0;\n");
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n"
                    "        const int64_t row = (o * D + d) * I + i0;\n");
    if (ch->simd)
        akg_buf_puts(b, "#pragma omp simd\n");
    akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) {\n          const float e = ");
    cg g = {params, "row + i", "d", "", 0};
    if ((rc = cexpr(b, &g, stat_expr(params, 0), err, errlen)))
        return rc;
    akg_buf_puts(b, ";\n          ");
    if (arg) {
        const char *cmp = !strcmp(m, "argmax") ? ">" : "<";
        akg_buf_appendf(b,
                        "const int t = (e %s acc[i] || (e != e && acc[i] == acc[i]));\n"
                        "          acc[i] = t ? e : acc[i];\n"
                        "          at[i] = t ? (int32_t)d : at[i];\n",
                        cmp);
    } else {
        acc_update(b, m, "acc[i]");
        akg_buf_puts(b, "\n");
    }
    akg_buf_puts(b, "        }\n      }\n");
    if (arg)
        akg_buf_puts(b, "      for (int64_t i = 0; i < w; ++i) out[o * I + i0 + i] = at[i];\n");
    else {
        akg_buf_puts(b, "      for (int64_t i = 0; i < w; ++i) out[o * I + i0 + i] = (float)((");
        acc_final(b, m, "acc[i]");
        akg_buf_puts(b, ") / div);\n");
    }
    akg_buf_puts(b, "    }\n  }\n  return 0;\n}\n");
    return AKG_OK;
}

/* ---------- rowmap: out = f(x, stats of x's row) ---------- */

static int emit_rowmap(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                       size_t errlen)
{
    const char *par = ch->parallel ? "" : "//";
    const char *simd = ch->simd ? "#pragma omp simd\n" : "";
    const cJSON *outx = cJSON_GetObjectItem(params, "out");
    int ns = count(params, "stats");
    c_signature(b, params);
    akg_buf_puts(b, "  (void)div;\n  if (I == 1) {\n");
    akg_buf_appendf(b, "    if (O >= %ld || D < 65536) {\n", ch->rows * 4);
    akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static) if (O * D > 32768)\n", par);
    akg_buf_puts(b, "      for (int64_t o = 0; o < O; ++o) {\n"
                    "        const int64_t base = o * D, len = D;\n");
    int rc = emit_row_stats(b, params, ch, 0, "        ", err, errlen);
    if (rc || (rc = emit_rowvals(b, params, "        ", "", err, errlen)))
        return rc;
    akg_buf_appendf(b, "%s        for (int64_t k = base; k < base + len; ++k) out[k] = ", simd);
    cg g = {params, "k", "(k - base)", "", 0};
    if ((rc = cexpr(b, &g, outx, err, errlen)))
        return rc;
    akg_buf_puts(b, ";\n      }\n    } else {\n");
    /* few long rows: statistics and the map split across cores */
    akg_buf_puts(b, "      for (int64_t o = 0; o < O; ++o) {\n"
                    "        const int64_t base = o * D, len = D;\n");
    if ((rc = emit_row_stats(b, params, ch, ch->parallel, "        ", err, errlen)) ||
        (rc = emit_rowvals(b, params, "        ", "", err, errlen)))
        return rc;
    akg_buf_appendf(b, "%s#pragma omp parallel for %s schedule(static)\n", par,
                    ch->simd ? "simd" : "");
    akg_buf_puts(b, "        for (int64_t k = base; k < base + len; ++k) out[k] = ");
    if ((rc = cexpr(b, &g, outx, err, errlen)))
        return rc;
    akg_buf_puts(b, ";\n      }\n    }\n    return 0;\n  }\n");
    /* I > 1: statistics per column of a CH-wide chunk */
    akg_buf_appendf(b, "  const int64_t CH = %ld;\n  const int64_t nch = (I + CH - 1) / CH;\n",
                    ch->ch);
    akg_buf_appendf(b, "%s#pragma omp parallel for collapse(2) schedule(static)\n", par);
    akg_buf_puts(b, "  for (int64_t o = 0; o < O; ++o) {\n"
                    "    for (int64_t c = 0; c < nch; ++c) {\n"
                    "      const int64_t i0 = c * CH, w = I - i0 < CH ? I - i0 : CH;\n");
    for (int s = 0; s < ns; s++) {
        const char *m = stat_mode(params, s);
        akg_buf_appendf(b, "      %s acc%d[%ld]; double st%d[%ld]; float stf%d[%ld];\n",
                        is_float_acc(m) ? "float" : "double", s, ch->ch, s, ch->ch, s, ch->ch);
        akg_buf_appendf(b, "      for (int64_t i = 0; i < w; ++i) acc%d[i] = %s;\n", s,
                        acc_init(m));
    }
    int nr = count(params, "rowvals");
    for (int k = 0; k < nr; k++)
        akg_buf_appendf(b, "      double rv%d[%ld]; float rvf%d[%ld];\n", k, ch->ch, k, ch->ch);
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n"
                    "        const int64_t row = (o * D + d) * I + i0;\n");
    akg_buf_appendf(b, "%s        for (int64_t i = 0; i < w; ++i) {\n", simd);
    cg gc = {params, "row + i", "d", "", 0};
    for (int s = 0; s < ns; s++) {
        akg_buf_puts(b, "          { const float e = ");
        if ((rc = cexpr(b, &gc, stat_expr(params, s), err, errlen)))
            return rc;
        char acc[32];
        snprintf(acc, sizeof acc, "acc%d[i]", s);
        akg_buf_puts(b, "; ");
        acc_update(b, stat_mode(params, s), acc);
        akg_buf_puts(b, " }\n");
    }
    akg_buf_puts(b, "        }\n      }\n      for (int64_t i = 0; i < w; ++i) {\n");
    for (int s = 0; s < ns; s++) {
        char acc[32];
        snprintf(acc, sizeof acc, "acc%d[i]", s);
        akg_buf_appendf(b, "        st%d[i] = ", s);
        acc_final(b, stat_mode(params, s), acc);
        akg_buf_appendf(b, "; stf%d[i] = (float)st%d[i];\n", s, s);
    }
    if ((rc = emit_rowvals(b, params, "        ", "[i]", err, errlen)))
        return rc;
    akg_buf_puts(b, "      }\n      for (int64_t d = 0; d < D; ++d) {\n"
                    "        const int64_t row = (o * D + d) * I + i0;\n");
    akg_buf_appendf(b, "%s        for (int64_t i = 0; i < w; ++i) out[row + i] = ", simd);
    cg go = {params, "row + i", "d", "[i]", 0};
    if ((rc = cexpr(b, &go, outx, err, errlen)))
        return rc;
    akg_buf_puts(b, ";\n      }\n    }\n  }\n  return 0;\n}\n");
    return AKG_OK;
}

/* ---------- scan along D ---------- */

static int emit_scan(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                     size_t errlen)
{
    const char *par = ch->parallel ? "" : "//";
    const char *simd = ch->simd ? "#pragma omp simd\n" : "";
    int prod = !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(params, "mode")), "prod");
    int rev = cJSON_IsTrue(cJSON_GetObjectItem(params, "reverse"));
    int excl = cJSON_IsTrue(cJSON_GetObjectItem(params, "exclusive"));
    const char *op = prod ? "*=" : "+=";
    const char *init = prod ? "1.0" : "0.0";
    cg g = {params, "k", "0", "", 0};
    c_signature(b, params);
    akg_buf_puts(b, "  (void)div;\n");
    /* positions along D in scan order: p = d or D - 1 - d */
    const char *pos = rev ? "(D - 1 - d)" : "d";
    akg_buf_appendf(b, "  const int64_t R = %ld;  // rows scanned together (independent chains)\n",
                    ch->rows);
    akg_buf_puts(b, "  if (I == 1) {\n");
    akg_buf_puts(b, "    const int64_t ng = (O + R - 1) / R;\n");
    akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static)\n", par);
    akg_buf_puts(b, "    for (int64_t gi = 0; gi < ng; ++gi) {\n"
                    "      const int64_t o0 = gi * R, nr = O - o0 < R ? O - o0 : R;\n");
    akg_buf_appendf(b, "      double acc[%ld];\n", ch->rows);
    akg_buf_appendf(b, "      for (int64_t r = 0; r < nr; ++r) acc[r] = %s;\n", init);
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n");
    akg_buf_puts(b, "        // a full group has a constant trip count: the running values stay in "
                    "registers\n");
    akg_buf_puts(b, "        const int64_t nrr = nr == R ? R : nr;\n");
    akg_buf_puts(b, "        for (int64_t r = 0; r < nrr; ++r) {\n");
    akg_buf_appendf(b, "          const int64_t k = (o0 + r) * D + %s;\n", pos);
    akg_buf_puts(b, "          const float e = ");
    int rc = cexpr(b, &g, cJSON_GetObjectItem(params, "elem"), err, errlen);
    if (rc)
        return rc;
    akg_buf_puts(b, ";\n");
    if (excl)
        akg_buf_appendf(b, "          out[k] = (float)acc[r]; acc[r] %s (double)e;\n", op);
    else
        akg_buf_appendf(b, "          acc[r] %s (double)e; out[k] = (float)acc[r];\n", op);
    akg_buf_puts(b, "        }\n      }\n    }\n    return 0;\n  }\n");
    /* I > 1: vectorised along I, CH columns at a time */
    akg_buf_appendf(b, "  const int64_t CH = %ld;\n  const int64_t nch = (I + CH - 1) / CH;\n",
                    ch->ch);
    akg_buf_appendf(b, "%s#pragma omp parallel for collapse(2) schedule(static)\n", par);
    akg_buf_puts(b, "  for (int64_t o = 0; o < O; ++o) {\n"
                    "    for (int64_t c = 0; c < nch; ++c) {\n"
                    "      const int64_t i0 = c * CH, w = I - i0 < CH ? I - i0 : CH;\n");
    akg_buf_appendf(b, "      double acc[%ld];\n", ch->ch);
    akg_buf_appendf(b, "      for (int64_t i = 0; i < w; ++i) acc[i] = %s;\n", init);
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n");
    akg_buf_appendf(b, "        const int64_t row = (o * D + %s) * I + i0;\n", pos);
    akg_buf_appendf(b, "%s        for (int64_t i = 0; i < w; ++i) {\n", simd);
    akg_buf_puts(b, "          const int64_t k = row + i;\n          const float e = ");
    if ((rc = cexpr(b, &g, cJSON_GetObjectItem(params, "elem"), err, errlen)))
        return rc;
    akg_buf_puts(b, ";\n");
    if (excl)
        akg_buf_appendf(b, "          out[k] = (float)acc[i]; acc[i] %s (double)e;\n", op);
    else
        akg_buf_appendf(b, "          acc[i] %s (double)e; out[k] = (float)acc[i];\n", op);
    akg_buf_puts(b, "        }\n      }\n    }\n  }\n  return 0;\n}\n");
    return AKG_OK;
}

/* ---------- channel normalisation over [N, C, S] ---------- */

/* O = N, D = C, I = S. Modes: "group" (stats per (n, group)), "batch"
 * (stats per channel over N and S), "eval" (running statistics). */
static int emit_chnorm(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                       size_t errlen)
{
    (void)err, (void)errlen;
    const char *par = ch->parallel ? "" : "//";
    const char *simd = ch->simd ? "#pragma omp simd\n" : "";
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(params, "mode"));
    int w = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "weight"));
    int bs = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "bias"));
    int eps = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "eps"));
    int groups = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "groups"));
    /* y = x * sc + sh; large outputs are written with streaming stores
     * (no read of the destination lines: a third less memory traffic) */
    akg_buf_puts(b, ch->simd ? "#include <immintrin.h>\n" : "");
    akg_buf_puts(
        b,
        "static inline void akg_affine(const float *__restrict x, float *__restrict y, int64_t n,\n"
        "                              float sc, float sh, int stream) {\n"
        "  int64_t s = 0;\n");
    if (ch->simd)
        akg_buf_puts(b,
                     "#ifdef __AVX__\n"
                     "  if (stream) {\n"
                     "    for (; s < n && ((uintptr_t)(y + s) & 31); ++s) y[s] = x[s] * sc + sh;\n"
                     "    const __m256 vs = _mm256_set1_ps(sc), vh = _mm256_set1_ps(sh);\n"
                     "    for (; s + 8 <= n; s += 8)\n"
                     "      _mm256_stream_ps(y + s, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x "
                     "+ s), vs), vh));\n"
                     "  }\n"
                     "#endif\n"
                     "#pragma omp simd\n");
    akg_buf_puts(
        b, "  for (int64_t t = s; t < n; ++t) y[t] = x[t] * sc + sh;\n  (void)stream;\n}\n\n");
    c_signature(b, params);
    akg_buf_puts(b, "  (void)div;\n  const int64_t N = O, C = D, S = I;\n");
    akg_buf_puts(b, "  const int stream = N * C * S >= (1 << 21);  // outputs past the caches\n");
    akg_buf_puts(b, "  float *scale = new float[N * C], *shift = new float[N * C];\n");
    char epsx[48], wx[48], bx[48];
    if (eps >= 0)
        snprintf(epsx, sizeof epsx, "(double)s%d", eps);
    else
        snprintf(epsx, sizeof epsx, "%.17g",
                 cJSON_GetNumberValue(cJSON_GetObjectItem(params, "eps_value")));
    if (w >= 0)
        snprintf(wx, sizeof wx, "(double)p%d[c]", w);
    else
        snprintf(wx, sizeof wx, "1.0");
    if (bs >= 0)
        snprintf(bx, sizeof bx, "(double)p%d[c]", bs);
    else
        snprintf(bx, sizeof bx, "0.0");
    if (!strcmp(mode, "eval")) {
        int rm = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "running_mean"));
        int rvv = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "running_var"));
        akg_buf_puts(b, "  for (int64_t c = 0; c < C; ++c) {\n");
        akg_buf_appendf(b, "    const double r = 1.0 / std::sqrt((double)p%d[c] + %s);\n", rvv,
                        epsx);
        akg_buf_appendf(b, "    const double sc = r * %s;\n", wx);
        akg_buf_appendf(b, "    const double sh = %s - (double)p%d[c] * sc;\n", bx, rm);
        akg_buf_puts(b, "    for (int64_t n = 0; n < N; ++n) { scale[n * C + c] = (float)sc; "
                        "shift[n * C + c] = (float)sh; }\n  }\n");
    } else {
        if (strcmp(mode, "batch") != 0) {
            /* group statistics and the affine pass per (n, group): the
             * group's span is contiguous and still in cache for the second
             * read */
            if (groups >= 0)
                akg_buf_appendf(b, "  const int64_t G = (int64_t)s%d;\n", groups);
            else
                akg_buf_appendf(b, "  const int64_t G = %s;\n",
                                !strcmp(mode, "instance") ? "C" : "1");
            akg_buf_puts(b, "  const int64_t CG = C / G;\n  (void)scale; (void)shift;\n");
            akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static)\n", par);
            akg_buf_puts(
                b, "  for (int64_t ng = 0; ng < N * G; ++ng) {\n"
                   "    const int64_t n = ng / G, g = ng % G, len = CG * S;\n"
                   "    const float *xp = in0 + ng * len;\n    float *yp = out + ng * len;\n");
            akg_buf_appendf(b, "    double a[%ld], q[%ld];\n", ch->lanes, ch->lanes);
            akg_buf_appendf(b, "    for (int j = 0; j < %ld; ++j) { a[j] = 0.0; q[j] = 0.0; }\n",
                            ch->lanes);
            akg_buf_appendf(
                b, "    int64_t s = 0;\n    for (; s + %ld * 32 <= len; s += %ld * 32) {\n",
                ch->lanes, ch->lanes);
            akg_buf_appendf(b,
                            "      float fa[%ld], fq[%ld];\n      for (int j = 0; j < %ld; ++j) { "
                            "fa[j] = 0.0f; fq[j] = 0.0f; }\n",
                            ch->lanes, ch->lanes, ch->lanes);
            akg_buf_appendf(b, "      for (int64_t u = 0; u < 32 * %ld; u += %ld) {\n", ch->lanes,
                            ch->lanes);
            akg_buf_appendf(b,
                            "%s        for (int j = 0; j < %ld; ++j) { const float e = xp[s + u + "
                            "j]; fa[j] += e; fq[j] += e * e; }\n",
                            simd, ch->lanes);
            akg_buf_appendf(b,
                            "      }\n      for (int j = 0; j < %ld; ++j) { a[j] += fa[j]; q[j] += "
                            "fq[j]; }\n    }\n",
                            ch->lanes);
            akg_buf_puts(b, "    double t1 = 0.0, t2 = 0.0;\n");
            akg_buf_appendf(b, "    for (int j = 0; j < %ld; ++j) { t1 += a[j]; t2 += q[j]; }\n",
                            ch->lanes);
            akg_buf_puts(
                b,
                "    for (; s < len; ++s) { const double e = xp[s]; t1 += e; t2 += e * e; }\n"
                "    const double mean = t1 / (double)len;\n"
                "    double var = t2 / (double)len - mean * mean; var = var < 0.0 ? 0.0 : var;\n");
            akg_buf_appendf(b, "    const double r = 1.0 / std::sqrt(var + %s);\n", epsx);
            akg_buf_puts(b, "    for (int64_t c = g * CG; c < (g + 1) * CG; ++c) {\n");
            akg_buf_appendf(b, "      const double scd = r * %s;\n", wx);
            akg_buf_appendf(
                b, "      const float sc = (float)scd, sh = (float)(%s - mean * scd);\n", bx);
            akg_buf_puts(b, "      const float *xc = xp + (c - g * CG) * S;\n      float *yc = yp "
                            "+ (c - g * CG) * S;\n");
            akg_buf_puts(b, "      akg_affine(xc, yc, S, sc, sh, stream);\n");
            akg_buf_appendf(
                b,
                "    }\n    (void)n;\n  }\n  delete[] scale; delete[] shift;\n%s  return 0;\n}\n",
                ch->simd ? "#ifdef __AVX__\n  _mm_sfence();\n#endif\n" : "");
            return AKG_OK;
        }
        /* sums in double per (n, c) plane, LANES accumulators */
        akg_buf_puts(b, "  double *sum1 = new double[N * C], *sum2 = new double[N * C];\n");
        akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static)\n", par);
        akg_buf_puts(b, "  for (int64_t nc = 0; nc < N * C; ++nc) {\n"
                        "    const float *xp = in0 + nc * S;\n");
        akg_buf_appendf(b, "    double a[%ld], q[%ld];\n", ch->lanes, ch->lanes);
        akg_buf_appendf(b, "    for (int j = 0; j < %ld; ++j) { a[j] = 0.0; q[j] = 0.0; }\n",
                        ch->lanes);
        akg_buf_appendf(b, "    int64_t s = 0;\n    for (; s + %ld <= S; s += %ld) {\n", ch->lanes,
                        ch->lanes);
        akg_buf_appendf(b,
                        "%s      for (int j = 0; j < %ld; ++j) { const double e = xp[s + j]; a[j] "
                        "+= e; q[j] += e * e; }\n",
                        simd, ch->lanes);
        akg_buf_puts(b, "    }\n    double t1 = 0.0, t2 = 0.0;\n");
        akg_buf_appendf(b, "    for (int j = 0; j < %ld; ++j) { t1 += a[j]; t2 += q[j]; }\n",
                        ch->lanes);
        akg_buf_puts(b, "    for (; s < S; ++s) { const double e = xp[s]; t1 += e; t2 += e * e; }\n"
                        "    sum1[nc] = t1; sum2[nc] = t2;\n  }\n");
        if (!strcmp(mode, "batch")) {
            akg_buf_puts(b,
                         "  for (int64_t c = 0; c < C; ++c) {\n"
                         "    double t1 = 0.0, t2 = 0.0;\n"
                         "    for (int64_t n = 0; n < N; ++n) { t1 += sum1[n * C + c]; t2 += "
                         "sum2[n * C + c]; }\n"
                         "    const double cnt = (double)N * (double)S;\n"
                         "    const double mean = t1 / cnt;\n"
                         "    double var = t2 / cnt - mean * mean; var = var < 0.0 ? 0.0 : var;\n");
            akg_buf_appendf(b, "    const double sc = %s / std::sqrt(var + %s);\n", wx, epsx);
            akg_buf_appendf(b, "    const double sh = %s - mean * sc;\n", bx);
            akg_buf_puts(b, "    for (int64_t n = 0; n < N; ++n) { scale[n * C + c] = (float)sc; "
                            "shift[n * C + c] = (float)sh; }\n  }\n");
        } else {
            if (groups >= 0)
                akg_buf_appendf(b, "  const int64_t G = (int64_t)s%d;\n", groups);
            else
                akg_buf_appendf(b, "  const int64_t G = %s;\n",
                                !strcmp(mode, "instance") ? "C" : "1");
            akg_buf_puts(
                b, "  const int64_t CG = C / G;\n"
                   "  for (int64_t n = 0; n < N; ++n) {\n"
                   "    for (int64_t g = 0; g < G; ++g) {\n"
                   "      double t1 = 0.0, t2 = 0.0;\n"
                   "      for (int64_t c = g * CG; c < (g + 1) * CG; ++c) { t1 += sum1[n * C + c]; "
                   "t2 += sum2[n * C + c]; }\n"
                   "      const double cnt = (double)CG * (double)S;\n"
                   "      const double mean = t1 / cnt;\n"
                   "      double var = t2 / cnt - mean * mean; var = var < 0.0 ? 0.0 : var;\n");
            akg_buf_appendf(b, "      const double r = 1.0 / std::sqrt(var + %s);\n", epsx);
            akg_buf_puts(b, "      for (int64_t c = g * CG; c < (g + 1) * CG; ++c) {\n");
            akg_buf_appendf(b, "        const double sc = r * %s;\n", wx);
            akg_buf_appendf(b,
                            "        scale[n * C + c] = (float)sc; shift[n * C + c] = (float)(%s - "
                            "mean * sc);\n",
                            bx);
            akg_buf_puts(b, "      }\n    }\n  }\n");
        }
        akg_buf_puts(b, "  delete[] sum1; delete[] sum2;\n");
    }
    akg_buf_appendf(b, "%s#pragma omp parallel for schedule(static)\n", par);
    akg_buf_puts(b, "  for (int64_t nc = 0; nc < N * C; ++nc) {\n"
                    "    const float sc = scale[nc], sh = shift[nc];\n"
                    "    const float *xp = in0 + nc * S;\n    float *yp = out + nc * S;\n");
    akg_buf_puts(b, "    akg_affine(xp, yp, S, sc, sh, stream);\n");
    akg_buf_appendf(b, "  }\n  delete[] scale; delete[] shift;\n%s  return 0;\n}\n",
                    ch->simd ? "#ifdef __AVX__\n  _mm_sfence();\n#endif\n" : "");
    return AKG_OK;
}

/* ---------- losses with a per-row value, then mean/sum over rows ---------- */

static int emit_rowloss(akg_buf *b, const cJSON *params, const akg_rx_choices *ch, char *err,
                        size_t errlen)
{
    (void)err, (void)errlen;
    const char *par = ch->parallel ? "" : "//";
    const char *simd = ch->simd ? "#pragma omp simd reduction(+ : " : NULL;
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(params, "kind"));
    int mean = cJSON_IsTrue(cJSON_GetObjectItem(params, "mean"));
    c_signature(b, params);
    akg_buf_puts(b, "  (void)I; (void)div;\n  double total = 0.0;\n  int bad = 0;\n");
    akg_buf_appendf(
        b, "%s#pragma omp parallel for schedule(static) reduction(+ : total) reduction(| : bad)\n",
        par);
    akg_buf_puts(b, "  for (int64_t o = 0; o < O; ++o) {\n");
    if (!strcmp(kind, "cross_entropy")) {
        akg_buf_puts(b, "    const float *xr = in0 + o * D;\n    float m = -INFINITY;\n");
        if (ch->simd)
            akg_buf_puts(b, "#pragma omp simd reduction(max : m)\n");
        akg_buf_puts(b, "    for (int64_t d = 0; d < D; ++d) m = xr[d] > m ? xr[d] : m;\n"
                        "    float s = 0.0f;\n");
        if (simd)
            akg_buf_appendf(b, "%ss)\n", simd);
        akg_buf_puts(
            b, "    for (int64_t d = 0; d < D; ++d) s += AKG_EXP(xr[d] - m);\n"
               "    const int64_t t = in1[o];\n"
               "    if (t < 0 || t >= D) { bad = 1; continue; }  // a class index out of range\n"
               "    total += (double)m + std::log((double)s) - (double)xr[t];\n");
    } else if (!strcmp(kind, "cosine")) {
        int eps = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "eps"));
        akg_buf_puts(b, "    const float *a = in0 + o * D, *c = in1 + o * D;\n"
                        "    float w12 = 0.0f, w1 = 0.0f, w2 = 0.0f;\n");
        if (simd)
            akg_buf_appendf(b, "%sw12, w1, w2)\n", simd);
        akg_buf_puts(b, "    for (int64_t d = 0; d < D; ++d) { w12 += a[d] * c[d]; w1 += a[d] * "
                        "a[d]; w2 += c[d] * c[d]; }\n");
        akg_buf_appendf(b, "    const double e = %s;\n", eps >= 0 ? "0.0" : "1e-8");
        akg_buf_puts(b,
                     "    double n12 = (double)w1 * (double)w2; n12 = n12 < e * e ? e * e : n12;\n"
                     "    total += 1.0 - (double)w12 / std::sqrt(n12);\n");
    } else if (!strcmp(kind, "triplet")) {
        int margin = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(params, "margin"));
        akg_buf_puts(b, "    const float *a = in0 + o * D, *pp = in1 + o * D, *nn = in2 + o * D;\n"
                        "    float dp = 0.0f, dn = 0.0f;\n");
        if (simd)
            akg_buf_appendf(b, "%sdp, dn)\n", simd);
        akg_buf_puts(b, "    for (int64_t d = 0; d < D; ++d) {\n"
                        "      const float u = a[d] - pp[d] + 1e-6f, v = a[d] - nn[d] + 1e-6f;\n"
                        "      dp += u * u; dn += v * v;\n    }\n");
        if (margin >= 0)
            akg_buf_appendf(b,
                            "    const double l = std::sqrt((double)dp) - std::sqrt((double)dn) + "
                            "(double)s%d;\n",
                            margin);
        else
            akg_buf_appendf(
                b, "    const double l = std::sqrt((double)dp) - std::sqrt((double)dn) + %.17g;\n",
                cJSON_GetNumberValue(cJSON_GetObjectItem(params, "margin_value")));
        akg_buf_puts(b, "    total += l > 0.0 ? l : 0.0;\n");
    }
    akg_buf_puts(b, "  }\n");
    akg_buf_appendf(b, "  out[0] = (float)(total%s);\n  return bad ? 1 : 0;\n}\n",
                    mean ? " / (double)O" : "");
    return AKG_OK;
}

int akg_rx_emit(const akg_design *d, const akg_sketch *sk, const akg_reference *ref, int safe_mode,
                akg_kernel_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!d->params)
        return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: the %s design has no params",
                        d->family);
    akg_rx_choices ch;
    akg_rx_read_choices(sk, safe_mode, &ch);
    const char *kind = design_kind(d->params);
    akg_buf src;
    akg_buf_init(&src, 4 << 20);
    akg_cpp_emit_header(&src, d);
    int rc;
    if (!strcmp(kind, "reduce"))
        rc = emit_reduce(&src, d->params, &ch, err, errlen);
    else if (!strcmp(kind, "rowmap"))
        rc = emit_rowmap(&src, d->params, &ch, err, errlen);
    else if (!strcmp(kind, "scan"))
        rc = emit_scan(&src, d->params, &ch, err, errlen);
    else if (!strcmp(kind, "chnorm"))
        rc = emit_chnorm(&src, d->params, &ch, err, errlen);
    else if (!strcmp(kind, "rowloss"))
        rc = emit_rowloss(&src, d->params, &ch, err, errlen);
    else
        rc = akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: unknown %s design '%s'",
                      d->family, kind);
    if (rc) {
        akg_buf_free(&src);
        return rc;
    }
    char lib[64];
    akg_cpp_library_name(src.data, src.len, lib);
    akg_buf py;
    akg_buf_init(&py, 1 << 20);
    akg_rx_model_new(&py, d, ref, lib);
    out->library_filename = akg_strdup(lib);
    akg_cpp_finish_files(&src, &py, out);
    return AKG_OK;
}
