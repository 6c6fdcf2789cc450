/*
 * pipeline.c: the state machine of one job.
 *
 *   parse -> probe -> design -> code -> build -> verify -> profile -> done
 *                       ^         ^                 |
 *                       |         +-- code errors --+   (the Conductor routes
 *                       +------ numerical errors ---+    each failure)
 *
 * Every stage that can take more than a moment is a child process (the
 * compiler) or a harness request, and the state machine advances from their
 * callbacks; parse, design and code are pure and fast. Workflows select
 * stages: coder_only skips the sketch file, kernelgen_only and design_only end
 * unverified, verifier_only checks a given model_new.py. Each stage is
 * announced by a STAGE event; a finished job writes report.json, records the
 * run in the store, and emits DONE.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "akg/akg.h"
#include "akg/config.h"
#include "akg/sketch.h"
#include "../internal.h"

static void stage_probe(akg_job *j);
static void stage_design(akg_job *j);
static void stage_code(akg_job *j);
static void stage_build(akg_job *j);
static void stage_verify(akg_job *j);
static void stage_profile(akg_job *j);
static void job_finish(akg_job *j, akg_job_status status, const char *cls, const char *detail);

static int wf(const akg_job *j, const char *name)
{
    return strcmp(j->workflow, name) == 0;
}

static void emit_stage(akg_job *j, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void emit_stage(akg_job *j, const char *stage, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    akg_event ev = {0};
    ev.kind = AKG_EVENT_STAGE;
    ev.stage = stage;
    ev.attempt = j->attempt;
    ev.max_attempts = j->max_step;
    ev.message = msg;
    akg__job_emit(j, &ev);
}

static void emit_log(akg_job *j, akg_log_level level, const char *msg)
{
    akg_event ev = {0};
    ev.kind = AKG_EVENT_LOG;
    ev.level = level;
    ev.message = msg;
    ev.attempt = j->attempt;
    akg__job_emit(j, &ev);
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* ---------- the output folder ---------- */

static int ensure_out_dir(akg_job *j)
{
    if (j->out_dir)
        return AKG_OK;
    if (j->output_dir_opt) {
        j->out_dir = akg_strdup(j->output_dir_opt);
    } else {
        const char *log_dir = akg_config_string(j->config, "log_dir", "akg_output");
        const char *stem = strrchr(j->reference_path, '/');
        stem = stem ? stem + 1 : j->reference_path;
        char name[256];
        snprintf(name, sizeof name, "%s", stem);
        char *dot = strrchr(name, '.');
        if (dot)
            *dot = '\0';
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        char ts[32];
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
        char rel[1024];
        snprintf(rel, sizeof rel, "%s/%s_%s_%s_%lld", log_dir, name, j->dsl, ts,
                 j->id > 0 ? j->id : -j->id);
        j->out_dir = akg_abspath(rel);
    }
    char err[512];
    if (akg_mkdirs(j->out_dir, err, sizeof err) != AKG_OK) {
        job_finish(j, AKG_JOB_ERROR, "io_error", err);
        return AKG_EIO;
    }
    return AKG_OK;
}

static int write_out(akg_job *j, const char *name, const char *text, char **path_out)
{
    char *path = join_path(j->out_dir, name);
    char err[512];
    int rc = akg_write_file(path, text, strlen(text), err, sizeof err);
    if (rc) {
        free(path);
        job_finish(j, AKG_JOB_ERROR, "io_error", err);
        return rc;
    }
    if (path_out) {
        free(*path_out);
        *path_out = path;
    } else {
        free(path);
    }
    return AKG_OK;
}

/* ---------- harness requests ---------- */

typedef void (*answer_fn)(akg_job *j, const cJSON *ans);

typedef struct {
    akg_job *job;
    answer_fn fn;
} req_ctx;

static void on_answer(const cJSON *ans, void *user)
{
    req_ctx *c = user;
    akg_job *j = c->job;
    answer_fn fn = c->fn;
    free(c);
    j->hreq = NULL;
    if (j->cancelled) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    fn(j, ans);
}

