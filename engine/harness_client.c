/*
 * harness_client.c: the pool of harness workers (see akg/harness.h).
 *
 * Each worker slot holds at most one live process instance. An instance owns
 * its uv handles (process, three pipes, one timer); when it dies or is killed
 * it is detached from its slot at once, so the slot can start a fresh one,
 * and its memory is freed in the last close callback (libuv's rule: memory of
 * a handle is reused only after its close callback).
 *
 * A worker answers nothing until it prints its "ready" line; startup has its
 * own deadline. Start failures do not loop: when a fresh instance dies before
 * it is ready, the queued requests are answered with class "crash" and the
 * worker's last stderr lines, so a wrong interpreter is one clear error.
 *
 * A request that names a kernel goes to the idle worker that last took a request of that kernel
 * when there is one (its judge still holds the candidate's child, loaded: a profile after a
 * verify then starts no process and imports nothing; on an H200 with eight workers a profile's
 * contest phase, where a worker without that child loads it, took 3-4 s, against milliseconds
 * with it loaded), else to the first idle worker that may take it.
 *
 * A worker's environment is the engine's with the pool's settings over it
 * (threads, device, the BLAS threads' policy, and AKG_SANDBOX, the sandbox of
 * the candidates' children): a value of those inherited from whoever started
 * the engine never reaches a worker.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/harness.h"
#include "providers/openai/openai.h"

#define LINE_LIMIT ((size_t)64 << 20)
#define STDERR_TAIL 12
/* At close an idle worker gets the end of its input and this long to clean up (its judge ends
 * its children and removes their staging folders) before it is killed. */
#define CLOSE_GRACE_MS 3000

typedef struct proc_inst proc_inst;

struct akg_harness_req {
    akg_harness *pool;
    cJSON *request;
    long long id;
    double timeout_s;
    akg_harness_cb cb;
    void *user;
    akg_harness_cb progress;
    void *progress_user;
    proc_inst *inst; /* set while running */
    akg_harness_req *next, *prev;
    double submitted_ms, started_ms; /* akg_now_ms at submit and when a worker took it (0: never) */
    int worker;                      /* the slot that took it, -1 while queued */
};

enum { W_STARTING, W_IDLE, W_BUSY, W_DEAD };

struct proc_inst {
    akg_harness *pool;
    int slot;
    int state;
    int pid;
    int open_handles;
    int killed;
    uv_process_t proc;
    uv_pipe_t in, out, err;
    uv_timer_t timer;
    akg_buf outbuf, errbuf;
    char *tail[STDERR_TAIL];
    int tail_pos;
    akg_harness_req *current;
    char *last_kernel; /* the "kernel" of the last request it took (its judge's loaded child) */
};

struct akg_harness {
    uv_loop_t *loop;
    char *python, *script, *device_kind, *sandbox_json;
    int nworkers, threads;
    int *device_of; /* each slot's device index; on "cpu" all 0 */
    double startup_timeout_s;
    void (*log)(void *, int, const char *);
    void *log_user;
    proc_inst **slots;
    akg_harness_req *queue_head, *queue_tail;
    long long next_id;
    int live_insts;
    int closing;
    void (*close_cb)(void *);
    void *close_user;
    cJSON *ready_info;
};

static void pump(akg_harness *pool);

/* ---------- answers ---------- */

/* Every answer says how long its request waited for a worker (queued_s: a profile also waits
 * until its device is idle) and how long the worker took (ran_s), as the engine measured them,
 * and which worker took it (worker: its slot, 0-based; absent when none did). */
static void answer(akg_harness_req *req, cJSON *ans)
{
    double now = akg_now_ms();
    double started = req->started_ms > 0 ? req->started_ms : now;
    cJSON_DeleteItemFromObject(ans, "queued_s");
    cJSON_DeleteItemFromObject(ans, "ran_s");
    cJSON_DeleteItemFromObject(ans, "worker");
    cJSON_AddNumberToObject(ans, "queued_s", (started - req->submitted_ms) / 1000.0);
    cJSON_AddNumberToObject(ans, "ran_s", (now - started) / 1000.0);
    if (req->worker >= 0)
        cJSON_AddNumberToObject(ans, "worker", req->worker);
    akg_harness_cb cb = req->cb;
    void *user = req->user;
    cJSON_Delete(req->request);
    free(req);
    if (cb)
        cb(ans, user);
}

