/*
 * pipeline.c: the state machine of one job.
 *
 *   parse -> probe -> design -> design check -> code -> build -> verify -> profile -> done
 *                       ^   ^         |            ^                 |
 *                       |   +- wrong -+            +-- code errors --+   (the Conductor
 *                       +------- numerical errors of a wrong design --+    routes each failure)
 *
 * The Conductor routes by rule (code errors to the Coder, design errors to the Designer) unless
 * the job's provider routes (akg_provider_route: the openai provider asks the conductor's
 * model): then the model's class, agent and suggestion are followed when usable, the rules
 * otherwise, and each failed candidate's "conductor" record in the report says which.
 *
 * The design check runs the sketch in the reference interpreter (the harness's design_check)
 * against the reference before any code is written: a design that computes another function is
 * the Designer's error. When a kernel then disagrees with the reference, the check says whose
 * fault it is: a design that passed it makes the mismatch the Coder's (the kernel disagrees
 * with its own design); one the check could not run in its budget is checked again, with the
 * verify budget, before the Conductor routes the failure (verify_settings.design_check:
 * first | on_mismatch | off). The report's candidates say which it was (blame, found_by).
 * A candidate the harness could not sandbox (sandbox_error) ends the job as an error of the
 * machine: it is no design's and no kernel's fault, and another attempt would meet it again.
 *
 * Every stage that can take more than a moment is asynchronous and the state
 * machine advances from its callback: designs and code are provider requests
 * (akg/provider.h), the build is the backend's build command run as a child
 * process (akg/backend.h), probe, verify and profile are requests to the
 * harness pool of the backend's device kind. Nothing here names a DSL or a
 * compiler. Workflows select stages: coder_only skips the sketch file,
 * kernelgen_only and design_only end unverified, verifier_only checks a given
 * model_new.py. A job given a sketch (--sketch) skips the Designer: the
 * user's design is checked before the probe, lowered, and a numerical failure
 * is that design's error, never answered with another design. Each stage is
 * announced by a STAGE event; a finished job writes report.json, records the
 * run in the store, and emits DONE. A failed write of either is an event, and
 * a report that could not be written ends the job as an error. The search workflows (evolve,
 * adaptive_search) take over once the default design is profiled (search.c): each of their
 * candidates comes back through the stages below, and its end goes to the search, not to the
 * Conductor.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../internal.h"
#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/config.h"
#include "akg/provider.h"
#include "akg/sketch.h"
#include "akg/sketch_file.h"
#include "akg/sketch_json.h"
#include "search.h"

static void stage_probe(akg_job *j);
static void stage_design(akg_job *j);
static void stage_design_check(akg_job *j, double seconds, int after_mismatch);
static void stage_code(akg_job *j);
static void stage_build(akg_job *j);
static void stage_verify(akg_job *j);
static void stage_profile(akg_job *j);
static void job_finish(akg_job *j, akg_job_status status, const char *cls, const char *detail);
static void finish_with_best(akg_job *j, const char *why);

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

/* ---------- a model's progress ----------
 * The provider reports from inside its transfer (a streamed chunk), where a front end must not
 * cancel the job: the messages are queued and emitted as stage events from the job's
 * progress_timer (the next loop iteration), or before the job's next event, whichever is first
 * (akg__job_emit), so they keep their order with what followed them. */

#define PROGRESS_QUEUE 4

void akg__pipeline_flush_progress(akg_job *j)
{
    int n = j->progress_pending;
    j->progress_pending = 0;
    j->progress_streaming = 0;
    uv_timer_stop(&j->progress_timer);
    if (j->finishing || n == 0)
        return;
    j->progress_flushing = 1;
    for (int i = 0; i < n; i++) {
        akg_event ev = {0};
        ev.kind = AKG_EVENT_STAGE;
        ev.stage = j->progress_stage[i];
        ev.attempt = j->attempt;
        ev.max_attempts = j->max_step;
        ev.message = j->progress_msg[i];
        akg__job_emit(j, &ev);
    }
    j->progress_flushing = 0;
}

static void on_progress_timer(uv_timer_t *t)
{
    akg__pipeline_flush_progress(t->data);
}

static void on_provider_progress(const akg_provider_progress *p, void *user)
{
    akg_job *j = user;
    int slot = j->progress_pending;
    if (slot > 0 && (j->progress_streaming || slot == PROGRESS_QUEUE))
        slot--; /* a newer count replaces the last; a full queue keeps the newest */
    const char *who = strcmp(p->agent, "coder") == 0       ? "Coder"
                      : strcmp(p->agent, "conductor") == 0 ? "Conductor"
                                                           : "Designer";
    const char *model = p->model && *p->model ? p->model : "the model";
    char *m = j->progress_msg[slot];
    size_t n = sizeof j->progress_msg[slot];
    int at = snprintf(m, n, "attempt %d/%d: ", j->attempt, j->max_step);
    if (at < 0 || (size_t)at >= n)
        at = 0;
    switch (p->kind) {
    case AKG_PROGRESS_ASKING:
        snprintf(m + at, n - at, "the %s asks %s (request %d)", who, model, p->request);
        break;
    case AKG_PROGRESS_STREAMING:
        snprintf(m + at, n - at, "%s is writing for the %s: %ld tokens, %.1f s", model, who,
                 p->completion_tokens, p->elapsed_s);
        break;
    case AKG_PROGRESS_RETRYING:
        snprintf(m + at, n - at, "%s did not answer the %s: %s", model, who,
                 p->detail ? p->detail : "retrying");
        break;
    case AKG_PROGRESS_ANSWERED:
        if (p->prompt_tokens >= 0)
            snprintf(m + at, n - at,
                     "%s answered the %s: %ld prompt and %ld answer tokens in %.1f s", model, who,
                     p->prompt_tokens, p->completion_tokens, p->elapsed_s);
        else
            snprintf(m + at, n - at, "%s answered the %s: about %ld answer tokens in %.1f s", model,
                     who, p->completion_tokens, p->elapsed_s);
        break;
    }
    j->progress_stage[slot] = strcmp(p->agent, "coder") == 0       ? "code"
                              : strcmp(p->agent, "conductor") == 0 ? "verify"
                                                                   : "design";
    j->progress_pending = slot + 1;
    j->progress_streaming = p->kind == AKG_PROGRESS_STREAMING;
    uv_timer_start(&j->progress_timer, on_progress_timer, 0, 0);
}

/* A front end may cancel the job inside an event callback (akg_job_cancel
 * then finishes it at once): a stage that emitted an event checks this
 * before it starts any work. */
static int stopped(const akg_job *j)
{
    return j->finishing;
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

/* The buffer's text, or fallback when an append failed (a partial text is
 * never passed on as a whole one). */
static const char *buf_text(const akg_buf *b, const char *fallback)
{
    return akg_buf_status(b) == AKG_OK && b->data ? b->data : fallback;
}

/* Records the error's location for the report (keys of report.error). */
static void set_error_place(akg_job *j, const char *where, const char *file, unsigned line,
                            unsigned column, unsigned end_line, unsigned end_column)
{
    cJSON_Delete(j->final_error);
    j->final_error = cJSON_CreateObject();
    if (where)
        cJSON_AddStringToObject(j->final_error, "where", where);
    if (file)
        cJSON_AddStringToObject(j->final_error, "file", file);
    if (line) {
        cJSON_AddNumberToObject(j->final_error, "line", line);
        cJSON_AddNumberToObject(j->final_error, "column", column ? column : 1);
    }
    if (end_line) {
        cJSON_AddNumberToObject(j->final_error, "end_line", end_line);
        cJSON_AddNumberToObject(j->final_error, "end_column", end_column ? end_column : 1);
    }
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
        char id[32];
        snprintf(id, sizeof id, "_%lld", j->id > 0 ? j->id : -j->id);
        j->out_dir = akg_run_dir_path(log_dir, j->reference_path, j->dsl, id);
    }
    char err[512];
    if (!j->out_dir) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return AKG_ENOMEM;
    }
    if (akg_mkdirs(j->out_dir, err, sizeof err) != AKG_OK) {
        job_finish(j, AKG_JOB_ERROR, "io_error", err);
        return AKG_EIO;
    }
    return AKG_OK;
}

