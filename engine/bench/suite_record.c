/*
 * suite_record.c: a suite's totals and its JSON record (akg/suite.h; bench/README.md, "What the
 * numbers mean" and "The JSON record").
 *
 * The totals are over every operator the suite selected: a failure stays in the denominator of
 * pass_rate, fast_1 and fast_1.5 (it is not fast) and out of the geomean, which is over the
 * passing operators with a speedup. The record's format is that of bench/results-*.json, which
 * bench/summary.py and bench/gflops.py read: keys are only ever added to it, never renamed.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/suite.h"
#include "suite_internal.h"

#define SUITE_DETAIL_CHARS 160 /* a failure's detail in the record's "failures" */
#define SUITE_MAX_FAMILIES 256

/* ---------- totals ---------- */

int akg_suite_op_failed(const akg_suite_op *op)
{
    return !op->status || strcmp(op->status, "pass") != 0;
}

static double ratio(size_t a, size_t b)
{
    return b ? (double)a / (double)b : NAN;
}

akg_suite_totals akg_suite_totals_of(const akg_suite_op *ops, size_t n, const char *family,
                                     akg_suite_baseline vs)
{
    akg_suite_totals t;
    memset(&t, 0, sizeof t);
    double log_sum = 0;
    for (size_t i = 0; i < n; i++) {
        const akg_suite_op *op = &ops[i];
        if (family && (!op->family || strcmp(op->family, family) != 0))
            continue;
        t.ops++;
        if (op->status && !strcmp(op->status, "not_run"))
            t.not_run++;
        if (akg_suite_op_failed(op))
            continue;
        t.passed++;
        double speedup = vs == AKG_SUITE_VS_COMPILED ? op->speedup_compiled : op->speedup;
        if (isfinite(speedup) && speedup > 0) {
            t.geomean_over++;
            log_sum += log(speedup);
            t.fast_1_count += speedup > 1.0;
            t.fast_15_count += speedup > 1.5;
        }
    }
    t.failed = t.ops - t.passed - t.not_run;
    t.pass_rate = ratio(t.passed, t.ops);
    t.fast_1 = ratio(t.fast_1_count, t.ops);
    t.fast_15 = ratio(t.fast_15_count, t.ops);
    t.geomean_speedup = t.geomean_over ? exp(log_sum / (double)t.geomean_over) : NAN;
    return t;
}

size_t akg_suite_families(const akg_suite_op *ops, size_t n, const char **out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && strcmp(out[j], ops[i].family) != 0)
            j++;
        if (j == k && k < max)
            out[k++] = ops[i].family;
    }
    return k;
}

const char *akg_suite_one_line(const char *text, char *out, size_t n, size_t max)
{
    if (n == 0)
        return out;
    if (!text) {
        snprintf(out, n, "-");
        return out;
    }
    if (max + 1 > n)
        max = n - 1;
    size_t o = 0;
    int blank = 0;
    const char *p = text;
    for (; *p && o < max; p++) {
        if (isspace((unsigned char)*p)) {
            blank = o > 0;
            continue;
        }
        if (blank && o + 1 < max)
            out[o++] = ' ';
        blank = 0;
        out[o++] = *p;
    }
    while (*p && isspace((unsigned char)*p))
        p++;
    out[o] = '\0';
    if (*p && o >= 3) /* more text did not fit */
        memcpy(out + o - 3, "...", 3);
    return out;
}

/* ---------- the record ---------- */

static void add_num_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_str_or_null(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* One totals object; without speedups (refused or withheld) every speedup figure is null. */
static cJSON *totals_json(const akg_suite_totals *t, int speedups)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "ops", (double)t->ops);
    cJSON_AddNumberToObject(o, "passed", (double)t->passed);
    cJSON_AddNumberToObject(o, "failed", (double)t->failed);
    cJSON_AddNumberToObject(o, "not_run", (double)t->not_run);
    add_num_or_null(o, "pass_rate", t->pass_rate);
    add_num_or_null(o, "fast_1", speedups ? t->fast_1 : NAN);
    add_num_or_null(o, "fast_1.5", speedups ? t->fast_15 : NAN);
    cJSON_AddNumberToObject(o, "fast_1_count", speedups ? (double)t->fast_1_count : 0);
    cJSON_AddNumberToObject(o, "fast_1.5_count", speedups ? (double)t->fast_15_count : 0);
    add_num_or_null(o, "geomean_speedup", speedups ? t->geomean_speedup : NAN);
    cJSON_AddNumberToObject(o, "geomean_over", (double)t->geomean_over);
    return o;
}

