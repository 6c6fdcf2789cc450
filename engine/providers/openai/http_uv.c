/*
 * http_uv.c: libcurl's multi interface on a libuv loop (see http_uv.h).
 *
 * The pattern: curl owns the protocol and tells us, through two callbacks,
 * what to wait for. CURLMOPT_SOCKETFUNCTION says "watch socket s for IN/OUT"
 * or "stop watching it": we keep one uv_poll_t per socket (its context is
 * attached with curl_multi_assign). CURLMOPT_TIMERFUNCTION says "call me back
 * in N ms" (or "never"): one uv_timer_t. Both callbacks only arm libuv
 * handles; curl itself runs when libuv reports, from curl_multi_socket_action,
 * and then we drain curl_multi_info_read for finished transfers.
 *
 * curl forbids adding or removing easy handles from inside its own callbacks
 * (the write and header callbacks run inside curl_multi_socket_action), yet a
 * user may cancel a request while it is handed a streamed chunk. So while curl
 * is on the stack (in_curl), an abort only marks the transfer, its write
 * callback refuses further bytes, and the transfer is reaped when
 * curl_multi_socket_action returns; a start made there is added then too.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "akg/akg.h"
#include "http_uv.h"

typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    akg_http *http;
    struct sock_ctx *prev, *next;
} sock_ctx;

struct akg_http_xfer {
    akg_http *http;
    CURL *easy;
    struct curl_slist *headers;
    uv_timer_t timer; /* the first-byte, then the idle timeout */
    long first_byte_timeout_ms, idle_timeout_ms;
    bool got_byte;
    bool added;           /* curl_multi_add_handle done */
    bool abort_requested; /* reap it; no callback */
    bool cb_stopped;      /* on_body returned false */
    bool in_done;         /* on_done is running: freed when it returns */
    akg_http_end forced;  /* our timeout, else AKG_HTTP_COMPLETE */
    double retry_after_s;
    double start_ms;
    char errbuf[CURL_ERROR_SIZE];
    bool (*on_body)(const char *data, size_t len, void *user);
    void (*on_done)(const akg_http_result *result, void *user);
    void *user;
    struct akg_http_xfer *prev, *next;
};

struct akg_http {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    int open_handles; /* the timer, the polls, the transfers' timers */
    int in_curl;      /* curl_multi_socket_action is on the stack */
    int in_dispatch;
    bool closing, multi_released;
    void (*closed)(void *user);
    void *closed_user;
    akg_http_xfer *xfers;
    sock_ctx *socks;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- handles and their release ------------------------------------------ */

static void http_maybe_free(akg_http *h)
{
    if (!h->closing || h->open_handles > 0 || h->in_dispatch || h->in_curl)
        return;
    void (*closed)(void *) = h->closed;
    void *user = h->closed_user;
    free(h);
    if (closed)
        closed(user);
}

static void on_handle_closed(uv_handle_t *handle)
{
    akg_http *h = handle->data;
    h->open_handles--;
    http_maybe_free(h);
}

static void on_sock_closed(uv_handle_t *handle)
{
    sock_ctx *c = handle->data;
    akg_http *h = c->http;
    free(c);
    h->open_handles--;
    http_maybe_free(h);
}

static void sock_close(sock_ctx *c)
{
    akg_http *h = c->http;
    if (c->prev)
        c->prev->next = c->next;
    else
        h->socks = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->poll, on_sock_closed);
}

static void on_xfer_timer_closed(uv_handle_t *handle)
{
    akg_http_xfer *x = handle->data;
    akg_http *h = x->http;
    free(x);
    h->open_handles--;
    http_maybe_free(h);
}

/* Unlinks x, takes it off the multi handle and frees it (its timer closes later). */
static void xfer_free(akg_http_xfer *x)
{
    akg_http *h = x->http;
    if (x->prev)
        x->prev->next = x->next;
    else
        h->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    if (x->easy) {
        if (x->added && !h->multi_released)
            curl_multi_remove_handle(h->multi, x->easy);
        curl_easy_cleanup(x->easy);
        x->easy = NULL;
    }
    curl_slist_free_all(x->headers);
    x->headers = NULL;
    uv_timer_stop(&x->timer);
    uv_close((uv_handle_t *)&x->timer, on_xfer_timer_closed);
}

