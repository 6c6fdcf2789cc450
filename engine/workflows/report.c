/*
 * report.c: what a job leaves behind: report.json (README.md, "Result
 * files") and its rows in the store.
 *
 * The report is built from the job's state when it ends: the target and
 * workflow, the verdict with its correctness and timing, the paths written,
 * the error with where it is (the reference's line, or the sketch file's for
 * a user's design), the design's provenance, the probed task and every
 * candidate. A write that fails is never dropped silently: it is an error
 * event; a report that cannot be written ends a job that would have passed
 * as an error, and a store that refuses a row is named in the report
 * (store_error) while the run's result stands. How the candidates were
 * isolated is the harness worker's to say (its ready line's sandbox); the
 * report copies it, and the profile's flags (a speedup over 10x, or beyond
 * the machine's roofline, re-verified on new shapes) with the timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "akg/akg.h"
#include "akg/harness.h"
#include "search.h"

static void emit_error(akg_job *j, const char *msg)
{
    akg_event ev = {0};
    ev.kind = AKG_EVENT_LOG;
    ev.level = AKG_LOG_ERROR;
    ev.message = msg;
    ev.attempt = j->attempt;
    akg__job_emit(j, &ev);
}

/* ---------- the store ---------- */

static void store_check(akg_job *j, int rc, const char *what)
{
    if (rc == AKG_OK)
        return;
    j->store_failures++;
    snprintf(j->store_error, sizeof j->store_error, "%s: %s", what,
             akg_store_errmsg(j->engine->store));
    char msg[512];
    snprintf(msg, sizeof msg, "the store could not record %s", j->store_error);
    emit_error(j, msg);
}

void akg__store_record(akg_job *j, int step, const char *sketch, const akg_kernel_files *files,
                       const char *lib_path, const char *status, const char *cls,
                       const char *detail, double ref_ms, double kernel_ms, cJSON *info)
{
    char what[64];
    snprintf(what, sizeof what, "candidate %d", step);
    /* a verified candidate keeps its library too (search.h: a cached answer, a resumed search) */
    char *lib = NULL;
    size_t lib_len = 0;
    if (strcmp(status, "pass") == 0 && lib_path &&
        akg_read_file(lib_path, 64u << 20, &lib, &lib_len, NULL, 0) != AKG_OK)
        lib = NULL;
    akg_store_cand c = {.step = step,
                        .sketch = sketch,
                        .code = files->kernel_source,
                        .model_new = files->model_new_source,
                        .status = status,
                        .error_class = cls,
                        .error_detail = detail,
                        .ref_ms = ref_ms,
                        .kernel_ms = kernel_ms,
                        .fingerprint = j->fingerprint[0] ? j->fingerprint : NULL,
                        .judge = j->judge[0] ? j->judge : NULL,
                        .library = lib,
                        .library_len = lib_len,
                        .info = info};
    store_check(j, akg_store_candidate_record(j->engine->store, j->id, &c), what);
    free(lib);
}

void akg__store_candidate(akg_job *j, const char *status, const char *cls, const char *detail,
                          double ref_ms, double kernel_ms)
{
    if (!j->store_run)
        return; /* said when the job started */
    cJSON *info = akg__search_store_info(j, strcmp(status, "pass") == 0);
    akg__store_record(j, j->attempt, j->sketch_text, &j->files, j->lib_path, status, cls, detail,
                      ref_ms, kernel_ms, info);
    cJSON_Delete(info);
}

/* ---------- report.json ---------- */