static int write_out(akg_job *j, const char *name, const char *text, char **path_out)
{
    char *path = join_path(j->out_dir, name);
    if (!path) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return AKG_ENOMEM;
    }
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
    char op[32];
} req_ctx;

/* Adds one answer's pool timings (queued_s, ran_s) to the job's harness_times under its op. */
void akg__job_add_harness_time(akg_job *j, const char *op, const cJSON *ans)
{
    if (!j->harness_times && !(j->harness_times = cJSON_CreateObject()))
        return;
    cJSON *t = cJSON_GetObjectItem(j->harness_times, op);
    if (!t) {
        t = cJSON_AddObjectToObject(j->harness_times, op);
        if (!t)
            return;
        cJSON_AddNumberToObject(t, "requests", 0);
        cJSON_AddNumberToObject(t, "queued_s", 0);
        cJSON_AddNumberToObject(t, "ran_s", 0);
    }
    static const char *const keys[] = {"queued_s", "ran_s"};
    cJSON *n = cJSON_GetObjectItem(t, "requests");
    cJSON_SetNumberValue(n, n->valuedouble + 1);
    for (int i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItem(ans, keys[i]);
        cJSON *sum = cJSON_GetObjectItem(t, keys[i]);
        if (cJSON_IsNumber(v) && sum)
            cJSON_SetNumberValue(sum, sum->valuedouble + v->valuedouble);
    }
}

static void on_answer(const cJSON *ans, void *user)
{
    req_ctx *c = user;
    akg_job *j = c->job;
    answer_fn fn = c->fn;
    akg__job_add_harness_time(j, c->op, ans);
    free(c);
    j->hreq = NULL;
    if (j->cancelled) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    fn(j, ans);
}

/* The harness pool a job's requests go to: its target's device kind, or the CPU's for a job
 * that runs no candidate (kernelgen_only, design_only) on a machine without the target's
 * runtime (akg_backend.runtime_missing): the probe's shapes, dtypes and op graph, and the design
 * check in the reference interpreter, do not depend on the device. */
static const char *harness_kind(const akg_job *j)
{
    if ((wf(j, "kernelgen_only") || wf(j, "design_only")) && j->be->runtime_missing &&
        j->be->runtime_missing())
        return "cpu";
    return j->be->device_kind;
}

/* An unverified job's reason, as a log event (the report says it too: unverified_reason). */
static void log_unverified(akg_job *j)
{
    const char *missing = j->be->runtime_missing ? j->be->runtime_missing() : NULL;
    char msg[600];
    snprintf(msg, sizeof msg, "not verified: the %s workflow ends before verification%s%s",
             j->workflow, missing ? "; " : "", missing ? missing : "");
    emit_log(j, AKG_LOG_INFO, msg);
}

/* Sends req to the harness pool of the job's device kind. */
static void submit(akg_job *j, cJSON *req, answer_fn fn)
{
    char err[512];
    const char *kind = harness_kind(j);
    akg_harness *pool = akg__engine_harness(j->engine, kind, err, sizeof err);
    if (!pool) {
        cJSON_Delete(req);
        char msg[700];
        snprintf(msg, sizeof msg, "the harness for %s is not available: %s", kind, err);
        job_finish(j, AKG_JOB_ERROR, "crash", msg);
        return;
    }
    req_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        cJSON_Delete(req);
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    c->job = j;
    c->fn = fn;
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(req, "op"));
    snprintf(c->op, sizeof c->op, "%s", op ? op : "request");
    if (akg_harness_submit(pool, req, j->verify_timeout_s, on_answer, c, &j->hreq) != AKG_OK) {
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

static int is_design_fault(const char *cls)
{
    return strcmp(cls, "numerical_mismatch") == 0 || strcmp(cls, "shape_mismatch") == 0 ||
           strcmp(cls, "design_error") == 0;
}

static int design_check_mode(const akg_job *j, const char *mode)
{
    return strcmp(j->design_check_mode, mode) == 0;
}

/* The design check's verdict on the current design: 1 it computes the reference, 0 it does
 * not, -1 unknown (not run, skipped over its budget, or unable to run). */
static int design_verdict(const akg_job *j)
{
    if (!j->design_check)
        return -1;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(j->design_check, "ok")))
        return strcmp(ans_str(j->design_check, "class", ""), "design_error") == 0 ? 0 : -1;
    return cJSON_GetObjectItem(j->design_check, "skipped") ? -1 : 1;
}

/* The next attempt: the Designer with the failure as feedback, or the Coder lowering the same
 * design conservatively (the failure goes with it as the Coder's last error). */
static void conductor_next(akg_job *j, int to_designer)
{
    if (stopped(j))
        return;
    j->attempt++;
    if (to_designer) {
        stage_design(j);
    } else {
        j->safe_mode = 1;
        stage_code(j);
    }
}

/* The route classes a model answers with, for a failure the rules routed: a design's fault is
 * a design error, the Verifier's timeout a timeout, everything else a local code error. */
static const char *rules_class(const char *cls, int to_designer)
{
    if (to_designer)
        return "design_error";
    if (strcmp(cls, "timeout") == 0)
        return "timeout";
    return "local_code_error";
}

/* The report's record of who routed the candidate cand (the last of j->candidates) and where:
 * {"routed_by": "model" | "rules", "class", "agent", "suggestion"}; the caller adds the model's
 * provenance and a fallback's reason. The feedback the next agent gets carries the
 * suggestion. */
static cJSON *conductor_record(akg_job *j, cJSON *cand, const char *routed_by, const char *cls,
                               const char *agent, const char *suggestion)
{
    cJSON *rec = cJSON_CreateObject();
    if (!rec)
        return NULL;
    cJSON_AddStringToObject(rec, "routed_by", routed_by);
    cJSON_AddStringToObject(rec, "class", cls);
    cJSON_AddStringToObject(rec, "agent", agent);
    cJSON_AddStringToObject(rec, "suggestion", suggestion ? suggestion : "");
    cJSON_DeleteItemFromObject(cand, "conductor");
    cJSON_AddItemToObject(cand, "conductor", rec);
    if (j->feedback) {
        static const char *const keys[] = {"routed_by", "conductor_class", "suggestion"};
        const char *vals[] = {routed_by, cls, suggestion ? suggestion : ""};
        for (size_t i = 0; i < 3; i++) {
            cJSON_DeleteItemFromObject(j->feedback, keys[i]);
            cJSON_AddStringToObject(j->feedback, keys[i], vals[i]);
        }
    }
    return rec;
}

static void on_routed(const akg_route_answer *a, void *user);

/* Asks the provider's model where the failed attempt goes (akg_provider_route); its answer
 * comes back in on_routed. The failure's record is the last of j->candidates, which is also
 * the history the model reads. */
