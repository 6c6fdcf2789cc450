/*
 * suite.c: an operator suite run on the loop (akg/suite.h): discovery on the thread pool, the
 * baseline's env request on a harness worker of its own, then one engine job per reference.
 *
 * The run is a small state machine whose transitions are callbacks:
 *
 *   start ─▶ walk (pool thread) ─▶ after_walk ─▶ env request ─▶ env answer ─▶ env pool closed
 *     ─▶ engine + jobs ─▶ last job DONE ─▶ engine closed ─▶ finish
 *
 * and every path, cancelled or failed, ends in finish(), which records the status and arms a
 * zero timer; DONE is delivered from that timer's close callback. So DONE never comes from inside
 * akg_suite_start, akg_suite_cancel or another callback of the suite, and when it comes the suite
 * holds nothing on the loop: the caller may free it right there.
 *
 * The env worker is closed before the engine exists, so it takes no cores from the profiles, and
 * the engine has one harness worker with the suite's threads, the count the baseline was judged
 * with (suite.h says why the suite does not borrow its caller's engine).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/engine.h"
#include "akg/harness.h"
#include "akg/suite.h"
#include "suite_internal.h"

#ifdef AKG_PYTHON_DEFAULT
#define SUITE_PYTHON_DEFAULT AKG_PYTHON_DEFAULT
#else
#define SUITE_PYTHON_DEFAULT "/usr/bin/python3"
#endif

#define SUITE_ENV_TIMEOUT_S 600.0 /* importing torch and timing a GEMM on the reference BLAS */

static void start_next(akg_suite *s);
static void maybe_close_engine(akg_suite *s);

/* ---------- events ---------- */

static void emit(akg_suite *s, akg_suite_event *ev)
{
    ev->suite = s;
    ev->count = s->discovered ? s->listing.n_ops : 0;
    if (s->cb)
        s->cb(ev, s->user);
}

static void emit_op(akg_suite *s, akg_suite_event_kind kind, size_t index, const akg_event *job_ev)
{
    akg_suite_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.index = index;
    ev.op = &s->listing.ops[index];
    ev.job_event = job_ev;
    emit(s, &ev);
}

const char *akg_suite_status_name(akg_suite_status status)
{
    switch (status) {
    case AKG_SUITE_COMPLETED:
        return "completed";
    case AKG_SUITE_WITHHELD:
        return "withheld";
    case AKG_SUITE_REFUSED:
        return "refused";
    case AKG_SUITE_NO_BASELINE:
        return "no_baseline";
    case AKG_SUITE_CANCELLED:
        return "cancelled";
    case AKG_SUITE_UNREAD:
        return "unread";
    case AKG_SUITE_ERROR:
        return "error";
    }
    return "error";
}

/* ---------- the end ---------- */

static void suite_release(akg_suite *s)
{
    free(s->suite_dir);
    free(s->filter);
    free(s->backend);
    free(s->dsl);
    free(s->arch);
    free(s->workflow);
    free(s->runs_dir);
    free(s->python);
    free(s->store_path);
    free(s->workspace);
    free(s->design_check);
    akg_suite_listing_free(&s->listing);
    free(s->slots);
    cJSON_Delete(s->env);
    free(s);
}

static void on_finish_closed(uv_handle_t *h)
{
    akg_suite *s = h->data;
    s->done = 1;
    if (s->free_on_done) {
        suite_release(s);
        return;
    }
    akg_suite_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = AKG_SUITE_EVENT_DONE;
    ev.status = s->status;
    ev.code = s->code;
    ev.message = s->message[0] ? s->message : NULL;
    ev.refusal = s->refusal[0] ? s->refusal : NULL;
    emit(s, &ev); /* the last thing the suite does: the callback may free it */
}

static void on_finish_timer(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, on_finish_closed);
}

/* Records how the run ended and delivers DONE on a later loop iteration. Called once, when
 * nothing of the run is left on the loop (no walk, env pool or engine). */
