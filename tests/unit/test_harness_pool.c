/* test_harness_pool.c: the harness pool's device sharing (akg/harness.h). Three workers, two of
 * them sharing device 0, run a fake worker (plain Python, no torch) that logs when each request
 * starts and ends on which device and takes 0.3 s. A "profile" must run alone on its device: it
 * starts only once the device's other requests are answered and nothing starts there until it is
 * answered; the queue is never overtaken (a request queued after the profile starts after it);
 * worker i gets the device the list names. A request naming a kernel goes to the idle worker that
 * last took that kernel (its judge holds the candidate's loaded child). akg_parse_devices reads
 * counts and lists and names what is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"
#include "akg/harness.h"
#include "check.h"

static const char FAKE_WORKER[] =
    "import json, sys, time\n"
    "device = sys.argv[sys.argv.index('--device') + 1]\n"
    "log = open(sys.argv[0] + '.log', 'a')\n"
    "print(json.dumps({'event': 'ready', 'device': device}), flush=True)\n"
    "for line in sys.stdin:\n"
    "    req = json.loads(line)\n"
    "    log.write('%.6f start %s %s %s\\n' % (time.time(), req['name'], req['op'], device)); "
    "log.flush()\n"
    "    time.sleep(0.3)\n"
    "    log.write('%.6f end %s %s %s\\n' % (time.time(), req['name'], req['op'], device)); "
    "log.flush()\n"
    "    print(json.dumps({'id': req['id'], 'ok': True}), flush=True)\n";

typedef struct {
    double start, end;
    char op[16], device[16];
} span;

static int answered;

static void on_answer(const cJSON *ans, void *user)
{
    (void)user;
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok")));
    answered++;
}

static void on_closed(void *user)
{
    *(int *)user = 1;
}

/* A pool of n workers running the fake worker script on the CUDA devices ids. */
static akg_harness *new_pool(uv_loop_t *loop, const char *script, const int *ids, int n)
{
    akg_harness_options ho = {0};
    ho.python = "python3";
    ho.worker_script = script;
    ho.workers = n;
    ho.device_ids = ids;
    ho.threads = 1;
    ho.device_kind = "cuda";
    akg_harness *pool = NULL;
    char err[512];
    CHECK(akg_harness_new(loop, &ho, &pool, err, sizeof err) == AKG_OK);
    return pool;
}

static void close_pool(uv_loop_t *loop, akg_harness *pool)
{
    int closed = 0;
    akg_harness_close(pool, on_closed, &closed);
    uv_run(loop, UV_RUN_DEFAULT);
    CHECK(closed == 1);
    CHECK(uv_loop_close(loop) == 0);
}

static void submit(akg_harness *pool, const char *op, const char *name)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", op);
    cJSON_AddStringToObject(req, "name", name);
    CHECK(akg_harness_submit(pool, req, 30, on_answer, NULL, NULL) == AKG_OK);
}

/* The spans of the log, by request name: "a".."f" as submitted. */
static void read_spans(const char *path, span *spans)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    double t;
    char what[16], name[16], op[16], device[16];
    while (fscanf(f, "%lf %15s %15s %15s %15s", &t, what, name, op, device) == 5) {
        span *s = &spans[name[0] - 'a'];
        if (!strcmp(what, "start"))
            s->start = t;
        else
            s->end = t;
        snprintf(s->op, sizeof s->op, "%s", op);
        snprintf(s->device, sizeof s->device, "%s", device);
    }
    fclose(f);
}

static int overlap(const span *a, const span *b)
{
    return a->start < b->end && b->start < a->end;
}