static void submit(akg_job *j, cJSON *req, answer_fn fn)
{
    req_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        cJSON_Delete(req);
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    c->job = j;
    c->fn = fn;
    if (akg_harness_submit(j->engine->harness, req, j->verify_timeout_s, on_answer, c, &j->hreq) !=
        AKG_OK) {
        free(c);
        j->hreq = NULL;
        job_finish(j, AKG_JOB_ERROR, "crash", "the harness is not available");
    }
}

static const char *ans_str(const cJSON *a, const char *key, const char *fallback)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(a, key));
    return s ? s : fallback;
}

static double ans_num(const cJSON *a, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(a, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* ---------- the Conductor ---------- */

/* Records the failed candidate and decides where the next attempt starts:
 * code errors (build, runtime, crash, timeout, forbidden) go back to the
 * Coder, which lowers conservatively; numerical and shape errors go back to
 * the Designer with the failure as feedback. */
static void conductor_route(akg_job *j, const char *cls, const char *detail, const cJSON *ans)
{
    cJSON *cand = cJSON_CreateObject();
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "fail");
    cJSON_AddStringToObject(cand, "error_class", cls);
    cJSON_AddStringToObject(cand, "detail", detail);
    if (j->design)
        cJSON_AddItemToObject(cand, "design", akg_design_to_json(j->design));
    cJSON_AddItemToArray(j->candidates, cand);
    akg_store_candidate_add(j->engine->store, j->id, j->attempt,
                            j->design ? j->design->sketch_text : NULL, j->files.kernel_source,
                            "fail", cls, detail, 0, 0);
    cJSON_Delete(j->feedback);
    j->feedback = ans ? cJSON_Duplicate(ans, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObject(j->feedback, "class");
    cJSON_AddStringToObject(j->feedback, "class", cls);
    cJSON_DeleteItemFromObject(j->feedback, "detail");
    cJSON_AddStringToObject(j->feedback, "detail", detail);

    if (wf(j, "verifier_only") || j->attempt >= j->max_step) {
        char msg[1024];
        if (wf(j, "verifier_only"))
            snprintf(msg, sizeof msg, "%s", detail);
        else
            snprintf(msg, sizeof msg, "no kernel passed in %d attempts; last: %s", j->attempt,
                     detail);
        job_finish(j, AKG_JOB_FAIL, cls, msg);
        return;
    }
    int to_designer = strcmp(cls, "numerical_mismatch") == 0 || strcmp(cls, "shape_mismatch") == 0;
    char msg[1200];
    snprintf(msg, sizeof msg, "conductor: attempt %d failed (%s); routing to the %s", j->attempt,
             cls, to_designer ? "Designer" : "Coder");
    emit_log(j, AKG_LOG_WARN, msg);
    j->attempt++;
    if (to_designer) {
        stage_design(j);
    } else {
        j->safe_mode = 1;
        stage_code(j);
    }
}

/* ---------- stages ---------- */

static void stage_parse(akg_job *j)
{
    j->state = JOB_PARSE;
    emit_stage(j, "parse", "reading %s", j->reference_path);
    if (ensure_out_dir(j))
        return;
    char err[1024];
    size_t len = 0;
    if (akg_read_file(j->reference_path, 16 << 20, &j->ref_source, &len, err, sizeof err)) {
        job_finish(j, AKG_JOB_ERROR, "reference_error", err);
        return;
    }
    j->ref = akg_reference_parse(j->ref_source, len, j->reference_path);
    if (!j->ref) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    if (akg_reference_check_form(j->ref, err, sizeof err)) {
        cJSON_Delete(j->final_error);
        j->final_error = cJSON_CreateObject();
        cJSON_AddStringToObject(j->final_error, "where", "reference");
        if (j->ref->syntax_errors) {
            cJSON_AddNumberToObject(j->final_error, "line", j->ref->first_error.start_row + 1);
            cJSON_AddNumberToObject(j->final_error, "column", j->ref->first_error.start_col + 1);
        }
        job_finish(j, AKG_JOB_ERROR, "reference_error", err);
        return;
    }
    if (wf(j, "verifier_only")) {
        free(j->model_new_path);
        j->model_new_path = akg_strdup(j->kernel_path);
        j->attempt = 1;
        stage_verify(j);
        return;
    }
    stage_probe(j);
}

static void on_probe(akg_job *j, const cJSON *ans)
{
    if (!cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"))) {
        char msg[2048];
        snprintf(msg, sizeof msg, "probe of the reference failed: %s",
                 ans_str(ans, "detail", "no detail"));
        cJSON_Delete(j->final_error);
        j->final_error = cJSON_Duplicate(ans, 1);
        job_finish(j, AKG_JOB_ERROR, ans_str(ans, "class", "runtime_error"), msg);
        return;
    }
    j->probe = cJSON_Duplicate(ans, 1);
    j->attempt = 1;
    stage_design(j);
}

static void stage_probe(akg_job *j)
{
    j->state = JOB_PROBE;
    emit_stage(j, "probe", "probing shapes and dtypes in the harness");
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "probe");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddNumberToObject(req, "seed", (double)j->seed);
    submit(j, req, on_probe);
}

static void stage_design(akg_job *j)
{
    j->state = JOB_DESIGN;
    emit_stage(j, "design", "attempt %d/%d: designing a sketch (%s provider)", j->attempt,
               j->max_step, j->provider);
    if (strcmp(j->provider, "builtin") != 0) {
        job_finish(j, AKG_JOB_ERROR, "unsupported",
                   "the openai provider is not available in this build; use --provider builtin");
        return;
    }
    char err[1024];
    akg_range where = {0};
    akg_design *d = NULL;
    int rc = akg_designer_builtin(j->ref, j->probe, j->feedback, j->attempt, &d, &where, err,
                                  sizeof err);
    if (rc) {
        cJSON_Delete(j->final_error);
        j->final_error = cJSON_CreateObject();
        cJSON_AddNumberToObject(j->final_error, "line", where.start_row + 1);
        cJSON_AddNumberToObject(j->final_error, "column", where.start_col + 1);
        cJSON_AddNumberToObject(j->final_error, "end_line", where.end_row + 1);
        cJSON_AddNumberToObject(j->final_error, "end_column", where.end_col + 1);
        job_finish(j, AKG_JOB_ERROR, rc == AKG_EUNSUPPORTED ? "unsupported" : "design_error", err);
        return;
    }
    akg_design_free(j->design);
    j->design = d;
    j->safe_mode = 0;
    /* the sketch is parsed and checked before any code is written */
    akg_sketch_free(j->sketch);
    j->sketch = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    int prc = akg_sketch_parse(d->sketch_text, strlen(d->sketch_text), &j->sketch, diags);
    if (prc == 0 && akg_sketch_check(j->sketch, diags) != 0)
        prc = -1;
    if (prc != 0) {
        akg_buf msg;
        akg_buf_init(&msg, 8192);
        akg_buf_puts(&msg, "the Designer's sketch does not check:");
        for (size_t i = 0; i < akg_sketch_diag_count(diags) && i < 10; i++) {
            char *line = akg_sketch_diag_format("sketch.sketch", akg_sketch_diag_at(diags, i));
            if (line) {
                akg_buf_appendf(&msg, "\n%s", line);
                free(line);
            }
        }
        akg_sketch_diag_list_free(diags);
        write_out(j, "sketch.sketch", d->sketch_text, &j->sketch_path);
        job_finish(j, AKG_JOB_ERROR, "design_error", msg.data ? msg.data : "sketch error");
        akg_buf_free(&msg);
        return;
    }
    akg_sketch_diag_list_free(diags);
    if (!wf(j, "coder_only")) {
        if (write_out(j, "sketch.sketch", d->sketch_text, &j->sketch_path))
            return;
        akg_event ev = {0};
        ev.kind = AKG_EVENT_SKETCH;
        ev.stage = "design";
        ev.attempt = j->attempt;
        ev.path = j->sketch_path;
        ev.text = d->sketch_text;
        ev.message = "sketch ready";
        akg__job_emit(j, &ev);
    }
    if (wf(j, "design_only")) {
        job_finish(j, AKG_JOB_UNVERIFIED, NULL, NULL);
        return;
    }
    stage_code(j);
}

static void stage_code(akg_job *j)
{
    j->state = JOB_CODE;
    emit_stage(j, "code", "attempt %d/%d: lowering the sketch to C++%s", j->attempt, j->max_step,
               j->safe_mode ? " (conservative: no OpenMP/simd)" : "");
    char err[1024];
    akg_kernel_files_free(&j->files);
    if (akg_cpp_emit(j->design, j->sketch, j->ref, j->safe_mode, &j->files, err, sizeof err)) {
        job_finish(j, AKG_JOB_ERROR, "unsupported", err);
        return;
    }
    if (write_out(j, j->files.kernel_filename, j->files.kernel_source, &j->kernel_src_path) ||
        write_out(j, "model_new.py", j->files.model_new_source, &j->model_new_path))
        return;
    free(j->lib_path);
    j->lib_path = join_path(j->out_dir, j->files.library_filename);
    akg_event ev = {0};
    ev.kind = AKG_EVENT_KERNEL;
    ev.stage = "code";
    ev.attempt = j->attempt;
    ev.path = j->kernel_src_path;
    ev.text = j->files.kernel_source;
    ev.message = "kernel written";
    akg__job_emit(j, &ev);
    stage_build(j);
}

static void on_built(const akg_child_result *r, void *user)
{
    akg_job *j = user;
    j->child = NULL;
    if (j->cancelled || r->cancelled) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    if (r->timed_out || r->exit_status != 0 || r->term_signal) {
        akg_buf msg;
        akg_buf_init(&msg, 8192);
        if (r->timed_out)
            akg_buf_puts(&msg, "the compiler did not finish in time");
        else
            akg_buf_appendf(&msg, "the compiler failed (status %d)", r->exit_status);
        if (r->output && *r->output) {
            akg_buf_puts(&msg, ":\n");
            akg_buf_append(&msg, r->output, strlen(r->output) > 6000 ? 6000 : strlen(r->output));
        }
        cJSON *ans = cJSON_CreateObject();
        cJSON_AddStringToObject(ans, "compiler_output", r->output ? r->output : "");
        conductor_route(j, "build_error", msg.data ? msg.data : "build failed", ans);
        cJSON_Delete(ans);
        akg_buf_free(&msg);
        return;
    }
    if (wf(j, "kernelgen_only")) {
        job_finish(j, AKG_JOB_UNVERIFIED, NULL, NULL);
        return;
    }
    stage_verify(j);
}

static void stage_build(akg_job *j)
{
    j->state = JOB_BUILD;
    const char *cxx = akg_config_string(j->config, "compiler.cxx", "g++");
    emit_stage(j, "build", "attempt %d/%d: %s -O3 -march=native -fopenmp", j->attempt, j->max_step,
               cxx);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)cxx;
    const cJSON *flags = akg_config_get(j->config, "compiler.flags");
    const cJSON *f;
    if (cJSON_IsArray(flags)) {
        cJSON_ArrayForEach(f, flags) {
            if (cJSON_IsString(f) && n < 24)
                argv[n++] = f->valuestring;
        }
    } else {
        static char *defaults[] = {"-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                                   "-std=c++17"};
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            argv[n++] = defaults[i];
    }
    argv[n++] = "-o";
    argv[n++] = j->lib_path;
    argv[n++] = j->kernel_src_path;
    argv[n] = NULL;
    int rc = akg_child_run(j->engine->loop, argv, j->out_dir, j->verify_timeout_s, on_built, j,
                           &j->child);
    if (rc) {
        char msg[256];
        snprintf(msg, sizeof msg, "cannot start the compiler %s", cxx);
        job_finish(j, AKG_JOB_ERROR, "build_error", msg);
    }
}

/* Emits a VERIFY or PROFILE event for a harness answer; on failure hands the
 * candidate to the Conductor and returns 0, else returns 1. */
static int report_answer(akg_job *j, akg_event_kind kind, const char *stage, const cJSON *ans,
                         const char *msg)
{
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"));
    akg_event ev = {0};
    ev.kind = kind;
    ev.stage = stage;
    ev.attempt = j->attempt;
    ev.ok = ok;
    ev.message = msg;
    ev.data = ans;
    akg__job_emit(j, &ev);
    if (!ok)
        conductor_route(j, ans_str(ans, "class", "runtime_error"), ans_str(ans, "detail", ""), ans);
    return ok;
}

static void on_verified(akg_job *j, const cJSON *ans)
{
    cJSON_Delete(j->verify);
    j->verify = cJSON_Duplicate(ans, 1);
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"));
    char msg[1024];
    if (ok)
        snprintf(msg, sizeof msg, "verified: %d trials, max abs err %.3g, max rel err %.3g",
                 (int)ans_num(ans, "trials"), ans_num(ans, "max_abs_err"),
                 ans_num(ans, "max_rel_err"));
    else
        snprintf(msg, sizeof msg, "verification failed (%s): %s", ans_str(ans, "class", "?"),
                 ans_str(ans, "detail", ""));
    if (report_answer(j, AKG_EVENT_VERIFY, "verify", ans, msg))
        stage_profile(j);
}

static void on_verify_progress(const cJSON *msg, void *user)
{
    akg_job *j = user;
    const cJSON *t = cJSON_GetObjectItem(msg, "trial"), *n = cJSON_GetObjectItem(msg, "trials");
    char text[128];
    snprintf(text, sizeof text, "trial %d/%d passed", cJSON_IsNumber(t) ? t->valueint : 0,
             cJSON_IsNumber(n) ? n->valueint : 0);
    akg_event ev = {0};
    ev.kind = AKG_EVENT_STAGE;
    ev.stage = "verify";
    ev.attempt = j->attempt;
    ev.max_attempts = j->max_step;
    ev.trial = cJSON_IsNumber(t) ? t->valueint : 0;
    ev.trials = cJSON_IsNumber(n) ? n->valueint : 0;
    ev.message = text;
    akg__job_emit(j, &ev);
}

static void stage_verify(akg_job *j)
{
    j->state = JOB_VERIFY;
    emit_stage(j, "verify", "attempt %d/%d: %d trials with fresh seeded inputs", j->attempt,
               j->max_step, j->trials);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "verify");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddStringToObject(req, "kernel", j->model_new_path);
    cJSON_AddNumberToObject(req, "trials", j->trials);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    cJSON_AddNullToObject(req, "atol");
    cJSON_AddNullToObject(req, "rtol");
    submit(j, req, on_verified);
    if (j->hreq)
        akg_harness_set_progress(j->hreq, on_verify_progress, j);
}