static void answer_error(akg_harness_req *req, const char *cls, const char *detail)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "id", (double)req->id);
    cJSON_AddBoolToObject(a, "ok", 0);
    cJSON_AddStringToObject(a, "class", cls);
    cJSON_AddStringToObject(a, "detail", detail);
    answer(req, a);
    cJSON_Delete(a);
}

static void queue_remove(akg_harness *pool, akg_harness_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        pool->queue_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        pool->queue_tail = r->prev;
    r->next = r->prev = NULL;
}

static akg_harness_req *queue_pop(akg_harness *pool)
{
    akg_harness_req *r = pool->queue_head;
    if (r)
        queue_remove(pool, r);
    return r;
}

/* ---------- instance lifetime ---------- */

static void stderr_tail_text(proc_inst *w, akg_buf *out)
{
    for (int i = 0; i < STDERR_TAIL; i++) {
        const char *l = w->tail[(w->tail_pos + i) % STDERR_TAIL];
        if (l && *l) {
            akg_buf_puts(out, "\n  ");
            akg_buf_puts(out, l);
        }
    }
}

static void inst_free(proc_inst *w)
{
    akg_harness *pool = w->pool;
    akg_buf_free(&w->outbuf);
    akg_buf_free(&w->errbuf);
    for (int i = 0; i < STDERR_TAIL; i++)
        free(w->tail[i]);
    free(w->last_kernel);
    free(w);
    pool->live_insts--;
    if (pool->closing && pool->live_insts == 0) {
        void (*cb)(void *) = pool->close_cb;
        void *user = pool->close_user;
        cJSON_Delete(pool->ready_info);
        free(pool->python);
        free(pool->script);
        free(pool->device_kind);
        free(pool->sandbox_json);
        free(pool->slots);
        free(pool->device_of);
        free(pool);
        if (cb)
            cb(user);
    }
}

static void on_handle_closed(uv_handle_t *h)
{
    proc_inst *w = h->data;
    if (--w->open_handles == 0)
        inst_free(w);
}

static void close_if_open(uv_handle_t *h)
{
    if (h->data && !uv_is_closing(h))
        uv_close(h, on_handle_closed);
}

/* Detaches the instance from its slot and closes its pipes and timer. The
 * process handle is closed by the exit callback (or here when it never ran). */
static void inst_retire(proc_inst *w)
{
    akg_harness *pool = w->pool;
    if (pool->slots[w->slot] == w)
        pool->slots[w->slot] = NULL;
    w->state = W_DEAD;
    uv_timer_stop(&w->timer);
    close_if_open((uv_handle_t *)&w->in);
    close_if_open((uv_handle_t *)&w->out);
    close_if_open((uv_handle_t *)&w->err);
    close_if_open((uv_handle_t *)&w->timer);
}

static void inst_kill(proc_inst *w)
{
    if (w->pid > 0 && !w->killed) {
        w->killed = 1;
        /* The worker leads its own process group (UV_PROCESS_DETACHED):
         * killing the group takes anything it started with it. */
        uv_kill(-w->pid, SIGKILL);
        uv_kill(w->pid, SIGKILL);
    }
}

static void on_close_grace(uv_timer_t *t)
{
    inst_kill(t->data);
}

/* Answers every queued request with cls/detail (start failures, closing). */
static void fail_queue(akg_harness *pool, const char *cls, const char *detail)
{
    akg_harness_req *r;
    while ((r = queue_pop(pool)))
        answer_error(r, cls, detail);
}