static void conductor_ask_model(akg_job *j, const char *cls, const char *detail, int to_designer,
                                const char *found_by)
{
    emit_stage(j, "verify", "attempt %d/%d: the Conductor asks the %s provider where %s goes",
               j->attempt, j->max_step, j->provider, cls);
    if (stopped(j))
        return;
    char err[1024];
    akg_route_request req = {
        .error_class = cls,
        .detail = detail,
        .found_by = found_by,
        .rule_agent = to_designer ? "designer" : "coder",
        .attempt = j->attempt,
        .max_attempts = j->max_step,
        .history = j->candidates,
        .designer_allowed = !j->user_sketch_path,
        .coder_allowed = strcmp(found_by, "design_check") != 0 && j->sketch != NULL,
        .backend = j->backend,
        .dsl = j->dsl,
        .arch = j->arch,
        .op_name = j->op_name,
    };
    if (akg_provider_route(j->session, &req, on_routed, j, &j->pop, err, sizeof err) != AKG_OK) {
        akg_route_answer fallback = {.status = AKG_EIO, .message = err, .suggestion = ""};
        on_routed(&fallback, j);
    }
}

/* The model's routing, followed when usable: a class and an agent it may take (the Designer
 * not for a user's design, the Coder not for a design the design check found wrong); anything
 * else, and a failed request, leaves the routing to the rules, and the report says why. */
static void on_routed(const akg_route_answer *a, void *user)
{
    akg_job *j = user;
    j->pop = NULL;
    if (j->cancelled || a->status == AKG_ECANCELED) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    cJSON *cand = cJSON_GetArrayItem(j->candidates, cJSON_GetArraySize(j->candidates) - 1);
    const char *cls = ans_str(cand, "error_class", "?");
    const char *detail = ans_str(cand, "detail", "");
    const char *found_by = ans_str(cand, "found_by", "verify");
    int rule_designer = strcmp(ans_str(cand, "blame", "code"), "design") == 0;
    char why[1200] = "";
    if (a->status != AKG_OK)
        snprintf(why, sizeof why, "%s", a->message ? a->message : akg_strerror(a->status));
    else if (a->agent == AKG_ROUTE_DESIGNER && j->user_sketch_path)
        snprintf(why, sizeof why,
                 "the model sent the failure to the Designer, but the design is the user's (%s)",
                 j->user_sketch_path);
    else if (a->agent == AKG_ROUTE_CODER && strcmp(found_by, "design_check") == 0)
        snprintf(why, sizeof why,
                 "the model sent the failure to the Coder, but the design check found the "
                 "design itself wrong: no kernel of it can pass");
    else if (a->agent == AKG_ROUTE_CODER && !j->sketch)
        snprintf(why, sizeof why,
                 "the model sent the failure to the Coder, but there is no "
                 "design to lower");
    int by_model = why[0] == '\0';
    const char *agent = by_model        ? akg_route_agent_name(a->agent)
                        : rule_designer ? "designer"
                                        : "coder";
    cJSON *rec =
        conductor_record(j, cand, by_model ? "model" : "rules",
                         by_model ? akg_route_class_name(a->cls) : rules_class(cls, rule_designer),
                         agent, by_model ? a->suggestion : "");
    if (rec && !by_model)
        cJSON_AddStringToObject(rec, "fallback", why);
    if (rec && a->provenance)
        cJSON_AddItemToObject(rec, "model", cJSON_Duplicate(a->provenance, 1));
    char msg[2400];
    if (by_model)
        snprintf(msg, sizeof msg,
                 "conductor: attempt %d failed (%s, found by %s); the model classifies it as %s "
                 "and %s%s%.600s",
                 j->attempt, cls, found_by, akg_route_class_name(a->cls),
                 a->agent == AKG_ROUTE_STOP       ? "stops"
                 : a->agent == AKG_ROUTE_DESIGNER ? "routes it to the Designer"
                                                  : "routes it to the Coder",
                 a->suggestion && *a->suggestion ? ": " : "", a->suggestion ? a->suggestion : "");
    else
        snprintf(msg, sizeof msg,
                 "conductor: attempt %d failed (%s, found by %s); the model's routing is not "
                 "usable (%.1500s), so the rules route it to the %s",
                 j->attempt, cls, found_by, why, rule_designer ? "Designer" : "Coder");
    emit_log(j, AKG_LOG_WARN, msg);
    if (stopped(j))
        return;
    if (by_model && a->agent == AKG_ROUTE_STOP && j->best) {
        finish_with_best(j, "the Conductor's model stopped the attempts");
        return;
    }
    if (by_model && a->agent == AKG_ROUTE_STOP) {
        char end[4400];
        snprintf(
            end, sizeof end,
            "the Conductor's model stopped after attempt %d of %d (%s)%s%.1000s; last: %.2000s",
            j->attempt, j->max_step, akg_route_class_name(a->cls),
            a->suggestion && *a->suggestion ? ": " : "", a->suggestion ? a->suggestion : "",
            detail);
        job_finish(j, AKG_JOB_FAIL, cls, end);
        return;
    }
    conductor_next(j, by_model ? a->agent == AKG_ROUTE_DESIGNER : rule_designer);
}

/* Records the failed candidate and decides where the next attempt starts:
 * code errors (build, runtime, crash, timeout, forbidden, resource_limit,
 * late_write, background_work, and a kernel that disagrees with a design the
 * interpreter found right) go back to the Coder,
 * which lowers conservatively; a design the interpreter found wrong, and a
 * mismatch whose design could not be checked, go back to the Designer with
 * the failure as feedback. A user's design is not the Designer's to replace:
 * its design error ends the job. A provider that routes (akg_provider_route: the openai
 * provider's model) is asked where the next attempt goes, with the class, the detail, the
 * attempt and the budget and the earlier attempts; its answer is followed when usable, else
 * the rules above decide. Either way the candidate's "conductor" record in the report says who
 * routed (model or rules), the class, the agent, the suggestion (which reaches the next
 * agent's prompt through the feedback), and for a fallback why the model's answer was not
 * used. */
static void conductor_decide(akg_job *j, const char *cls, const char *detail, const cJSON *ans,
                             int to_designer, const char *found_by)
{
    cJSON *cand = cJSON_CreateObject();
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "fail");
    cJSON_AddStringToObject(cand, "error_class", cls);
    cJSON_AddStringToObject(cand, "detail", detail);
    cJSON_AddStringToObject(cand, "blame", to_designer ? "design" : "code");
    cJSON_AddStringToObject(cand, "found_by", found_by);
    if (j->design_check) {
        int v = design_verdict(j);
        cJSON_AddStringToObject(cand, "design_check", v > 0 ? "pass" : v == 0 ? "fail" : "unknown");
    }
    if (j->design_info)
        cJSON_AddItemToObject(cand, "design", cJSON_Duplicate(j->design_info, 1));
    cJSON_AddItemToArray(j->candidates, cand);
    akg__store_candidate(j, "fail", cls, detail, 0, 0);
    cJSON_Delete(j->feedback);
    j->feedback = ans ? cJSON_Duplicate(ans, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObject(j->feedback, "class");
    cJSON_AddStringToObject(j->feedback, "class", cls);
    cJSON_DeleteItemFromObject(j->feedback, "detail");
    cJSON_AddStringToObject(j->feedback, "detail", detail);

    if (j->user_sketch_path && to_designer && !wf(j, "verifier_only")) {
        char msg[2048];
        snprintf(msg, sizeof msg,
                 "the design in %s does not compute the reference (%s): %s; it is your design, "
                 "so no other is tried: change the sketch and run again",
                 j->user_sketch_path, cls, detail);
        /* the interpreter names the sketch line where it can */
        const cJSON *line = cJSON_GetObjectItem(j->feedback, "line");
        int at = strcmp(ans_str(j->feedback, "where", ""), "sketch") == 0 && cJSON_IsNumber(line)
                     ? line->valueint
                     : (int)j->sketch_header_line;
        set_error_place(j, "sketch", j->user_sketch_path, (unsigned)at, 1, 0, 0);
        job_finish(j, AKG_JOB_FAIL, "design_error", msg);
        return;
    }
    if (j->best && j->attempt >= j->max_step) {
        finish_with_best(j, "the attempts are spent (the last one failed)");
        return;
    }
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
    if (j->session && akg_provider_can_route(j->session)) {
        /* the request borrows its strings until the answer: the candidate's, not the caller's */
        conductor_ask_model(j, ans_str(cand, "error_class", cls), ans_str(cand, "detail", ""),
                            to_designer, ans_str(cand, "found_by", found_by));
        return;
    }
    conductor_record(j, cand, "rules", rules_class(cls, to_designer),
                     to_designer ? "designer" : "coder", "");
    char msg[1200];
    snprintf(msg, sizeof msg, "conductor: attempt %d failed (%s, found by %s); routing to the %s",
             j->attempt, cls, found_by, to_designer ? "Designer" : "Coder");
    emit_log(j, AKG_LOG_WARN, msg);
    conductor_next(j, to_designer);
}