static void finish(akg_suite *s, akg_suite_status status, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void finish(akg_suite *s, akg_suite_status status, int code, const char *fmt, ...)
{
    if (s->finishing)
        return;
    s->finishing = 1;
    s->status = status;
    s->code = code;
    s->message[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->message, sizeof s->message, fmt, ap);
        va_end(ap);
    }
    s->elapsed_s = (akg_now_ms() - s->t0_ms) / 1000.0;
    uv_timer_init(s->loop, &s->finish_timer);
    s->finish_timer.data = s;
    uv_timer_start(&s->finish_timer, on_finish_timer, 0, 0);
}

/* The end of phase 3: the engine has closed. */
static void on_engine_closed(void *user)
{
    akg_suite *s = user;
    s->engine = NULL;
    if (s->cancelled)
        finish(s, AKG_SUITE_CANCELLED, AKG_ECANCELED, "cancelled");
    else if (s->refusal[0])
        finish(s, AKG_SUITE_WITHHELD, AKG_OK, "speedups withheld: %s", s->refusal);
    else
        finish(s, AKG_SUITE_COMPLETED, AKG_OK, NULL);
}

static void maybe_close_engine(akg_suite *s)
{
    if (s->engine && !s->engine_closing && s->running == 0 &&
        (s->next >= s->listing.n_ops || s->cancelled)) {
        s->engine_closing = 1;
        akg_engine_close(s->engine, on_engine_closed, s);
    }
}

/* ---------- phase 3: the operators ---------- */

static void set_str(char **slot, const char *value)
{
    free(*slot);
    *slot = akg_strdup(value);
}

static const char *jstr(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Copies a job's report (the DONE event's data) into its operator. */
static void record_done(akg_suite *s, akg_suite_op *op, double started_ms, const akg_event *ev)
{
    const cJSON *r = ev->data;
    set_str(&op->status, akg_job_status_name(ev->status));
    const cJSON *err = cJSON_GetObjectItem(r, "error");
    if (err) {
        set_str(&op->error_class, jstr(err, "class"));
        set_str(&op->error_detail, jstr(err, "detail"));
    }
    const cJSON *perf = cJSON_GetObjectItem(r, "perf");
    op->ref_ms = jnum(perf, "ref_ms");
    op->kernel_ms = jnum(perf, "kernel_ms");
    op->speedup = jnum(perf, "speedup");
    op->compiled_ms = jnum(perf, "compiled_ms");
    op->speedup_compiled = jnum(perf, "speedup_compiled");
    op->compile_s = jnum(perf, "compile_s");
    if (jstr(perf, "compiled_error"))
        set_str(&op->compiled_error, jstr(perf, "compiled_error"));
    if (jstr(perf, "compiled_isa"))
        set_str(&op->compiled_isa, jstr(perf, "compiled_isa"));
    set_str(&op->run_dir, jstr(cJSON_GetObjectItem(r, "paths"), "dir"));
    op->elapsed_s = (akg_now_ms() - started_ms) / 1000.0;
    if (ev->status == AKG_JOB_PASS && !isfinite(op->speedup) && !op->error_class) {
        set_str(&op->error_class, "no_timing");
        set_str(&op->error_detail, "the kernel passed verification but has no profile");
    }
    const char *verdict = jstr(perf, "verdict");
    if (ev->status == AKG_JOB_PASS && verdict && !strcmp(verdict, "interpreted") && !s->refusal[0])
        snprintf(s->refusal, sizeof s->refusal,
                 "%s/%s ran under Triton's interpreter (AKG_TRITON_INTERPRET=1): verified, its "
                 "time is the interpreter's; run on a GPU for speedups",
                 op->family, op->name);
    char note[512];
    if (ev->status == AKG_JOB_PASS &&
        akg_suite_check_profile_env(s->env, cJSON_GetObjectItem(perf, "env"), note, sizeof note) !=
            AKG_OK) {
        set_str(&op->env_note, note);
        if (!s->refusal[0])
            snprintf(s->refusal, sizeof s->refusal, "%s/%s was %s", op->family, op->name, note);
    }
}