static void on_worker_exit(uv_process_t *p, int64_t status, int term_signal)
{
    proc_inst *w = p->data;
    akg_harness *pool = w->pool;
    int was_starting = w->state == W_STARTING;
    akg_harness_req *cur = w->current;
    w->current = NULL;
    inst_retire(w);
    close_if_open((uv_handle_t *)&w->proc);
    if (!w->killed && w->pid > 0)
        uv_kill(-w->pid, SIGKILL); /* stray grandchildren */
    akg_buf msg;
    akg_buf_init(&msg, 1 << 16);
    if (term_signal)
        akg_buf_appendf(&msg, "the harness worker died (signal %d: %s)", term_signal,
                        strsignal(term_signal));
    else
        akg_buf_appendf(&msg, "the harness worker exited with status %lld", (long long)status);
    if (cur) {
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(cur->request, "op"));
        akg_buf_appendf(&msg, " while running %s", op ? op : "a request");
        akg_buf_puts(&msg, "; last stderr lines:");
        stderr_tail_text(w, &msg);
        answer_error(cur, "crash",
                     akg_buf_status(&msg) ? "the harness worker died (out of memory describing it)"
                                          : msg.data);
    } else if (was_starting && !pool->closing) {
        akg_buf_appendf(&msg,
                        " before it was ready (interpreter %s); last stderr lines:", pool->python);
        stderr_tail_text(w, &msg);
        fail_queue(pool, "crash",
                   akg_buf_status(&msg) ? "the harness worker died before it was ready (out of "
                                          "memory describing it)"
                                        : msg.data);
    }
    akg_buf_free(&msg);
    if (!pool->closing)
        pump(pool);
}

/* ---------- pipes ---------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

static void on_timeout(uv_timer_t *t);

static void handle_line(proc_inst *w, char *line)
{
    akg_harness *pool = w->pool;
    cJSON *msg = cJSON_Parse(line);
    if (!msg || !cJSON_IsObject(msg)) {
        if (pool->log)
            pool->log(pool->log_user, w->slot, line);
        cJSON_Delete(msg);
        return;
    }
    const char *event = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "event"));
    if (event && strcmp(event, "fatal") == 0 && w->state == W_STARTING) {
        /* the device cannot be used: every queued request fails with the
         * worker's own words, and no restart loop follows */
        const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "detail"));
        char text[1024];
        snprintf(text, sizeof text, "the harness worker cannot start: %s",
                 detail ? detail : "no detail");
        uv_timer_stop(&w->timer);
        inst_kill(w);
        inst_retire(w);
        fail_queue(pool, "crash", text);
        cJSON_Delete(msg);
        return;
    }
    if (event && strcmp(event, "ready") == 0) {
        if (!pool->ready_info)
            pool->ready_info = cJSON_Duplicate(msg, 1);
        if (w->state == W_STARTING) {
            uv_timer_stop(&w->timer);
            w->state = W_IDLE;
            pump(pool);
        }
        cJSON_Delete(msg);
        return;
    }
    cJSON *id = cJSON_GetObjectItem(msg, "id");
    akg_harness_req *cur = w->current;
    if (event && strcmp(event, "progress") == 0) {
        if (cur && cur->progress && cJSON_IsNumber(id) && (long long)id->valuedouble == cur->id)
            cur->progress(msg, cur->progress_user);
        cJSON_Delete(msg);
        return;
    }
    if (cur && cJSON_IsNumber(id) && (long long)id->valuedouble == cur->id) {
        uv_timer_stop(&w->timer);
        w->current = NULL;
        w->state = W_IDLE;
        answer(cur, msg);
        cJSON_Delete(msg);
        if (!pool->closing)
            pump(pool);
        return;
    }
    if (pool->log)
        pool->log(pool->log_user, w->slot, line);
    cJSON_Delete(msg);
}

static void on_stdout(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    proc_inst *w = s->data;
    if (nread > 0 && w->state != W_DEAD) {
        if (akg_buf_append(&w->outbuf, buf->base, (size_t)nread) != AKG_OK) {
            /* A line past the cap is a broken worker: kill it. */
            akg_harness_req *cur = w->current;
            w->current = NULL;
            if (cur)
                answer_error(cur, "crash", "the harness worker sent a line over 64 MiB");
            inst_kill(w);
        } else {
            char *nl;
            while (w->state != W_DEAD && (nl = memchr(w->outbuf.data, '\n', w->outbuf.len))) {
                size_t n = (size_t)(nl - w->outbuf.data);
                char *line = malloc(n + 1);
                if (!line)
                    break;
                memcpy(line, w->outbuf.data, n);
                line[n] = '\0';
                akg_buf_consume(&w->outbuf, n + 1);
                handle_line(w, line);
                free(line);
            }
        }
    }
    free(buf->base);
}

