/* results.c: see results.h. */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "akg/store.h"

#define RESULTS_MEMORY_CAP 256

struct akg_lsp_result_cache {
    cJSON *entries; /* array of run-shaped objects plus "reference_path" */
};

static int same_target(const cJSON *a, const cJSON *b)
{
    const char *ab = akg_lsp_param_string(a, "backend"), *bb = akg_lsp_param_string(b, "backend");
    const char *ad = akg_lsp_param_string(a, "dsl"), *bd = akg_lsp_param_string(b, "dsl");
    return ab && bb && ad && bd && strcmp(ab, bb) == 0 && strcmp(ad, bd) == 0;
}

cJSON *akg_lsp_results_for(akg_lsp_server *s, const char *path, const char *hash)
{
    cJSON *out = NULL;
    akg_store *store = path ? akg_lsp_store(s) : NULL;
    if (store)
        out = akg_store_latest_by_target(store, path, hash);
    if (!out)
        out = cJSON_CreateArray();
    if (!s->results || !path)
        return out;
    const cJSON *mem;
    cJSON_ArrayForEach(mem, s->results->entries)
    {
        const char *p = akg_lsp_param_string(mem, "reference_path");
        if (!p || strcmp(p, path) != 0)
            continue;
        cJSON *copy = cJSON_Duplicate(mem, 1);
        const char *h = akg_lsp_param_string(mem, "content_hash");
        cJSON_DeleteItemFromObject(copy, "stale");
        cJSON_AddBoolToObject(copy, "stale", hash && h && strcmp(h, hash) != 0);
        int replaced = 0;
        for (int i = 0; i < cJSON_GetArraySize(out); i++) {
            cJSON *row = cJSON_GetArrayItem(out, i);
            if (!same_target(row, mem))
                continue;
            double row_id = akg_lsp_result_number(row, "id");
            double mem_id = akg_lsp_result_number(mem, "id");
            if (isnan(row_id) || mem_id > row_id)
                cJSON_ReplaceItemInArray(out, i, copy);
            else
                cJSON_Delete(copy);
            replaced = 1;
            break;
        }
        if (!replaced)
            cJSON_AddItemToArray(out, copy);
    }
    return out;
}

void akg_lsp_results_remember(akg_lsp_server *s, long long job_id, const char *path,
                              const char *hash, const char *backend, const char *dsl,
                              const char *arch, const char *workflow, const char *status,
                              const cJSON *report)
{
    if (!path || !backend || !dsl)
        return;
    if (workflow && strcmp(workflow, "design_only") == 0)
        return; /* no verdict to show */
    if (!s->results) {
        s->results = calloc(1, sizeof *s->results);
        if (!s->results)
            return;
        s->results->entries = cJSON_CreateArray();
    }
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "id", (double)job_id);
    cJSON_AddStringToObject(e, "reference_path", path);
    if (hash)
        cJSON_AddStringToObject(e, "content_hash", hash);
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "dsl", dsl);
    if (arch)
        cJSON_AddStringToObject(e, "arch", arch);
    if (workflow)
        cJSON_AddStringToObject(e, "workflow", workflow);
    cJSON_AddStringToObject(e, "status", status ? status : "error");
    double speedup = report ? akg_lsp_result_number(report, "perf.speedup") : NAN;
    if (!isnan(speedup))
        cJSON_AddNumberToObject(e, "speedup", speedup);
    if (report)
        cJSON_AddItemToObject(e, "report", cJSON_Duplicate(report, 1));
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(e, "finished_at", when);

    cJSON *entries = s->results->entries;
    for (int i = 0; i < cJSON_GetArraySize(entries); i++) {
        cJSON *old = cJSON_GetArrayItem(entries, i);
        const char *p = akg_lsp_param_string(old, "reference_path");
        if (p && strcmp(p, path) == 0 && same_target(old, e)) {
            cJSON_ReplaceItemInArray(entries, i, e);
            return;
        }
    }
    if (cJSON_GetArraySize(entries) >= RESULTS_MEMORY_CAP)
        cJSON_DeleteItemFromArray(entries, 0);
    cJSON_AddItemToArray(entries, e);
}

void akg_lsp_results_free(akg_lsp_server *s)
{
    if (!s->results)
        return;
    cJSON_Delete(s->results->entries);
    free(s->results);
    s->results = NULL;
}

const char *akg_lsp_result_status(const cJSON *entry)
{
    const char *st = akg_lsp_param_string(entry, "status");
    if (!st)
        st = akg_lsp_param_string(entry, "report.status");
    return st ? st : "unknown";
}

double akg_lsp_result_number(const cJSON *entry, const char *dotted)
{
    const cJSON *v = akg_lsp_param(entry, dotted);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

const char *akg_lsp_result_string(const cJSON *entry, const char *dotted)
{
    return akg_lsp_param_string(entry, dotted);
}

void akg_lsp_result_target(const cJSON *entry, char *out, size_t outlen)
{
    const char *b = akg_lsp_param_string(entry, "backend");
    const char *d = akg_lsp_param_string(entry, "dsl");
    snprintf(out, outlen, "%s/%s", b ? b : "?", d ? d : "?");
}

int akg_lsp_result_report_path(const cJSON *entry, char *out, size_t outlen)
{
    const char *p = akg_lsp_param_string(entry, "report.paths.report");
    if (p) {
        snprintf(out, outlen, "%s", p);
        return 1;
    }
    const char *dir = akg_lsp_param_string(entry, "output_dir");
    if (!dir)
        dir = akg_lsp_param_string(entry, "report.paths.output_dir");
    if (!dir)
        return 0;
    snprintf(out, outlen, "%s/report.json", dir);
    return 1;
}

const cJSON *akg_lsp_results_all(akg_lsp_server *s)
{
    return s->results ? s->results->entries : NULL;
}