/* ---- the end of a transfer ---------------------------------------------- */

static akg_http_end end_of(akg_http_xfer *x, CURLcode code)
{
    if (x->forced != AKG_HTTP_COMPLETE)
        return x->forced;
    switch (code) {
    case CURLE_OK:
        return AKG_HTTP_COMPLETE;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return AKG_HTTP_CONNECT_FAILED;
    case CURLE_OPERATION_TIMEDOUT: {
        curl_off_t connected = 0;
        curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connected);
        return connected > 0 ? AKG_HTTP_TOTAL_TIMEOUT : AKG_HTTP_CONNECT_TIMEOUT;
    }
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
        return AKG_HTTP_TLS_FAILED;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return AKG_HTTP_CUT;
    case CURLE_WRITE_ERROR:
        if (x->cb_stopped)
            return AKG_HTTP_ABORTED_CB;
        return AKG_HTTP_OTHER_ERROR;
    default:
        return AKG_HTTP_OTHER_ERROR;
    }
}

static void xfer_finish(akg_http_xfer *x, CURLcode code)
{
    akg_http_result r;
    memset(&r, 0, sizeof r);
    r.end = end_of(x, code);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r.status);
    char *ctype = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ctype);
    r.content_type = ctype ? ctype : "";
    r.retry_after_s = x->retry_after_s;
    if (r.end == AKG_HTTP_COMPLETE)
        r.curl_error = "";
    else if (x->forced != AKG_HTTP_COMPLETE)
        r.curl_error = "no byte arrived in time";
    else
        r.curl_error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(code);
    r.elapsed_ms = akg_now_ms() - x->start_ms;
    uv_timer_stop(&x->timer);
    x->in_done = true;
    if (x->on_done)
        x->on_done(&r, x->user);
    x->in_done = false;
    xfer_free(x);
}

static void check_multi_info(akg_http *h)
{
    CURLMsg *msg;
    int left;
    while (!h->multi_released && (msg = curl_multi_info_read(h->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        akg_http_xfer *x = NULL;
        CURLcode code = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (!x)
            continue;
        if (x->abort_requested)
            xfer_free(x);
        else
            xfer_finish(x, code);
    }
}

static void release_multi(akg_http *h)
{
    if (h->multi_released)
        return;
    h->multi_released = true;
    curl_multi_cleanup(h->multi);
    h->multi = NULL;
    while (h->socks)
        sock_close(h->socks);
    uv_timer_stop(&h->timer);
    uv_close((uv_handle_t *)&h->timer, on_handle_closed);
}

/* After curl ran: finished transfers, deferred aborts and adds, a deferred close. */
static void dispatch(akg_http *h)
{
    h->in_dispatch++;
    check_multi_info(h);
    for (akg_http_xfer *x = h->xfers, *next; x; x = next) {
        next = x->next;
        if (x->abort_requested && !x->in_done) {
            xfer_free(x);
        } else if (!x->added && !h->closing) {
            x->added = true;
            curl_multi_add_handle(h->multi, x->easy);
        }
    }
    h->in_dispatch--;
    if (h->closing && !h->in_dispatch && !h->in_curl) {
        release_multi(h);
        http_maybe_free(h);
    }
}

/* ---- curl's two callbacks and the libuv handles they arm ---------------- */

static void on_poll(uv_poll_t *poll, int status, int events)
{
    sock_ctx *c = poll->data;
    akg_http *h = c->http;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    int running = 0;
    h->in_curl++;
    curl_multi_socket_action(h->multi, c->fd, flags, &running);
    h->in_curl--;
    dispatch(h);
}

static void on_multi_timer(uv_timer_t *t)
{
    akg_http *h = t->data;
    int running = 0;
    h->in_curl++;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    h->in_curl--;
    dispatch(h);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    akg_http *h = userp;
    sock_ctx *c = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (c) {
            uv_poll_stop(&c->poll);
            sock_close(c);
            curl_multi_assign(h->multi, fd, NULL);
        }
        return 0;
    }
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return -1;
        if (uv_poll_init_socket(h->loop, &c->poll, fd) != 0) {
            free(c);
            return -1;
        }
        c->fd = fd;
        c->http = h;
        c->poll.data = c;
        c->next = h->socks;
        if (h->socks)
            h->socks->prev = c;
        h->socks = c;
        h->open_handles++;
        curl_multi_assign(h->multi, fd, c);
    }
    int events = 0;
    if (what & CURL_POLL_IN)
        events |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        events |= UV_WRITABLE;
    uv_poll_start(&c->poll, events, on_poll);
    return 0;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    akg_http *h = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&h->timer);
    else
        uv_timer_start(&h->timer, on_multi_timer, (uint64_t)timeout_ms, 0);
    return 0;
}