static void on_stderr(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    proc_inst *w = s->data;
    if (nread > 0) {
        if (akg_buf_append(&w->errbuf, buf->base, (size_t)nread) != AKG_OK) {
            /* a line past the cap (or no memory): drop what is held and start afresh, since
             * a failed buffer stays failed */
            akg_buf_free(&w->errbuf);
            akg_buf_init(&w->errbuf, 1 << 20);
        }
        char *nl;
        while ((nl = memchr(w->errbuf.data, '\n', w->errbuf.len))) {
            size_t n = (size_t)(nl - w->errbuf.data);
            char *line = malloc(n + 1);
            if (!line)
                break;
            memcpy(line, w->errbuf.data, n);
            line[n] = '\0';
            akg_buf_consume(&w->errbuf, n + 1);
            if (w->pool->log)
                w->pool->log(w->pool->log_user, w->slot, line);
            if (strlen(line) > 400)
                line[400] = '\0';
            free(w->tail[w->tail_pos]);
            w->tail[w->tail_pos] = line;
            w->tail_pos = (w->tail_pos + 1) % STDERR_TAIL;
        }
    }
    free(buf->base);
}

typedef struct {
    uv_write_t req;
    char *data;
} write_ctx;

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows up as the worker's exit */
    write_ctx *c = (write_ctx *)req;
    free(c->data);
    free(c);
}

static int send_line(proc_inst *w, const cJSON *msg)
{
    char *text = cJSON_PrintUnformatted(msg);
    if (!text)
        return AKG_ENOMEM;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return AKG_ENOMEM;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    write_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        free(line);
        return AKG_ENOMEM;
    }
    c->data = line;
    uv_buf_t b = uv_buf_init(line, (unsigned)(n + 1));
    if (uv_write(&c->req, (uv_stream_t *)&w->in, &b, 1, on_written) != 0) {
        free(line);
        free(c);
        return AKG_EIO;
    }
    return AKG_OK;
}

/* ---------- spawning ---------- */

static char **build_env(akg_harness *pool, int slot)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 12, sizeof *env);
    if (!env)
        return NULL;
    size_t o = 0;
    static const char *overridden[] = {"OMP_NUM_THREADS=",
                                       "AKG_THREADS=",
                                       "AKG_DEVICE=",
                                       "PYTHONUNBUFFERED=",
                                       "PYTHONDONTWRITEBYTECODE=",
                                       "CUDA_VISIBLE_DEVICES_AKG=",
                                       "AKG_SANDBOX=",
                                       "AKG_SANDBOX_MODE=",
                                       NULL};
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (int k = 0; overridden[k]; k++)
            if (strncmp(environ[i], overridden[k], strlen(overridden[k])) == 0)
                skip = 1;
        if (akg_openai_env_is_secret(environ[i]))
            skip = 1; /* API keys never reach a worker or its candidates */
        if (!skip)
            env[o++] = akg_strdup(environ[i]);
    }
    char tmp[256];
    snprintf(tmp, sizeof tmp, "OMP_NUM_THREADS=%d", pool->threads);
    env[o++] = akg_strdup(tmp);
    snprintf(tmp, sizeof tmp, "AKG_THREADS=%d", pool->threads);
    env[o++] = akg_strdup(tmp);
    if (strcmp(pool->device_kind, "cpu") == 0)
        snprintf(tmp, sizeof tmp, "AKG_DEVICE=cpu");
    else
        snprintf(tmp, sizeof tmp, "AKG_DEVICE=%s:%d", pool->device_kind, pool->device_of[slot]);
    env[o++] = akg_strdup(tmp);
    /* the engine's settings, never a value inherited from whoever started the engine */
    if (pool->sandbox_json) {
        size_t len = strlen("AKG_SANDBOX=") + strlen(pool->sandbox_json) + 1;
        char *kv = malloc(len);
        if (kv) {
            snprintf(kv, len, "AKG_SANDBOX=%s", pool->sandbox_json);
            env[o++] = kv;
        }
    }
    env[o++] = akg_strdup("PYTHONUNBUFFERED=1");
    env[o++] = akg_strdup("PYTHONDONTWRITEBYTECODE=1");
    if (!getenv("OMP_WAIT_POLICY"))
        env[o++] = akg_strdup("OMP_WAIT_POLICY=passive");
    /* OpenBLAS's own pthread pool ignores OMP_WAIT_POLICY: after each call its workers spin for
     * 2^28 cycles by default, taking a core from the kernel timed next to it. 2^4 makes them sleep
     * at once, the same courtesy both sides get. */
    if (!getenv("OPENBLAS_THREAD_TIMEOUT"))
        env[o++] = akg_strdup("OPENBLAS_THREAD_TIMEOUT=4");
    const char *core = akg_cpu_blas_coretype();
    if (core && !getenv("OPENBLAS_CORETYPE")) {
        snprintf(tmp, sizeof tmp, "OPENBLAS_CORETYPE=%s", core);
        env[o++] = akg_strdup(tmp);
    }
    env[o] = NULL;
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

