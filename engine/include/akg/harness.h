/*
 * harness.h: the client side of the harness protocol (backends/harness/README.md).
 *
 * A pool of persistent Python workers, one per device, each a child process in
 * its own process group, speaking one JSON object a line over pipes. Requests
 * wait in a FIFO queue until a worker is idle. Workers may share a device
 * (device_ids): a "profile" request then runs alone on its device (it starts
 * once the device's other requests are answered, and nothing else starts there
 * until it is), so timings stay those of an idle device; the queue is never
 * overtaken. Each request has a deadline:
 * past it the worker's process group is killed, the worker restarted, and the
 * request answered {"ok": false, "class": "timeout"}. A worker that dies mid
 * request answers it with class "crash" and the end of its stderr.
 *
 * Every request gets exactly one callback, on the loop's thread, also when it
 * is cancelled (class "cancelled") or the pool closes.
 */
#ifndef AKG_HARNESS_H
#define AKG_HARNESS_H

#include <cjson/cJSON.h>
#include <uv.h>

typedef struct akg_harness akg_harness;
typedef struct akg_harness_req akg_harness_req;

typedef struct {
    const char *python;        /* interpreter (required) */
    const char *worker_script; /* path of backends/harness/worker.py (required) */
    int workers;               /* pool size, one per device; >= 1 */
    /* The device index of each worker (workers of them: "cuda:<id>"; two workers may share one);
     * NULL: worker i on device i. On "cpu" every worker shares the one CPU. Copied. */
    const int *device_ids;
    int threads;              /* threads per worker (OMP_NUM_THREADS, torch threads) */
    const char *device_kind;  /* "cpu" or "cuda" */
    double startup_timeout_s; /* how long importing torch may take; 0: 120 */
    /* The sandbox settings of the candidates' child processes, a compact JSON object
     * ({"mode":"auto","memory_mb":4096,...}, the backend config's sandbox section) given to
     * every worker as AKG_SANDBOX; NULL: none given (the worker's defaults). Copied. */
    const char *sandbox_json;
    /* Optional log sink for the workers' stderr lines. */
    void (*log)(void *user, int worker, const char *line);
    void *log_user;
} akg_harness_options;

/* answer is owned by the pool and valid only during the callback. */
typedef void (*akg_harness_cb)(const cJSON *answer, void *user);

/* Creates the pool; workers start lazily on the first request. The caller
 * owns the pool and releases it with akg_harness_close. */
int akg_harness_new(uv_loop_t *loop, const akg_harness_options *opts, akg_harness **out, char *err,
                    size_t errlen);
/* Queues request (a cJSON object with "op"; the pool takes ownership and sets
 * "id"). timeout_s bounds the time from sending to answering. *out, if not
 * NULL, receives a handle valid until the callback runs. */
int akg_harness_submit(akg_harness *pool, cJSON *request, double timeout_s, akg_harness_cb cb,
                       void *user, akg_harness_req **out);
/* Receives the request's progress lines ({"event":"progress","id":..,
 * "trial":k,"trials":n} while a verify runs) until the answer arrives. */
void akg_harness_set_progress(akg_harness_req *req, akg_harness_cb progress, void *user);
/* Cancels a request: queued ones are dropped, a running one kills its worker
 * (which restarts). The callback runs with class "cancelled" before this
 * returns. */
void akg_harness_cancel(akg_harness_req *req);
/* The environment summary of the first worker that started ("ready" line,
 * with "sandbox": how candidates are isolated, where the worker says), or
 * NULL; owned by the pool. */
const cJSON *akg_harness_ready_info(const akg_harness *pool);
/* Answers every pending request "cancelled", asks the workers to exit, kills
 * them after a grace period, and calls close_cb once all handles are closed. */
void akg_harness_close(akg_harness *pool, void (*close_cb)(void *user), void *user);

/* The OpenBLAS core type that matches this CPU ("SkylakeX", "Zen", "Haswell"),
 * or NULL when none applies; static string. */
const char *akg_cpu_blas_coretype(void);
/* Number of online CPUs. */
int akg_cpu_count(void);

#endif