static void on_profiled(akg_job *j, const cJSON *ans)
{
    cJSON_Delete(j->profile);
    j->profile = cJSON_Duplicate(ans, 1);
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"));
    char msg[512];
    if (ok)
        snprintf(msg, sizeof msg, "reference %.4f ms, kernel %.4f ms, speedup %.2fx",
                 ans_num(ans, "ref_ms"), ans_num(ans, "kernel_ms"), ans_num(ans, "speedup"));
    else
        snprintf(msg, sizeof msg, "profiling failed (%s): %s", ans_str(ans, "class", "?"),
                 ans_str(ans, "detail", ""));
    if (!report_answer(j, AKG_EVENT_PROFILE, "profile", ans, msg))
        return;
    cJSON *cand = cJSON_CreateObject();
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "pass");
    cJSON_AddNumberToObject(cand, "kernel_ms", ans_num(ans, "kernel_ms"));
    cJSON_AddNumberToObject(cand, "speedup", ans_num(ans, "speedup"));
    if (j->design)
        cJSON_AddItemToObject(cand, "design", akg_design_to_json(j->design));
    cJSON_AddItemToArray(j->candidates, cand);
    akg_store_candidate_add(j->engine->store, j->id, j->attempt,
                            j->design ? j->design->sketch_text : NULL, j->files.kernel_source,
                            "pass", NULL, NULL, ans_num(ans, "ref_ms"), ans_num(ans, "kernel_ms"));
    job_finish(j, AKG_JOB_PASS, NULL, NULL);
}