static int inst_spawn(akg_harness *pool, int slot, char *err, size_t errlen)
{
    proc_inst *w = calloc(1, sizeof *w);
    if (!w)
        return AKG_ENOMEM;
    w->pool = pool;
    w->slot = slot;
    w->state = W_STARTING;
    akg_buf_init(&w->outbuf, LINE_LIMIT);
    akg_buf_init(&w->errbuf, 1 << 20);
    pool->live_insts++;
    uv_pipe_init(pool->loop, &w->in, 0);
    uv_pipe_init(pool->loop, &w->out, 0);
    uv_pipe_init(pool->loop, &w->err, 0);
    uv_timer_init(pool->loop, &w->timer);
    w->in.data = w->out.data = w->err.data = w->timer.data = w;
    w->open_handles = 4;

    char device[64];
    if (strcmp(pool->device_kind, "cpu") == 0)
        snprintf(device, sizeof device, "cpu");
    else
        snprintf(device, sizeof device, "%s:%d", pool->device_kind, pool->device_of[slot]);
    char *args[] = {pool->python, "-u", pool->script, "--device", device, NULL};
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = (uv_stream_t *)&w->in;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&w->out;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&w->err;
    char **env = build_env(pool, slot);
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.file = pool->python;
    o.args = args;
    o.env = env;
    o.stdio = stdio;
    o.stdio_count = 3;
    o.flags = UV_PROCESS_DETACHED;
    o.exit_cb = on_worker_exit;
    w->proc.data = w;
    int rc = uv_spawn(pool->loop, &w->proc, &o);
    free_env(env);
    if (rc != 0) {
        akg_fail(err, errlen, AKG_ESPAWN, "cannot start the harness with %s: %s", pool->python,
                 uv_strerror(rc));
        /* uv_spawn failures still need the process handle closed. */
        w->open_handles++;
        uv_close((uv_handle_t *)&w->proc, on_handle_closed);
        inst_retire(w);
        return AKG_ESPAWN;
    }
    w->open_handles++;
    w->pid = w->proc.pid;
    pool->slots[slot] = w;
    uv_read_start((uv_stream_t *)&w->out, on_alloc, on_stdout);
    uv_read_start((uv_stream_t *)&w->err, on_alloc, on_stderr);
    uv_timer_start(&w->timer, on_timeout, (uint64_t)(pool->startup_timeout_s * 1000), 0);
    return AKG_OK;
}

static void on_timeout(uv_timer_t *t)
{
    proc_inst *w = t->data;
    akg_harness *pool = w->pool;
    if (w->state == W_STARTING) {
        akg_buf msg;
        akg_buf_init(&msg, 1 << 16);
        akg_buf_appendf(&msg,
                        "the harness worker did not start within %.0f s (%s); last stderr lines:",
                        pool->startup_timeout_s, pool->python);
        stderr_tail_text(w, &msg);
        inst_kill(w);
        inst_retire(w);
        fail_queue(pool, "crash", msg.data);
        akg_buf_free(&msg);
        return;
    }
    akg_harness_req *cur = w->current;
    w->current = NULL;
    inst_kill(w);
    inst_retire(w);
    if (cur) {
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(cur->request, "op"));
        char detail[256];
        snprintf(detail, sizeof detail,
                 "%s did not finish within %.1f s; the worker was killed and restarted",
                 op ? op : "the request", cur->timeout_s);
        answer_error(cur, "timeout", detail);
    }
    if (!pool->closing)
        pump(pool);
}

/* A profile times on an idle device: it runs alone there. */
static int is_exclusive(const akg_harness_req *r)
{
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(r->request, "op"));
    return op && strcmp(op, "profile") == 0;
}

/* Whether the queue's head may start on slot s now: not while a profile runs on s's device, and
 * a profile only once nothing else runs there. */
