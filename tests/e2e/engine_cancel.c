/*
 * engine_cancel.c: one engine, one loop, a job cancelled at each stage, then
 * one that runs to the end. Two ways to cancel:
 *
 *  - inside the STAGE event's callback (the stage must then start nothing:
 *    no harness request, no provider request, no build outlives the job);
 *  - from a zero-delay timer armed in that callback, which fires before the
 *    work the stage started (a provider request is pending at "design" and
 *    "code", a harness request at "probe", "verify" and "profile", the build
 *    at "build"), so the pending work itself is cancelled.
 *
 * Every cancelled job ends CANCELLED with nothing of the cancelled stage
 * left behind, the engine serves the next job, and the loop closes cleanly
 * at the end: a leaked handle fails the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "akg/engine.h"

typedef struct {
    const char *stage; /* cancel when this stage begins; NULL: run to the end */
    int from_timer;    /* 1: cancel from a timer armed in the callback */
    const char *sketch; /* a user's sketch (fixture name), or NULL */
    const char *absent; /* a file of the run folder that must not exist */
} case_t;

static const case_t cases[] = {
    {"probe", 0, NULL, "sketch.sketch"},
    {"probe", 1, NULL, "sketch.sketch"},
    {"design", 0, NULL, "sketch.sketch"},
    {"design", 1, NULL, "sketch.sketch"}, /* the provider's design request is pending */
    {"code", 0, NULL, "kernel.cpp"},
    {"code", 1, NULL, "kernel.cpp"}, /* the provider's code request is pending */
    {"code", 1, "relu.sketch", "kernel.cpp"},
    {"build", 0, NULL, NULL},
    {"build", 1, NULL, NULL}, /* the build runs */
    {"verify", 1, NULL, NULL},
    {"profile", 0, NULL, NULL},
    {NULL, 0, NULL, NULL},
};
#define NCASES (sizeof cases / sizeof cases[0])

static uv_loop_t loop;
static akg_engine *engine;
static akg_job *job;
static size_t current;
static int failures, cancels_sent;
static uv_timer_t cancel_timer;
static char tmpdir[] = "/tmp/akg-engine-cancel-XXXXXX";
static char out[4096];

static void start_next(void);

static void on_cancel_timer(uv_timer_t *t)
{
    (void)t;
    if (job) {
        akg_job_cancel(job);
        cancels_sent++;
    }
}

static int exists(const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

static void on_event(const akg_event *ev, void *user)
{
    (void)user;
    const case_t *c = &cases[current];
    if (ev->kind == AKG_EVENT_STAGE && c->stage && ev->stage && strcmp(ev->stage, c->stage) == 0 &&
        cancels_sent == 0 && !uv_is_active((uv_handle_t *)&cancel_timer)) {
        if (c->from_timer) {
            uv_timer_start(&cancel_timer, on_cancel_timer, 0, 0);
        } else {
            akg_job_cancel(ev->job);
            cancels_sent++;
        }
        return;
    }
    if (ev->kind != AKG_EVENT_DONE)
        return;
    akg_job_status want = c->stage ? AKG_JOB_CANCELLED : AKG_JOB_PASS;
    int ok = ev->status == want;
    if (c->absent && exists(out, c->absent))
        ok = 0;
    if (c->stage && cancels_sent != 1)
        ok = 0;
    printf("%s cancel at %s%s%s: status %s%s\n", ok ? "ok  " : "FAIL",
           c->stage ? c->stage : "(none)", c->from_timer ? " from a timer" : " in the callback",
           c->sketch ? " (user's sketch)" : "", akg_job_status_name(ev->status),
           c->absent && exists(out, c->absent) ? ", but a file of the cancelled stage exists" : "");
    if (!ok)
        failures++;
    job = NULL;
    current++;
    start_next();
}

static void on_closed(void *user)
{
    (void)user;
    uv_close((uv_handle_t *)&cancel_timer, NULL);
}

static void start_next(void)
{
    if (current >= NCASES) {
        akg_engine_close(engine, on_closed, NULL);
        return;
    }
    const case_t *c = &cases[current];
    const char *src = getenv("AKG_SOURCE_DIR");
    char ref[4096], sketch[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", src);
    snprintf(sketch, sizeof sketch, "%s/tests/fixtures/sketches/%s", src,
             c->sketch ? c->sketch : "");
    snprintf(out, sizeof out, "%s/run%zu", tmpdir, current);
    akg_job_options o = {0};
    o.reference_path = ref;
    o.output_dir = out;
    o.sketch_path = c->sketch ? sketch : NULL;
    o.verify_timeout_s = 120;
    cancels_sent = 0;
    char err[512];
    if (akg_job_start(engine, &o, on_event, NULL, &job, err, sizeof err) != AKG_OK) {
        printf("FAIL cannot start case %zu: %s\n", current, err);
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
    uv_timer_init(&loop, &cancel_timer);
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
