/* test_engine.c: the engine's harness pools are per device kind and start on
 * first use: an engine that runs no job starts no worker and closes at once;
 * a job whose pool cannot start (no such interpreter) ends with the reason,
 * and the engine still closes cleanly. The provider and target registries
 * answer the engine's checks. A wrong sandbox setting (config.yaml's sandbox
 * section, AKG_SANDBOX_MODE) is refused when a job starts, naming the
 * setting and what would work. Each test ends by closing its loop. */
#include <stdlib.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"
#include "check.h"

static int closed_calls;

static void on_closed(void *user)
{
    (void)user;
    closed_calls++;
}

static akg_engine *new_engine(uv_loop_t *loop, const char *python, const char *store)
{
    akg_engine_options eo = {0};
    eo.python = python;
    eo.store_path = store;
    akg_engine *e = NULL;
    char err[512];
    int rc = akg_engine_new(loop, &eo, &e, err, sizeof err);
    if (rc != AKG_OK)
        fprintf(stderr, "akg_engine_new: %s\n", err);
    return e;
}

static void test_no_job_no_worker(const char *store)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    /* an interpreter that does not exist: nothing tries to start it */
    akg_engine *e = new_engine(&loop, "/nonexistent/akg-python", store);
    CHECK(e != NULL);
    closed_calls = 0;
    akg_engine_close(e, on_closed, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(closed_calls == 1);
    CHECK(uv_loop_close(&loop) == 0);
}

typedef struct {
    int done;
    akg_job_status status;
    char cls[64];
    char detail[1024];
    akg_engine *engine;
} outcome;

static void on_event(const akg_event *ev, void *user)
{
    outcome *o = user;
    if (ev->kind != AKG_EVENT_DONE)
        return;
    o->done++;
    o->status = ev->status;
    const cJSON *err = cJSON_GetObjectItem(ev->data, "error");
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(err, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(err, "detail"));
    snprintf(o->cls, sizeof o->cls, "%s", cls ? cls : "");
    snprintf(o->detail, sizeof o->detail, "%s", detail ? detail : "");
    akg_engine_close(o->engine, on_closed, NULL);
}

