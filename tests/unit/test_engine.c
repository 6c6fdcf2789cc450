/* test_engine.c: the engine's harness pools are per device kind and start on
 * first use: an engine that runs no job starts no worker and closes at once;
 * a job whose pool cannot start (no such interpreter) ends with the reason,
 * and the engine still closes cleanly. The provider and target registries
 * answer the engine's checks. Each test ends by closing its loop. */
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
    CHECK_STR(err, "unknown provider 'nonesuch' (the only provider in this build is builtin)");
    jo.provider = NULL;
    jo.dsl = "triton";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "not supported by this build (supported: cpu/cpp)");
    jo.dsl = "fortran";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "unknown DSL 'fortran'");
    jo.dsl = NULL;
    jo.sketch_path = "/nonexistent/design.sketch";
    CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "sketch not found");
    cJSON *targets = akg_engine_targets();
    CHECK(cJSON_GetArraySize(targets) == 1);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(targets, 0), "dsl")),
              "cpp");
    cJSON_Delete(targets);
    closed_calls = 0;
    akg_engine_close(e, on_closed, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(closed_calls == 1);
    CHECK(uv_loop_close(&loop) == 0);
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
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return check_summary();
}