/* ---- a transfer's own callbacks ----------------------------------------- */

static void on_xfer_timeout(uv_timer_t *t)
{
    akg_http_xfer *x = t->data;
    if (x->abort_requested || x->in_done)
        return;
    x->forced = x->got_byte ? AKG_HTTP_IDLE_TIMEOUT : AKG_HTTP_FIRST_BYTE_TIMEOUT;
    xfer_finish(x, CURLE_OPERATION_TIMEDOUT);
}

static void saw_bytes(akg_http_xfer *x)
{
    x->got_byte = true;
    if (x->idle_timeout_ms > 0)
        uv_timer_start(&x->timer, on_xfer_timeout, (uint64_t)x->idle_timeout_ms, 0);
    else
        uv_timer_stop(&x->timer);
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3); -1 when unreadable. */
static double parse_retry_after(const char *value, size_t len)
{
    char text[128];
    while (len && isspace((unsigned char)*value))
        value++, len--;
    while (len && isspace((unsigned char)value[len - 1]))
        len--;
    if (len == 0 || len >= sizeof text)
        return -1;
    memcpy(text, value, len);
    text[len] = '\0';
    bool digits = true;
    for (size_t i = 0; i < len; i++)
        digits = digits && isdigit((unsigned char)text[i]);
    if (digits)
        return atof(text);
    time_t when = curl_getdate(text, NULL);
    if (when < 0)
        return -1;
    double s = difftime(when, time(NULL));
    return s > 0 ? s : 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
    akg_http_xfer *x = userp;
    size_t len = size * nmemb;
    if (!x->got_byte)
        saw_bytes(x);
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0)
        x->retry_after_s = -1; /* a new response (after a 100 Continue) */
    static const char name[] = "retry-after:";
    if (len > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0)
        x->retry_after_s = parse_retry_after(data + sizeof name - 1, len - (sizeof name - 1));
    return x->abort_requested ? 0 : len;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userp)
{
    akg_http_xfer *x = userp;
    size_t len = size * nmemb;
    if (x->abort_requested)
        return 0;
    saw_bytes(x);
    if (x->on_body && !x->on_body(data, len, x->user)) {
        x->cb_stopped = true;
        return 0;
    }
    return x->abort_requested ? 0 : len;
}

/* ---- the public functions ------------------------------------------------ */

int akg_http_new(uv_loop_t *loop, akg_http **out, char *err, size_t errlen)
{
    *out = NULL;
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK)
        return akg_fail(err, errlen, AKG_EIO, "libcurl could not start: %s",
                        curl_easy_strerror(curl_init_rc));
    akg_http *h = calloc(1, sizeof *h);
    if (!h)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    h->loop = loop;
    h->multi = curl_multi_init();
    if (!h->multi) {
        free(h);
        return akg_fail(err, errlen, AKG_ENOMEM, "libcurl could not create a multi handle");
    }
    uv_timer_init(loop, &h->timer);
    h->timer.data = h;
    h->open_handles = 1;
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    *out = h;
    return AKG_OK;
}

