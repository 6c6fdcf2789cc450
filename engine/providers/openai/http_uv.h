/*
 * http_uv.h: HTTP transfers on a libuv loop, through libcurl's multi interface.
 *
 * One akg_http per loop owns a curl multi handle. curl tells us which sockets
 * to watch (CURLMOPT_SOCKETFUNCTION: a uv_poll_t per socket) and when to call
 * it back (CURLMOPT_TIMERFUNCTION: one uv_timer_t); every curl call then comes
 * from a libuv callback (curl_multi_socket_action), so nothing ever blocks the
 * loop. Name resolution runs on curl's own resolver thread.
 *
 * A transfer reports its response bytes as they arrive (on_header, on_body)
 * and ends with exactly one on_done, from a later loop iteration than the one
 * that started it, unless it was aborted with akg_http_abort (then no callback
 * runs). Timeouts: connect (curl), total (curl), and ours, the first-byte
 * timeout (no byte of the response within it) and the idle timeout (no byte
 * for that long once the response started).
 *
 * Lifetime: a transfer's memory is released after its on_done returns or when
 * it is aborted; akg_http_abort may be called from inside on_header/on_body
 * (the abort takes effect when the callback returns) but not on a transfer
 * whose on_done is running. akg_http_close aborts every transfer and releases
 * the multi handle once all its libuv handles are closed.
 */
#ifndef AKG_HTTP_UV_H
#define AKG_HTTP_UV_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

typedef struct akg_http akg_http;
typedef struct akg_http_xfer akg_http_xfer;

typedef enum {
    AKG_HTTP_COMPLETE,        /* a whole response arrived (any HTTP status) */
    AKG_HTTP_CONNECT_FAILED,  /* refused, unreachable, DNS: nothing was sent */
    AKG_HTTP_CONNECT_TIMEOUT, /* no connection within connect_timeout_ms */
    AKG_HTTP_FIRST_BYTE_TIMEOUT,
    AKG_HTTP_IDLE_TIMEOUT,
    AKG_HTTP_TOTAL_TIMEOUT,
    AKG_HTTP_TLS_FAILED,  /* the handshake or the peer's certificate failed */
    AKG_HTTP_CUT,         /* the connection broke or closed before the response ended */
    AKG_HTTP_ABORTED_CB,  /* on_header/on_body asked to stop */
    AKG_HTTP_OTHER_ERROR, /* anything else curl reports (see curl_error) */
} akg_http_end;

typedef struct {
    akg_http_end end;
    long status;              /* HTTP status, 0 if none arrived */
    double retry_after_s;     /* the Retry-After header in seconds (either form); -1 when absent */
    const char *curl_error;   /* curl's message for a failed transfer ("" when complete) */
    const char *content_type; /* the response's, or "" */
    double elapsed_ms;
} akg_http_result;

typedef struct {
    const char *method; /* "POST", "GET" */
    const char *url;
    const char *const *headers; /* "Name: value" lines, NULL-terminated; copied */
    const char *body;           /* copied; may be NULL */
    size_t body_len;
    long connect_timeout_ms, first_byte_timeout_ms, idle_timeout_ms, total_timeout_ms; /* 0: none */
    bool tls_verify;       /* false only by an explicit setting */
    const char *ca_bundle; /* may be NULL: the system's */
    /* Response bytes. Return false to stop the transfer (it ends AKG_HTTP_ABORTED_CB). */
    bool (*on_body)(const char *data, size_t len, void *user);
    void (*on_done)(const akg_http_result *result, void *user);
    void *user;
} akg_http_request;

/* Creates the multi handle on loop. *out is the caller's, released with akg_http_close. */
int akg_http_new(uv_loop_t *loop, akg_http **out, char *err, size_t errlen);
/* Aborts every transfer (no callbacks) and frees http once its handles are closed; closed (may
 * be NULL) runs then. */
void akg_http_close(akg_http *http, void (*closed)(void *user), void *user);

/* Starts a transfer. On AKG_OK *out (may be NULL) is valid until on_done returns or until
 * akg_http_abort; on failure nothing runs. */
int akg_http_start(akg_http *http, const akg_http_request *req, akg_http_xfer **out, char *err,
                   size_t errlen);
/* Stops a transfer at once; its on_done will not run. */
void akg_http_abort(akg_http_xfer *xfer);

#endif