static int may_start_on(const akg_harness *pool, int s, const akg_harness_req *r)
{
    for (int t = 0; t < pool->nworkers; t++) {
        const proc_inst *w = pool->slots[t];
        if (t == s || !w || w->state != W_BUSY || !w->current ||
            pool->device_of[t] != pool->device_of[s])
            continue;
        if (is_exclusive(w->current) || is_exclusive(r))
            return 0;
    }
    return 1;
}

/* The idle slot that may take r and last took a request of r's kernel, or -1. */
static int kernel_slot(const akg_harness *pool, const akg_harness_req *r)
{
    const char *kernel = cJSON_GetStringValue(cJSON_GetObjectItem(r->request, "kernel"));
    if (!kernel)
        return -1;
    for (int s = 0; s < pool->nworkers; s++) {
        const proc_inst *w = pool->slots[s];
        if (w && w->state == W_IDLE && w->last_kernel && strcmp(w->last_kernel, kernel) == 0 &&
            may_start_on(pool, s, r))
            return s;
    }
    return -1;
}

static void pump(akg_harness *pool)
{
    if (pool->closing)
        return;
    for (int i = 0; i < pool->nworkers && pool->queue_head; i++) {
        /* the worker holding the head's kernel first, then the slots in order */
        int pref = kernel_slot(pool, pool->queue_head);
        int s = pref >= 0 ? pref : i;
        if (pref >= 0)
            i--; /* slot i is still to be looked at for the next request */
        proc_inst *w = pool->slots[s];
        if (!w) {
            char err[512];
            if (inst_spawn(pool, s, err, sizeof err) != AKG_OK) {
                fail_queue(pool, "crash", err);
                return;
            }
            continue;
        }
        if (w->state != W_IDLE || !may_start_on(pool, s, pool->queue_head))
            continue;
        akg_harness_req *r = queue_pop(pool);
        const char *kernel = cJSON_GetStringValue(cJSON_GetObjectItem(r->request, "kernel"));
        if (kernel) {
            free(w->last_kernel);
            w->last_kernel = akg_strdup(kernel);
        }
        r->started_ms = akg_now_ms();
        r->worker = s;
        w->current = r;
        r->inst = w;
        w->state = W_BUSY;
        if (send_line(w, r->request) != AKG_OK) {
            w->current = NULL;
            inst_kill(w);
            inst_retire(w);
            answer_error(r, "crash", "could not write to the harness worker");
            continue;
        }
        uv_timer_start(&w->timer, on_timeout, (uint64_t)(r->timeout_s * 1000.0), 0);
    }
}

/* ---------- public API ---------- */

int akg_harness_new(uv_loop_t *loop, const akg_harness_options *opts, akg_harness **out, char *err,
                    size_t errlen)
{
    if (!opts->python || !opts->worker_script)
        return akg_fail(err, errlen, AKG_EINVAL, "harness: interpreter and worker script needed");
    if (access(opts->worker_script, R_OK) != 0)
        return akg_fail(err, errlen, AKG_ENOTFOUND, "harness worker not found: %s",
                        opts->worker_script);
    akg_harness *p = calloc(1, sizeof *p);
    if (!p)
        return AKG_ENOMEM;
    p->loop = loop;
    p->python = akg_strdup(opts->python);
    p->script = akg_strdup(opts->worker_script);
    p->device_kind = akg_strdup(opts->device_kind ? opts->device_kind : "cpu");
    p->sandbox_json = opts->sandbox_json ? akg_strdup(opts->sandbox_json) : NULL;
    p->nworkers = opts->workers > 0 ? opts->workers : 1;
    p->threads = opts->threads > 0 ? opts->threads : 1;
    p->startup_timeout_s = opts->startup_timeout_s > 0 ? opts->startup_timeout_s : 120;
    p->log = opts->log;
    p->log_user = opts->log_user;
    p->slots = calloc((size_t)p->nworkers, sizeof *p->slots);
    p->device_of = calloc((size_t)p->nworkers, sizeof *p->device_of);
    p->next_id = 1;
    for (int i = 0; p->device_of && i < p->nworkers; i++)
        p->device_of[i] = strcmp(p->device_kind, "cpu") == 0 ? 0
                          : opts->device_ids                 ? opts->device_ids[i]
                                                             : i;
    if (!p->slots || !p->device_of) {
        free(p->slots);
        free(p->device_of);
        free(p->python);
        free(p->script);
        free(p->device_kind);
        free(p->sandbox_json);
        free(p);
        return AKG_ENOMEM;
    }
    *out = p;
    return AKG_OK;
}