/* Routes a failure (cls, detail; ans the harness's answer or NULL). A kernel's numerical or
 * shape mismatch is the design's fault only when the design is wrong: with the design check's
 * verdict unknown it is checked first (stage_design_check comes back to conductor_route with
 * the verdict known). */
static void conductor_route(akg_job *j, const char *cls, const char *detail, const cJSON *ans)
{
    if (strcmp(cls, "sandbox_error") == 0) {
        /* the machine could not isolate the candidate: no other design or code would fare
         * better, so the job ends as an error of the environment, in the worker's words */
        char msg[4400];
        snprintf(msg, sizeof msg,
                 "the candidate could not be run: its sandbox could not be set up (%s); no "
                 "other kernel was tried, since it would meet the same machine. Fix what this "
                 "names (install bubblewrap, allow unprivileged user namespaces), or run "
                 "candidates without an operating-system sandbox with --sandbox none "
                 "(sandbox.mode in config.yaml)",
                 detail && *detail ? detail : "no detail");
        job_finish(j, AKG_JOB_ERROR, "sandbox_error", msg);
        return;
    }
    if (j->search) { /* a search's candidate: recorded, and the search goes on */
        akg__search_candidate_failed(j, cls, detail);
        return;
    }
    if (!is_design_fault(cls)) {
        conductor_decide(j, cls, detail, ans, 0, "verify");
        return;
    }
    if (strcmp(cls, "design_error") == 0) { /* the design check's own failure */
        conductor_decide(j, cls, detail, ans, 1, "design_check");
        return;
    }
    if (wf(j, "verifier_only")) { /* a kernel without a design */
        conductor_decide(j, cls, detail, ans, 1, "verify");
        return;
    }
    int v = design_verdict(j);
    if (v < 0 && !design_check_mode(j, "off") && !j->mismatch) {
        /* hold the mismatch until the design is judged */
        j->mismatch = cJSON_CreateObject();
        if (!j->mismatch) {
            job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
            return;
        }
        cJSON_AddStringToObject(j->mismatch, "class", cls);
        cJSON_AddStringToObject(j->mismatch, "detail", detail);
        if (ans)
            cJSON_AddItemToObject(j->mismatch, "answer", cJSON_Duplicate(ans, 1));
        stage_design_check(j, j->design_check_full_s, 1);
        return;
    }
    if (v > 0) {
        char msg[4400];
        snprintf(msg, sizeof msg,
                 "%s; the design computes the reference (the design check passed), so the kernel "
                 "disagrees with its own design",
                 detail);
        conductor_decide(j, cls, msg, ans, 0, "verify");
    } else if (v == 0) {
        char msg[8400];
        snprintf(msg, sizeof msg,
                 "the kernel fails verification (%s): %s; the design check finds the design "
                 "wrong: %s",
                 cls, detail, ans_str(j->design_check, "detail", ""));
        conductor_decide(j, "design_error", msg, ans, 1, "verify");
    } else {
        conductor_decide(j, cls, detail, ans, 1, "verify");
    }
}

/* ---------- the fastest verified candidate ---------- */

/* A verified kernel below the job's min_speedup (1.0: slower than the reference) is kept while
 * the remaining attempts go to other designs: its files are copied to candidates/<step>/ and the
 * fastest of them is what the job ends with, whatever happens to the later attempts. */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int copy_file(const char *from, const char *to, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc = akg_read_file(from, 256u << 20, &data, &len, err, errlen);
    if (rc == AKG_OK)
        rc = akg_write_file(to, data, len, err, errlen);
    free(data);
    return rc;
}

/* The Designer may answer a slow kernel with another design (not a user's sketch, not a kernel
 * given to verify). */
static int may_redesign(const akg_job *j)
{
    return !j->user_sketch_path && !wf(j, "verifier_only");
}

static int already_tried(const akg_job *j, const char *sketch_text)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, j->tried)
    {
        const char *s = cJSON_GetStringValue(t);
        if (s && strcmp(s, sketch_text) == 0)
            return 1;
    }
    return 0;
}

/* Copies the current candidate's files to candidates/<step>/ and returns its record for
 * j->best (the caller owns it), or NULL with err filled. */
static cJSON *snapshot_candidate(akg_job *j, double speedup, char *err, size_t errlen)
{
    char rel[64];
    snprintf(rel, sizeof rel, "candidates/%d", j->attempt);
    char *dir = join_path(j->out_dir, rel);
    cJSON *rec = cJSON_CreateObject();
    cJSON *names = cJSON_AddObjectToObject(rec, "files");
    if (!dir || !rec || !names) {
        free(dir);
        cJSON_Delete(rec);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int rc = akg_mkdirs(dir, err, errlen);
    const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    const char *const paths[] = {j->sketch_path, j->kernel_src_path, j->model_new_path,
                                 j->lib_path};
    for (size_t i = 0; i < 4 && rc == AKG_OK; i++) {
        if (!paths[i])
            continue;
        char *to = join_path(dir, base_name(paths[i]));
        rc = to ? copy_file(paths[i], to, err, errlen) : AKG_ENOMEM;
        free(to);
        cJSON_AddStringToObject(names, keys[i], base_name(paths[i]));
    }
    if (rc != AKG_OK) {
        free(dir);
        cJSON_Delete(rec);
        return NULL;
    }
    cJSON_AddNumberToObject(rec, "step", j->attempt);
    cJSON_AddNumberToObject(rec, "speedup", speedup);
    cJSON_AddStringToObject(rec, "dir", dir);
    cJSON_AddItemToObject(rec, "verify", cJSON_Duplicate(j->verify, 1));
    cJSON_AddItemToObject(rec, "profile", cJSON_Duplicate(j->profile, 1));
    if (j->design_info)
        cJSON_AddItemToObject(rec, "design", cJSON_Duplicate(j->design_info, 1));
    cJSON_AddStringToObject(rec, "sketch_text", j->sketch_text ? j->sketch_text : "");
    free(dir);
    return rec;
}

/* Puts the kept candidate's files back in the run folder, in place of the last attempt's. */
static int restore_best(akg_job *j, char *err, size_t errlen)
{
    const cJSON *names = cJSON_GetObjectItem(j->best, "files");
    const char *dir = ans_str(j->best, "dir", "");
    char **const paths[] = {&j->sketch_path, &j->kernel_src_path, &j->model_new_path, &j->lib_path};
    const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    for (size_t i = 0; i < 4; i++) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(names, keys[i]));
        if (*paths[i] && (!name || strcmp(base_name(*paths[i]), name) != 0))
            remove(*paths[i]); /* the last attempt's file of another name */
        free(*paths[i]);
        *paths[i] = NULL;
        if (!name)
            continue;
        char *from = join_path(dir, name), *to = join_path(j->out_dir, name);
        int rc = from && to ? copy_file(from, to, err, errlen) : AKG_ENOMEM;
        free(from);
        if (rc != AKG_OK) {
            free(to);
            return rc;
        }
        *paths[i] = to;
    }
    return AKG_OK;
}