static void copy_item(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(src, key);
    if (v)
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

/* The sandbox the harness worker of the job's device kind reported in its ready line, or NULL
 * (no worker started yet, or an older worker that does not say). */
static const cJSON *worker_sandbox(const akg_job *j)
{
    const char *kind = j->be && j->be->device_kind ? j->be->device_kind : "cpu";
    for (int i = 0; i < j->engine->n_pools; i++)
        if (strcmp(j->engine->pools[i].device_kind, kind) == 0) {
            const cJSON *sb =
                cJSON_GetObjectItem(akg_harness_ready_info(j->engine->pools[i].pool), "sandbox");
            return cJSON_IsObject(sb) ? sb : NULL;
        }
    return NULL;
}

cJSON *akg__report_build(akg_job *j, akg_job_status status, const char *cls, const char *detail)
{
    cJSON *r = cJSON_CreateObject();
    const char *op = j->op_name;
    if (!op && j->ref && j->ref->n_calls > 0)
        op = j->ref->calls[j->ref->n_calls - 1].op;
    cJSON_AddStringToObject(r, "op", op ? op : "");
    cJSON_AddStringToObject(r, "reference", j->reference_path);
    if (j->ref && j->ref->content_hash)
        cJSON_AddStringToObject(r, "reference_hash", j->ref->content_hash);
    cJSON_AddStringToObject(r, "framework", j->framework);
    cJSON_AddStringToObject(r, "backend", j->backend);
    cJSON_AddStringToObject(r, "dsl", j->dsl);
    cJSON_AddStringToObject(r, "arch", j->arch);
    cJSON_AddStringToObject(r, "workflow", j->workflow);
    cJSON_AddStringToObject(r, "provider", j->provider);
    cJSON_AddStringToObject(r, "status", akg_job_status_name(status));
    if (status == AKG_JOB_UNVERIFIED) {
        /* why nothing was verified: the workflow, and where the target cannot run here, that */
        const char *missing = j->be && j->be->runtime_missing ? j->be->runtime_missing() : NULL;
        char why[600];
        snprintf(why, sizeof why, "the %s workflow ends before verification%s%s", j->workflow,
                 missing ? "; " : "", missing ? missing : "");
        cJSON_AddStringToObject(r, "unverified_reason", why);
    }
    cJSON_AddNumberToObject(r, "run_id", (double)j->id);
    cJSON_AddNumberToObject(r, "seed", (double)(j->seed % 1000000007ULL));
    cJSON_AddNumberToObject(r, "attempts", j->attempt);
    cJSON_AddNumberToObject(r, "max_step", j->max_step);
    cJSON_AddNumberToObject(r, "elapsed_s", (akg_now_ms() - j->started_ms) / 1000.0);
    /* where the time went in the harness: per op, waiting for a worker (or, for a profile, an
     * idle device) and running there */
    if (j->harness_times)
        cJSON_AddItemToObject(r, "harness_times", cJSON_Duplicate(j->harness_times, 1));
    if (j->verify) {
        cJSON *c = cJSON_AddObjectToObject(r, "correctness");
        cJSON_AddBoolToObject(c, "passed", cJSON_IsTrue(cJSON_GetObjectItem(j->verify, "ok")));
        static const char *keys[] = {"trials",      "cases",      "seeds",       "max_abs_err",
                                     "max_rel_err", "rel_l2_err", "worst_trial", "worst_case",
                                     "atol",        "rtol",       "dtype",       "fp64_rule",
                                     NULL};
        for (int i = 0; keys[i]; i++)
            copy_item(c, j->verify, keys[i]);
    }
    if (j->design_check) {
        /* the last design's check in the reference interpreter */
        cJSON *c = cJSON_AddObjectToObject(r, "design_check");
        const cJSON *ok = cJSON_GetObjectItem(j->design_check, "ok");
        const cJSON *skipped = cJSON_GetObjectItem(j->design_check, "skipped");
        cJSON_AddStringToObject(c, "result",
                                !cJSON_IsTrue(ok) ? "fail"
                                : skipped         ? "skipped"
                                                  : "pass");
        static const char *keys[] = {"skipped",     "trials", "case",   "seeds", "max_abs_err",
                                     "max_rel_err", "class",  "detail", "line",  NULL};
        for (int i = 0; keys[i]; i++)
            copy_item(c, j->design_check, keys[i]);
    }
    if (j->profile && cJSON_IsTrue(cJSON_GetObjectItem(j->profile, "ok"))) {
        cJSON *p = cJSON_AddObjectToObject(r, "perf");
        static const char *keys[] = {"ref_ms",
                                     "kernel_ms",
                                     "speedup",
                                     "runs",
                                     "warmup",
                                     "ref_ms_p10",
                                     "ref_ms_p90",
                                     "kernel_ms_p10",
                                     "kernel_ms_p90",
                                     "case",
                                     "env",
                                     "compile_s",
                                     "compiled_ms",
                                     "compiled_ms_p10",
                                     "compiled_ms_p90",
                                     "speedup_compiled",
                                     "compiled_error",
                                     "compiled_isa",
                                     "flags",
                                     "ref_timing",
                                     "kernel_batch",
                                     "kernel_calls",
                                     "kernel_checked",
                                     "phases_s",
                                     NULL};
        for (int i = 0; keys[i]; i++)
            copy_item(p, j->profile, keys[i]);
        const cJSON *sp = cJSON_GetObjectItem(j->profile, "speedup");
        const cJSON *penv = cJSON_GetObjectItem(j->profile, "env");
        const cJSON *interp = cJSON_GetObjectItem(penv, "triton_interpret");
        if (interp && cJSON_IsNumber(sp)) {
            /* Triton's interpreter on the CPU: correct results, no speed to speak of */
            cJSON_AddStringToObject(p, "verdict", "interpreted");
            if (status == AKG_JOB_PASS) {
                cJSON_AddStringToObject(r, "verdict", "interpreted");
                cJSON_AddStringToObject(
                    r, "verdict_detail",
                    "verified under Triton's interpreter on the CPU (AKG_TRITON_INTERPRET=1): "
                    "the times are the interpreter's, not the GPU's; run on a GPU to measure it");
            }
        } else if (cJSON_IsNumber(sp)) {
            /* a verified kernel slower than the reference is never offered silently */
            int slower = sp->valuedouble < 1.0;
            cJSON_AddBoolToObject(p, "slower_than_reference", slower);
            cJSON_AddStringToObject(p, "verdict", slower ? "slower" : "faster");
            cJSON_AddNumberToObject(p, "min_speedup", j->min_speedup);
            if (status == AKG_JOB_PASS) {
                char text[256];
                if (slower)
                    snprintf(text, sizeof text,
                             "verified, but %.2fx: slower than the reference (%.2fx its time); "
                             "not a drop-in speedup",
                             sp->valuedouble, sp->valuedouble > 0 ? 1.0 / sp->valuedouble : 0);
                else
                    snprintf(text, sizeof text, "verified, %.2fx faster than the reference",
                             sp->valuedouble);
                cJSON_AddStringToObject(r, "verdict", slower ? "slower" : "faster");
                cJSON_AddStringToObject(r, "verdict_detail", text);
            }
        }
    }
    const cJSON *sandbox = worker_sandbox(j);
    if (sandbox)
        cJSON_AddItemToObject(r, "sandbox", cJSON_Duplicate(sandbox, 1));
    if (j->kept_step > 0) {
        cJSON_AddNumberToObject(r, "kept_step", j->kept_step);
        if (j->search_end)
            cJSON_AddStringToObject(r, "search_end", j->search_end);
    }
    cJSON *paths = cJSON_AddObjectToObject(r, "paths");
    if (j->out_dir)
        cJSON_AddStringToObject(paths, "dir", j->out_dir);
    if (j->sketch_path)
        cJSON_AddStringToObject(paths, "sketch", j->sketch_path);
    if (j->kernel_src_path)
        cJSON_AddStringToObject(paths, "kernel", j->kernel_src_path);
    if (j->model_new_path)
        cJSON_AddStringToObject(paths, "model_new", j->model_new_path);
    if (j->lib_path)
        cJSON_AddStringToObject(paths, "library", j->lib_path);
    if (j->report_path)
        cJSON_AddStringToObject(paths, "report", j->report_path);
    if (cls) {
        cJSON *e = cJSON_AddObjectToObject(r, "error");
        cJSON_AddStringToObject(e, "class", cls);
        cJSON_AddStringToObject(e, "detail", detail ? detail : "");
        if (j->final_error) {
            static const char *keys[] = {"where",    "file",       "line", "column",
                                         "end_line", "end_column", NULL};
            for (int i = 0; keys[i]; i++)
                copy_item(e, j->final_error, keys[i]);
        } else if (j->feedback) {
            static const char *keys[] = {"where", "line", NULL};
            for (int i = 0; keys[i]; i++)
                copy_item(e, j->feedback, keys[i]);
        }
    }
    if (j->design_info)
        cJSON_AddItemToObject(r, "design", cJSON_Duplicate(j->design_info, 1));
    if (j->code_info) /* a model wrote the kernel: its requests and tokens, as for the design */
        cJSON_AddItemToObject(r, "code", cJSON_Duplicate(j->code_info, 1));
    if (j->probe) {
        cJSON *t = cJSON_AddObjectToObject(r, "task");
        static const char *keys[] = {"inputs",  "init_inputs", "params",
                                     "outputs", "dyn_cases",   NULL};
        for (int i = 0; keys[i]; i++)
            copy_item(t, j->probe, keys[i]);
    }
    cJSON *cands = cJSON_AddItemToObject(r, "candidates", cJSON_Duplicate(j->candidates, 1))
                       ? cJSON_GetObjectItem(r, "candidates")
                       : NULL;
    cJSON *c;
    cJSON_ArrayForEach(c, cands)
    {
        const cJSON *step = cJSON_GetObjectItem(c, "step");
        if (j->kept_step > 0 && cJSON_IsNumber(step) && step->valueint == j->kept_step &&
            cJSON_IsNumber(cJSON_GetObjectItem(c, "speedup")))
            cJSON_AddBoolToObject(c, "kept", 1);
    }
    cJSON *search = akg__search_report(j);
    if (search)
        cJSON_AddItemToObject(r, "search", search);
    if (j->store_failures || !j->store_run)
        cJSON_AddStringToObject(r, "store_error", j->store_error);
    return r;
}

/* Writes report.json; on failure reports it as an error event and returns
 * the reason in err. */
static int write_report(akg_job *j, const cJSON *report, char *err, size_t errlen)
{
    char *text = cJSON_Print(report);
    int rc = text ? akg_write_file(j->report_path, text, strlen(text), err, errlen)
                  : akg_fail(err, errlen, AKG_ENOMEM, "out of memory printing %s", j->report_path);
    free(text);
    if (rc != AKG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "report.json could not be written: %s", err);
        emit_error(j, msg);
    }
    return rc;
}