static void test_a_profile_runs_alone_on_its_device(const char *dir)
{
    char script[512], log[600];
    snprintf(script, sizeof script, "%s/fake_worker.py", dir);
    snprintf(log, sizeof log, "%s.log", script);
    CHECK(akg_write_file(script, FAKE_WORKER, strlen(FAKE_WORKER), NULL, 0) == AKG_OK);
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const int ids[] = {0, 0, 1};
    akg_harness *pool = new_pool(&loop, script, ids, 3);
    /* a, b, c verify; d profiles; e and f verify after it */
    submit(pool, "verify", "a");
    submit(pool, "verify", "b");
    submit(pool, "verify", "c");
    submit(pool, "profile", "d");
    submit(pool, "verify", "e");
    submit(pool, "verify", "f");
    while (answered < 6 && uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK(answered == 6);
    close_pool(&loop, pool);

    span spans[6];
    memset(spans, 0, sizeof spans);
    read_spans(log, spans);
    int devices_seen[2] = {0, 0};
    for (int i = 0; i < 6; i++) {
        CHECK(spans[i].start > 0 && spans[i].end > spans[i].start);
        CHECK(!strcmp(spans[i].device, "cuda:0") || !strcmp(spans[i].device, "cuda:1"));
        devices_seen[spans[i].device[5] - '0'] = 1;
    }
    CHECK(devices_seen[0] && devices_seen[1]); /* worker 2 runs on device 1 */
    const span *d = &spans[3];
    CHECK_STR(d->op, "profile");
    for (int i = 0; i < 6; i++)
        if (i != 3 && !strcmp(spans[i].device, d->device))
            CHECK(!overlap(&spans[i], d)); /* nothing else on the profile's device meanwhile */
    /* never overtaken: e and f start after the profile started */
    CHECK(spans[4].start >= d->start && spans[5].start >= d->start);
    /* the requests before it did overlap one another (three workers, not one) */
    CHECK(overlap(&spans[0], &spans[1]) || overlap(&spans[0], &spans[2]));
}

static int worker_of[4];

static void on_worker(const cJSON *ans, void *user)
{
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok")));
    const cJSON *w = cJSON_GetObjectItem(ans, "worker");
    CHECK(cJSON_IsNumber(w));
    worker_of[(int)(intptr_t)user] = cJSON_IsNumber(w) ? (int)w->valuedouble : -1;
    answered++;
}

static void submit_kernel(akg_harness *pool, const char *op, const char *name, const char *kernel,
                          int index)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", op);
    cJSON_AddStringToObject(req, "name", name);
    cJSON_AddStringToObject(req, "kernel", kernel);
    CHECK(akg_harness_submit(pool, req, 30, on_worker, (void *)(intptr_t)index, NULL) == AKG_OK);
}

/* Two workers on one device verify kernels A and B at once; then B's profile (and then A's)
 * goes to the worker that verified it, though the first idle slot is the other one. */
static void test_a_kernel_goes_back_to_its_worker(const char *dir)
{
    char script[512];
    snprintf(script, sizeof script, "%s/fake_worker.py", dir);
    uv_loop_t loop;
    uv_loop_init(&loop);
    static const int ids[] = {0, 0};
    akg_harness *pool = new_pool(&loop, script, ids, 2);
    answered = 0;
    submit_kernel(pool, "verify", "a", "/k/A/model_new.py", 0);
    submit_kernel(pool, "verify", "b", "/k/B/model_new.py", 1);
    while (answered < 2 && uv_run(&loop, UV_RUN_ONCE))
        ;
    submit_kernel(pool, "profile", "c", "/k/B/model_new.py", 2);
    while (answered < 3 && uv_run(&loop, UV_RUN_ONCE))
        ;
    submit_kernel(pool, "profile", "d", "/k/A/model_new.py", 3);
    while (answered < 4 && uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK(answered == 4);
    CHECK(worker_of[0] != worker_of[1]); /* both ran at once, one on each worker */
    CHECK(worker_of[2] == worker_of[1]);
    CHECK(worker_of[3] == worker_of[0]);
    close_pool(&loop, pool);
}

static void test_parse_devices(void)
{
    int ids[AKG_ENGINE_MAX_DEVICES], n = 0;
    char err[256];
    CHECK(akg_parse_devices("2", ids, &n, err, sizeof err) == AKG_OK);
    CHECK(n == 2 && ids[0] == 0 && ids[1] == 1);
    CHECK(akg_parse_devices("0,0", ids, &n, err, sizeof err) == AKG_OK);
    CHECK(n == 2 && ids[0] == 0 && ids[1] == 0);
    CHECK(akg_parse_devices("3,", ids, &n, err, sizeof err) == AKG_OK);
    CHECK(n == 1 && ids[0] == 3);
    CHECK(akg_parse_devices("1,5,2", ids, &n, err, sizeof err) == AKG_OK);
    CHECK(n == 3 && ids[2] == 2);
    CHECK(akg_parse_devices("0", ids, &n, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "a count from 1 to 64, or device indices with commas");
    CHECK(akg_parse_devices("two", ids, &n, err, sizeof err) == AKG_EINVAL);
    CHECK(akg_parse_devices("0,x", ids, &n, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "each entry is a device index from 0 to 1023");
    CHECK(akg_parse_devices("0,,1", ids, &n, err, sizeof err) == AKG_EINVAL);
    CHECK(akg_parse_devices("", ids, &n, err, sizeof err) == AKG_EINVAL);
}

int main(void)
{
    char dir[] = "/tmp/akg-unit-pool-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    test_parse_devices();
    test_a_profile_runs_alone_on_its_device(dir);
    test_a_kernel_goes_back_to_its_worker(dir);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary();
}