static void test_pool_that_cannot_start(const char *store, const char *out)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_engine *e = new_engine(&loop, "/nonexistent/akg-python", store);
    CHECK(e != NULL);
    char ref[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", getenv("AKG_SOURCE_DIR"));
    akg_job_options jo = {0};
    jo.reference_path = ref;
    jo.workflow = "design_only";
    jo.output_dir = out;
    outcome o = {0};
    o.engine = e;
    char err[512];
    closed_calls = 0;
    CHECK(akg_job_start(e, &jo, on_event, &o, NULL, err, sizeof err) == AKG_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(o.done == 1);
    CHECK(o.status == AKG_JOB_ERROR);
    CHECK_STR(o.cls, "crash");
    CHECK_CONTAINS(o.detail, "/nonexistent/akg-python");
    CHECK(closed_calls == 1);
    CHECK(uv_loop_close(&loop) == 0);
}

static void test_registries(const char *store)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_engine *e = new_engine(&loop, NULL, store);
    CHECK(e != NULL);
    char ref[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", getenv("AKG_SOURCE_DIR"));
    akg_job_options jo = {0};
    jo.reference_path = ref;
    jo.provider = "nonesuch";
    char err[512];
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_STR(err, "unknown provider 'nonesuch' (the providers in this build: builtin, openai)");
    jo.provider = NULL;
    jo.dsl = "triton";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "not supported by this build (supported: cpu/cpp");
    jo.dsl = "fortran";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "unknown DSL 'fortran'");
    jo.dsl = NULL;
    jo.sketch_path = "/nonexistent/design.sketch";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "sketch not found");
    cJSON *targets = akg_engine_targets();
    CHECK(cJSON_GetArraySize(targets) >= 1); /* cpu/cpp first, then the others */
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(targets, 0), "dsl")),
              "cpp");
    cJSON_Delete(targets);
    closed_calls = 0;
    akg_engine_close(e, on_closed, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(closed_calls == 1);
    CHECK(uv_loop_close(&loop) == 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Starts a design_only job on relu with the data dir's config (the sandbox section given) and
 * returns akg_job_start's status; err receives its message. A job that starts is cancelled at
 * once, before any worker runs. */
static int start_with_sandbox(const char *home, const char *store, const char *section, char *err,
                              size_t errlen)
{
    char path[600], text[2048];
    snprintf(path, sizeof path, "%s/backends/cpu/cpp/config.yaml", home);
    snprintf(text, sizeof text, "default_workflow: default\nmax_step: 2\n%s", section);
    write_text(path, text);
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_engine *e = new_engine(&loop, "/nonexistent/akg-python", store);
    CHECK(e != NULL);
    if (!e) {
        uv_loop_close(&loop);
        return -1;
    }
    char ref[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", getenv("AKG_SOURCE_DIR"));
    akg_job_options jo = {0};
    jo.reference_path = ref;
    jo.workflow = "design_only";
    outcome o = {0};
    o.engine = e;
    akg_job *job = NULL;
    err[0] = '\0';
    int rc = akg_job_start(e, &jo, on_event, &o, &job, err, errlen);
    closed_calls = 0;
    if (rc == AKG_OK) {
        akg_job_cancel(job); /* its DONE event closes the engine */
    } else {
        akg_engine_close(e, on_closed, NULL);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(closed_calls == 1);
    if (rc == AKG_OK)
        CHECK(o.status == AKG_JOB_CANCELLED);
    CHECK(uv_loop_close(&loop) == 0);
    return rc;
}

static void test_sandbox_settings(const char *dir, const char *store)
{
    /* a data dir of the test's own: a worker script (never started) and the config */
    char home[300], path[600];
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(path, sizeof path, "%s/backends/harness", home);
    CHECK(akg_mkdirs(path, NULL, 0) == AKG_OK);
    snprintf(path, sizeof path, "%s/backends/harness/worker.py", home);
    write_text(path, "raise SystemExit(3)\n");
    snprintf(path, sizeof path, "%s/backends/cpu/cpp", home);
    CHECK(akg_mkdirs(path, NULL, 0) == AKG_OK);
    const char *old_home = getenv("AKG_HOME");
    char *saved = old_home ? akg_strdup(old_home) : NULL;
    setenv("AKG_HOME", home, 1);
    unsetenv("AKG_SANDBOX_MODE");
    char err[1024];

    /* the defaults, no section at all, and an empty one all start */
    CHECK(start_with_sandbox(home, store,
                             "sandbox:\n  mode: auto\n  memory_mb: 4096\n  processes: 64\n"
                             "  cpu_seconds: 600\n  file_size_mb: 256\n  call_timeout_s: 60\n",
                             err, sizeof err) == AKG_OK);
    CHECK(start_with_sandbox(home, store, "", err, sizeof err) == AKG_OK);
    CHECK(start_with_sandbox(home, store, "sandbox:\n", err, sizeof err) == AKG_OK);
    CHECK(start_with_sandbox(home, store, "sandbox: {mode: none, call_timeout_s: 0.5}\n", err,
                             sizeof err) == AKG_OK);

    /* each wrong setting is named with what would work */
    CHECK(start_with_sandbox(home, store, "sandbox:\n  mode: chroot\n", err, sizeof err) ==
          AKG_EINVAL);
    CHECK_CONTAINS(err, "config.yaml: sandbox.mode is \"chroot\"; it must be auto, bwrap or none");
    CHECK(start_with_sandbox(home, store, "sandbox:\n  memory_mb: 4G\n", err, sizeof err) ==
          AKG_EINVAL);
    CHECK_CONTAINS(err, "sandbox.memory_mb is \"4G\"; it must be a number of MiB greater than 0");
    CHECK(start_with_sandbox(home, store, "sandbox:\n  cpu_seconds: 0\n", err, sizeof err) ==
          AKG_EINVAL);
    CHECK_CONTAINS(err, "sandbox.cpu_seconds is 0; it must be a number of seconds greater than 0");
    CHECK(start_with_sandbox(home, store, "sandbox:\n  processes: 2.5\n", err, sizeof err) ==
          AKG_EINVAL);
    CHECK_CONTAINS(err, "sandbox.processes is 2.5; it must be a whole number of processes");
    CHECK(start_with_sandbox(home, store, "sandbox:\n  memory: 4096\n", err, sizeof err) ==
          AKG_EINVAL);
    CHECK_CONTAINS(err, "sandbox.memory is not a sandbox setting; the settings are mode, "
                        "memory_mb, processes, cpu_seconds, file_size_mb and call_timeout_s");
    CHECK(start_with_sandbox(home, store, "sandbox: bwrap\n", err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "sandbox must be a mapping of settings");

    /* the mode from the environment (akg_cli op --sandbox) is checked too */
    setenv("AKG_SANDBOX_MODE", "none", 1);
    CHECK(start_with_sandbox(home, store, "", err, sizeof err) == AKG_OK);
    setenv("AKG_SANDBOX_MODE", "off", 1);
    CHECK(start_with_sandbox(home, store, "", err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "the sandbox mode 'off' (AKG_SANDBOX_MODE, akg_cli op --sandbox) is not "
                        "known; it must be auto, bwrap or none");
    unsetenv("AKG_SANDBOX_MODE");

    if (saved) {
        setenv("AKG_HOME", saved, 1);
        free(saved);
    } else {
        unsetenv("AKG_HOME");
    }
}

int main(void)
{
    char dir[] = "/tmp/akg-unit-engine-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char store[256], out[256];
    snprintf(store, sizeof store, "%s/akg.db", dir);
    snprintf(out, sizeof out, "%s/run", dir);
    test_no_job_no_worker(store);
    test_pool_that_cannot_start(store, out);
    test_registries(store);
    test_sandbox_settings(dir, store);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return check_summary();
}