static void stage_profile(akg_job *j)
{
    j->state = JOB_PROFILE;
    emit_stage(j, "profile", "timing reference and kernel: %d warm-up, %d runs, interleaved",
               j->warmup_times, j->run_times);
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "profile");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddStringToObject(req, "kernel", j->model_new_path);
    cJSON_AddNumberToObject(req, "warmup", j->warmup_times);
    cJSON_AddNumberToObject(req, "runs", j->run_times);
    if (j->compiled_baseline)
        cJSON_AddBoolToObject(req, "compiled", 1);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    submit(j, req, on_profiled);
}

/* ---------- the end ---------- */

static void copy_num(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(src, key);
    if (v)
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

static cJSON *build_report(akg_job *j, akg_job_status status, const char *cls, const char *detail)
{
    cJSON *r = cJSON_CreateObject();
    const char *op = j->design ? j->design->op_name : NULL;
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
    cJSON_AddNumberToObject(r, "run_id", (double)j->id);
    cJSON_AddNumberToObject(r, "seed", (double)(j->seed % 1000000007ULL));
    cJSON_AddNumberToObject(r, "attempts", j->attempt);
    cJSON_AddNumberToObject(r, "max_step", j->max_step);
    cJSON_AddNumberToObject(r, "elapsed_s", (akg_now_ms() - j->started_ms) / 1000.0);
    if (j->verify) {
        cJSON *c = cJSON_AddObjectToObject(r, "correctness");
        cJSON_AddBoolToObject(c, "passed", cJSON_IsTrue(cJSON_GetObjectItem(j->verify, "ok")));
        static const char *keys[] = {"trials", "cases", "seeds", "max_abs_err", "max_rel_err",
                                     "rel_l2_err", "worst_trial", "worst_case", "atol", "rtol",
                                     "dtype", "fp64_rule", NULL};
        for (int i = 0; keys[i]; i++)
            copy_num(c, j->verify, keys[i]);
    }
    if (j->profile && cJSON_IsTrue(cJSON_GetObjectItem(j->profile, "ok"))) {
        cJSON *p = cJSON_AddObjectToObject(r, "perf");
        static const char *keys[] = {"ref_ms", "kernel_ms", "speedup", "runs", "warmup",
                                     "ref_ms_p10", "ref_ms_p90", "kernel_ms_p10",
                                     "kernel_ms_p90", "case", "env", "compile_s",
                                     "compiled_ms", "compiled_ms_p10", "compiled_ms_p90",
                                     "speedup_compiled", "compiled_error", "compiled_isa", NULL};
        for (int i = 0; keys[i]; i++)
            copy_num(p, j->profile, keys[i]);
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
            static const char *keys[] = {"where", "line", "column", "end_line", "end_column",
                                         NULL};
            for (int i = 0; keys[i]; i++)
                copy_num(e, j->final_error, keys[i]);
        } else if (j->feedback) {
            static const char *keys[] = {"where", "line", NULL};
            for (int i = 0; keys[i]; i++)
                copy_num(e, j->feedback, keys[i]);
        }
    }
    if (j->design)
        cJSON_AddItemToObject(r, "design", akg_design_to_json(j->design));
    if (j->probe) {
        cJSON *t = cJSON_AddObjectToObject(r, "task");
        static const char *keys[] = {"inputs", "init_inputs", "params", "outputs", "dyn_cases",
                                     NULL};
        for (int i = 0; keys[i]; i++)
            copy_num(t, j->probe, keys[i]);
    }
    cJSON_AddItemToObject(r, "candidates", cJSON_Duplicate(j->candidates, 1));
    return r;
}

