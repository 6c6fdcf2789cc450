/*
 * engine.c: the engine object, its job queue, its harness pools and the
 * lifetime of jobs.
 *
 * Jobs beyond max_jobs wait in FIFO order; beyond max_queue akg_job_start
 * answers AKG_EBUSY. A job's memory is released right after its DONE event
 * (see engine.h). The pipeline of one job lives in workflows/pipeline.c.
 *
 * Harness pools are per device kind (akg_backend.device_kind): a job's
 * requests go to the pool of its backend's kind, created when the first job
 * of that kind needs it, with the engine's devices and threads. Importing
 * torch for a device kind no job uses costs nothing.
 *
 * Every worker gets the sandbox settings of its candidates' children
 * (AKG_SANDBOX): the sandbox section of the config.yaml of the pool's backend,
 * as it stands, with its mode replaced by AKG_SANDBOX_MODE when that is set
 * (akg_cli op --sandbox). They are checked when a job starts, so that a wrong
 * setting is one error naming it before any worker runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/config.h"
#include "akg/provider.h"
#include "akg/search_cache.h"
#include "akg/sketch.h"
#include "internal.h"

/* The harness worker script under akg_data_dir(). */
static void worker_script_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/backends/harness/worker.py", akg_data_dir());
}

static void harness_log(void *user, int worker, const char *line)
{
    (void)user;
    if (getenv("AKG_DEBUG_HARNESS"))
        fprintf(stderr, "[harness %d] %s\n", worker, line);
}

/* The settings of a backend config's sandbox section, and what each must be. */
static const struct {
    const char *key;
    const char *want; /* what would work, for messages */
} sandbox_fields[] = {
    {"mode", "auto, bwrap or none"},
    {"memory_mb", "a number of MiB greater than 0, such as 4096"},
    {"processes", "a whole number of processes of at least 1, such as 64"},
    {"cpu_seconds", "a number of seconds greater than 0, such as 600"},
    {"file_size_mb", "a number of MiB greater than 0, such as 256"},
    {"call_timeout_s", "a number of seconds greater than 0, such as 60"},
};
#define N_SANDBOX_FIELDS (sizeof sandbox_fields / sizeof sandbox_fields[0])

static int sandbox_mode_known(const char *mode)
{
    return mode &&
           (strcmp(mode, "auto") == 0 || strcmp(mode, "bwrap") == 0 || strcmp(mode, "none") == 0);
}

/* The sandbox settings for the workers of a backend: its config's sandbox section (config,
 * read from config_path) checked, with mode replaced by AKG_SANDBOX_MODE when that is set, as
 * compact JSON. Returns a string the caller frees, or NULL with err filled. */
