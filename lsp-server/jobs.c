/* jobs.c: see jobs.h. */
#include "jobs.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "diagnostics.h"
#include "log.h"
#include "reference_index.h"
#include "results.h"
#include "selection.h"
#include "sketch_link.h"
#include "uri.h"

typedef enum { PROGRESS_NONE, PROGRESS_CREATING, PROGRESS_BEGUN, PROGRESS_ENDED } progress_state;

struct akg_lsp_job {
    long long id;
    akg_job *job; /* the engine's; NULL once DONE has arrived */
    char *uri, *path, *backend, *dsl, *arch, *workflow;
    char *sketch_path, *sketch_uri; /* a job from the user's sketch; else NULL */
    char hash[65];        /* the reference's content when the job started */
    char sketch_hash[65]; /* the sketch's */
    char token[48];
    char title[96];
    char last_message[256];
    int percentage;
    progress_state progress;
    int cancel_requested;
    akg_lsp_server *server;
    akg_lsp_job *next;
};

static akg_lsp_job *job_find(akg_lsp_server *s, long long id)
{
    for (akg_lsp_job *j = s->jobs; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

static akg_lsp_job *job_find_token(akg_lsp_server *s, const char *token)
{
    for (akg_lsp_job *j = s->jobs; j; j = j->next)
        if (strcmp(j->token, token) == 0)
            return j;
    return NULL;
}

static void job_free(akg_lsp_job *j)
{
    free(j->uri);
    free(j->path);
    free(j->backend);
    free(j->dsl);
    free(j->arch);
    free(j->workflow);
    free(j->sketch_path);
    free(j->sketch_uri);
    free(j);
}

static void job_unlink(akg_lsp_server *s, akg_lsp_job *job)
{
    for (akg_lsp_job **pp = &s->jobs; *pp; pp = &(*pp)->next)
        if (*pp == job) {
            *pp = job->next;
            return;
        }
}

/* ---- progress ------------------------------------------------------------ */

static void progress_send(akg_lsp_server *s, akg_lsp_job *j, const char *kind)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "token", j->token);
    cJSON *v = cJSON_AddObjectToObject(p, "value");
    cJSON_AddStringToObject(v, "kind", kind);
    if (strcmp(kind, "begin") == 0) {
        cJSON_AddStringToObject(v, "title", j->title);
        cJSON_AddBoolToObject(v, "cancellable", 1);
    }
    if (j->last_message[0])
        cJSON_AddStringToObject(v, "message", j->last_message);
    if (strcmp(kind, "end") != 0)
        cJSON_AddNumberToObject(v, "percentage", j->percentage);
    akg_lsp_notify(s, "$/progress", p);
}

static void progress_created(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                             long long job_id)
{
    (void)result;
    akg_lsp_job *j = job_find(s, job_id);
    if (!j || j->progress != PROGRESS_CREATING)
        return;
    if (error) {
        j->progress = PROGRESS_NONE; /* the client refused the token: no progress */
        return;
    }
    j->progress = PROGRESS_BEGUN;
    progress_send(s, j, "begin");
}

static void progress_report(akg_lsp_server *s, akg_lsp_job *j, int percentage, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void progress_report(akg_lsp_server *s, akg_lsp_job *j, int percentage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->last_message, sizeof j->last_message, fmt, ap);
    va_end(ap);
    /* Progress only moves forward (a retry goes back a stage, not the bar). */
    if (percentage > j->percentage)
        j->percentage = percentage;
    akg_lsp_log_debug("job %lld: %s", j->id, j->last_message);
    if (j->progress == PROGRESS_BEGUN)
        progress_send(s, j, "report");
}

static int stage_percentage(const char *stage)
{
    static const struct {
        const char *name;
        int pct;
    } stages[] = {{"parse", 5},  {"probe", 10},  {"design", 25}, {"code", 40},
                  {"build", 55}, {"verify", 70}, {"profile", 85}};
    for (size_t i = 0; stage && i < sizeof stages / sizeof stages[0]; i++)
        if (strcmp(stages[i].name, stage) == 0)
            return stages[i].pct;
    return 0;
}

/* ---- events -------------------------------------------------------------- */