static void on_kick_finish(uv_timer_t *t)
{
    akg_job *j = t->data;
    akg_event ev = {0};
    ev.kind = AKG_EVENT_DONE;
    ev.status = j->final_status;
    ev.attempt = j->attempt;
    cJSON *report = NULL;
    {
        const char *cls = NULL, *detail = NULL;
        if (j->final_error) {
            cls = cJSON_GetStringValue(cJSON_GetObjectItem(j->final_error, "class"));
            detail = cJSON_GetStringValue(cJSON_GetObjectItem(j->final_error, "detail"));
        }
        report = build_report(j, j->final_status, cls, detail);
    }
    if (j->out_dir) {
        free(j->report_path);
        j->report_path = join_path(j->out_dir, "report.json");
        cJSON *paths = cJSON_GetObjectItem(report, "paths");
        cJSON_AddStringToObject(paths, "report", j->report_path);
        char *text = cJSON_Print(report);
        if (text) {
            akg_write_file(j->report_path, text, strlen(text), NULL, 0);
            free(text);
        }
    }
    double speedup = 0;
    const cJSON *perf = cJSON_GetObjectItem(report, "perf");
    if (perf)
        speedup = ans_num(perf, "speedup");
    akg_store_run_end(j->engine->store, j->id, akg_job_status_name(j->final_status),
                      j->final_status == AKG_JOB_PASS ? speedup : 0, report);
    ev.path = j->report_path;
    ev.data = report;
    const cJSON *e = cJSON_GetObjectItem(report, "error");
    ev.message = e ? cJSON_GetStringValue(cJSON_GetObjectItem(e, "detail"))
                   : akg_job_status_name(j->final_status);
    akg__job_emit(j, &ev);
    cJSON_Delete(report);
    akg__job_finished(j);
}