/* The report could not be written: the run's result is incomplete, so a job
 * that would have passed (or produced its files) ends as an error saying why. */
static void mark_report_failed(akg_job *j, cJSON *report, const char *why)
{
    char detail[1024];
    snprintf(detail, sizeof detail, "report.json could not be written: %s", why);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(report, "paths"), "report");
    free(j->report_path);
    j->report_path = NULL;
    if (j->final_status == AKG_JOB_PASS || j->final_status == AKG_JOB_UNVERIFIED) {
        j->final_status = AKG_JOB_ERROR;
        cJSON_DeleteItemFromObject(report, "status");
        cJSON_AddStringToObject(report, "status", akg_job_status_name(AKG_JOB_ERROR));
        cJSON_DeleteItemFromObject(report, "error");
        cJSON *e = cJSON_AddObjectToObject(report, "error");
        cJSON_AddStringToObject(e, "class", "io_error");
        cJSON_AddStringToObject(e, "detail", detail);
    } else {
        cJSON_AddStringToObject(report, "report_error", detail);
    }
}

cJSON *akg__job_record(akg_job *j)
{
    const char *cls = NULL, *detail = NULL;
    if (j->final_error) {
        cls = cJSON_GetStringValue(cJSON_GetObjectItem(j->final_error, "class"));
        detail = cJSON_GetStringValue(cJSON_GetObjectItem(j->final_error, "detail"));
    }
    if (j->out_dir) {
        free(j->report_path);
        j->report_path = malloc(strlen(j->out_dir) + sizeof "/report.json");
        if (j->report_path)
            sprintf(j->report_path, "%s/report.json", j->out_dir);
    }
    cJSON *report = akg__report_build(j, j->final_status, cls, detail);
    int written = 0;
    if (j->report_path) {
        char err[512];
        if (write_report(j, report, err, sizeof err) == AKG_OK)
            written = 1;
        else
            mark_report_failed(j, report, err);
    }
    if (j->store_run) {
        const cJSON *speedup = cJSON_GetObjectItem(cJSON_GetObjectItem(report, "perf"), "speedup");
        int failures = j->store_failures;
        store_check(j,
                    akg_store_run_end(j->engine->store, j->id, akg_job_status_name(j->final_status),
                                      j->final_status == AKG_JOB_PASS && cJSON_IsNumber(speedup)
                                          ? speedup->valuedouble
                                          : 0,
                                      report),
                    "the run's end");
        if (j->store_failures != failures) {
            cJSON_DeleteItemFromObject(report, "store_error");
            cJSON_AddStringToObject(report, "store_error", j->store_error);
            if (written) {
                char err[512];
                if (write_report(j, report, err, sizeof err) != AKG_OK)
                    mark_report_failed(j, report, err);
            }
        }
    }
    return report;
}