/* Ends the job with the fastest verified candidate (j->best), its files in the run folder
 * and its verification and timing in the report; why: the reason the search ended. */
static void finish_with_best(akg_job *j, const char *why)
{
    char err[512];
    if (restore_best(j, err, sizeof err) != AKG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "the kept candidate's files could not be restored: %s", err);
        job_finish(j, AKG_JOB_ERROR, "io_error", msg);
        return;
    }
    cJSON_Delete(j->verify);
    j->verify = cJSON_Duplicate(cJSON_GetObjectItem(j->best, "verify"), 1);
    cJSON_Delete(j->profile);
    j->profile = cJSON_Duplicate(cJSON_GetObjectItem(j->best, "profile"), 1);
    cJSON_Delete(j->design_info);
    const cJSON *design = cJSON_GetObjectItem(j->best, "design");
    j->design_info = design ? cJSON_Duplicate(design, 1) : NULL;
    free(j->sketch_text);
    j->sketch_text = akg_strdup(ans_str(j->best, "sketch_text", ""));
    j->kept_step = (int)ans_num(j->best, "step");
    j->search_end = why;
    double s = ans_num(j->best, "speedup");
    char msg[1024];
    snprintf(msg, sizeof msg,
             "conductor: %s; keeping the fastest verified candidate, attempt %d (%.2fx%s)", why,
             j->kept_step, s, s < 1.0 ? ", slower than the reference" : "");
    emit_log(j, s < 1.0 ? AKG_LOG_WARN : AKG_LOG_INFO, msg);
    job_finish(j, AKG_JOB_PASS, NULL, NULL);
}

/* ---------- stages ---------- */

/* Takes the user's sketch (--sketch) as the design: it must check and be
 * bound before anything runs. Returns 0, or non-zero when the job ended. */
static int load_user_sketch(akg_job *j)
{
    akg_sketch_file f;
    char err[1024];
    int rc = akg_sketch_file_load(j->user_sketch_path, j->user_sketch_path, &f, err, sizeof err);
    if (rc == AKG_EPARSE) {
        set_error_place(j, "sketch", j->user_sketch_path, f.line, f.column, f.end_line,
                        f.end_column);
        job_finish(j, AKG_JOB_ERROR, "design_error", f.diagnostics ? f.diagnostics : err);
        akg_sketch_file_free(&f);
        return 1;
    }
    if (rc != AKG_OK) {
        set_error_place(j, "sketch", j->user_sketch_path, 0, 0, 0, 0);
        job_finish(j, AKG_JOB_ERROR, rc == AKG_ENOMEM ? "crash" : "io_error", err);
        akg_sketch_file_free(&f);
        return 1;
    }
    j->sketch = f.sketch;
    f.sketch = NULL;
    j->sketch_text = f.text;
    f.text = NULL;
    j->sketch_header_line = f.header_line;
    akg_sketch_file_free(&f);
    j->op_name = akg_strdup(akg_sketch_name(j->sketch));
    j->design_info = cJSON_CreateObject();
    cJSON_AddStringToObject(j->design_info, "source", "user");
    cJSON_AddStringToObject(j->design_info, "path", j->user_sketch_path);
    cJSON_AddStringToObject(j->design_info, "sketch", j->op_name ? j->op_name : "");
    if (!j->op_name) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return 1;
    }
    return 0;
}

static void stage_parse(akg_job *j)
{
    j->state = JOB_PARSE;
    emit_stage(j, "parse", "reading %s", j->reference_path);
    if (stopped(j) || ensure_out_dir(j))
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
    if (j->user_sketch_path && load_user_sketch(j))
        return;
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
    if (stopped(j))
        return;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "probe");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddNumberToObject(req, "seed", (double)j->seed);
    submit(j, req, on_probe);
}

/* The design passed its check (or was not checked): code, unless only a design was asked. */
static void after_design_check(akg_job *j)
{
    if (wf(j, "design_only")) {
        log_unverified(j);
        job_finish(j, AKG_JOB_UNVERIFIED, NULL, NULL);
        return;
    }
    stage_code(j);
}

static void on_design_checked_first(akg_job *j, const cJSON *ans);
static void on_design_checked_mismatch(akg_job *j, const cJSON *ans);

/* The design is checked: write sketch.sketch, announce it, go on. */
static void design_ready(akg_job *j)
{
    if (!wf(j, "coder_only") || j->user_sketch_path) {
        char *copy = join_path(j->out_dir, "sketch.sketch");
        int same = copy && j->user_sketch_path && strcmp(copy, j->user_sketch_path) == 0;
        if (same) {
            /* the user's file is this run's sketch.sketch already */
            free(j->sketch_path);
            j->sketch_path = copy;
            copy = NULL;
        } else if (write_out(j, "sketch.sketch", j->sketch_text, &j->sketch_path)) {
            free(copy);
            return;
        }
        free(copy);
        akg_event ev = {0};
        ev.kind = AKG_EVENT_SKETCH;
        ev.stage = "design";
        ev.attempt = j->attempt;
        ev.path = j->sketch_path;
        ev.text = j->sketch_text;
        ev.message = j->user_sketch_path ? "sketch ready (the user's design)" : "sketch ready";
        akg__job_emit(j, &ev);
        if (stopped(j))
            return;
    }
    if (design_check_mode(j, "first") && !j->design_check) {
        stage_design_check(j, j->design_check_s, 0);
        return;
    }
    after_design_check(j);
}

/* The design check's answer. Up front: a wrong design goes back to the Designer before any
 * code exists; a pass, a check over its budget or one that could not run goes on to the
 * Coder. After a kernel's mismatch: the held mismatch is routed with the verdict known. */
static void on_design_checked(akg_job *j, const cJSON *ans, int after_mismatch)
{
    cJSON_Delete(j->design_check);
    j->design_check = cJSON_Duplicate(ans, 1);
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"));
    const char *cls = ans_str(ans, "class", "runtime_error");
    const char *skipped = ans_str(ans, "skipped", NULL);
    char msg[4400];
    if (ok && skipped)
        snprintf(msg, sizeof msg, "design check skipped: %s", skipped);
    else if (ok)
        snprintf(msg, sizeof msg,
                 "design checked: the sketch computes the reference (%d trials, max abs err %.3g)",
                 (int)ans_num(ans, "trials"), ans_num(ans, "max_abs_err"));
    else if (strcmp(cls, "design_error") == 0)
        snprintf(msg, sizeof msg, "design check failed: %s", ans_str(ans, "detail", ""));
    else
        snprintf(msg, sizeof msg, "the design check could not run (%s): %s", cls,
                 ans_str(ans, "detail", ""));
    emit_log(j, ok && !skipped ? AKG_LOG_INFO : AKG_LOG_WARN, msg);
    if (stopped(j))
        return;
    if (after_mismatch) {
        cJSON *m = j->mismatch;
        j->mismatch = NULL;
        if (design_verdict(j) < 0) { /* still unknown: judged as it stands, never checked again */
            cJSON_Delete(j->design_check);
            j->design_check = cJSON_CreateObject();
            cJSON_AddBoolToObject(j->design_check, "ok", 1);
            cJSON_AddStringToObject(j->design_check, "skipped", skipped ? skipped : msg);
        }
        conductor_route(j, ans_str(m, "class", "numerical_mismatch"), ans_str(m, "detail", ""),
                        cJSON_GetObjectItem(m, "answer"));
        cJSON_Delete(m);
        return;
    }
    if (design_verdict(j) == 0) {
        conductor_route(j, "design_error", ans_str(ans, "detail", ""), ans);
        return;
    }
    after_design_check(j);
}