static const char *status_word(akg_job_status st)
{
    switch (st) {
    case AKG_JOB_PASS:
        return "pass";
    case AKG_JOB_FAIL:
        return "fail";
    case AKG_JOB_UNVERIFIED:
        return "unverified";
    case AKG_JOB_CANCELLED:
        return "cancelled";
    default:
        return "error";
    }
}

static void add_path(cJSON *paths, const char *key, const char *value)
{
    if (value)
        cJSON_AddStringToObject(paths, key, value);
    else
        cJSON_AddNullToObject(paths, key);
}

static void show_document(akg_lsp_server *s, const char *path, int take_focus)
{
    char *uri = akg_lsp_path_to_uri(path);
    if (!uri)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    cJSON_AddBoolToObject(p, "takeFocus", take_focus);
    free(uri);
    akg_lsp_request(s, "window/showDocument", p, NULL, 0);
}

static void job_done(akg_lsp_server *s, akg_lsp_job *j, const akg_event *ev)
{
    const cJSON *report = ev->data;
    const char *status = status_word(ev->status);
    const char *kernel = akg_lsp_param_string(report, "paths.kernel");
    const char *model_new = akg_lsp_param_string(report, "paths.model_new");
    if (!model_new)
        model_new = akg_lsp_param_string(report, "paths.modelNew");
    const char *sketch = akg_lsp_param_string(report, "paths.sketch");
    const char *report_path = ev->path ? ev->path : akg_lsp_param_string(report, "paths.report");
    double speedup = akg_lsp_result_number(report, "perf.speedup");
    const char *err_class = akg_lsp_param_string(report, "error.class");
    const char *err_detail = akg_lsp_param_string(report, "error.detail");
    if (!err_detail && ev->status == AKG_JOB_ERROR)
        err_detail = ev->message;

    if (ev->status == AKG_JOB_PASS && !isnan(speedup) && speedup < 1.0)
        snprintf(j->last_message, sizeof j->last_message,
                 "verified, but slower than the reference: %.2fx (not a drop-in speedup)",
                 speedup);
    else if (ev->status == AKG_JOB_PASS && !isnan(speedup))
        snprintf(j->last_message, sizeof j->last_message, "verified, %.2fx", speedup);
    else if (err_class || err_detail)
        snprintf(j->last_message, sizeof j->last_message, "%s: %s", status,
                 err_detail ? err_detail : err_class);
    else
        snprintf(j->last_message, sizeof j->last_message, "%s", status);
    if (j->progress == PROGRESS_BEGUN)
        progress_send(s, j, "end");
    j->progress = PROGRESS_ENDED;

    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "id", (double)j->id);
    cJSON_AddStringToObject(p, "uri", j->uri);
    cJSON_AddStringToObject(p, "status", status);
    cJSON *paths = cJSON_AddObjectToObject(p, "paths");
    add_path(paths, "sketch", sketch);
    add_path(paths, "kernel", kernel);
    add_path(paths, "modelNew", model_new);
    add_path(paths, "report", report_path);
    if (isnan(speedup))
        cJSON_AddNullToObject(p, "speedup");
    else
        cJSON_AddNumberToObject(p, "speedup", speedup);
    cJSON_AddBoolToObject(p, "slowerThanReference",
                          ev->status == AKG_JOB_PASS && !isnan(speedup) && speedup < 1.0);
    if (err_class || err_detail) {
        cJSON *e = cJSON_AddObjectToObject(p, "error");
        cJSON_AddStringToObject(e, "class", err_class ? err_class : "error");
        cJSON_AddStringToObject(e, "detail", err_detail ? err_detail : "");
    } else {
        cJSON_AddNullToObject(p, "error");
    }
    if (j->sketch_uri)
        cJSON_AddStringToObject(p, "sketchUri", j->sketch_uri);
    const char *model_uri = akg_lsp_selection_model_uri(s, j->id);
    if (model_uri)
        cJSON_AddStringToObject(p, "modelUri", model_uri);
    akg_lsp_notify(s, "akg/jobFinished", p);
    akg_lsp_selection_job_done(s, j->id, ev->status == AKG_JOB_PASS ? model_new : NULL, speedup);
    if (j->sketch_path && ev->status != AKG_JOB_CANCELLED) {
        akg_lsp_sketch_run_ended(s, j->sketch_path, j->sketch_hash, report);
        akg_lsp_document *sdoc = akg_lsp_doc_find_path(&s->docs, j->sketch_path);
        if (sdoc)
            akg_lsp_diagnostics_publish(s, sdoc);
    }

    akg_lsp_results_remember(s, j->id, j->path, j->hash, j->backend, j->dsl, j->arch, j->workflow,
                             status, report);
    int is_design = j->workflow && strcmp(j->workflow, "design_only") == 0;
    int slower = ev->status == AKG_JOB_PASS && !isnan(speedup) && speedup < 1.0;
    if (slower) /* a verified kernel that loses to PyTorch is said, not shown as done */
        akg_lsp_show_message(s, 2, "akg %s %s: %s", j->title, status, j->last_message);
    if (kernel && !is_design && s->caps.show_document &&
        (ev->status == AKG_JOB_PASS || ev->status == AKG_JOB_UNVERIFIED))
        show_document(s, kernel, 0);
    else if (ev->status != AKG_JOB_CANCELLED || j->cancel_requested == 0)
        akg_lsp_show_message(s,
                             ev->status == AKG_JOB_PASS || ev->status == AKG_JOB_UNVERIFIED ? 3
                             : ev->status == AKG_JOB_CANCELLED                              ? 3
                                                                                            : 2,
                             "akg %s %s: %s", j->title, status, j->last_message);

    akg_lsp_document *doc = akg_lsp_doc_find(&s->docs, j->uri);
    if (doc)
        akg_lsp_diagnostics_publish(s, doc);
    akg_lsp_refresh_views(s);
}