static char *sandbox_settings(const cJSON *config, const char *config_path, char *err,
                              size_t errlen)
{
    const cJSON *section = cJSON_GetObjectItemCaseSensitive(config, "sandbox");
    if (section && !cJSON_IsNull(section) && !cJSON_IsObject(section)) {
        akg_fail(err, errlen, AKG_EINVAL,
                 "%s: sandbox must be a mapping of settings (mode, memory_mb, processes, "
                 "cpu_seconds, file_size_mb, call_timeout_s), such as sandbox: {mode: auto}",
                 config_path);
        return NULL;
    }
    cJSON *out = cJSON_IsObject(section) ? cJSON_Duplicate(section, 1) : cJSON_CreateObject();
    if (!out) {
        akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
        return NULL;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, out)
    {
        size_t f = 0;
        while (f < N_SANDBOX_FIELDS && strcmp(item->string, sandbox_fields[f].key) != 0)
            f++;
        char *shown = cJSON_PrintUnformatted(item);
        int bad = 0;
        if (f == N_SANDBOX_FIELDS) {
            akg_fail(err, errlen, AKG_EINVAL,
                     "%s: sandbox.%s is not a sandbox setting; the settings are mode, memory_mb, "
                     "processes, cpu_seconds, file_size_mb and call_timeout_s",
                     config_path, item->string);
            bad = 1;
        } else if (f == 0) {
            bad = !sandbox_mode_known(cJSON_GetStringValue(item));
        } else {
            bad = !cJSON_IsNumber(item) || !(item->valuedouble > 0) ||
                  (strcmp(item->string, "processes") == 0 &&
                   item->valuedouble != (double)(long long)item->valuedouble);
        }
        if (bad && f < N_SANDBOX_FIELDS)
            akg_fail(err, errlen, AKG_EINVAL, "%s: sandbox.%s is %s; it must be %s", config_path,
                     item->string, shown ? shown : "?", sandbox_fields[f].want);
        free(shown);
        if (bad) {
            cJSON_Delete(out);
            return NULL;
        }
    }
    const char *mode = getenv("AKG_SANDBOX_MODE");
    if (mode && *mode) {
        if (!sandbox_mode_known(mode)) {
            akg_fail(err, errlen, AKG_EINVAL,
                     "the sandbox mode '%s' (AKG_SANDBOX_MODE, akg_cli op --sandbox) is not "
                     "known; it must be auto, bwrap or none",
                     mode);
            cJSON_Delete(out);
            return NULL;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(out, "mode");
        cJSON_AddStringToObject(out, "mode", mode);
    }
    char *text = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    if (!text)
        akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    return text;
}

static void backend_config_path(const akg_backend *be, char *buf, size_t len)
{
    snprintf(buf, len, "%s/backends/%s/%s/config.yaml", akg_data_dir(), be->name, be->dsl);
}

/* The sandbox settings of the pool of device_kind: those of the registry's first backend of
 * that kind (the pool serves all of them). Returns a string the caller frees, or NULL with err
 * filled. */
static char *pool_sandbox_settings(const char *device_kind, char *err, size_t errlen)
{
    for (const akg_backend *const *b = akg_backend_list(); *b; b++) {
        if (strcmp((*b)->device_kind, device_kind) != 0)
            continue;
        cJSON *config = NULL;
        if (akg_backend_config_load((*b)->name, (*b)->dsl, &config, err, errlen) != AKG_OK)
            return NULL;
        char path[4096];
        backend_config_path(*b, path, sizeof path);
        char *text = sandbox_settings(config, path, err, errlen);
        cJSON_Delete(config);
        return text;
    }
    akg_fail(err, errlen, AKG_ENOTFOUND, "no backend runs on device kind '%s'", device_kind);
    return NULL;
}

static char *default_store_path(void)
{
    const char *env = getenv("AKG_STORE");
    if (env && *env)
        return akg_strdup(env);
    const char *home = getenv("HOME");
    char path[4096];
    snprintf(path, sizeof path, "%s/.akg", home && *home ? home : ".");
    akg_mkdirs(path, NULL, 0);
    snprintf(path, sizeof path, "%s/.akg/akg.db", home && *home ? home : ".");
    return akg_strdup(path);
}

int akg_engine_new(uv_loop_t *loop, const akg_engine_options *opts, akg_engine **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    akg_engine *e = calloc(1, sizeof *e);
    if (!e)
        return AKG_ENOMEM;
    e->loop = loop;
    const char *py = opts && opts->python ? opts->python : getenv("AKG_PYTHON");
#ifdef AKG_PYTHON_DEFAULT
    if (!py || !*py)
        py = AKG_PYTHON_DEFAULT;
#endif
    e->python = akg_strdup(py && *py ? py : "python3");
    e->workspace = akg_strdup(opts ? opts->workspace : NULL);
    e->devices = opts && opts->devices > 0 ? opts->devices : 1;
    if (e->devices > AKG_ENGINE_MAX_DEVICES)
        e->devices = AKG_ENGINE_MAX_DEVICES;
    for (int i = 0; i < e->devices; i++)
        e->device_ids[i] = opts && opts->device_ids ? opts->device_ids[i] : i;
    e->threads = opts && opts->threads > 0 ? opts->threads : akg_cpu_count() / e->devices;
    if (e->threads < 1)
        e->threads = 1;
    e->max_jobs = opts && opts->max_jobs > 0 ? opts->max_jobs : 4;
    e->max_queue = opts && opts->max_queue > 0 ? opts->max_queue : 16;
    e->next_local_id = 1;

    char *store_path =
        opts && opts->store_path ? akg_strdup(opts->store_path) : default_store_path();
    int rc = akg_store_open(store_path, &e->store, err, errlen);
    free(store_path);
    if (rc) {
        free(e->python);
        free(e->workspace);
        free(e);
        return rc;
    }
    /* akg_store_open has turned the runs of dead owners into "interrupted" */

    /* Pools start on first use, but a missing worker is a setup error the
     * user should hear about now. */
    char script[4096];
    worker_script_path(script, sizeof script);
    if (access(script, R_OK) != 0) {
        akg_store_close(e->store);
        free(e->python);
        free(e->workspace);
        free(e);
        return akg_fail(err, errlen, AKG_ENOTFOUND, "harness worker not found: %s", script);
    }
    *out = e;
    return AKG_OK;
}

akg_harness *akg__engine_harness(akg_engine *e, const char *device_kind, char *err, size_t errlen)
{
    if (!device_kind || !*device_kind)
        device_kind = "cpu";
    for (int i = 0; i < e->n_pools; i++)
        if (strcmp(e->pools[i].device_kind, device_kind) == 0)
            return e->pools[i].pool;
    if (e->closing) {
        akg_fail(err, errlen, AKG_ECANCELED, "the engine is shutting down");
        return NULL;
    }
    if (e->n_pools >= AKG_ENGINE_MAX_POOLS) {
        akg_fail(err, errlen, AKG_EBUSY, "too many device kinds in one engine (%d)",
                 AKG_ENGINE_MAX_POOLS);
        return NULL;
    }
    if (strlen(device_kind) >= sizeof e->pools[0].device_kind) {
        akg_fail(err, errlen, AKG_EINVAL, "device kind '%.40s' is too long", device_kind);
        return NULL;
    }
    char *sandbox = pool_sandbox_settings(device_kind, err, errlen);
    if (!sandbox)
        return NULL;
    char script[4096];
    worker_script_path(script, sizeof script);
    akg_harness_options ho = {0};
    ho.sandbox_json = sandbox;
    ho.python = e->python;
    ho.worker_script = script;
    ho.workers = e->devices;
    ho.device_ids = e->device_ids;
    ho.threads = e->threads;
    ho.device_kind = device_kind;
    ho.log = harness_log;
    ho.log_user = e;
    akg_harness *pool = NULL;
    int rc = akg_harness_new(e->loop, &ho, &pool, err, errlen);
    free(sandbox); /* the pool keeps its copy */
    if (rc != AKG_OK)
        return NULL;
    akg_engine_pool *slot = &e->pools[e->n_pools++];
    snprintf(slot->device_kind, sizeof slot->device_kind, "%s", device_kind);
    slot->pool = pool;
    return pool;
}

struct akg_store *akg_engine_store(akg_engine *engine)
{
    return engine->store;
}

static void engine_free(akg_engine *e)
{
    void (*cb)(void *) = e->close_cb;
    void *user = e->close_user;
    akg_store_close(e->store);
    free(e->python);
    free(e->workspace);
    free(e);
    if (cb)
        cb(user);
}

static void on_harness_closed(void *user)
{
    akg_engine *e = user;
    if (--e->pending_closes == 0)
        engine_free(e);
}

static void maybe_close(akg_engine *e)
{
    if (!e->closing || e->jobs || e->pending_closes)
        return;
    if (e->n_pools == 0) {
        engine_free(e);
        return;
    }
    /* One extra count so a pool that closes at once cannot free the engine
     * while the loop below still reads it. */
    e->pending_closes = e->n_pools + 1;
    int n = e->n_pools;
    for (int i = 0; i < n; i++)
        akg_harness_close(e->pools[i].pool, on_harness_closed, e);
    on_harness_closed(e);
}

void akg_engine_close(akg_engine *engine, void (*close_cb)(void *), void *user)
{
    engine->closing = 1;
    engine->close_cb = close_cb;
    engine->close_user = user;
    for (akg_job *j = engine->jobs; j; j = j->next)
        akg_job_cancel(j);
    maybe_close(engine);
}

const char *akg_job_status_name(akg_job_status s)
{
    switch (s) {
    case AKG_JOB_PASS:
        return "pass";
    case AKG_JOB_FAIL:
        return "fail";
    case AKG_JOB_UNVERIFIED:
        return "unverified";
    case AKG_JOB_CANCELLED:
        return "cancelled";
    case AKG_JOB_ERROR:
        return "error";
    }
    return "error";
}

/* The targets are the backend registry's (backends/registry.c). */
cJSON *akg_engine_targets(void)
{
    cJSON *a = cJSON_CreateArray();
    for (const akg_backend *const *b = akg_backend_list(); *b; b++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "backend", (*b)->name);
        cJSON_AddStringToObject(o, "dsl", (*b)->dsl);
        cJSON_AddStringToObject(o, "arch", (*b)->default_arch);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

int akg_target_check(const char *backend, const char *dsl, char *err, size_t errlen)
{
    return akg_backend_check(backend, dsl, err, errlen);
}

long long akg_job_id(const akg_job *job)
{
    return job->id;
}

akg_job *akg_engine_find_job(akg_engine *engine, long long id)
{
    for (akg_job *j = engine->jobs; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

static void start_queued(akg_engine *e)
{
    for (akg_job *j = e->jobs; j && e->running < e->max_jobs; j = j->next) {
        if (j->state != JOB_QUEUED || j->cancelled)
            continue;
        e->queued--;
        e->running++;
        j->started = 1;
        j->state = JOB_PARSE;
        akg__pipeline_start(j);
    }
}

void akg__job_emit(akg_job *job, akg_event *ev)
{
    if (job->progress_pending && !job->progress_flushing)
        akg__pipeline_flush_progress(job); /* a model's progress comes before what followed it */
    ev->job = job;
    ev->job_id = job->id;
    if (job->cb)
        job->cb(ev, job->user);
}

static void job_free(akg_job *j)
{
    free(j->reference_path);
    free(j->framework);
    free(j->backend);
    free(j->arch);
    free(j->dsl);
    free(j->workflow);
    free(j->kernel_path);
    free(j->provider);
    free(j->output_dir_opt);
    free(j->user_sketch_path);
    akg_provider_session_free(j->session); /* nothing is pending after DONE */
    free(j->sketch_text);
    free(j->op_name);
    cJSON_Delete(j->design_info);
    cJSON_Delete(j->config);
    free(j->ref_source);
    akg_reference_free(j->ref);
    cJSON_Delete(j->probe);
    akg_sketch_free(j->sketch);
    akg_kernel_files_free(&j->files);
    free(j->out_dir);
    free(j->sketch_path);
    free(j->kernel_src_path);
    free(j->model_new_path);
    free(j->lib_path);
    free(j->report_path);
    cJSON_Delete(j->feedback);
    free(j->design_check_mode);
    cJSON_Delete(j->design_check);
    cJSON_Delete(j->mismatch);
    cJSON_Delete(j->verify);
    cJSON_Delete(j->profile);
    cJSON_Delete(j->harness_times);
    cJSON_Delete(j->code_info);
    cJSON_Delete(j->candidates);
    cJSON_Delete(j->tried);
    cJSON_Delete(j->best);
    cJSON_Delete(j->final_error);
    free(j);
}

static void on_job_handle_closed(uv_handle_t *h)
{
    akg_job *j = h->data;
    if (--j->handles_open == 0)
        job_free(j);
}

void akg__job_finished(akg_job *job)
{
    akg_engine *e = job->engine;
    if (!job->started)
        e->queued--;
    else
        e->running--;
    if (job->prev)
        job->prev->next = job->next;
    else
        e->jobs = job->next;
    if (job->next)
        job->next->prev = job->prev;
    uv_close((uv_handle_t *)&job->progress_timer, on_job_handle_closed);
    uv_close((uv_handle_t *)&job->kick, on_job_handle_closed);
    if (!e->closing)
        start_queued(e);
    maybe_close(e);
}

static char *dup_or(const char *s, const char *fallback)
{
    return akg_strdup(s && *s ? s : fallback);
}

int akg_job_start(akg_engine *engine, const akg_job_options *opts, akg_event_cb cb, void *user,
                  akg_job **out, char *err, size_t errlen)
{
    if (engine->closing)
        return akg_fail(err, errlen, AKG_ECANCELED, "the engine is shutting down");
    if (!opts || !opts->reference_path)
        return akg_fail(err, errlen, AKG_EINVAL, "a reference file is required");
    /* the default target is the registry's first backend */
    const akg_backend *first = akg_backend_list()[0];
    const char *backend = opts->backend ? opts->backend : first->name;
    const char *dsl = opts->dsl ? opts->dsl : first->dsl;
    int rc = akg_target_check(backend, dsl, err, errlen);
    if (rc)
        return rc;
    if (opts->arch &&
        (rc = akg_backend_arch_check(akg_backend_find(backend, dsl), opts->arch, err, errlen)))
        return rc;
    if (opts->framework && strcmp(opts->framework, "torch") != 0)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "framework '%s' is not supported (only torch)", opts->framework);
    const akg_provider *provider = akg_provider_find(opts->provider ? opts->provider : "builtin");
    if (!provider) {
        char msg[512];
        akg_provider_unknown_message(opts->provider, msg, sizeof msg);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "%s", msg);
    }
    struct stat st;
    if (stat(opts->reference_path, &st) != 0 || !S_ISREG(st.st_mode))
        return akg_fail(err, errlen, AKG_ENOTFOUND, "reference not found: %s",
                        opts->reference_path);
    if (opts->sketch_path && (stat(opts->sketch_path, &st) != 0 || !S_ISREG(st.st_mode)))
        return akg_fail(err, errlen, AKG_ENOTFOUND, "sketch not found: %s", opts->sketch_path);
    if (engine->running >= engine->max_jobs && engine->queued >= engine->max_queue)
        return akg_fail(err, errlen, AKG_EBUSY, "too many jobs waiting (%d)", engine->max_queue);
    cJSON *config = NULL;
    rc = akg_backend_config_load(backend, dsl, &config, err, errlen);
    if (rc)
        return rc;
    {
        char path[4096];
        backend_config_path(akg_backend_find(backend, dsl), path, sizeof path);
        char *sandbox = sandbox_settings(config, path, err, errlen);
        if (!sandbox) {
            cJSON_Delete(config);
            return AKG_EINVAL;
        }
        free(sandbox);
    }
    const char *workflow =
        opts->workflow ? opts->workflow : akg_config_string(config, "default_workflow", "default");
    static const char *workflows[] = {"default",         "coder_only",  "kernelgen_only",
                                      "verifier_only",   "design_only", "evolve",
                                      "adaptive_search", NULL};
    int known = 0;
    for (int i = 0; workflows[i]; i++)
        known |= strcmp(workflow, workflows[i]) == 0;
    if (!known) {
        cJSON_Delete(config);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "unknown workflow '%s' (default, coder_only, kernelgen_only, "
                        "verifier_only, design_only, evolve, adaptive_search)",
                        workflow);
    }
    if (strcmp(workflow, "verifier_only") == 0 && opts->sketch_path) {
        cJSON_Delete(config);
        return akg_fail(err, errlen, AKG_EINVAL,
                        "verifier_only checks an existing kernel; a sketch (--sketch) is lowered "
                        "by the other workflows (default, coder_only, kernelgen_only, "
                        "design_only)");
    }
    if (strcmp(workflow, "verifier_only") == 0 &&
        (!opts->kernel_path || stat(opts->kernel_path, &st) != 0)) {
        cJSON_Delete(config);
        return akg_fail(err, errlen, AKG_ENOTFOUND,
                        "verifier_only needs an existing kernel file (--kernel): %s",
                        opts->kernel_path ? opts->kernel_path : "none given");
    }
    const char *dcheck = opts->design_check
                             ? opts->design_check
                             : akg_config_string(config, "verify_settings.design_check", "first");
    if (strcmp(dcheck, "first") && strcmp(dcheck, "on_mismatch") && strcmp(dcheck, "off")) {
        int r = akg_fail(err, errlen, AKG_EINVAL,
                         "unknown design check '%s' (first, on_mismatch, off)", dcheck);
        cJSON_Delete(config);
        return r;
    }
    if (opts->profile_runs < 0 || opts->profile_runs > AKG_PROFILE_RUNS_MAX) {
        cJSON_Delete(config);
        return akg_fail(err, errlen, AKG_EINVAL,
                        "profile runs %d: expected 1 to %d timed runs (0: the config's "
                        "profile_settings.run_times)",
                        opts->profile_runs, AKG_PROFILE_RUNS_MAX);
    }
    akg_job *j = calloc(1, sizeof *j);
    if (!j) {
        cJSON_Delete(config);
        return AKG_ENOMEM;
    }
    j->engine = engine;
    j->cb = cb;
    j->user = user;
    j->config = config;
    j->reference_path = akg_abspath(opts->reference_path);
    j->framework = dup_or(opts->framework, "torch");
    j->backend = akg_strdup(backend);
    j->dsl = akg_strdup(dsl);
    j->be = akg_backend_find(backend, dsl); /* found: akg_target_check passed */
    j->arch = dup_or(opts->arch, j->be->default_arch);
    j->workflow = akg_strdup(workflow);
    j->kernel_path = opts->kernel_path ? akg_abspath(opts->kernel_path) : NULL;
    j->provider = akg_strdup(provider->name);
    j->prov = provider;
    j->user_sketch_path = opts->sketch_path ? akg_abspath(opts->sketch_path) : NULL;
    j->output_dir_opt = opts->output_dir ? akg_abspath(opts->output_dir) : NULL;
    j->verify_timeout_s = opts->verify_timeout_s > 0
                              ? opts->verify_timeout_s
                              : akg_config_number(config, "verify_timeout", 120);
    j->max_step =
        opts->max_step > 0 ? opts->max_step : (int)akg_config_number(config, "max_step", 4);
    j->trials = opts->trials > 0 ? opts->trials
                                 : (int)akg_config_number(config, "verify_settings.trials", 5);
    j->design_check_mode = akg_strdup(dcheck);
    j->design_check_s = akg_config_number(config, "verify_settings.design_check_seconds", 5);
    j->design_check_full_s = j->verify_timeout_s;
    j->run_times = (int)akg_config_number(config, "profile_settings.run_times", 50);
    j->warmup_times = (int)akg_config_number(config, "profile_settings.warmup_times", 5);
    if (opts->profile_runs > 0) {
        /* a brief profile (tests that check designs, not speed): the warm-up shrinks with it */
        j->run_times = opts->profile_runs;
        if (j->warmup_times > j->run_times)
            j->warmup_times = j->run_times;
    }
    j->compiled_baseline = opts->compiled_baseline > 0;
    j->search_opts = opts->search;
    j->seed = opts->seed ? opts->seed : (unsigned long long)(uv_hrtime() % 1000000007ULL);
    j->min_speedup = opts->min_speedup_set
                         ? opts->min_speedup
                         : akg_config_number(config, "profile_settings.min_speedup", 1.0);
    j->candidates = cJSON_CreateArray();
    j->tried = cJSON_CreateArray();
    j->started_ms = akg_now_ms();
    uv_timer_init(engine->loop, &j->kick);
    j->kick.data = j;
    uv_timer_init(engine->loop, &j->progress_timer);
    j->progress_timer.data = j;
    j->handles_open = 2;

    long long run_id = 0;
    char hash[65] = "";
    {
        char *src = NULL;
        size_t len = 0;
        if (akg_read_file(j->reference_path, 16 << 20, &src, &len, NULL, 0) == AKG_OK)
            akg_sha256_hex(src, len, hash);
        free(src);
    }
    if (akg_store_run_begin(engine->store, j->reference_path, hash, NULL, j->backend, j->dsl,
                            j->arch, j->workflow, j->provider, j->output_dir_opt,
                            &run_id) == AKG_OK) {
        j->id = run_id;
        j->store_run = 1;
        /* the task's key for cached answers and resumed searches (search_cache.c) */
        akg_task_fingerprint(hash, j->backend, j->arch, j->dsl, j->fingerprint);
        char jerr[256];
        if (akg_judge_version(config, j->judge, jerr, sizeof jerr) != 0 ||
            akg_store_run_set_key(engine->store, run_id, j->fingerprint, j->judge) != AKG_OK)
            j->judge[0] = '\0';
    } else {
        /* The job still runs; the pipeline says so in an event once it starts. */
        j->id = -(engine->next_local_id++);
        snprintf(j->store_error, sizeof j->store_error, "%s", akg_store_errmsg(engine->store));
    }

    j->next = engine->jobs;
    if (engine->jobs)
        engine->jobs->prev = j;
    engine->jobs = j;
    j->state = JOB_QUEUED;
    engine->queued++;
    if (out)
        *out = j;
    start_queued(engine);
    return AKG_OK;
}

void akg_job_cancel(akg_job *job)
{
    if (job->cancelled || job->finishing)
        return;
    job->cancelled = 1;
    akg__pipeline_cancel(job);
}

int akg_parse_devices(const char *text, int *ids, int *n, char *err, size_t errlen)
{
    *n = 0;
    if (!text || !*text)
        return akg_fail(err, errlen, AKG_EINVAL, "--devices needs a count or a list of indices");
    if (!strchr(text, ',')) {
        char *end = NULL;
        long count = strtol(text, &end, 10);
        if (*end || end == text || count < 1 || count > AKG_ENGINE_MAX_DEVICES)
            return akg_fail(err, errlen, AKG_EINVAL,
                            "--devices %s: a count from 1 to %d, or device indices with commas "
                            "(0,1 or 0,0 for two workers on device 0)",
                            text, AKG_ENGINE_MAX_DEVICES);
        for (int i = 0; i < (int)count; i++)
            ids[i] = i;
        *n = (int)count;
        return AKG_OK;
    }
    for (const char *p = text; *p;) {
        char *end = NULL;
        long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id > 1023 || (*end && *end != ','))
            return akg_fail(err, errlen, AKG_EINVAL,
                            "--devices %s: each entry is a device index from 0 to 1023, as in "
                            "0,1",
                            text);
        if (*n == AKG_ENGINE_MAX_DEVICES)
            return akg_fail(err, errlen, AKG_EINVAL, "--devices %s: more than %d workers", text,
                            AKG_ENGINE_MAX_DEVICES);
        ids[(*n)++] = (int)id;
        p = *end ? end + 1 : end;
    }
    return AKG_OK;
}