int akg_harness_submit(akg_harness *pool, cJSON *request, double timeout_s, akg_harness_cb cb,
                       void *user, akg_harness_req **out)
{
    if (pool->closing) {
        cJSON_Delete(request);
        return AKG_ECANCELED;
    }
    akg_harness_req *r = calloc(1, sizeof *r);
    if (!r) {
        cJSON_Delete(request);
        return AKG_ENOMEM;
    }
    r->pool = pool;
    r->request = request;
    r->id = pool->next_id++;
    r->timeout_s = timeout_s > 0 ? timeout_s : 300;
    r->cb = cb;
    r->user = user;
    r->submitted_ms = akg_now_ms();
    r->worker = -1;
    cJSON_DeleteItemFromObject(request, "id");
    cJSON_AddNumberToObject(request, "id", (double)r->id);
    r->prev = pool->queue_tail;
    if (pool->queue_tail)
        pool->queue_tail->next = r;
    else
        pool->queue_head = r;
    pool->queue_tail = r;
    if (out)
        *out = r;
    pump(pool);
    return AKG_OK;
}

void akg_harness_set_progress(akg_harness_req *req, akg_harness_cb progress, void *user)
{
    req->progress = progress;
    req->progress_user = user;
}

void akg_harness_cancel(akg_harness_req *req)
{
    akg_harness *pool = req->pool;
    proc_inst *w = req->inst;
    if (w && w->current == req) {
        w->current = NULL;
        inst_kill(w);
        inst_retire(w);
        answer_error(req, "cancelled", "cancelled");
        pump(pool);
        return;
    }
    queue_remove(pool, req);
    answer_error(req, "cancelled", "cancelled");
}

const cJSON *akg_harness_ready_info(const akg_harness *pool)
{
    return pool->ready_info;
}

void akg_harness_close(akg_harness *pool, void (*close_cb)(void *), void *user)
{
    pool->closing = 1;
    pool->close_cb = close_cb;
    pool->close_user = user;
    fail_queue(pool, "cancelled", "the engine is shutting down");
    /* Hold one reference so freeing cannot happen inside this loop. */
    pool->live_insts++;
    for (int s = 0; s < pool->nworkers; s++) {
        proc_inst *w = pool->slots[s];
        if (!w)
            continue;
        akg_harness_req *cur = w->current;
        w->current = NULL;
        if (cur)
            answer_error(cur, "cancelled", "the engine is shutting down");
        if (!cur && w->state == W_IDLE && w->pid > 0 && !w->killed) {
            /* End of input: the worker returns, cleans up and exits (its exit callback retires
             * it); killed if it has not within the grace period. */
            if (pool->slots[w->slot] == w)
                pool->slots[w->slot] = NULL;
            w->state = W_DEAD;
            close_if_open((uv_handle_t *)&w->in);
            uv_timer_stop(&w->timer);
            uv_timer_start(&w->timer, on_close_grace, CLOSE_GRACE_MS, 0);
            continue;
        }
        inst_kill(w);
        inst_retire(w);
    }
    pool->live_insts--;
    if (pool->live_insts == 0) {
        cJSON_Delete(pool->ready_info);
        free(pool->python);
        free(pool->script);
        free(pool->device_kind);
        free(pool->sandbox_json);
        free(pool->slots);
        free(pool->device_of);
        free(pool);
        if (close_cb)
            close_cb(user);
    }
}

int akg_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

const char *akg_cpu_blas_coretype(void)
{
    static int done;
    static const char *core;
    if (done)
        return core;
    done = 1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return NULL;
    char line[8192];
    int amd = 0, avx2 = 0, avx512 = 0, fma = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "vendor_id", 9) == 0 && strstr(line, "AuthenticAMD"))
            amd = 1;
        if (strncmp(line, "flags", 5) == 0) {
            avx2 = strstr(line, " avx2") != NULL;
            fma = strstr(line, " fma") != NULL;
            avx512 =
                strstr(line, " avx512f") && strstr(line, " avx512bw") && strstr(line, " avx512vl");
            break;
        }
    }
    fclose(f);
    if (avx512)
        core = "SkylakeX";
    else if (avx2 && fma)
        core = amd ? "Zen" : "Haswell";
    return core;
}
