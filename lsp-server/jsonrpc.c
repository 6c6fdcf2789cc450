/* jsonrpc.c: see jsonrpc.h. */
#include "jsonrpc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define RPC_OUTPUT_CAP ((size_t)256 << 20)
#define RPC_READ_CHUNK ((size_t)64 << 10)
/* How long a closing transport waits for the peer to take queued output. A
 * client that stopped reading (common once it has sent `exit`) must not keep
 * the server alive. */
#define RPC_CLOSE_FLUSH_MS 500

static const char header_name[] = "content-length:";

/* ---- framing ----------------------------------------------------------- */

void akg_rpc_reader_init(akg_rpc_reader *r, size_t max_message, akg_rpc_message_cb on_message,
                         akg_rpc_framing_cb on_framing_error, void *user)
{
    memset(r, 0, sizeof *r);
    r->max_message = max_message ? max_message : AKG_RPC_DEFAULT_MAX_MESSAGE;
    akg_buf_init(&r->pending, r->max_message + 2 * AKG_RPC_MAX_HEADER);
    r->on_message = on_message;
    r->on_framing_error = on_framing_error;
    r->user = user;
}

void akg_rpc_reader_free(akg_rpc_reader *r)
{
    akg_buf_free(&r->pending);
}

size_t akg_rpc_reader_pending(const akg_rpc_reader *r)
{
    return r->pending.len + r->skip_left;
}

/* Case-insensitive search for "content-length:" in s[from..len). */
static size_t find_header_name(const char *s, size_t len, size_t from)
{
    size_t n = sizeof header_name - 1;
    for (size_t i = from; i + n <= len; i++) {
        size_t k = 0;
        while (k < n && tolower((unsigned char)s[i + k]) == header_name[k])
            k++;
        if (k == n)
            return i;
    }
    return len;
}

size_t akg_rpc_find_resync(const char *body, size_t len)
{
    return find_header_name(body, len, 1);
}

static size_t find_header_end(const char *s, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if (s[i] == '\r' && s[i + 1] == '\n' && s[i + 2] == '\r' && s[i + 3] == '\n')
            return i;
    return len;
}

/* Parses the header block s[0..len). Returns 1 with *content_length set when
 * every line is "Name: value" and Content-Length is a plain number; 0 when it
 * is malformed, with *good_start the offset of a Content-Length line to retry
 * from (len if none). */
static int parse_header_block(const char *s, size_t len, size_t *content_length, size_t *good_start,
                              int *too_big_number)
{
    int have_length = 0, well_formed = 1;
    *too_big_number = 0;
    size_t line = 0;
    while (line < len) {
        size_t eol = line;
        while (eol < len && !(s[eol] == '\r' && eol + 1 < len && s[eol + 1] == '\n'))
            eol++;
        const char *colon = memchr(s + line, ':', eol - line);
        if (!colon) {
            well_formed = 0;
        } else if (eol - line >= sizeof header_name - 1 &&
                   find_header_name(s, line + sizeof header_name - 1, line) == line) {
            const char *v = s + line + sizeof header_name - 1;
            const char *end = s + eol;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
            if (v == end)
                well_formed = 0;
            size_t n = 0;
            for (const char *p = v; p < end; p++) {
                if (!isdigit((unsigned char)*p)) {
                    well_formed = 0;
                    break;
                }
                if (n > (SIZE_MAX - 9) / 10) {
                    *too_big_number = 1;
                    n = SIZE_MAX;
                    break;
                }
                n = n * 10 + (size_t)(*p - '0');
            }
            if (have_length && n != *content_length)
                well_formed = 0;
            *content_length = n;
            have_length = 1;
        }
        line = eol + 2;
    }
    if (well_formed && have_length)
        return 1;
    *good_start = find_header_name(s, len, 1);
    return 0;
}