/* Ends the job: the DONE event is emitted from a fresh loop iteration so that
 * no caller up the stack sees the job freed under it. */
static void job_finish(akg_job *j, akg_job_status status, const char *cls, const char *detail)
{
    if (j->finishing)
        return;
    j->finishing = 1;
    j->state = JOB_FINISHING;
    j->final_status = status;
    if (cls) {
        if (!j->final_error)
            j->final_error = cJSON_CreateObject();
        cJSON_DeleteItemFromObject(j->final_error, "class");
        cJSON_DeleteItemFromObject(j->final_error, "detail");
        cJSON_AddStringToObject(j->final_error, "class", cls);
        cJSON_AddStringToObject(j->final_error, "detail", detail ? detail : "");
    } else {
        cJSON_Delete(j->final_error);
        j->final_error = NULL;
    }
    uv_timer_start(&j->kick, on_kick_finish, 0, 0);
}

static void on_kick_start(uv_timer_t *t)
{
    akg_job *j = t->data;
    if (j->cancelled) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    stage_parse(j);
}

void akg__pipeline_start(akg_job *j)
{
    uv_timer_start(&j->kick, on_kick_start, 0, 0);
}

void akg__pipeline_cancel(akg_job *j)
{
    if (j->hreq) {
        akg_harness_req *r = j->hreq;
        j->hreq = NULL;
        akg_harness_cancel(r); /* on_answer sees j->cancelled and finishes */
        return;
    }
    if (j->child) {
        akg_child_cancel(j->child); /* on_built finishes */
        return;
    }
    /* queued, or between stages (a timer is pending) */
    if (j->state == JOB_QUEUED) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    uv_timer_stop(&j->kick);
    job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
}
