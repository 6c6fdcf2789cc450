/* lens.c: see lens.h. */
#include "lens.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "actions.h"
#include "jobs.h"
#include "reference_index.h"
#include "results.h"

void akg_lsp_lens_title(const cJSON *entry, char *out, size_t outlen)
{
    char target[80];
    akg_lsp_result_target(entry, target, sizeof target);
    const char *status = akg_lsp_result_status(entry);
    const char *stale = cJSON_IsTrue(akg_lsp_param(entry, "stale")) ? " (stale)" : "";
    if (strcmp(status, "pass") == 0) {
        double speedup = akg_lsp_result_number(entry, "report.perf.speedup");
        if (isnan(speedup))
            speedup = akg_lsp_result_number(entry, "speedup");
        double trials = akg_lsp_result_number(entry, "report.correctness.trials");
        char sp[32] = "", tr[48] = "verified";
        if (!isnan(speedup))
            snprintf(sp, sizeof sp, " %.2fx,", speedup);
        if (!isnan(trials))
            snprintf(tr, sizeof tr, "verified %.0f/%.0f", trials, trials);
        snprintf(out, outlen, "%s%s %s%s", target, sp, tr, stale);
        return;
    }
    if (strcmp(status, "fail") == 0 || strcmp(status, "error") == 0) {
        const char *cls = akg_lsp_result_string(entry, "report.error.class");
        char words[64];
        snprintf(words, sizeof words, "%s",
                 cls ? cls : (strcmp(status, "fail") == 0 ? "no kernel passed" : "error"));
        for (char *p = words; *p; p++)
            if (*p == '_')
                *p = ' ';
        snprintf(out, outlen, "%s %s: %s%s", target,
                 strcmp(status, "fail") == 0 ? "failed" : "error", words, stale);
        return;
    }
    snprintf(out, outlen, "%s %s%s", target, status, stale);
}

static void add_lens(cJSON *list, cJSON *range, cJSON *command)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddItemToObject(l, "range", range);
    cJSON_AddItemToObject(l, "command", command);
    cJSON_AddItemToArray(list, l);
}

static cJSON *target_argument(const char *uri, const char *backend, const char *dsl,
                              const char *arch)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "uri", uri);
    if (backend)
        cJSON_AddStringToObject(a, "backend", backend);
    if (dsl)
        cJSON_AddStringToObject(a, "dsl", dsl);
    if (arch)
        cJSON_AddStringToObject(a, "arch", arch);
    return a;
}

static const cJSON *find_result(const cJSON *results, const char *backend, const char *dsl)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, results)
    {
        const char *b = akg_lsp_param_string(e, "backend"), *d = akg_lsp_param_string(e, "dsl");
        if (b && d && backend && dsl && strcmp(b, backend) == 0 && strcmp(d, dsl) == 0)
            return e;
    }
    return NULL;
}

static void target_lenses(akg_lsp_server *s, akg_lsp_document *doc, cJSON *list, akg_range at,
                          const cJSON *entry, const char *backend, const char *dsl,
                          const char *arch, int running)
{
    char title[200];
    if (running)
        snprintf(title, sizeof title, "%s/%s running…", backend, dsl);
    else if (entry)
        akg_lsp_lens_title(entry, title, sizeof title);
    else
        snprintf(title, sizeof title, "%s/%s: generate kernel", backend, dsl);
    add_lens(list, akg_lsp_doc_range_json(doc, s->encoding, at),
             akg_lsp_command(title, running ? AKG_LSP_CMD_CANCEL : AKG_LSP_CMD_GENERATE,
                             running ? NULL : target_argument(doc->uri, backend, dsl, arch)));
    char report[PATH_MAX];
    if (entry && !running && akg_lsp_result_report_path(entry, report, sizeof report))
        add_lens(list, akg_lsp_doc_range_json(doc, s->encoding, at),
                 akg_lsp_command("open report", AKG_LSP_CMD_OPEN_REPORT,
                                 target_argument(doc->uri, backend, dsl, NULL)));
}

int akg_lsp_handle_code_lens(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                             size_t errlen)
{
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    cJSON *list = cJSON_CreateArray();
    *result = list;
    if (!akg_lsp_is_reference(s, doc) || !doc->path)
        return 0;
    akg_range at = doc->ref->model_name_range;
    cJSON *results = akg_lsp_results_for(s, doc->path, doc->hash);
    int running = akg_lsp_jobs_running_for(s, doc->path) > 0;
    const cJSON *t;
    /* Configured targets first, then any other target with a stored result. */
    cJSON_ArrayForEach(t, s->settings.targets)
    {
        const char *b = akg_lsp_param_string(t, "backend"), *d = akg_lsp_param_string(t, "dsl");
        target_lenses(s, doc, list, at, find_result(results, b, d), b, d,
                      akg_lsp_param_string(t, "arch"), running);
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, results)
    {
        const char *b = akg_lsp_param_string(e, "backend"), *d = akg_lsp_param_string(e, "dsl");
        if (!b || !d)
            continue;
        int configured = 0;
        cJSON_ArrayForEach(t, s->settings.targets)
        {
            const char *tb = akg_lsp_param_string(t, "backend"),
                       *td = akg_lsp_param_string(t, "dsl");
            if (tb && td && strcmp(tb, b) == 0 && strcmp(td, d) == 0)
                configured = 1;
        }
        if (!configured)
            target_lenses(s, doc, list, at, e, b, d, akg_lsp_param_string(e, "arch"), 0);
    }
    cJSON_Delete(results);
    return 0;
}