static void framing_error(akg_rpc_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void framing_error(akg_rpc_reader *r, int code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    akg_lsp_log_warn("framing: %s", msg);
    if (r->on_framing_error)
        r->on_framing_error(r->user, code, msg);
}

/* Handles as many whole messages as pending holds. */
static void reader_drain(akg_rpc_reader *r)
{
    for (;;) {
        if (r->skip_left) {
            size_t n = r->skip_left < r->pending.len ? r->skip_left : r->pending.len;
            akg_buf_consume(&r->pending, n);
            r->skip_left -= n;
            if (r->skip_left)
                return;
        }
        /* Blank lines between messages are harmless; drop them. */
        size_t lead = 0;
        while (lead < r->pending.len &&
               (r->pending.data[lead] == '\r' || r->pending.data[lead] == '\n'))
            lead++;
        if (lead)
            akg_buf_consume(&r->pending, lead);
        if (!r->pending.len)
            return;

        const char *s = r->pending.data;
        size_t len = r->pending.len;
        size_t hend = find_header_end(s, len);
        if (hend == len) {
            if (len <= AKG_RPC_MAX_HEADER)
                return; /* a header still arriving */
            size_t next = find_header_name(s, len, 1);
            if (next < len) {
                framing_error(r, AKG_RPC_PARSE_ERROR, "skipped %zu bytes that were not a header",
                              next);
                akg_buf_consume(&r->pending, next);
                continue;
            }
            /* Keep a tail that could be the start of the next header name. */
            size_t keep = sizeof header_name - 2;
            framing_error(r, AKG_RPC_PARSE_ERROR, "skipped %zu bytes that were not a header",
                          len - keep);
            akg_buf_consume(&r->pending, len - keep);
            return;
        }
        size_t length = 0, good = 0;
        int too_big_number = 0;
        if (!parse_header_block(s, hend, &length, &good, &too_big_number)) {
            if (good < hend) {
                framing_error(r, AKG_RPC_PARSE_ERROR, "malformed header; skipped %zu bytes", good);
                akg_buf_consume(&r->pending, good);
            } else {
                framing_error(r, AKG_RPC_PARSE_ERROR,
                              "header without a valid Content-Length; skipped %zu bytes", hend + 4);
                akg_buf_consume(&r->pending, hend + 4);
            }
            continue;
        }
        if (too_big_number) {
            framing_error(
                r, AKG_RPC_INVALID_REQUEST,
                "Content-Length does not fit in memory; the stream cannot be resynchronised");
            r->failed = 1;
            r->pending.len = 0;
            return;
        }
        if (length > r->max_message) {
            framing_error(r, AKG_RPC_INVALID_REQUEST,
                          "message of %zu bytes is over the %zu-byte limit; skipped", length,
                          r->max_message);
            akg_buf_consume(&r->pending, hend + 4);
            r->skip_left = length;
            continue;
        }
        if (r->pending.len - (hend + 4) < length)
            return; /* the body is still arriving */
        akg_buf_consume(&r->pending, hend + 4);
        size_t used = length;
        if (r->on_message)
            used = r->on_message(r->user, r->pending.data, length);
        if (used == 0 || used > length)
            used = length;
        akg_buf_consume(&r->pending, used);
    }
}

void akg_rpc_reader_feed(akg_rpc_reader *r, const char *data, size_t len)
{
    while (len && !r->failed) {
        if (r->skip_left && !r->pending.len) {
            size_t n = r->skip_left < len ? r->skip_left : len;
            r->skip_left -= n;
            data += n;
            len -= n;
            continue;
        }
        size_t room = r->pending.limit > r->pending.len ? r->pending.limit - r->pending.len : 0;
        size_t n = len < room ? len : room;
        if (n == 0 || akg_buf_append(&r->pending, data, n) != 0) {
            /* Cannot happen for a well-framed stream: a body never exceeds the
             * cap plus its header. Drop what we hold and start over. */
            framing_error(r, AKG_RPC_INTERNAL_ERROR, "input buffer full; dropped %zu bytes",
                          r->pending.len);
            r->pending.len = 0;
            r->pending.data[0] = '\0';
            continue;
        }
        data += n;
        len -= n;
        reader_drain(r);
    }
}

int akg_rpc_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n + 1;
    }
    return 1;
}

/* ---- transport --------------------------------------------------------- */