static void on_event(const akg_event *ev, void *user)
{
    akg_lsp_job *j = user;
    akg_lsp_server *s = j->server;
    switch (ev->kind) {
    case AKG_EVENT_STAGE:
        /* The engine's message names the attempt itself; without one, we do. */
        if (ev->message && *ev->message)
            progress_report(s, j, stage_percentage(ev->stage), "%s: %s",
                            ev->stage ? ev->stage : "stage", ev->message);
        else if (ev->max_attempts > 1)
            progress_report(s, j, stage_percentage(ev->stage), "%s (attempt %d/%d)",
                            ev->stage ? ev->stage : "stage", ev->attempt, ev->max_attempts);
        else
            progress_report(s, j, stage_percentage(ev->stage), "%s",
                            ev->stage ? ev->stage : "stage");
        break;
    case AKG_EVENT_SKETCH: {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "id", (double)j->id);
        cJSON_AddStringToObject(p, "uri", j->uri);
        cJSON_AddStringToObject(p, "path", ev->path ? ev->path : "");
        cJSON_AddStringToObject(p, "text", ev->text ? ev->text : "");
        akg_lsp_notify(s, "akg/sketchReady", p);
        if (ev->path && j->workflow && strcmp(j->workflow, "design_only") == 0 &&
            s->caps.show_document)
            show_document(s, ev->path, 1);
        progress_report(s, j, stage_percentage("design"), "sketch ready: %s",
                        ev->path ? ev->path : "");
        break;
    }
    case AKG_EVENT_KERNEL:
        progress_report(s, j, stage_percentage("code"), "kernel written (attempt %d): %s",
                        ev->attempt, ev->path ? ev->path : "");
        break;
    case AKG_EVENT_VERIFY:
        progress_report(s, j, stage_percentage("verify"), "verify %s%s%s",
                        ev->ok ? "passed" : "failed", ev->message ? ": " : "",
                        ev->message ? ev->message : "");
        break;
    case AKG_EVENT_PROFILE:
        progress_report(s, j, stage_percentage("profile"), "profile %s%s%s",
                        ev->ok ? "done" : "failed", ev->message ? ": " : "",
                        ev->message ? ev->message : "");
        break;
    case AKG_EVENT_CANDIDATE:
        progress_report(s, j, j->percentage, "candidate: %s", ev->message ? ev->message : "");
        break;
    case AKG_EVENT_LOG:
        akg_lsp_log(ev->level == AKG_LOG_ERROR  ? AKG_LSP_LOG_ERROR
                    : ev->level == AKG_LOG_WARN ? AKG_LSP_LOG_WARN
                    : ev->level == AKG_LOG_INFO ? AKG_LSP_LOG_INFO
                                                : AKG_LSP_LOG_DEBUG,
                    "job %lld: %s", j->id, ev->message ? ev->message : "");
        break;
    case AKG_EVENT_DONE:
        akg_lsp_log_info("job %lld ended: %s", j->id, status_word(ev->status));
        j->job = NULL; /* freed by the engine when we return */
        if (s->state != AKG_LSP_EXITING)
            job_done(s, j, ev);
        job_unlink(s, j);
        job_free(j);
        break;
    }
}

