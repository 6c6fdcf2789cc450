/*
 * child.c: one short-lived child process with captured output and a deadline.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/child.h"

/* what a child may print before the rest is dropped */
#define OUTPUT_CAP ((size_t)1 << 20)

struct akg_child {
    uv_process_t proc;
    uv_pipe_t out, err;
    uv_timer_t timer;
    int open_handles;
    int exited, out_done; /* out_done counts closed pipes, 2 when both ended */
    int timed_out, cancelled;
    int64_t exit_status;
    int term_signal;
    akg_buf output;
    int truncated;
    akg_child_cb cb;
    void *user;
    int delivered;
};

static void on_closed(uv_handle_t *h)
{
    akg_child *c = h->data;
    if (--c->open_handles == 0) {
        akg_buf_free(&c->output);
        free(c);
    }
}

static void maybe_finish(akg_child *c)
{
    if (!c->exited || c->out_done < 2 || c->delivered)
        return;
    c->delivered = 1;
    uv_timer_stop(&c->timer);
    if (c->truncated)
        akg_buf_puts(&c->output, "\n[output truncated at 1 MiB]\n");
    /* a failed append (out of memory) leaves no partial text to pass for the whole */
    const char *text = akg_buf_status(&c->output) ? "[the output was lost: out of memory]"
                       : c->output.data           ? c->output.data
                                                  : "";
    akg_child_result r = {1, (int)c->exit_status, c->term_signal, c->timed_out, c->cancelled, text};
    if (c->cb)
        c->cb(&r, c->user);
    uv_close((uv_handle_t *)&c->proc, on_closed);
    uv_close((uv_handle_t *)&c->out, on_closed);
    uv_close((uv_handle_t *)&c->err, on_closed);
    uv_close((uv_handle_t *)&c->timer, on_closed);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    akg_child *c = p->data;
    c->exited = 1;
    c->exit_status = status;
    c->term_signal = sig;
    maybe_finish(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    akg_child *c = s->data;
    if (n > 0) {
        /* keep the first OUTPUT_CAP bytes; the buffer's limit leaves room for the note */
        size_t room = c->output.len < OUTPUT_CAP ? OUTPUT_CAP - c->output.len : 0;
        size_t take = (size_t)n < room ? (size_t)n : room;
        if (take < (size_t)n)
            c->truncated = 1;
        if (take)
            akg_buf_append(&c->output, buf->base,
                           take); /* a failure is sticky: checked at the end */
    } else if (n < 0) {
        c->out_done++;
        uv_read_stop(s);
    }
    free(buf->base);
    if (n < 0)
        maybe_finish(c);
}

static void kill_group(akg_child *c)
{
    if (c->proc.pid > 0 && !c->exited) {
        uv_kill(-c->proc.pid, SIGKILL);
        uv_kill(c->proc.pid, SIGKILL);
    }
}

static void on_deadline(uv_timer_t *t)
{
    akg_child *c = t->data;
    c->timed_out = 1;
    kill_group(c);
}

int akg_child_run(uv_loop_t *loop, char *const argv[], const char *cwd, double timeout_s,
                  akg_child_cb cb, void *user, akg_child **out)
{
    akg_child *c = calloc(1, sizeof *c);
    if (!c)
        return AKG_ENOMEM;
    akg_buf_init(&c->output, OUTPUT_CAP + 64);
    c->cb = cb;
    c->user = user;
    uv_pipe_init(loop, &c->out, 0);
    uv_pipe_init(loop, &c->err, 0);
    uv_timer_init(loop, &c->timer);
    c->out.data = c->err.data = c->timer.data = c->proc.data = c;
    c->open_handles = 4;
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&c->out;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&c->err;
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.file = argv[0];
    o.args = (char **)argv;
    o.cwd = cwd;
    o.stdio = stdio;
    o.stdio_count = 3;
    o.flags = UV_PROCESS_DETACHED;
    o.exit_cb = on_exit_cb;
    int rc = uv_spawn(loop, &c->proc, &o);
    if (rc != 0) {
        c->cb = NULL;
        c->delivered = 1;
        uv_close((uv_handle_t *)&c->proc, on_closed);
        uv_close((uv_handle_t *)&c->out, on_closed);
        uv_close((uv_handle_t *)&c->err, on_closed);
        uv_close((uv_handle_t *)&c->timer, on_closed);
        return AKG_ESPAWN;
    }
    uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&c->err, on_alloc, on_read);
    uv_timer_start(&c->timer, on_deadline, (uint64_t)(timeout_s * 1000), 0);
    if (out)
        *out = c;
    return AKG_OK;
}

void akg_child_cancel(akg_child *c)
{
    c->cancelled = 1;
    kill_group(c);
}