static void on_job_event(const akg_event *ev, void *user)
{
    akg__suite_slot *slot = user;
    akg_suite *s = slot->suite;
    size_t index = (size_t)(slot - s->slots);
    if (ev->kind != AKG_EVENT_DONE) {
        emit_op(s, AKG_SUITE_EVENT_OP_PROGRESS, index, ev);
        return;
    }
    record_done(s, &s->listing.ops[index], slot->started_ms, ev);
    slot->job = NULL; /* the engine frees the job after this callback */
    s->running--;
    s->finished++;
    emit_op(s, AKG_SUITE_EVENT_OP_DONE, index, NULL);
    start_next(s);
    maybe_close_engine(s);
}

static void start_next(akg_suite *s)
{
    while (!s->cancelled && s->running < (size_t)s->jobs && s->next < s->listing.n_ops) {
        size_t index = s->next++;
        akg_suite_op *op = &s->listing.ops[index];
        akg__suite_slot *slot = &s->slots[index];
        slot->started_ms = akg_now_ms();
        emit_op(s, AKG_SUITE_EVENT_OP_STARTED, index, NULL);
        if (s->cancelled) { /* cancelled from the callback: it stays not run */
            emit_op(s, AKG_SUITE_EVENT_OP_DONE, index, NULL);
            break;
        }
        akg_job_options jo;
        memset(&jo, 0, sizeof jo);
        jo.reference_path = op->scaled_path ? op->scaled_path : op->path;
        jo.framework = "torch";
        jo.backend = s->backend;
        jo.arch = s->arch;
        jo.dsl = s->dsl;
        jo.workflow = s->workflow;
        jo.provider = "builtin";
        jo.compiled_baseline = s->compiled;
        jo.design_check = s->design_check;
        jo.seed = s->seed;
        jo.trials = s->trials;
        jo.profile_runs = s->profile_runs;
        jo.min_speedup = s->min_speedup;
        jo.min_speedup_set = s->min_speedup_set;
        char out_dir[4096];
        if (s->runs_dir) {
            snprintf(out_dir, sizeof out_dir, "%s/%s_%s", s->runs_dir, op->family, op->name);
            jo.output_dir = out_dir;
        }
        char err[1024];
        int rc = akg_job_start(s->engine, &jo, on_job_event, slot, &slot->job, err, sizeof err);
        if (rc != AKG_OK) {
            slot->job = NULL;
            set_str(&op->status, "error");
            set_str(&op->error_class, rc == AKG_EUNSUPPORTED ? "unsupported" : "start_error");
            set_str(&op->error_detail, err);
            op->elapsed_s = 0;
            s->finished++;
            emit_op(s, AKG_SUITE_EVENT_OP_DONE, index, NULL);
            continue;
        }
        op->job_started = 1;
        s->running++;
    }
}

static void start_operators(akg_suite *s)
{
    akg_engine_options eo;
    memset(&eo, 0, sizeof eo);
    eo.python = s->python;
    eo.store_path = s->store_path;
    eo.workspace = s->workspace;
    /* one worker unless told: each profile gets every thread; with more (--devices 0,0) a
     * profile still runs alone on its device (akg/harness.h) */
    eo.devices = s->devices;
    eo.device_ids = s->device_ids;
    eo.threads = s->threads;
    eo.max_jobs = s->jobs;
    eo.max_queue = s->jobs;
    char err[1024];
    int rc = akg_engine_new(s->loop, &eo, &s->engine, err, sizeof err);
    if (rc != AKG_OK) {
        s->engine = NULL;
        finish(s, AKG_SUITE_ERROR, rc, "%s", err);
        return;
    }
    start_next(s);
    maybe_close_engine(s);
}

/* ---------- phase 2: the baseline ---------- */

/* A workflow that ends before the profile (design_only, kernelgen_only) measures no speedup: a
 * baseline below its best does not stop it (the record still says why speedups would be refused).
 */
static int times_nothing(const akg_suite *s)
{
    return s->workflow &&
           (!strcmp(s->workflow, "design_only") || !strcmp(s->workflow, "kernelgen_only"));
}

