/*
 * engine_failures.c: one engine, one loop, many jobs in a row. Candidates
 * that crash, hang, cheat or compute wrong results each end with the right
 * error class, and the engine (and its restarted harness worker) still serves
 * the next job, which passes. The loop must close cleanly at the end: a
 * leaked handle fails the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "akg/engine.h"

typedef struct {
    const char *kernel;   /* NULL: generate */
    const char *reference;
    const char *workflow;
    double timeout;
    akg_job_status want_status;
    const char *want_class;
} case_t;

static const case_t cases[] = {
    {"segfault_relu_model_new.py", "relu.py", "verifier_only", 60, AKG_JOB_FAIL, "crash"},
    {"good_relu_model_new.py", "relu.py", "verifier_only", 60, AKG_JOB_PASS, NULL},
    {"spin_relu_model_new.py", "relu.py", "verifier_only", 4, AKG_JOB_FAIL, "timeout"},
    {"wrong_relu_model_new.py", "relu.py", "verifier_only", 60, AKG_JOB_FAIL, "numerical_mismatch"},
    {"half_relu_model_new.py", "relu.py", "verifier_only", 60, AKG_JOB_FAIL, "numerical_mismatch"},
    {"cheat_relu_model_new.py", "relu.py", "verifier_only", 60, AKG_JOB_FAIL, "forbidden"},
    {NULL, "raises_in_forward.py", "default", 60, AKG_JOB_ERROR, "runtime_error"},
    {NULL, "hangs_in_forward.py", "default", 4, AKG_JOB_ERROR, "timeout"},
    {NULL, "elu.py", "default", 60, AKG_JOB_PASS, NULL},
};
#define NCASES (sizeof cases / sizeof cases[0])

static uv_loop_t loop;
static akg_engine *engine;
static size_t current;
static int failures;
static char tmpdir[] = "/tmp/akg-engine-failures-XXXXXX";

static void start_next(void);

static void on_event(const akg_event *ev, void *user)
{
    (void)user;
    if (ev->kind != AKG_EVENT_DONE)
        return;
    const case_t *c = &cases[current];
    const cJSON *err = cJSON_GetObjectItem(ev->data, "error");
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(err, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(err, "detail"));
    int ok = ev->status == c->want_status &&
             ((c->want_class == NULL && cls == NULL) ||
              (c->want_class && cls && strcmp(cls, c->want_class) == 0)) &&
             (c->want_class == NULL || (detail && *detail));
    printf("%s %s/%s: status %s, class %s: %s\n", ok ? "ok  " : "FAIL", c->reference,
           c->kernel ? c->kernel : "generated", akg_job_status_name(ev->status), cls ? cls : "-",
           detail ? detail : "");
    if (!ok)
        failures++;
    current++;
    start_next();
}

static void on_closed(void *user)
{
    (void)user;
}

static void start_next(void)
{
    if (current >= NCASES) {
        akg_engine_close(engine, on_closed, NULL);
        return;
    }
    const case_t *c = &cases[current];
    const char *src = getenv("AKG_SOURCE_DIR");
    char ref[4096], kernel[4096], out[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/%s", src, c->reference);
    snprintf(kernel, sizeof kernel, "%s/tests/fixtures/kernels/%s", src, c->kernel ? c->kernel : "");
    snprintf(out, sizeof out, "%s/run%zu", tmpdir, current);
    akg_job_options o = {0};
    o.reference_path = ref;
    o.workflow = c->workflow;
    o.kernel_path = c->kernel ? kernel : NULL;
    o.output_dir = out;
    o.verify_timeout_s = c->timeout;
    char err[512];
    akg_job *job;
    if (akg_job_start(engine, &o, on_event, NULL, &job, err, sizeof err) != AKG_OK) {
        printf("FAIL cannot start %s: %s\n", c->reference, err);
        failures++;
        current++;
        start_next();
    }
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 2;
    char store[256];
    snprintf(store, sizeof store, "%s/akg.db", tmpdir);
    uv_loop_init(&loop);
    akg_engine_options eo = {0};
    eo.store_path = store;
    char err[512];
    if (akg_engine_new(&loop, &eo, &engine, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    start_next();
    uv_run(&loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&loop) == 0;
    if (!closed) {
        printf("FAIL the loop still has open handles\n");
        failures++;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        failures++;
    int passed = (int)NCASES + 1 - failures;
    printf("%d passed, %d failed\n", passed < 0 ? 0 : passed, failures);
    return failures ? 1 : 0;
}