static void on_design_checked_first(akg_job *j, const cJSON *ans)
{
    on_design_checked(j, ans, 0);
}

static void on_design_checked_mismatch(akg_job *j, const cJSON *ans)
{
    on_design_checked(j, ans, 1);
}

/* Runs the design (its JSON form) in the reference interpreter against the reference, within
 * seconds. */
static void stage_design_check(akg_job *j, double seconds, int after_mismatch)
{
    j->state = JOB_DESIGN_CHECK;
    emit_stage(j, "design",
               after_mismatch
                   ? "attempt %d/%d: the kernel disagrees with the reference: checking its design "
                     "in the reference interpreter (at most %.0f s)"
                   : "attempt %d/%d: checking the design in the reference interpreter (at most "
                     "%.0f s)",
               j->attempt, j->max_step, seconds);
    if (stopped(j))
        return;
    cJSON *req = cJSON_CreateObject();
    cJSON *ir = akg_sketch_to_json(j->sketch);
    if (!req || !ir) {
        cJSON_Delete(req);
        cJSON_Delete(ir);
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    cJSON_AddStringToObject(req, "op", "design_check");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddItemToObject(req, "sketch", ir);
    cJSON_AddNumberToObject(req, "trials", 2);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    /* within the harness request's own limit, which also covers loading the reference */
    double cap = j->verify_timeout_s * 0.8;
    cJSON_AddNumberToObject(req, "max_seconds", seconds < cap ? seconds : cap);
    submit(j, req, after_mismatch ? on_design_checked_mismatch : on_design_checked_first);
}

static void on_designed(const akg_design_answer *a, void *user)
{
    akg_job *j = user;
    j->pop = NULL;
    if (j->cancelled || a->status == AKG_ECANCELED) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    if (a->status != AKG_OK && j->best) {
        /* asked for a faster design, the Designer has none: the kept candidate stands */
        char why[1024];
        snprintf(why, sizeof why, "the Designer has no other design (%s)",
                 a->message ? a->message : akg_strerror(a->status));
        cJSON_DeleteItemFromObject(j->best, "why");
        cJSON_AddStringToObject(j->best, "why", why);
        finish_with_best(j, ans_str(j->best, "why", "the Designer has no other design"));
        return;
    }
    if (a->status != AKG_OK) {
        if (a->provenance) { /* what the failed design cost (a model's requests, tokens) */
            cJSON_Delete(j->design_info);
            j->design_info = cJSON_Duplicate(a->provenance, 1);
        }
        if (a->has_where)
            set_error_place(j, NULL, NULL, a->where.start_row + 1, a->where.start_col + 1,
                            a->where.end_row + 1, a->where.end_col + 1);
        job_finish(j, AKG_JOB_ERROR, a->status == AKG_EUNSUPPORTED ? "unsupported" : "design_error",
                   a->message ? a->message : akg_strerror(a->status));
        return;
    }
    free(j->sketch_text);
    free(j->op_name);
    cJSON_Delete(j->design_info);
    j->sketch_text = akg_strdup(a->sketch_text);
    j->op_name = akg_strdup(a->op_name);
    j->design_info = a->provenance ? cJSON_Duplicate(a->provenance, 1) : cJSON_CreateObject();
    if (!j->sketch_text || !j->op_name || !j->design_info) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    if (!cJSON_GetObjectItem(j->design_info, "source"))
        cJSON_AddStringToObject(j->design_info, "source", j->provider);
    j->safe_mode = 0;
    cJSON_Delete(j->design_check); /* a new design is checked anew */
    j->design_check = NULL;
    /* the sketch is parsed and checked before any code is written */
    akg_sketch_free(j->sketch);
    j->sketch = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    if (!diags) {
        job_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    int prc = akg_sketch_parse(j->sketch_text, strlen(j->sketch_text), &j->sketch, diags);
    if (prc == 0 && akg_sketch_check(j->sketch, diags) != 0)
        prc = -1;
    if (prc != 0) {
        akg_buf msg;
        akg_buf_init(&msg, 8192);
        akg_buf_appendf(&msg, "the %s provider's sketch does not check:", j->provider);
        for (size_t i = 0; i < akg_sketch_diag_count(diags) && i < 10; i++) {
            char *line = akg_sketch_diag_format("sketch.sketch", akg_sketch_diag_at(diags, i));
            if (line) {
                akg_buf_appendf(&msg, "\n%s", line);
                free(line);
            }
        }
        akg_sketch_diag_list_free(diags);
        if (write_out(j, "sketch.sketch", j->sketch_text, &j->sketch_path) == AKG_OK)
            job_finish(j, AKG_JOB_ERROR, "design_error",
                       buf_text(&msg, "the provider's sketch does not check (the list of "
                                      "errors did not fit in memory)"));
        akg_buf_free(&msg);
        return;
    }
    akg_sketch_diag_list_free(diags);
    if (j->best && already_tried(j, j->sketch_text)) {
        finish_with_best(j, "the Designer's answer is a design already tried");
        return;
    }
    cJSON_AddItemToArray(j->tried, cJSON_CreateString(j->sketch_text));
    design_ready(j);
}

/* Opens the job's provider session once (its first design or code request). Returns 0, or
 * non-zero when the job ended. */
static int open_session(akg_job *j)
{
    char err[1024];
    if (j->session)
        return 0;
    if (akg_provider_session_new(j->prov, j->engine->loop, &j->session, err, sizeof err)) {
        job_finish(j, AKG_JOB_ERROR, "crash", err);
        return 1;
    }
    akg_provider_session_set_progress(j->session, on_provider_progress, j);
    return 0;
}

static void stage_design(akg_job *j)
{
    j->state = JOB_DESIGN;
    if (j->user_sketch_path) {
        emit_stage(j, "design", "attempt %d/%d: the design is %s (the Designer is skipped)",
                   j->attempt, j->max_step, j->user_sketch_path);
        if (stopped(j))
            return;
        j->safe_mode = 0;
        design_ready(j);
        return;
    }
    emit_stage(j, "design", "attempt %d/%d: designing a sketch (%s provider)", j->attempt,
               j->max_step, j->provider);
    if (stopped(j))
        return;
    char err[1024];
    if (open_session(j))
        return;
    if (j->feedback) { /* what was designed so far, so that no design is offered twice */
        cJSON_DeleteItemFromObject(j->feedback, "tried");
        cJSON_AddItemToObject(j->feedback, "tried", cJSON_Duplicate(j->tried, 1));
    }
    akg_design_request req = {.ref = j->ref,
                              .probe = j->probe,
                              .feedback = j->feedback,
                              .attempt = j->attempt,
                              .backend = j->backend,
                              .dsl = j->dsl,
                              .arch = j->arch};
    if (akg_provider_design(j->session, &req, on_designed, j, &j->pop, err, sizeof err))
        job_finish(j, AKG_JOB_ERROR, "crash", err);
}

static void on_coded(akg_code_answer *a, void *user)
{
    akg_job *j = user;
    j->pop = NULL;
    if (a->provenance) { /* what the Coder's model was asked and answered, failed or not */
        cJSON_Delete(j->code_info);
        j->code_info = cJSON_Duplicate(a->provenance, 1);
    }
    if (j->cancelled || a->status == AKG_ECANCELED) {
        job_finish(j, AKG_JOB_CANCELLED, "cancelled", "cancelled");
        return;
    }
    if ((a->status != AKG_OK || !a->files) && j->search) {
        akg__search_candidate_failed(j, "unsupported",
                                     a->message ? a->message : akg_strerror(a->status));
        return;
    }
    if ((a->status != AKG_OK || !a->files) && j->best) {
        finish_with_best(j, "the Coder could not lower the next design");
        return;
    }
    if (a->status != AKG_OK || !a->files) {
        if (j->user_sketch_path)
            set_error_place(j, "sketch", j->user_sketch_path, j->sketch_header_line, 1, 0, 0);
        job_finish(j, AKG_JOB_ERROR, "unsupported",
                   a->message ? a->message : akg_strerror(a->status));
        return;
    }
    akg_kernel_files_free(&j->files);
    j->files = *a->files;
    memset(a->files, 0, sizeof *a->files);
    if (!j->files.model_new_source) {
        job_finish(j, AKG_JOB_ERROR, "unsupported",
                   "the Coder wrote no model_new.py (the task's signature was not available)");
        return;
    }
    if (write_out(j, j->files.kernel_filename, j->files.kernel_source, &j->kernel_src_path) ||
        write_out(j, "model_new.py", j->files.model_new_source, &j->model_new_path))
        return;
    free(j->lib_path);
    j->lib_path =
        j->files.library_filename ? join_path(j->out_dir, j->files.library_filename) : NULL;
    akg_event ev = {0};
    ev.kind = AKG_EVENT_KERNEL;
    ev.stage = "code";
    ev.attempt = j->attempt;
    ev.path = j->kernel_src_path;
    ev.text = j->files.kernel_source;
    ev.message = "kernel written";
    akg__job_emit(j, &ev);
    if (stopped(j))
        return;
    stage_build(j);
}

static void stage_code(akg_job *j)
{
    j->state = JOB_CODE;
    emit_stage(j, "code", "attempt %d/%d: lowering the sketch to %s for %s%s", j->attempt,
               j->max_step, j->be->dsl, j->be->name,
               j->safe_mode ? " (conservative lowering, after a code error)" : "");
    if (stopped(j))
        return;
    char err[1024];
    if (open_session(j))
        return;
    akg_code_request req = {.sketch = j->sketch,
                            .ref = j->ref,
                            .probe = j->probe,
                            .backend = j->be,
                            .safe = j->safe_mode != 0,
                            .sketch_file = "sketch.sketch",
                            /* the failure the Conductor sent back to the Coder */
                            .feedback = j->safe_mode ? j->feedback : NULL};
    if (akg_provider_code(j->session, &req, on_coded, j, &j->pop, err, sizeof err))
        job_finish(j, AKG_JOB_ERROR, "crash", err);
}

static void after_build(akg_job *j)
{
    if (wf(j, "kernelgen_only")) {
        log_unverified(j);
        job_finish(j, AKG_JOB_UNVERIFIED, NULL, NULL);
        return;
    }
    stage_verify(j);
}

void akg__build_failure(const akg_child_result *r, akg_buf *msg)
{
    akg_buf_init(msg, 8192);
    if (r->timed_out)
        akg_buf_puts(msg, "the build did not finish in time");
    else if (r->term_signal)
        akg_buf_appendf(msg, "the build was killed by signal %d", r->term_signal);
    else
        akg_buf_appendf(msg, "the build failed (status %d)", r->exit_status);
    if (r->output && *r->output) {
        size_t n = strlen(r->output);
        akg_buf_puts(msg, ":\n");
        akg_buf_append(msg, r->output, n > 6000 ? 6000 : n);
    }
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
        akg__build_failure(r, &msg);
        cJSON *ans = cJSON_CreateObject();
        cJSON_AddStringToObject(ans, "compiler_output", r->output ? r->output : "");
        conductor_route(j, "build_error",
                        buf_text(&msg, "the build failed (its output did not fit in memory)"), ans);
        cJSON_Delete(ans);
        akg_buf_free(&msg);
        return;
    }
    after_build(j);
}

static void stage_build(akg_job *j)
{
    j->state = JOB_BUILD;
    char err[1024];
    char **argv = NULL;
    if (!j->be->build_argv) {
        emit_stage(j, "build", "attempt %d/%d: nothing to build for %s/%s", j->attempt, j->max_step,
                   j->be->name, j->be->dsl);
        if (!stopped(j))
            after_build(j);
        return;
    }
    akg_build_request breq = {
        .config = j->config, .files = &j->files, .dir = j->out_dir, .arch = j->arch};
    if (j->be->build_argv(&breq, &argv, err, sizeof err) != AKG_OK) {
        job_finish(j, AKG_JOB_ERROR, "build_error", err);
        return;
    }
    if (!argv) {
        emit_stage(j, "build", "attempt %d/%d: nothing to build for %s/%s", j->attempt, j->max_step,
                   j->be->name, j->be->dsl);
        if (!stopped(j))
            after_build(j);
        return;
    }
    /* the command as a person would type it, its file arguments by their names */
    akg_buf cmd;
    akg_buf_init(&cmd, 400);
    for (char **a = argv; *a; a++) {
        const char *word = strrchr(*a, '/') && **a == '/' ? strrchr(*a, '/') + 1 : *a;
        akg_buf_appendf(&cmd, "%s%s", a == argv ? "" : " ", word);
    }
    emit_stage(j, "build", "attempt %d/%d: %s", j->attempt, j->max_step, buf_text(&cmd, argv[0]));
    akg_buf_free(&cmd);
    if (stopped(j)) {
        akg_argv_free(argv);
        return;
    }
    int rc = akg_child_run(j->engine->loop, argv, j->out_dir, j->verify_timeout_s, on_built, j,
                           &j->child);
    if (rc) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot start the build command %s of %s/%s", argv[0],
                 j->be->name, j->be->dsl);
        akg_argv_free(argv);
        job_finish(j, AKG_JOB_ERROR, "build_error", msg);
        return;
    }
    akg_argv_free(argv);
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
    if (stopped(j))
        return 0;
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
    if (stopped(j))
        return;
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