struct akg_rpc_transport {
    uv_loop_t *loop;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tty_t tty;
    } in, out;
    akg_rpc_reader reader;
    akg_rpc_eof_cb on_eof;
    void *user;
    size_t queued;
    int reading, eof_reported, closing, open_handles;
    uv_shutdown_t shutdown_req;
    uv_timer_t flush_deadline; /* open only while a close waits for queued output */
    int flush_deadline_open;
    void (*close_cb)(void *user);
    void *close_user;
    char read_buf[RPC_READ_CHUNK];
};

typedef struct {
    uv_write_t req;
    akg_rpc_transport *t;
    size_t len;
    char data[];
} rpc_write;

static int open_stream(uv_loop_t *loop, int fd, int readable, void *h, char *err, size_t errlen)
{
    uv_handle_type type = uv_guess_handle(fd);
    int rc;
    if (type == UV_TTY) {
        rc = uv_tty_init(loop, (uv_tty_t *)h, fd, readable);
    } else if (type == UV_NAMED_PIPE || type == UV_TCP) {
        rc = uv_pipe_init(loop, (uv_pipe_t *)h, 0);
        if (rc == 0) {
            rc = uv_pipe_open((uv_pipe_t *)h, fd);
            if (rc != 0)
                uv_close((uv_handle_t *)h, NULL);
        }
    } else {
        return akg_fail(err, errlen, AKG_EIO,
                        "fd %d is neither a pipe nor a terminal; run akg-lsp from an editor", fd);
    }
    if (rc != 0)
        return akg_fail(err, errlen, AKG_EIO, "fd %d: %s", fd, uv_strerror(rc));
    return AKG_OK;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    akg_rpc_transport *t = h->data;
    buf->base = t->read_buf;
    buf->len = sizeof t->read_buf;
}

static void report_eof(akg_rpc_transport *t)
{
    if (t->eof_reported)
        return;
    t->eof_reported = 1;
    if (t->reading)
        uv_read_stop(&t->in.stream);
    t->reading = 0;
    if (akg_rpc_reader_pending(&t->reader))
        akg_lsp_log_warn("input ended inside a message (%zu bytes unread)",
                         akg_rpc_reader_pending(&t->reader));
    if (t->on_eof)
        t->on_eof(t->user);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    akg_rpc_transport *t = s->data;
    if (nread > 0) {
        if (!t->eof_reported)
            akg_rpc_reader_feed(&t->reader, buf->base, (size_t)nread);
        if (t->reader.failed)
            report_eof(t);
    } else if (nread < 0) {
        if (nread != UV_EOF)
            akg_lsp_log_error("reading input: %s", uv_strerror((int)nread));
        report_eof(t);
    }
}

int akg_rpc_transport_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_message,
                          akg_rpc_message_cb on_message, akg_rpc_framing_cb on_framing_error,
                          akg_rpc_eof_cb on_eof, void *user, akg_rpc_transport **out, char *err,
                          size_t errlen)
{
    akg_rpc_transport *t = calloc(1, sizeof *t);
    if (!t)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    t->loop = loop;
    t->on_eof = on_eof;
    t->user = user;
    akg_rpc_reader_init(&t->reader, max_message, on_message, on_framing_error, user);
    int rc = open_stream(loop, in_fd, 1, &t->in, err, errlen);
    if (rc != AKG_OK) {
        akg_rpc_reader_free(&t->reader);
        free(t);
        return rc;
    }
    t->open_handles = 1;
    t->in.handle.data = t;
    rc = open_stream(loop, out_fd, 0, &t->out, err, errlen);
    if (rc != AKG_OK) {
        /* The input handle is open; it must close through the loop. */
        t->on_eof = NULL;
        akg_rpc_transport_close(t, NULL, NULL);
        return rc;
    }
    t->open_handles = 2;
    t->out.handle.data = t;
    int urc = uv_read_start(&t->in.stream, on_alloc, on_read);
    if (urc != 0) {
        akg_fail(err, errlen, AKG_EIO, "reading fd %d: %s", in_fd, uv_strerror(urc));
        akg_rpc_transport_close(t, NULL, NULL);
        return AKG_EIO;
    }
    t->reading = 1;
    *out = t;
    return AKG_OK;
}