void akg_http_close(akg_http *h, void (*closed)(void *user), void *user)
{
    if (!h || h->closing)
        return;
    h->closing = true;
    h->closed = closed;
    h->closed_user = user;
    for (akg_http_xfer *x = h->xfers, *next; x; x = next) {
        next = x->next;
        if (h->in_curl || x->in_done)
            x->abort_requested = true;
        else
            xfer_free(x);
    }
    if (!h->in_curl && !h->in_dispatch)
        release_multi(h); /* else dispatch does it */
}

/* "localhost,127.0.0.1,::1" after the environment's no_proxy: a local server is never reached
 * through a proxy the environment names for the outside world. */
static void no_proxy_list(char *buf, size_t len)
{
    const char *env = getenv("NO_PROXY");
    if (!env)
        env = getenv("no_proxy");
    if (env && strcmp(env, "*") == 0)
        snprintf(buf, len, "*");
    else
        snprintf(buf, len, "%s%slocalhost,127.0.0.1,::1", env ? env : "", env && *env ? "," : "");
}

int akg_http_start(akg_http *h, const akg_http_request *req, akg_http_xfer **out, char *err,
                   size_t errlen)
{
    if (out)
        *out = NULL;
    if (h->closing)
        return akg_fail(err, errlen, AKG_ECANCELED, "the HTTP client is closing");
    akg_http_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    x->easy = curl_easy_init();
    if (!x->easy) {
        free(x);
        return akg_fail(err, errlen, AKG_ENOMEM, "libcurl could not create a transfer");
    }
    x->http = h;
    x->retry_after_s = -1;
    x->first_byte_timeout_ms = req->first_byte_timeout_ms;
    x->idle_timeout_ms = req->idle_timeout_ms;
    x->on_body = req->on_body;
    x->on_done = req->on_done;
    x->user = req->user;
    x->forced = AKG_HTTP_COMPLETE;
    bool ok = true;
    for (const char *const *hd = req->headers; hd && *hd && ok; hd++) {
        struct curl_slist *n = curl_slist_append(x->headers, *hd);
        ok = n != NULL;
        if (n)
            x->headers = n;
    }
    /* no "Expect: 100-continue" round trip before a large body */
    struct curl_slist *n = ok ? curl_slist_append(x->headers, "Expect:") : NULL;
    if (!n) {
        curl_slist_free_all(x->headers);
        curl_easy_cleanup(x->easy);
        free(x);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    }
    x->headers = n;
    CURL *e = x->easy;
    char no_proxy[1024];
    no_proxy_list(no_proxy, sizeof no_proxy);
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* never carry a key to another host */
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOPROXY, no_proxy);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, req->tls_verify ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, req->tls_verify ? 2L : 0L);
    if (req->ca_bundle && *req->ca_bundle)
        curl_easy_setopt(e, CURLOPT_CAINFO, req->ca_bundle);
    if (req->connect_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
    if (req->total_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->total_timeout_ms);
    if (req->method && strcmp(req->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, req->body ? req->body : "");
    } else if (req->method && strcmp(req->method, "GET") != 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
    }
    uv_timer_init(h->loop, &x->timer);
    x->timer.data = x;
    h->open_handles++;
    x->start_ms = akg_now_ms();
    x->next = h->xfers;
    if (h->xfers)
        h->xfers->prev = x;
    h->xfers = x;
    if (x->first_byte_timeout_ms > 0)
        uv_timer_start(&x->timer, on_xfer_timeout, (uint64_t)x->first_byte_timeout_ms, 0);
    if (!h->in_curl) {
        /* curl arms its timer at 0 ms: the transfer runs from a later loop iteration */
        x->added = true;
        CURLMcode mc = curl_multi_add_handle(h->multi, e);
        if (mc != CURLM_OK) {
            x->added = false;
            xfer_free(x);
            return akg_fail(err, errlen, AKG_EIO, "libcurl refused the transfer: %s",
                            curl_multi_strerror(mc));
        }
    }
    if (out)
        *out = x;
    return AKG_OK;
}

void akg_http_abort(akg_http_xfer *x)
{
    if (!x || x->abort_requested)
        return;
    if (x->http->in_curl || x->in_done)
        x->abort_requested = true;
    else
        xfer_free(x);
}