/* A verified kernel: below min_speedup (by default: slower than the reference), with
 * attempts left and a Designer to ask, it is kept (candidates/<step>/) and the next attempt goes
 * to the Designer with feedback of class "slow" (the speedup, and every sketch tried, so that
 * no design is offered twice); otherwise the job ends with the fastest verified candidate. */
/* The profile ran under Triton's interpreter on the CPU (a cuda worker with
 * AKG_TRITON_INTERPRET=1): its times say nothing of the GPU. */
static int profiled_interpreted(const akg_job *j)
{
    const cJSON *env = cJSON_GetObjectItem(j->profile, "env");
    return cJSON_GetObjectItem(env, "triton_interpret") != NULL;
}

static void conductor_judge_speed(akg_job *j, cJSON *cand, double speedup)
{
    int better = !j->best || speedup > ans_num(j->best, "speedup");
    if (profiled_interpreted(j)) {
        /* no speed to search for: the verified kernel is the answer */
        j->kept_step = j->attempt;
        j->search_end = "timed under Triton's interpreter on the CPU, which says nothing of the "
                        "GPU's speed";
        job_finish(j, AKG_JOB_PASS, NULL, NULL);
        return;
    }
    if (speedup >= j->min_speedup || !may_redesign(j) || j->attempt >= j->max_step) {
        if (!better) {
            finish_with_best(j, speedup >= j->min_speedup ? "a faster design was found"
                                                          : "the attempts are spent");
            return;
        }
        j->kept_step = j->attempt;
        j->search_end = speedup >= j->min_speedup ? NULL
                        : !may_redesign(j)        ? "the design is not the Designer's to replace"
                                                  : "the attempts are spent";
        job_finish(j, AKG_JOB_PASS, NULL, NULL);
        return;
    }
    char err[512];
    if (better) {
        cJSON *rec = snapshot_candidate(j, speedup, err, sizeof err);
        if (!rec) {
            char msg[1024];
            snprintf(msg, sizeof msg, "the candidate could not be kept: %s", err);
            job_finish(j, AKG_JOB_ERROR, "io_error", msg);
            return;
        }
        cJSON_Delete(j->best);
        j->best = rec;
        cJSON_AddStringToObject(cand, "dir", ans_str(rec, "dir", ""));
    }
    char detail[512];
    double ref_ms = ans_num(j->profile, "ref_ms"), kernel_ms = ans_num(j->profile, "kernel_ms");
    if (speedup < 1.0)
        snprintf(detail, sizeof detail,
                 "the kernel is verified but slower than the reference: %.2fx (kernel %.4f ms, "
                 "reference %.4f ms)",
                 speedup, kernel_ms, ref_ms);
    else
        snprintf(detail, sizeof detail,
                 "the kernel is verified but below the wanted speedup %.2fx: %.2fx (kernel %.4f "
                 "ms, reference %.4f ms)",
                 j->min_speedup, speedup, kernel_ms, ref_ms);
    cJSON_Delete(j->feedback);
    j->feedback = cJSON_CreateObject();
    cJSON_AddStringToObject(j->feedback, "class", "slow");
    cJSON_AddStringToObject(j->feedback, "detail", detail);
    cJSON_AddNumberToObject(j->feedback, "speedup", speedup);
    cJSON_AddNumberToObject(j->feedback, "ref_ms", ref_ms);
    cJSON_AddNumberToObject(j->feedback, "kernel_ms", kernel_ms);
    cJSON_AddNumberToObject(j->feedback, "min_speedup", j->min_speedup);
    cJSON_AddNumberToObject(j->feedback, "best_speedup", ans_num(j->best, "speedup"));
    char msg[1200];
    snprintf(msg, sizeof msg,
             "conductor: attempt %d: %s; asking the Designer for another design (attempt %d/%d)",
             j->attempt, detail, j->attempt + 1, j->max_step);
    emit_log(j, AKG_LOG_WARN, msg);
    if (stopped(j))
        return;
    j->attempt++;
    stage_design(j);
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
    double speedup = ans_num(ans, "speedup");
    cJSON *cand = cJSON_CreateObject();
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "pass");
    cJSON_AddNumberToObject(cand, "ref_ms", ans_num(ans, "ref_ms"));
    cJSON_AddNumberToObject(cand, "kernel_ms", ans_num(ans, "kernel_ms"));
    cJSON_AddNumberToObject(cand, "speedup", speedup);
    cJSON_AddBoolToObject(cand, "slower_than_reference", speedup < 1.0);
    if (j->design_info)
        cJSON_AddItemToObject(cand, "design", cJSON_Duplicate(j->design_info, 1));
    cJSON_AddItemToArray(j->candidates, cand);
    akg__store_candidate(j, "pass", NULL, NULL, ans_num(ans, "ref_ms"), ans_num(ans, "kernel_ms"));
    if (akg__search_workflow(j) && !profiled_interpreted(j)) {
        akg__search_candidate_passed(j, cand, speedup);
        return;
    }
    conductor_judge_speed(j, cand, speedup);
}