static void on_write(uv_write_t *req, int status)
{
    rpc_write *w = (rpc_write *)req;
    w->t->queued -= w->len;
    if (status < 0 && status != UV_ECANCELED)
        akg_lsp_log_error("writing output: %s", uv_strerror(status));
    free(w);
}

int akg_rpc_transport_send(akg_rpc_transport *t, const char *json, size_t len)
{
    if (t->closing || t->open_handles < 2)
        return AKG_EIO;
    char hdr[48];
    int hn = snprintf(hdr, sizeof hdr, "Content-Length: %zu\r\n\r\n", len);
    size_t total = (size_t)hn + len;
    if (t->queued + total > RPC_OUTPUT_CAP) {
        akg_lsp_log_error("output queue full (%zu bytes); dropped a %zu-byte message", t->queued,
                          len);
        return AKG_ENOMEM;
    }
    rpc_write *w = malloc(sizeof *w + total);
    if (!w)
        return AKG_ENOMEM;
    w->t = t;
    w->len = total;
    memcpy(w->data, hdr, (size_t)hn);
    memcpy(w->data + hn, json, len);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)total);
    int rc = uv_write(&w->req, &t->out.stream, &b, 1, on_write);
    if (rc != 0) {
        akg_lsp_log_error("writing output: %s", uv_strerror(rc));
        free(w);
        return AKG_EIO;
    }
    t->queued += total;
    return AKG_OK;
}

size_t akg_rpc_transport_queued(const akg_rpc_transport *t)
{
    return t->queued;
}

static void on_handle_closed(uv_handle_t *h)
{
    akg_rpc_transport *t = h->data;
    if (--t->open_handles > 0)
        return;
    void (*cb)(void *) = t->close_cb;
    void *user = t->close_user;
    akg_rpc_reader_free(&t->reader);
    free(t);
    if (cb)
        cb(user);
}

/* Ends the output side. Runs from the shutdown callback (queued output
 * delivered, or cancelled because the handle is closing) and from the flush
 * deadline, in either order; the second call finds nothing left to do. */
static void close_output(akg_rpc_transport *t)
{
    if (t->flush_deadline_open) {
        t->flush_deadline_open = 0;
        uv_timer_stop(&t->flush_deadline);
        uv_close((uv_handle_t *)&t->flush_deadline, on_handle_closed);
    }
    if (!uv_is_closing(&t->out.handle))
        uv_close(&t->out.handle, on_handle_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    close_output(req->data);
}

static void on_flush_deadline(uv_timer_t *timer)
{
    akg_rpc_transport *t = timer->data;
    akg_lsp_log_warn("the client did not read %zu bytes of output within %d ms; dropped",
                     t->queued, RPC_CLOSE_FLUSH_MS);
    close_output(t); /* cancels the pending writes and the shutdown */
}

void akg_rpc_transport_close(akg_rpc_transport *t, void (*close_cb)(void *user), void *user)
{
    if (t->closing)
        return;
    t->closing = 1;
    t->close_cb = close_cb;
    t->close_user = user;
    t->on_eof = NULL;
    if (t->reading)
        uv_read_stop(&t->in.stream);
    t->reading = 0;
    int handles = t->open_handles;
    if (handles == 0) {
        akg_rpc_reader_free(&t->reader);
        free(t);
        if (close_cb)
            close_cb(user);
        return;
    }
    uv_close(&t->in.handle, on_handle_closed);
    if (handles < 2)
        return;
    /* Let queued responses reach the client before the pipe closes, but only
     * for a while: what it has not taken by then is dropped. */
    t->shutdown_req.data = t;
    if (uv_shutdown(&t->shutdown_req, &t->out.stream, on_shutdown) != 0) {
        close_output(t);
        return;
    }
    if (t->queued > 0 && uv_timer_init(t->loop, &t->flush_deadline) == 0) {
        t->flush_deadline.data = t;
        t->flush_deadline_open = 1;
        t->open_handles++;
        uv_timer_start(&t->flush_deadline, on_flush_deadline, RPC_CLOSE_FLUSH_MS, 0);
    }
}