static cJSON *op_json(const akg_suite *s, const akg_suite_op *op, int speedups)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "family", op->family);
    cJSON_AddStringToObject(o, "name", op->name);
    cJSON_AddStringToObject(o, "path", op->path);
    cJSON_AddStringToObject(o, "status", op->status);
    add_str_or_null(o, "error_class", op->error_class);
    add_str_or_null(o, "error_detail", op->error_detail);
    add_num_or_null(o, "ref_ms", op->ref_ms);
    add_num_or_null(o, "kernel_ms", op->kernel_ms);
    add_num_or_null(o, "speedup", speedups ? op->speedup : NAN);
    if (s->compiled) {
        add_num_or_null(o, "compiled_ms", op->compiled_ms);
        add_num_or_null(o, "speedup_compiled", speedups ? op->speedup_compiled : NAN);
        add_num_or_null(o, "compile_s", op->compile_s);
        add_str_or_null(o, "compiled_error", op->compiled_error);
        add_str_or_null(o, "compiled_isa", op->compiled_isa);
    }
    if (op->scale_note)
        cJSON_AddStringToObject(o, "scaled", op->scale_note);
    add_str_or_null(o, "run_dir", op->run_dir);
    add_num_or_null(o, "elapsed_s", op->elapsed_s);
    if (op->env_note)
        cJSON_AddStringToObject(o, "env_note", op->env_note);
    return o;
}

static cJSON *failure_json(const akg_suite_op *op)
{
    cJSON *f = cJSON_CreateObject();
    if (!f)
        return NULL;
    char line[SUITE_DETAIL_CHARS + 8];
    cJSON_AddStringToObject(f, "family", op->family);
    cJSON_AddStringToObject(f, "name", op->name);
    cJSON_AddStringToObject(f, "status", op->status);
    add_str_or_null(f, "error_class", op->error_class);
    cJSON_AddStringToObject(
        f, "detail", akg_suite_one_line(op->error_detail, line, sizeof line, SUITE_DETAIL_CHARS));
    return f;
}

cJSON *akg_suite_record(const akg_suite *s)
{
    int speedups = s->refusal[0] == '\0';
    const akg_suite_op *ops = s->discovered ? s->listing.ops : NULL;
    size_t nops = s->discovered ? s->listing.n_ops : 0;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    char *suite_abs = akg_abspath(s->suite_dir);
    add_str_or_null(root, "suite", suite_abs);
    free(suite_abs);
    add_str_or_null(root, "filter", s->filter);
    cJSON_AddStringToObject(root, "backend", s->backend);
    cJSON_AddStringToObject(root, "dsl", s->dsl);
    cJSON_AddStringToObject(root, "arch", s->arch);
    add_str_or_null(root, "workflow", s->workflow);
    cJSON_AddNumberToObject(root, "jobs", s->jobs);
    cJSON_AddNumberToObject(root, "threads", s->threads);
    cJSON_AddBoolToObject(root, "timings_comparable", s->jobs == 1);
    cJSON_AddNumberToObject(root, "size_scale", s->scale);
    cJSON_AddStringToObject(root, "started_at", s->started_at);
    cJSON_AddNumberToObject(root, "elapsed_s",
                            s->done ? s->elapsed_s : (akg_now_ms() - s->t0_ms) / 1000.0);
    cJSON *env = s->env ? cJSON_Duplicate(s->env, 1) : cJSON_CreateNull();
    cJSON_DeleteItemFromObject(env, "id");
    cJSON_DeleteItemFromObject(env, "ok");
    cJSON_AddItemToObject(root, "environment", env);
    add_str_or_null(root, "refused", speedups ? NULL : s->refusal);
    cJSON *jops = cJSON_AddArrayToObject(root, "ops");
    cJSON *fails = cJSON_AddArrayToObject(root, "failures");
    for (size_t i = 0; i < nops; i++) {
        cJSON_AddItemToArray(jops, op_json(s, &ops[i], speedups));
        if (akg_suite_op_failed(&ops[i]))
            cJSON_AddItemToArray(fails, failure_json(&ops[i]));
    }
    cJSON *skipped = cJSON_AddArrayToObject(root, "skipped");
    for (size_t i = 0; s->discovered && i < s->listing.n_skips; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "path", s->listing.skips[i].path);
        cJSON_AddStringToObject(k, "reason", s->listing.skips[i].reason);
        cJSON_AddItemToArray(skipped, k);
    }
    cJSON_AddBoolToObject(root, "compiled", s->compiled);
    const char *fams[SUITE_MAX_FAMILIES];
    size_t nf = akg_suite_families(ops, nops, fams, SUITE_MAX_FAMILIES);
    /* "totals"/"per_family" are against eager PyTorch; with compiled, "totals_compiled" and
     * "per_family_compiled" are the same against torch.compile */
    int last = s->compiled ? AKG_SUITE_VS_COMPILED : AKG_SUITE_VS_EAGER;
    for (int vs = AKG_SUITE_VS_EAGER; vs <= last; vs++) {
        akg_suite_totals all = akg_suite_totals_of(ops, nops, NULL, (akg_suite_baseline)vs);
        cJSON_AddItemToObject(root, vs == AKG_SUITE_VS_EAGER ? "totals" : "totals_compiled",
                              totals_json(&all, speedups));
        cJSON *per = cJSON_AddObjectToObject(
            root, vs == AKG_SUITE_VS_EAGER ? "per_family" : "per_family_compiled");
        for (size_t k = 0; k < nf; k++) {
            akg_suite_totals t = akg_suite_totals_of(ops, nops, fams[k], (akg_suite_baseline)vs);
            cJSON_AddItemToObject(per, fams[k], totals_json(&t, speedups));
        }
    }
    return root;
}