static void stage_profile(akg_job *j)
{
    j->state = JOB_PROFILE;
    emit_stage(j, "profile", "timing reference and kernel: %d warm-up, %d runs, interleaved",
               j->warmup_times, j->run_times);
    if (stopped(j))
        return;
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

static void on_kick_finish(uv_timer_t *t)
{
    akg_job *j = t->data;
    cJSON *report = akg__job_record(j); /* may turn the status into an error */
    akg_event ev = {0};
    ev.kind = AKG_EVENT_DONE;
    ev.status = j->final_status;
    ev.attempt = j->attempt;
    ev.path = j->report_path;
    ev.data = report;
    const cJSON *e = cJSON_GetObjectItem(report, "error");
    ev.message = e ? cJSON_GetStringValue(cJSON_GetObjectItem(e, "detail"))
                   : akg_job_status_name(j->final_status);
    akg__job_emit(j, &ev);
    cJSON_Delete(report);
    akg__search_free(j);
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
    if (!j->store_run) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "the store could not record this run (%s); its results are in the run folder "
                 "only",
                 j->store_error);
        emit_log(j, AKG_LOG_ERROR, msg);
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
    if (j->pop) {
        akg_provider_op *op = j->pop;
        j->pop = NULL;
        akg_provider_cancel(op); /* on_designed / on_coded see the cancellation and finish */
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

/* ---------- the steps a search drives (search.h) ---------- */

cJSON *akg__pipeline_snapshot(akg_job *j, double speedup, char *err, size_t errlen)
{
    return snapshot_candidate(j, speedup, err, errlen);
}

void akg__pipeline_finish_best(akg_job *j, const char *why)
{
    finish_with_best(j, why);
}

void akg__pipeline_finish(akg_job *j, akg_job_status status, const char *cls, const char *detail)
{
    job_finish(j, status, cls, detail);
}

void akg__pipeline_log(akg_job *j, akg_log_level level, const char *msg)
{
    emit_log(j, level, msg);
}

void akg__pipeline_profile(akg_job *j, const char *model_new_path,
                           void (*fn)(akg_job *j, const cJSON *ans))
{
    emit_stage(j, "profile", "timing %s again against the reference: %d warm-up, %d runs",
               model_new_path, j->warmup_times, j->run_times);
    if (stopped(j))
        return;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "profile");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddStringToObject(req, "kernel", model_new_path);
    cJSON_AddNumberToObject(req, "warmup", j->warmup_times);
    cJSON_AddNumberToObject(req, "runs", j->run_times);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    submit(j, req, fn);
}

void akg__pipeline_run_candidate(akg_job *j)
{
    /* never over the user's own file when it is this run's sketch.sketch */
    char *def = join_path(j->out_dir, "sketch.sketch");
    int users = def && j->user_sketch_path && strcmp(def, j->user_sketch_path) == 0;
    free(def);
    if (write_out(j, users ? "candidate.sketch" : "sketch.sketch", j->sketch_text, &j->sketch_path))
        return;
    akg_event ev = {0};
    ev.kind = AKG_EVENT_SKETCH;
    ev.stage = "design";
    ev.attempt = j->attempt;
    ev.path = j->sketch_path;
    ev.text = j->sketch_text;
    ev.message = "sketch ready (a search's candidate)";
    akg__job_emit(j, &ev);
    if (!stopped(j))
        stage_code(j);
}