static void on_env_pool_closed(void *user)
{
    akg_suite *s = user;
    s->env_pool = NULL;
    if (!s->env) {
        if (s->cancelled)
            finish(s, AKG_SUITE_CANCELLED, AKG_ECANCELED, "cancelled");
        else
            finish(s, AKG_SUITE_NO_BASELINE, AKG_EIO,
                   "cannot read the baseline environment from the harness (%s)",
                   s->env_error[0] ? s->env_error : "no answer");
    } else if (s->refusal[0] && !times_nothing(s)) {
        finish(s, AKG_SUITE_REFUSED, AKG_OK, "%s", s->refusal);
    } else if (s->cancelled) {
        finish(s, AKG_SUITE_CANCELLED, AKG_ECANCELED, "cancelled");
    } else {
        start_operators(s);
    }
}

static void close_env_pool(akg_suite *s)
{
    if (s->env_pool && !s->env_closing) {
        s->env_closing = 1;
        akg_harness_close(s->env_pool, on_env_pool_closed, s);
    }
}

static void on_env_answer(const cJSON *answer, void *user)
{
    akg_suite *s = user;
    if (cJSON_IsTrue(cJSON_GetObjectItem(answer, "ok"))) {
        s->env = cJSON_Duplicate(answer, 1);
        if (!s->env) {
            snprintf(s->env_error, sizeof s->env_error, "out of memory");
        } else {
            akg_suite_judge_baseline(s->env, s->threads, s->compiled, s->python, s->refusal,
                                     sizeof s->refusal);
            akg_suite_event ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = AKG_SUITE_EVENT_ENVIRONMENT;
            ev.environment = s->env;
            ev.refusal = s->refusal[0] ? s->refusal : NULL;
            emit(s, &ev);
        }
    } else {
        snprintf(s->env_error, sizeof s->env_error, "%s: %s",
                 jstr(answer, "class") ? jstr(answer, "class") : "error",
                 jstr(answer, "detail") ? jstr(answer, "detail") : "no detail");
    }
    /* Inside akg_harness_close (a cancel) the pool is already closing: that close ends it. */
    close_env_pool(s);
}

static void ask_baseline(akg_suite *s)
{
    char script[4096], err[1024];
    snprintf(script, sizeof script, "%s/backends/harness/worker.py", akg_data_dir());
    akg_harness_options ho;
    memset(&ho, 0, sizeof ho);
    ho.python = s->python;
    ho.worker_script = script;
    ho.workers = 1;
    ho.threads = s->threads;
    ho.device_kind = akg_backend_find(s->backend, s->dsl)->device_kind;
    int rc = akg_harness_new(s->loop, &ho, &s->env_pool, err, sizeof err);
    if (rc != AKG_OK) {
        s->env_pool = NULL;
        finish(s, AKG_SUITE_NO_BASELINE, rc, "%s", err);
        return;
    }
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "env")) {
        cJSON_Delete(req);
        snprintf(s->env_error, sizeof s->env_error, "out of memory");
        close_env_pool(s);
        return;
    }
    rc = akg_harness_submit(s->env_pool, req, SUITE_ENV_TIMEOUT_S, on_env_answer, s, NULL);
    if (rc != AKG_OK) {
        snprintf(s->env_error, sizeof s->env_error, "cannot ask the harness: %s", akg_strerror(rc));
        close_env_pool(s);
    }
}

/* ---------- phase 1: discovery ---------- */

static void walk_work(uv_work_t *req)
{
    akg_suite *s = req->data;
    s->walk_rc = akg__suite_discover(s->suite_dir, s->filter, &s->listing, &s->stop_walk,
                                     s->walk_err, sizeof s->walk_err);
    if (s->walk_rc == AKG_OK && s->scale_option != 1) {
        char dir[4096];
        if (s->runs_dir)
            snprintf(dir, sizeof dir, "%s/scaled-references", s->runs_dir);
        else
            snprintf(dir, sizeof dir, "%s/akg-bench-scaled-%d",
                     getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                     (int)getpid());
        s->walk_rc = akg__suite_scale(&s->listing, s->suite_dir, s->backend, s->scale_option, dir,
                                      &s->scale, s->walk_err, sizeof s->walk_err);
        if (s->walk_rc != AKG_OK)
            akg_suite_listing_free(&s->listing);
    }
}