/* ---- start / cancel ------------------------------------------------------- */

int akg_lsp_jobs_start(akg_lsp_server *s, const akg_lsp_job_request *req, long long *job_id,
                       char *err, size_t errlen)
{
    if (!req->path || !req->backend || !req->dsl)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "a job needs a file:// reference, backend and dsl"),
               AKG_RPC_INVALID_PARAMS;
    if (akg_lsp_check_trusted(s, req->path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    if (req->kernel_path && akg_lsp_check_trusted(s, req->kernel_path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    if (req->sketch_path && akg_lsp_check_trusted(s, req->sketch_path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    struct stat st;
    if (stat(req->path, &st) != 0 || !S_ISREG(st.st_mode))
        return akg_fail(err, errlen, AKG_ENOTFOUND, "%s: not a file on disk; save it first",
                        req->path),
               AKG_RPC_REQUEST_FAILED;
    akg_engine *engine = akg_lsp_engine(s, err, errlen);
    if (!engine)
        return AKG_RPC_REQUEST_FAILED;

    akg_lsp_job *j = calloc(1, sizeof *j);
    if (!j)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory"), AKG_RPC_INTERNAL_ERROR;
    j->server = s;
    j->uri = akg_strdup(req->uri ? req->uri : "");
    j->path = akg_strdup(req->path);
    j->backend = akg_strdup(req->backend);
    j->dsl = akg_strdup(req->dsl);
    j->arch = akg_strdup(req->arch);
    j->workflow = akg_strdup(req->workflow);
    j->sketch_path = akg_strdup(req->sketch_path);
    j->sketch_uri = akg_strdup(req->sketch_uri);
    char *text = NULL;
    size_t len = 0;
    char rerr[256];
    if (akg_read_file(req->path, AKG_LSP_MAX_DOCUMENT, &text, &len, rerr, sizeof rerr) == AKG_OK) {
        akg_sha256_hex(text, len, j->hash);
        free(text);
    }
    if (req->sketch_path &&
        akg_read_file(req->sketch_path, AKG_LSP_MAX_DOCUMENT, &text, &len, rerr, sizeof rerr) ==
            AKG_OK) {
        akg_sha256_hex(text, len, j->sketch_hash);
        free(text);
    }

    /* Results go into the workspace (akg_output/ of the folder holding the
     * reference), so the kernel, the report and model_new.py are trusted
     * paths the user can open and verify again. */
    char output_dir[PATH_MAX] = "";
    const char *folder = akg_lsp_folder_of(s, req->path);
    if (folder) {
        const char *base = strrchr(req->path, '/');
        base = base ? base + 1 : req->path;
        size_t stem = strlen(base);
        if (akg_lsp_ends_with(base, ".py"))
            stem -= 3;
        char when[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
        snprintf(output_dir, sizeof output_dir, "%s/akg_output/%.*s_%s_%s_%s_%lld", folder,
                 (int)stem, base, req->backend, req->dsl, when, s->jobs_started + 1);
    }

    akg_job_options opts;
    memset(&opts, 0, sizeof opts);
    opts.output_dir = output_dir[0] ? output_dir : NULL;
    opts.reference_path = req->path;
    opts.framework = "torch";
    opts.backend = req->backend;
    opts.dsl = req->dsl;
    opts.arch = req->arch;
    opts.workflow = req->workflow;
    opts.kernel_path = req->kernel_path;
    opts.sketch_path = req->sketch_path;
    opts.provider = s->settings.provider;
    opts.verify_timeout_s = s->settings.verify_timeout_s;
    opts.profile_runs = req->profile_runs;
    opts.min_speedup = req->min_speedup;
    opts.min_speedup_set = req->min_speedup_set != 0;
    akg_job *job = NULL;
    int rc = akg_job_start(engine, &opts, on_event, j, &job, err, errlen);
    if (rc != AKG_OK) {
        job_free(j);
        return rc == AKG_EBUSY || rc == AKG_EUNSUPPORTED || rc == AKG_ENOTFOUND
                   ? AKG_RPC_REQUEST_FAILED
                   : AKG_RPC_INTERNAL_ERROR;
    }
    j->job = job;
    j->id = akg_job_id(job);
    snprintf(j->token, sizeof j->token, "akg-job-%lld", j->id);
    const char *w = req->workflow ? req->workflow : "generate";
    snprintf(j->title, sizeof j->title, "%s%s %s/%s",
             strcmp(w, "design_only") == 0     ? "design"
             : strcmp(w, "verifier_only") == 0 ? "verify"
                                               : "generate",
             req->sketch_path ? " from sketch" : "", req->backend, req->dsl);
    snprintf(j->last_message, sizeof j->last_message, "queued");
    j->next = s->jobs;
    s->jobs = j;
    s->jobs_started++;
    *job_id = j->id;
    akg_lsp_log_info("job %lld started: %s for %s", j->id, j->title, req->path);

    if (s->caps.work_done_progress) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "token", j->token);
        j->progress = PROGRESS_CREATING;
        akg_lsp_request(s, "window/workDoneProgress/create", p, progress_created, j->id);
    }
    return 0;
}

int akg_lsp_jobs_cancel(akg_lsp_server *s, long long job_id)
{
    akg_lsp_job *j = job_find(s, job_id);
    if (!j || !j->job)
        return AKG_ENOTFOUND;
    if (!j->cancel_requested) {
        j->cancel_requested = 1;
        akg_lsp_log_info("job %lld: cancel requested", job_id);
        progress_report(s, j, j->percentage, "cancelling");
        akg_job_cancel(j->job);
    }
    return AKG_OK;
}

int akg_lsp_jobs_cancel_all(akg_lsp_server *s)
{
    /* Collect ids first: a cancel may end a job (and unlink it) at once. */
    long long ids[256];
    int n = 0;
    for (akg_lsp_job *j = s->jobs; j && n < 256; j = j->next)
        if (j->job && !j->cancel_requested)
            ids[n++] = j->id;
    int cancelled = 0;
    for (int i = 0; i < n; i++)
        if (akg_lsp_jobs_cancel(s, ids[i]) == AKG_OK)
            cancelled++;
    return cancelled;
}

int akg_lsp_jobs_running_for(akg_lsp_server *s, const char *path)
{
    int n = 0;
    for (akg_lsp_job *j = s->jobs; j; j = j->next)
        if (j->job && (!path || strcmp(j->path, path) == 0 ||
                       (j->sketch_path && strcmp(j->sketch_path, path) == 0)))
            n++;
    return n;
}

void akg_lsp_jobs_free(akg_lsp_server *s)
{
    while (s->jobs) {
        akg_lsp_job *j = s->jobs;
        s->jobs = j->next;
        job_free(j);
    }
}

int akg_lsp_handle_progress_cancel(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                   char *err, size_t errlen)
{
    (void)result;
    const cJSON *token = akg_lsp_param(params, "token");
    char buf[48];
    const char *t = NULL;
    if (cJSON_IsString(token))
        t = token->valuestring;
    else if (cJSON_IsNumber(token)) {
        snprintf(buf, sizeof buf, "%.0f", token->valuedouble);
        t = buf;
    }
    if (!t)
        return akg_fail(err, errlen, AKG_EINVAL, "token must be a string or number"),
               AKG_RPC_INVALID_PARAMS;
    akg_lsp_job *j = job_find_token(s, t);
    if (!j)
        return akg_fail(err, errlen, AKG_ENOTFOUND, "no running job has token %s", t),
               AKG_RPC_INVALID_PARAMS;
    akg_lsp_jobs_cancel(s, j->id);
    return 0;
}