static void after_walk(uv_work_t *req, int status)
{
    akg_suite *s = req->data;
    s->work_pending = 0;
    if (status == UV_ECANCELED || s->cancelled) {
        akg_suite_listing_free(&s->listing);
        finish(s, AKG_SUITE_CANCELLED, AKG_ECANCELED, "cancelled");
        return;
    }
    if (s->walk_rc != AKG_OK) {
        finish(s, AKG_SUITE_UNREAD, s->walk_rc, "%s", s->walk_err);
        return;
    }
    s->slots = calloc(s->listing.n_ops ? s->listing.n_ops : 1, sizeof *s->slots);
    if (!s->slots) {
        akg_suite_listing_free(&s->listing);
        finish(s, AKG_SUITE_UNREAD, AKG_ENOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < s->listing.n_ops; i++)
        s->slots[i].suite = s;
    s->discovered = 1;
    akg_suite_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = AKG_SUITE_EVENT_DISCOVERED;
    emit(s, &ev);
    if (s->cancelled) {
        finish(s, AKG_SUITE_CANCELLED, AKG_ECANCELED, "cancelled");
        return;
    }
    if (s->listing.n_ops == 0) {
        if (s->filter)
            finish(s, AKG_SUITE_UNREAD, AKG_ENOTFOUND, "no reference in %s matches the filter %s",
                   s->suite_dir, s->filter);
        else
            finish(s, AKG_SUITE_UNREAD, AKG_ENOTFOUND, "no reference in %s", s->suite_dir);
        return;
    }
    ask_baseline(s);
}

/* ---------- public API ---------- */

static char *dup_or(const char *s, const char *fallback)
{
    return akg_strdup(s && *s ? s : fallback);
}

int akg_suite_start(uv_loop_t *loop, const akg_suite_options *opts, akg_suite_cb cb, void *user,
                    akg_suite **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!opts || !opts->suite_dir || !*opts->suite_dir)
        return akg_fail(err, errlen, AKG_EINVAL, "no suite folder given");
    int jobs = opts->jobs ? opts->jobs : 1;
    if (jobs < 1 || jobs > AKG_SUITE_MAX_JOBS)
        return akg_fail(err, errlen, AKG_EINVAL, "jobs must be from 1 to %d, not %d",
                        AKG_SUITE_MAX_JOBS, jobs);
    int threads = opts->threads ? opts->threads : akg_cpu_count();
    if (threads < 1 || threads > AKG_SUITE_MAX_THREADS)
        return akg_fail(err, errlen, AKG_EINVAL, "threads must be from 1 to %d, not %d",
                        AKG_SUITE_MAX_THREADS, threads);
    /* the target: the first registered backend unless named */
    const akg_backend *first = akg_backend_list()[0];
    const char *backend = opts->backend ? opts->backend : first ? first->name : "";
    const char *dsl = opts->dsl ? opts->dsl : first ? first->dsl : "";
    int rc = akg_target_check(backend, dsl, err, errlen);
    if (rc != AKG_OK)
        return rc;
    if (opts->arch &&
        (rc = akg_backend_arch_check(akg_backend_find(backend, dsl), opts->arch, err, errlen)))
        return rc;
    if (opts->design_check && strcmp(opts->design_check, "first") &&
        strcmp(opts->design_check, "on_mismatch") && strcmp(opts->design_check, "off"))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "unknown design check '%s' (first, on_mismatch, off)", opts->design_check);
    if (opts->workflow && !strcmp(opts->workflow, "verifier_only"))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "the verifier_only workflow needs a kernel per operator; a suite run "
                        "generates them (use default, coder_only, ...)");
    struct stat st;
    if (stat(opts->suite_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return akg_fail(err, errlen, AKG_ENOTFOUND, "suite folder not found: %s", opts->suite_dir);

    akg_suite *s = calloc(1, sizeof *s);
    if (!s)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    s->loop = loop;
    s->cb = cb;
    s->user = user;
    s->suite_dir = akg_strdup(opts->suite_dir);
    s->filter = opts->filter && *opts->filter ? akg_strdup(opts->filter) : NULL;
    s->backend = akg_strdup(backend);
    s->dsl = akg_strdup(dsl);
    s->arch = dup_or(opts->arch, akg_backend_find(backend, dsl)->default_arch);
    s->workflow = opts->workflow ? akg_strdup(opts->workflow) : NULL;
    s->runs_dir = opts->runs_dir ? akg_strdup(opts->runs_dir) : NULL;
    const char *python = opts->python && *opts->python ? opts->python : getenv("AKG_PYTHON");
    s->python = dup_or(python, SUITE_PYTHON_DEFAULT);
    s->store_path = opts->store_path ? akg_strdup(opts->store_path) : NULL;
    s->workspace = opts->workspace ? akg_strdup(opts->workspace) : NULL;
    s->design_check = opts->design_check ? akg_strdup(opts->design_check) : NULL;
    s->seed = opts->seed;
    s->trials = opts->trials;
    s->profile_runs = opts->profile_runs;
    s->min_speedup = opts->min_speedup;
    s->min_speedup_set = opts->min_speedup_set;
    s->jobs = jobs;
    s->threads = threads;
    s->compiled = opts->compiled > 0;
    s->scale_option = opts->scale;
    s->devices = opts->devices > 0 ? opts->devices : 1;
    if (s->devices > AKG_ENGINE_MAX_DEVICES)
        s->devices = AKG_ENGINE_MAX_DEVICES;
    for (int i = 0; i < s->devices; i++)
        s->device_ids[i] = opts->device_ids ? opts->device_ids[i] : i;
    s->scale = 1;
    s->status = AKG_SUITE_CANCELLED;
    atomic_init(&s->stop_walk, 0);
    if (!s->suite_dir || !s->backend || !s->dsl || !s->arch || !s->python ||
        (opts->filter && *opts->filter && !s->filter) || (opts->workflow && !s->workflow) ||
        (opts->runs_dir && !s->runs_dir) || (opts->store_path && !s->store_path) ||
        (opts->workspace && !s->workspace) || (opts->design_check && !s->design_check)) {
        suite_release(s);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(s->started_at, sizeof s->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    s->t0_ms = akg_now_ms();
    s->work.data = s;
    rc = uv_queue_work(loop, &s->work, walk_work, after_walk);
    if (rc != 0) {
        suite_release(s);
        return akg_fail(err, errlen, AKG_EIO, "cannot queue the suite's discovery: %s",
                        uv_strerror(rc));
    }
    s->work_pending = 1;
    *out = s;
    return AKG_OK;
}

void akg_suite_cancel(akg_suite *s)
{
    if (!s || s->cancelled || s->finishing)
        return;
    s->cancelled = 1;
    if (s->work_pending) {
        atomic_store(&s->stop_walk, 1);
        uv_cancel((uv_req_t *)&s->work); /* fails harmlessly once the walk has begun */
    }
    /* Answers the env request "cancelled", then ends the worker. */
    close_env_pool(s);
    for (size_t i = 0; s->discovered && i < s->listing.n_ops; i++)
        if (s->slots[i].job)
            akg_job_cancel(s->slots[i].job);
    maybe_close_engine(s);
}

void akg_suite_free(akg_suite *s)
{
    if (!s)
        return;
    if (s->done) {
        suite_release(s);
        return;
    }
    /* Still running: stop it, and release it once it has wound down, telling nobody. */
    s->cb = NULL;
    s->free_on_done = 1;
    akg_suite_cancel(s);
}

const akg_suite_op *akg_suite_ops(const akg_suite *s, size_t *n)
{
    *n = s->discovered ? s->listing.n_ops : 0;
    return s->discovered ? s->listing.ops : NULL;
}

const akg_suite_skip *akg_suite_skips(const akg_suite *s, size_t *n)
{
    *n = s->discovered ? s->listing.n_skips : 0;
    return s->discovered ? s->listing.skips : NULL;
}

const cJSON *akg_suite_environment(const akg_suite *s)
{
    return s->env;
}

const char *akg_suite_refusal(const akg_suite *s)
{
    return s->refusal[0] ? s->refusal : NULL;
}

akg_suite_status akg_suite_status_get(const akg_suite *s)
{
    return s->done ? s->status : AKG_SUITE_CANCELLED;
}
