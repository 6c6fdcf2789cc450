/*
 * openai_client.c: chat completions against an OpenAI-compatible endpoint
 * (see openai.h), on the loop through http_uv.c.
 *
 * A call moves QUEUED -> RUNNING -> (BACKOFF -> RUNNING)* -> DONE. The
 * endpoint (one per base_url) admits max_concurrency calls; the rest wait in
 * FIFO order and a call keeps its place through its back-offs, so a server
 * that asked us to slow down is not hit by the queue meanwhile.
 *
 * What is retried, with exponential back-off and jitter (base * 2^(n-1),
 * times a random factor in [0.5, 1), capped at retry_max_s), at most
 * max_retries times: nothing answering (refused, unreachable, connect
 * timeout), a connection cut before the answer ended (a truncated stream),
 * 429 and 5xx. A Retry-After header (seconds or an HTTP date) replaces the
 * back-off; one longer than retry_max_s ends the call at once rather than
 * holding it. Not retried: TLS failures, first-byte/idle/total timeouts (a
 * slow server would be as slow again, and a generation may be costly), 4xx
 * other than 429, answers that are not JSON, answers without choices. A
 * RETRY event tells a streaming consumer that the text so far is dropped.
 *
 * Streaming: Server-Sent Events, "data: {json}" events separated by blank
 * lines, ending with "data: [DONE]". The body is sniffed: a stream request
 * answered with plain JSON (a server that ignores "stream") is read as JSON.
 * A stream ends well with [DONE] or with a finish_reason and a clean close;
 * anything else is a truncation. Usage is asked for in the last chunk
 * (stream_options.include_usage); when it does not come, the completion's
 * tokens are counted as one a content chunk and flagged as counted.
 *
 * The Anthropic Messages API (a level's "api": "anthropic") goes through the
 * same call: POST {base_url}/messages with the key in x-api-key and
 * anthropic-version 2023-06-01, the system messages joined into "system";
 * the answer's text blocks are its text, stop_reason its finish_reason
 * ("max_tokens" is the cut answer, LENGTH), usage's input_tokens and
 * output_tokens its tokens; a stream's events (message_start,
 * content_block_delta, message_delta, message_stop, error) are read into the
 * same state, message_stop playing [DONE]'s part. Retries, timeouts, the
 * concurrency limit and the outcomes are the same.
 *
 * Every message names the endpoint (base_url without credentials), the
 * cause and what would work; the key is never part of one (and any text a
 * server echoes back has it redacted).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "akg/akg.h"
#include "http_uv.h"
#include "openai.h"

#define TEXT_LIMIT ((size_t)8 << 20)  /* the answer's text */
#define BODY_LIMIT ((size_t)16 << 20) /* a whole non-streamed body */
#define HEAD_LIMIT 4096               /* the start of a body, kept for messages */

typedef enum { C_QUEUED, C_RUNNING, C_BACKOFF, C_FAILING, C_DONE } call_state;

typedef struct endpoint {
    char *base_url;
    int active, limit;
    akg_openai_call *queue_head, *queue_tail;
    struct endpoint *next;
} endpoint;

struct akg_openai_client {
    uv_loop_t *loop;
    akg_http *http;
    endpoint *endpoints;
    akg_openai_call *calls;
    int open_handles; /* the http client and every call's timer */
    bool closing;
    uint64_t rng;
    void (*closed)(void *user);
    void *closed_user;
};

struct akg_openai_call {
    akg_openai_client *client;
    endpoint *ep;
    const akg_openai_settings *s;
    call_state state;
    char *url, *body, *auth;
    size_t body_len;
    bool stream;
    bool anthropic; /* the Messages API (settings' "api") */
    akg_http_xfer *xfer;
    uv_timer_t timer; /* back-off, and a failure reported from a later iteration */
    int attempt;
    double start_ms, waited_s;
    cJSON *log;
    /* the current attempt */
    akg_buf head, json, line, data, text, reasoning;
    int mode; /* 0 undecided, 1 JSON, 2 SSE */
    bool saw_done, saw_choices, usage_seen, cap_hit;
    char *chunk_error;   /* an SSE event not JSON, or an "error" event: why */
    bool chunk_is_error; /* the server sent an error event (else: not JSON) */
    char finish_reason[64], model[160];
    long prompt_tokens, completion_tokens, chunks;
    /* a failure to report from the timer */
    akg_openai_outcome fail_outcome;
    char *fail_message;
    void (*on_event)(const akg_openai_event *event, void *user);
    void (*on_done)(const akg_openai_answer *answer, void *user);
    void *user;
    struct akg_openai_call *prev, *next, *queue_next;
};

const char *akg_openai_outcome_name(akg_openai_outcome o)
{
    switch (o) {
    case AKG_OPENAI_OK:
        return "ok";
    case AKG_OPENAI_LENGTH:
        return "length";
    case AKG_OPENAI_CANCELLED:
        return "cancelled";
    case AKG_OPENAI_CONFIG:
        return "config";
    case AKG_OPENAI_CONNECT:
        return "connect";
    case AKG_OPENAI_TLS:
        return "tls";
    case AKG_OPENAI_TIMEOUT:
        return "timeout";
    case AKG_OPENAI_RATE_LIMITED:
        return "rate_limited";
    case AKG_OPENAI_SERVER_ERROR:
        return "server_error";
    case AKG_OPENAI_AUTH:
        return "auth";
    case AKG_OPENAI_HTTP_ERROR:
        return "http_error";
    case AKG_OPENAI_BAD_RESPONSE:
        return "bad_response";
    case AKG_OPENAI_EMPTY:
        return "empty";
    case AKG_OPENAI_TRUNCATED:
        return "truncated";
    }
    return "unknown";
}

static int outcome_status(akg_openai_outcome o)
{
    switch (o) {
    case AKG_OPENAI_OK:
    case AKG_OPENAI_LENGTH:
        return AKG_OK;
    case AKG_OPENAI_CANCELLED:
        return AKG_ECANCELED;
    case AKG_OPENAI_TIMEOUT:
        return AKG_ETIMEDOUT;
    case AKG_OPENAI_CONFIG:
        return AKG_EINVAL;
    case AKG_OPENAI_BAD_RESPONSE:
    case AKG_OPENAI_EMPTY:
        return AKG_EPARSE;
    default:
        return AKG_EIO;
    }
}

/* ---- text helpers --------------------------------------------------------- */

/* The endpoint as messages show it: base_url without user:password@. */
static void endpoint_display(const char *base_url, char *buf, size_t len)
{
    const char *scheme = strstr(base_url, "://");
    const char *host = scheme ? scheme + 3 : base_url;
    const char *at = strchr(host, '@');
    const char *slash = strchr(host, '/');
    if (at && (!slash || at < slash))
        snprintf(buf, len, "%.*s%s", (int)(host - base_url), base_url, at + 1);
    else
        snprintf(buf, len, "%s", base_url);
}

/* Replaces every occurrence of key in s (malloc'd) by "[api key]"; returns the new string. */
static char *redact(char *s, const char *key)
{
    if (!s || !key || strlen(key) < 4 || !strstr(s, key))
        return s;
    akg_buf b;
    akg_buf_init(&b, 0);
    const char *p = s, *hit;
    size_t klen = strlen(key);
    while ((hit = strstr(p, key))) {
        akg_buf_append(&b, p, (size_t)(hit - p));
        akg_buf_puts(&b, "[api key]");
        p = hit + klen;
    }
    akg_buf_puts(&b, p);
    char *out = akg_buf_take(&b);
    if (!out)
        return s; /* out of memory: the caller drops a message it cannot clean */
    free(s);
    return out;
}

/* One line out of a server's text (newlines and control bytes as spaces), at most max bytes. */
static void one_line(const char *src, size_t n, char *dst, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < max; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    if (o + 4 < max || n <= o)
        dst[o] = '\0';
    else
        snprintf(dst + o, max - o, "...");
}

/* What the server said about a failure: error.message, error, detail or message of a JSON
 * body, else the body's first line. */
static void server_says(const akg_buf *head, const akg_buf *json, char *buf, size_t len)
{
    const akg_buf *src = json->len ? json : head;
    buf[0] = '\0';
    if (!src->len)
        return;
    cJSON *doc = cJSON_ParseWithLength(src->data, src->len);
    const char *said = NULL;
    if (doc) {
        const cJSON *e = cJSON_GetObjectItem(doc, "error");
        said = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
        if (!said)
            said = cJSON_GetStringValue(e);
        if (!said)
            said = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "detail"));
        if (!said)
            said = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "message"));
    }
    if (said)
        one_line(said, strlen(said), buf, len);
    else
        one_line(head->data, head->len < 200 ? head->len : 200, buf, len);
    cJSON_Delete(doc);
}

static double jitter(akg_openai_client *c)
{
    /* xorshift64*: the back-offs of many clients started together spread apart */
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    uint64_t r = c->rng * 2685821657736338717ULL;
    return 0.5 + 0.5 * ((double)(r >> 11) / 9007199254740992.0);
}

/* ---- the client and its endpoints ---------------------------------------- */

static void client_maybe_free(akg_openai_client *c)
{
    if (!c->closing || c->open_handles > 0)
        return;
    for (endpoint *e = c->endpoints, *next; e; e = next) {
        next = e->next;
        free(e->base_url);
        free(e);
    }
    void (*closed)(void *) = c->closed;
    void *user = c->closed_user;
    free(c);
    if (closed)
        closed(user);
}

static void on_http_closed(void *user)
{
    akg_openai_client *c = user;
    c->open_handles--;
    client_maybe_free(c);
}

int akg_openai_client_new(uv_loop_t *loop, akg_openai_client **out, char *err, size_t errlen)
{
    *out = NULL;
    akg_openai_client *c = calloc(1, sizeof *c);
    if (!c)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    int rc = akg_http_new(loop, &c->http, err, errlen);
    if (rc != AKG_OK) {
        free(c);
        return rc;
    }
    c->loop = loop;
    c->open_handles = 1;
    c->rng = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
    if (!c->rng)
        c->rng = 0x9e3779b97f4a7c15ULL;
    *out = c;
    return AKG_OK;
}

static endpoint *endpoint_of(akg_openai_client *c, const char *base_url, int limit)
{
    for (endpoint *e = c->endpoints; e; e = e->next)
        if (strcmp(e->base_url, base_url) == 0) {
            e->limit = limit;
            return e;
        }
    endpoint *e = calloc(1, sizeof *e);
    if (!e || !(e->base_url = akg_strdup(base_url))) {
        free(e);
        return NULL;
    }
    e->limit = limit;
    e->next = c->endpoints;
    c->endpoints = e;
    return e;
}

/* ---- a call's life --------------------------------------------------------- */

static void attempt_start(akg_openai_call *call);
static void call_finish(akg_openai_call *call, akg_openai_outcome outcome, const char *message);

static void attempt_reset(akg_openai_call *call)
{
    akg_buf_free(&call->head);
    akg_buf_free(&call->json);
    akg_buf_free(&call->line);
    akg_buf_free(&call->data);
    akg_buf_free(&call->text);
    akg_buf_free(&call->reasoning);
    akg_buf_init(&call->head, HEAD_LIMIT);
    akg_buf_init(&call->json, BODY_LIMIT);
    akg_buf_init(&call->line, BODY_LIMIT);
    akg_buf_init(&call->data, BODY_LIMIT);
    akg_buf_init(&call->text, TEXT_LIMIT);
    akg_buf_init(&call->reasoning, TEXT_LIMIT);
    call->mode = 0;
    call->saw_done = call->saw_choices = call->usage_seen = call->cap_hit = false;
    free(call->chunk_error);
    call->chunk_error = NULL;
    call->chunk_is_error = false;
    call->finish_reason[0] = call->model[0] = '\0';
    call->prompt_tokens = call->completion_tokens = -1;
    call->chunks = 0;
}

static void on_call_timer_closed(uv_handle_t *h)
{
    akg_openai_call *call = h->data;
    akg_openai_client *c = call->client;
    free(call);
    c->open_handles--;
    client_maybe_free(c);
}

/* Unlinks the call and frees what it holds; the struct goes when its timer has closed. */
static void call_release(akg_openai_call *call)
{
    akg_openai_client *c = call->client;
    if (call->prev)
        call->prev->next = call->next;
    else
        c->calls = call->next;
    if (call->next)
        call->next->prev = call->prev;
    if (call->auth) {
        memset(call->auth, 0, strlen(call->auth)); /* the key is not left in freed memory */
        free(call->auth);
    }
    free(call->url);
    free(call->body);
    free(call->fail_message);
    free(call->chunk_error);
    call->chunk_error = NULL;
    cJSON_Delete(call->log);
    akg_buf_free(&call->head);
    akg_buf_free(&call->json);
    akg_buf_free(&call->line);
    akg_buf_free(&call->data);
    akg_buf_free(&call->text);
    akg_buf_free(&call->reasoning);
    uv_timer_stop(&call->timer);
    uv_close((uv_handle_t *)&call->timer, on_call_timer_closed);
}

/* Gives the call's endpoint slot to the next queued call. */
static void slot_release(akg_openai_call *call)
{
    endpoint *e = call->ep;
    if (!e)
        return;
    call->ep = NULL;
    e->active--;
    while (e->queue_head && e->active < e->limit) {
        akg_openai_call *next = e->queue_head;
        e->queue_head = next->queue_next;
        if (!e->queue_head)
            e->queue_tail = NULL;
        next->queue_next = NULL;
        e->active++;
        next->ep = e;
        attempt_start(next);
    }
}

static void queue_remove(akg_openai_call *call, endpoint *e)
{
    akg_openai_call **p = &e->queue_head, *prev = NULL;
    while (*p && *p != call) {
        prev = *p;
        p = &(*p)->queue_next;
    }
    if (!*p)
        return;
    *p = call->queue_next;
    if (e->queue_tail == call)
        e->queue_tail = prev;
    call->queue_next = NULL;
}

static void call_finish(akg_openai_call *call, akg_openai_outcome outcome, const char *message)
{
    if (call->state == C_DONE)
        return;
    call_state was = call->state;
    call->state = C_DONE;
    uv_timer_stop(&call->timer);
    if (call->xfer) {
        akg_http_abort(call->xfer);
        call->xfer = NULL;
    }
    endpoint *queued_on = was == C_QUEUED ? call->ep : NULL;
    if (queued_on) {
        queue_remove(call, queued_on);
        call->ep = NULL;
    }
    char *msg = redact(akg_strdup(message ? message : ""), call->s ? call->s->api_key : NULL);
    akg_buf_puts(&call->text, ""); /* data is never NULL below */
    akg_buf_puts(&call->reasoning, "");
    akg_openai_answer a;
    memset(&a, 0, sizeof a);
    a.outcome = outcome;
    a.status = outcome_status(outcome);
    a.message = msg ? msg : "";
    a.text = call->text.data ? call->text.data : "";
    a.reasoning = call->reasoning.data ? call->reasoning.data : "";
    a.finish_reason = call->finish_reason;
    a.model = call->model;
    a.prompt_tokens = call->prompt_tokens;
    a.completion_tokens = call->completion_tokens;
    if (a.completion_tokens < 0 && call->chunks > 0) {
        a.completion_tokens = call->chunks;
        a.tokens_counted = true;
    }
    a.attempts = call->attempt;
    int logged = cJSON_GetArraySize(call->log);
    const cJSON *status =
        logged > 0 ? cJSON_GetObjectItem(cJSON_GetArrayItem(call->log, logged - 1), "http_status")
                   : NULL;
    a.http_status = cJSON_IsNumber(status) ? (long)status->valuedouble : 0;
    a.elapsed_ms = akg_now_ms() - call->start_ms;
    a.tls_verify_off = call->s && !call->s->tls_verify;
    a.attempt_log = call->log;
    /* the slot goes to the next call before this one's callback, which may queue more */
    slot_release(call);
    if (call->on_done)
        call->on_done(&a, call->user);
    free(msg);
    call_release(call);
}

/* ---- the body: JSON or Server-Sent Events ------------------------------- */

static void take_usage(akg_openai_call *call, const cJSON *doc)
{
    const cJSON *u = cJSON_GetObjectItem(doc, "usage");
    if (!cJSON_IsObject(u))
        return;
    const cJSON *p = cJSON_GetObjectItem(u, call->anthropic ? "input_tokens" : "prompt_tokens");
    const cJSON *q =
        cJSON_GetObjectItem(u, call->anthropic ? "output_tokens" : "completion_tokens");
    if (cJSON_IsNumber(p))
        call->prompt_tokens = (long)p->valuedouble;
    if (cJSON_IsNumber(q))
        call->completion_tokens = (long)q->valuedouble;
    call->usage_seen = true;
}

static void take_model(akg_openai_call *call, const cJSON *doc)
{
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "model"));
    if (m && !call->model[0])
        snprintf(call->model, sizeof call->model, "%s", m);
}

static void set_chunk_error(akg_openai_call *call, bool is_error, const char *why)
{
    if (call->chunk_error)
        return;
    call->chunk_error = akg_strdup(why);
    call->chunk_is_error = is_error;
}

/* Whether the answer was cut at max_tokens: "length", or the Messages API's "max_tokens". */
static bool cut_at_max_tokens(const akg_openai_call *call)
{
    return strcmp(call->finish_reason, "length") == 0 ||
           (call->anthropic && strcmp(call->finish_reason, "max_tokens") == 0);
}

/* A streamed piece of the answer's text: kept, counted, told to the consumer. Returns false
 * when the transfer should stop (the text's cap, a cancel from the callback). */
static bool add_content(akg_openai_call *call, const char *content)
{
    call->chunks++;
    if (akg_buf_puts(&call->text, content) != AKG_OK) {
        call->cap_hit = true;
        return false;
    }
    if (call->on_event) {
        akg_openai_event ev = {.kind = AKG_OPENAI_EVENT_DELTA,
                               .text = content,
                               .text_len = strlen(content),
                               .attempt = call->attempt};
        call->on_event(&ev, call->user);
        if (call->state == C_DONE) /* cancelled from the callback */
            return false;
    }
    return true;
}

/* One event of a Messages API stream (its "error" events are handled as OpenAI's). */
static bool anthropic_event(akg_openai_call *call, const cJSON *doc)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "type"));
    if (!type)
        return true;
    if (strcmp(type, "message_start") == 0) {
        const cJSON *m = cJSON_GetObjectItem(doc, "message");
        take_model(call, m);
        take_usage(call, m);
        call->saw_choices = true;
    } else if (strcmp(type, "content_block_delta") == 0) {
        const cJSON *delta = cJSON_GetObjectItem(doc, "delta");
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(delta, "type"));
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(delta, "text"));
        const char *thinking = cJSON_GetStringValue(cJSON_GetObjectItem(delta, "thinking"));
        if (kind && strcmp(kind, "thinking_delta") == 0 && thinking)
            akg_buf_puts(&call->reasoning, thinking);
        else if (text && *text)
            return add_content(call, text);
    } else if (strcmp(type, "message_delta") == 0) {
        const cJSON *delta = cJSON_GetObjectItem(doc, "delta");
        const char *stop = cJSON_GetStringValue(cJSON_GetObjectItem(delta, "stop_reason"));
        if (stop)
            snprintf(call->finish_reason, sizeof call->finish_reason, "%s", stop);
        take_usage(call, doc);
    } else if (strcmp(type, "message_stop") == 0) {
        call->saw_done = true;
    }
    return true;
}

/* One SSE event's data. Returns false when the transfer should stop. */
static bool sse_event(akg_openai_call *call, const char *data, size_t len)
{
    while (len && (*data == ' ' || *data == '\t'))
        data++, len--;
    if (len == 0)
        return true;
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        call->saw_done = true;
        return true;
    }
    cJSON *doc = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(doc)) {
        char snippet[160];
        one_line(data, len < 120 ? len : 120, snippet, sizeof snippet);
        char why[256];
        snprintf(why, sizeof why, "a streamed event is not JSON: '%s'", snippet);
        set_chunk_error(call, false, why);
        cJSON_Delete(doc);
        return false;
    }
    const cJSON *err = cJSON_GetObjectItem(doc, "error");
    if (err && !cJSON_IsNull(err)) {
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(err, "message"));
        if (!m)
            m = cJSON_GetStringValue(err);
        char said[300], why[400];
        one_line(m ? m : "(no message)", strlen(m ? m : "(no message)"), said, sizeof said);
        snprintf(why, sizeof why, "the stream carried an error: %s", said);
        set_chunk_error(call, true, why);
        cJSON_Delete(doc);
        return false;
    }
    if (call->anthropic) {
        bool ok = anthropic_event(call, doc);
        cJSON_Delete(doc);
        return ok;
    }
    take_model(call, doc);
    take_usage(call, doc);
    const cJSON *choices = cJSON_GetObjectItem(doc, "choices");
    const cJSON *choice = cJSON_GetArrayItem(choices, 0);
    if (choice) {
        call->saw_choices = true;
        const cJSON *delta = cJSON_GetObjectItem(choice, "delta");
        if (!delta)
            delta = cJSON_GetObjectItem(choice, "message");
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(delta, "content"));
        const char *reasoning =
            cJSON_GetStringValue(cJSON_GetObjectItem(delta, "reasoning_content"));
        const char *fin = cJSON_GetStringValue(cJSON_GetObjectItem(choice, "finish_reason"));
        if (fin)
            snprintf(call->finish_reason, sizeof call->finish_reason, "%s", fin);
        if (reasoning && *reasoning)
            akg_buf_puts(&call->reasoning, reasoning);
        if (content && *content && !add_content(call, content)) {
            cJSON_Delete(doc);
            return false;
        }
    }
    cJSON_Delete(doc);
    return true;
}

/* One line of the stream (without its line end). */
static bool sse_line(akg_openai_call *call, const char *line, size_t len)
{
    if (len == 0) { /* the end of an event */
        bool ok = sse_event(call, call->data.data ? call->data.data : "", call->data.len);
        akg_buf_consume(&call->data, call->data.len);
        return ok;
    }
    if (line[0] == ':')
        return true; /* a comment, a keep-alive */
    if (len >= 5 && memcmp(line, "data:", 5) == 0) {
        size_t skip = (len > 5 && line[5] == ' ') ? 6 : 5;
        if (call->data.len)
            akg_buf_append(&call->data, "\n", 1);
        if (akg_buf_append(&call->data, line + skip, len - skip) != AKG_OK) {
            call->cap_hit = true;
            return false;
        }
    }
    return true; /* event:, id:, retry: carry nothing for us */
}

static bool sse_feed(akg_openai_call *call, const char *data, size_t len)
{
    if (akg_buf_append(&call->line, data, len) != AKG_OK) {
        call->cap_hit = true;
        return false;
    }
    size_t start = 0;
    bool ok = true;
    for (size_t i = 0; i < call->line.len && ok; i++) {
        if (call->line.data[i] != '\n')
            continue;
        size_t end = i;
        if (end > start && call->line.data[end - 1] == '\r')
            end--;
        ok = sse_line(call, call->line.data + start, end - start);
        start = i + 1;
        if (call->state == C_DONE)
            return false;
    }
    akg_buf_consume(&call->line, start);
    return ok;
}

/* The rest of a stream that closed: a last line without its newline, a last event. */
static void sse_flush(akg_openai_call *call)
{
    if (call->line.len)
        sse_line(call, call->line.data, call->line.len);
    akg_buf_consume(&call->line, call->line.len);
    if (call->data.len && call->state != C_DONE)
        sse_line(call, "", 0);
}

static bool on_http_body(const char *data, size_t len, void *user)
{
    akg_openai_call *call = user;
    if (call->state == C_DONE)
        return false;
    if (call->head.len < HEAD_LIMIT) {
        size_t room = HEAD_LIMIT - 1 - call->head.len;
        akg_buf_append(&call->head, data, len < room ? len : room);
    }
    if (call->mode == 0) {
        size_t i = 0;
        while (i < len && (data[i] == ' ' || data[i] == '\r' || data[i] == '\n' || data[i] == '\t'))
            i++;
        if (i == len)
            return true; /* still undecided */
        call->mode = (!call->stream || data[i] == '{' || data[i] == '[') ? 1 : 2;
    }
    if (call->mode == 2)
        return sse_feed(call, data, len);
    if (akg_buf_append(&call->json, data, len) != AKG_OK) {
        call->cap_hit = true;
        return false;
    }
    return true;
}

/* A whole Messages API answer: its text blocks, stop_reason, usage (taken by the caller). */
static akg_openai_outcome anthropic_answer(akg_openai_call *call, const cJSON *doc, char *why,
                                           size_t len)
{
    const cJSON *err = cJSON_GetObjectItem(doc, "error");
    if (err && !cJSON_IsNull(err)) {
        char said[300];
        server_says(&call->head, &call->json, said, sizeof said);
        snprintf(why, len, "the answer is an error: %s", said);
        return AKG_OPENAI_BAD_RESPONSE;
    }
    const cJSON *content = cJSON_GetObjectItem(doc, "content");
    const char *stop = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "stop_reason"));
    if (stop)
        snprintf(call->finish_reason, sizeof call->finish_reason, "%s", stop);
    if (!cJSON_IsArray(content)) {
        snprintf(why, len, "the answer holds no content (no \"content\" array)");
        return AKG_OPENAI_EMPTY;
    }
    int texts = 0;
    const cJSON *block;
    cJSON_ArrayForEach(block, content)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(block, "type"));
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(block, "text"));
        const char *thinking = cJSON_GetStringValue(cJSON_GetObjectItem(block, "thinking"));
        if (type && strcmp(type, "thinking") == 0 && thinking) {
            akg_buf_puts(&call->reasoning, thinking);
        } else if (type && strcmp(type, "text") == 0 && text) {
            texts++;
            if (akg_buf_puts(&call->text, text) != AKG_OK) {
                snprintf(why, len, "the answer's text is larger than %zu MB", TEXT_LIMIT >> 20);
                return AKG_OPENAI_BAD_RESPONSE;
            }
        }
    }
    if (texts == 0 && !cut_at_max_tokens(call)) {
        snprintf(why, len, "the answer holds no text block (\"content\": %d blocks)",
                 cJSON_GetArraySize(content));
        return AKG_OPENAI_EMPTY;
    }
    return cut_at_max_tokens(call) ? AKG_OPENAI_LENGTH : AKG_OPENAI_OK;
}

/* A whole JSON answer (not streamed). Sets the attempt's outcome and a reason. */
static akg_openai_outcome parse_json_answer(akg_openai_call *call, char *why, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(call->json.data ? call->json.data : "", call->json.len);
    if (!cJSON_IsObject(doc)) {
        char snippet[200];
        one_line(call->head.data ? call->head.data : "",
                 call->head.len < 160 ? call->head.len : 160, snippet, sizeof snippet);
        snprintf(why, len, "the answer is not JSON (it starts '%s')", snippet);
        cJSON_Delete(doc);
        return AKG_OPENAI_BAD_RESPONSE;
    }
    take_model(call, doc);
    take_usage(call, doc);
    if (call->anthropic) {
        akg_openai_outcome o = anthropic_answer(call, doc, why, len);
        cJSON_Delete(doc);
        return o;
    }
    const cJSON *err = cJSON_GetObjectItem(doc, "error");
    const cJSON *choices = cJSON_GetObjectItem(doc, "choices");
    if (err && !cJSON_IsNull(err) && !choices) {
        char said[300];
        server_says(&call->head, &call->json, said, sizeof said);
        snprintf(why, len, "the answer is an error: %s", said);
        cJSON_Delete(doc);
        return AKG_OPENAI_BAD_RESPONSE;
    }
    if (!cJSON_IsArray(choices) || cJSON_GetArraySize(choices) == 0) {
        snprintf(why, len, "the answer holds no choices (%s)",
                 choices ? "\"choices\": []" : "no \"choices\" field");
        cJSON_Delete(doc);
        return AKG_OPENAI_EMPTY;
    }
    const cJSON *choice = cJSON_GetArrayItem(choices, 0);
    const cJSON *msg = cJSON_GetObjectItem(choice, "message");
    if (!msg)
        msg = cJSON_GetObjectItem(choice, "delta");
    const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "content"));
    if (!content) /* completions-style servers answer with "text" */
        content = cJSON_GetStringValue(cJSON_GetObjectItem(choice, "text"));
    const char *reasoning = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "reasoning_content"));
    const char *fin = cJSON_GetStringValue(cJSON_GetObjectItem(choice, "finish_reason"));
    if (fin)
        snprintf(call->finish_reason, sizeof call->finish_reason, "%s", fin);
    if (reasoning)
        akg_buf_puts(&call->reasoning, reasoning);
    if (content && akg_buf_puts(&call->text, content) != AKG_OK) {
        snprintf(why, len, "the answer's text is larger than %zu MB", TEXT_LIMIT >> 20);
        cJSON_Delete(doc);
        return AKG_OPENAI_BAD_RESPONSE;
    }
    cJSON_Delete(doc);
    return cut_at_max_tokens(call) ? AKG_OPENAI_LENGTH : AKG_OPENAI_OK;
}

static akg_openai_outcome stream_outcome(akg_openai_call *call, char *why, size_t len)
{
    if (call->chunk_error) {
        snprintf(why, len, "%s", call->chunk_error);
        return call->chunk_is_error ? AKG_OPENAI_SERVER_ERROR : AKG_OPENAI_BAD_RESPONSE;
    }
    if (!call->saw_done && !call->finish_reason[0]) {
        snprintf(why, len,
                 "the stream ended before its end (no finish_reason, no [DONE]) after %zu "
                 "characters",
                 call->text.len);
        return AKG_OPENAI_TRUNCATED;
    }
    if (!call->saw_choices) {
        snprintf(why, len, "the stream held no choices");
        return AKG_OPENAI_EMPTY;
    }
    return cut_at_max_tokens(call) ? AKG_OPENAI_LENGTH : AKG_OPENAI_OK;
}

/* ---- one attempt's end, retries, and the message a person reads ---------- */

static bool retryable(akg_openai_outcome o)
{
    return o == AKG_OPENAI_CONNECT || o == AKG_OPENAI_TRUNCATED || o == AKG_OPENAI_RATE_LIMITED ||
           o == AKG_OPENAI_SERVER_ERROR;
}

/* The final message: the endpoint, the cause, what would work. */
static void final_message(akg_openai_call *call, akg_openai_outcome o, const char *why,
                          double retry_after, char *msg, size_t len)
{
    const akg_openai_settings *s = call->s;
    char where[512];
    char ep[400];
    endpoint_display(s->base_url, ep, sizeof ep);
    snprintf(where, sizeof where, "%s (model '%s', level '%s')", ep, s->model,
             s->level ? s->level : "?");
    char tries[64] = "";
    if (call->attempt > 1)
        snprintf(tries, sizeof tries, " after %d attempts", call->attempt);
    switch (o) {
    case AKG_OPENAI_CONNECT:
        snprintf(msg, len,
                 "%s: nothing answered%s (%s); start the server, or point base_url in "
                 ".akg/settings.json (or AKG_AGENTS_BASE_URL) at one that runs",
                 where, tries, why);
        break;
    case AKG_OPENAI_TLS:
        snprintf(msg, len,
                 "%s: the TLS connection failed (%s); give the server's CA in ca_bundle, use "
                 "http:// for a local server, or (only for a server you trust) set "
                 "\"tls_verify\": false for this level",
                 where, why);
        break;
    case AKG_OPENAI_TIMEOUT:
        snprintf(msg, len,
                 "%s: %s; raise \"timeout\" (or first_byte_timeout / idle_timeout) for this "
                 "level, lower max_tokens, or check that the server is not overloaded",
                 where, why);
        break;
    case AKG_OPENAI_RATE_LIMITED:
        if (retry_after > s->retry_max_s)
            snprintf(msg, len,
                     "%s: rate limited (HTTP 429) and asked to wait %.0f s, longer than "
                     "retry_max_s (%.0f s); wait and run again, raise retry_max_s, or lower "
                     "max_concurrency",
                     where, retry_after, s->retry_max_s);
        else
            snprintf(msg, len,
                     "%s: still rate limited (HTTP 429)%s (%s); wait and run again, lower "
                     "max_concurrency, or raise max_retries",
                     where, tries, why);
        break;
    case AKG_OPENAI_SERVER_ERROR:
        snprintf(msg, len, "%s: the server failed%s (%s); see the server's log, or try again later",
                 where, tries, why);
        break;
    case AKG_OPENAI_AUTH:
        snprintf(msg, len,
                 "%s: the key was refused (%s); put a valid key in the variable %s (the level's "
                 "api_key_env) or in AKG_AGENTS_API_KEY",
                 where, why, s->api_key_env ? s->api_key_env : "named by api_key_env");
        break;
    case AKG_OPENAI_HTTP_ERROR:
        snprintf(msg, len,
                 "%s: the request was refused (%s); check that base_url is the API root (it "
                 "ends in /v1 for most servers: %s%s must exist) and that the server knows "
                 "model '%s'",
                 where, why, ep, call->anthropic ? "/messages" : "/chat/completions", s->model);
        break;
    case AKG_OPENAI_BAD_RESPONSE:
        snprintf(msg, len, "%s: %s; base_url must be %s API root (the part before %s)", where, why,
                 call->anthropic ? "an Anthropic Messages" : "an OpenAI-compatible",
                 call->anthropic ? "/messages" : "/chat/completions");
        break;
    case AKG_OPENAI_EMPTY:
        snprintf(msg, len,
                 "%s: %s; the server produced nothing for this prompt (a content filter, or a "
                 "model that cannot chat): try another model or level",
                 where, why);
        break;
    case AKG_OPENAI_TRUNCATED:
        snprintf(msg, len,
                 "%s: %s%s; the connection or the server broke off: check the server's log, or "
                 "turn stream_output off",
                 where, why, tries);
        break;
    case AKG_OPENAI_LENGTH:
        snprintf(msg, len,
                 "%s: the answer was cut at max_tokens (%d, finish_reason \"%s\"); raise "
                 "max_tokens for this level or ask for less",
                 where, s->max_tokens, call->finish_reason[0] ? call->finish_reason : "length");
        break;
    default:
        snprintf(msg, len, "%s: %s", where, why);
        break;
    }
}

static void on_backoff(uv_timer_t *t)
{
    akg_openai_call *call = t->data;
    if (call->state != C_BACKOFF)
        return;
    attempt_start(call);
}

static void on_fail_timer(uv_timer_t *t)
{
    akg_openai_call *call = t->data;
    call_finish(call, call->fail_outcome, call->fail_message);
}

static void on_http_done(const akg_http_result *r, void *user)
{
    akg_openai_call *call = user;
    call->xfer = NULL;
    if (call->state == C_DONE)
        return;
    char why[600];
    why[0] = '\0';
    akg_openai_outcome o;
    char said[400];
    switch (r->end) {
    case AKG_HTTP_COMPLETE:
        if (r->status >= 200 && r->status < 300) {
            if (call->mode == 2) {
                sse_flush(call);
                if (call->state == C_DONE)
                    return;
                o = stream_outcome(call, why, sizeof why);
            } else {
                o = parse_json_answer(call, why, sizeof why);
            }
            break;
        }
        server_says(&call->head, &call->json, said, sizeof said);
        snprintf(why, sizeof why, "HTTP %ld%s%s", r->status, said[0] ? ": " : "", said);
        if (r->status == 429)
            o = AKG_OPENAI_RATE_LIMITED;
        else if (r->status >= 500)
            o = AKG_OPENAI_SERVER_ERROR;
        else if (r->status == 401 || r->status == 403)
            o = AKG_OPENAI_AUTH;
        else
            o = AKG_OPENAI_HTTP_ERROR;
        break;
    case AKG_HTTP_CONNECT_FAILED:
        o = AKG_OPENAI_CONNECT;
        snprintf(why, sizeof why, "%s", r->curl_error);
        break;
    case AKG_HTTP_CONNECT_TIMEOUT:
        o = AKG_OPENAI_CONNECT;
        snprintf(why, sizeof why, "no connection within the connect timeout of %.1f s",
                 call->s->connect_timeout_s);
        break;
    case AKG_HTTP_FIRST_BYTE_TIMEOUT:
        o = AKG_OPENAI_TIMEOUT;
        snprintf(why, sizeof why,
                 "connected, but no byte of the answer came within the first-byte timeout of "
                 "%.1f s",
                 call->s->first_byte_timeout_s > 0 ? call->s->first_byte_timeout_s
                                                   : call->s->timeout_s);
        break;
    case AKG_HTTP_IDLE_TIMEOUT:
        o = AKG_OPENAI_TIMEOUT;
        snprintf(why, sizeof why,
                 "the answer stalled: no byte for the idle timeout of %.1f s after %zu "
                 "characters",
                 call->s->idle_timeout_s, call->text.len);
        break;
    case AKG_HTTP_TOTAL_TIMEOUT:
        o = AKG_OPENAI_TIMEOUT;
        snprintf(why, sizeof why, "the answer did not end within the timeout of %.1f s",
                 call->s->timeout_s);
        break;
    case AKG_HTTP_TLS_FAILED:
        o = AKG_OPENAI_TLS;
        snprintf(why, sizeof why, "%s", r->curl_error);
        break;
    case AKG_HTTP_CUT:
        if (call->head.len == 0 && r->status == 0) {
            o = AKG_OPENAI_CONNECT;
            snprintf(why, sizeof why, "the server closed the connection without answering (%s)",
                     r->curl_error);
        } else {
            o = AKG_OPENAI_TRUNCATED;
            snprintf(why, sizeof why, "the answer was cut after %zu characters (%s)",
                     call->text.len ? call->text.len : call->json.len, r->curl_error);
        }
        break;
    case AKG_HTTP_ABORTED_CB:
        if (call->chunk_error) {
            o = stream_outcome(call, why, sizeof why);
        } else {
            o = AKG_OPENAI_BAD_RESPONSE;
            snprintf(why, sizeof why, "the answer is larger than %zu MB", BODY_LIMIT >> 20);
        }
        break;
    default:
        o = AKG_OPENAI_CONFIG;
        snprintf(why, sizeof why, "the request could not be sent: %s", r->curl_error);
        break;
    }
    char *why_clean = redact(akg_strdup(why), call->s->api_key);
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddNumberToObject(entry, "attempt", call->attempt);
    cJSON_AddStringToObject(entry, "outcome", akg_openai_outcome_name(o));
    cJSON_AddNumberToObject(entry, "http_status", (double)r->status);
    cJSON_AddStringToObject(entry, "detail", why_clean ? why_clean : "");
    cJSON_AddNumberToObject(entry, "elapsed_ms", r->elapsed_ms);
    cJSON_AddItemToArray(call->log, entry);

    double delay = -1;
    if (retryable(o) && call->attempt <= call->s->max_retries) {
        if (r->retry_after_s >= 0 && (o == AKG_OPENAI_RATE_LIMITED || r->status == 503)) {
            delay = r->retry_after_s; /* the server's word, even when longer than our back-off */
            if (delay > call->s->retry_max_s)
                delay = -2;
        } else {
            double backoff = call->s->retry_base_s * pow(2.0, call->attempt - 1);
            if (backoff > call->s->retry_max_s)
                backoff = call->s->retry_max_s;
            delay = backoff * jitter(call->client);
        }
    }
    if (delay >= 0) {
        cJSON_AddNumberToObject(entry, "waited_s", delay);
        call->waited_s += delay;
        call->state = C_BACKOFF;
        if (call->on_event) {
            akg_openai_event ev = {.kind = AKG_OPENAI_EVENT_RETRY,
                                   .text = why_clean ? why_clean : "",
                                   .text_len = why_clean ? strlen(why_clean) : 0,
                                   .attempt = call->attempt + 1,
                                   .delay_s = delay};
            call->on_event(&ev, call->user);
        }
        free(why_clean);
        if (call->state == C_BACKOFF)
            uv_timer_start(&call->timer, on_backoff, (uint64_t)(delay * 1000.0), 0);
        return;
    }
    char msg[2048];
    if (o == AKG_OPENAI_OK)
        msg[0] = '\0';
    else
        final_message(call, o, why_clean ? why_clean : why, r->retry_after_s, msg, sizeof msg);
    free(why_clean);
    call_finish(call, o, msg);
}

static void attempt_start(akg_openai_call *call)
{
    const akg_openai_settings *s = call->s;
    attempt_reset(call);
    call->attempt++;
    call->state = C_RUNNING;
    const char *headers[6];
    int n = 0;
    headers[n++] = "Content-Type: application/json";
    headers[n++] = call->stream ? "Accept: text/event-stream" : "Accept: application/json";
    headers[n++] = "User-Agent: akg/" AKG_VERSION;
    if (call->auth)
        headers[n++] = call->auth;
    if (call->anthropic)
        headers[n++] = "anthropic-version: 2023-06-01";
    headers[n] = NULL;
    akg_http_request hr;
    memset(&hr, 0, sizeof hr);
    hr.method = "POST";
    hr.url = call->url;
    hr.headers = headers;
    hr.body = call->body;
    hr.body_len = call->body_len;
    hr.connect_timeout_ms = (long)(s->connect_timeout_s * 1000);
    hr.first_byte_timeout_ms =
        (long)((s->first_byte_timeout_s > 0 ? s->first_byte_timeout_s : s->timeout_s) * 1000);
    hr.idle_timeout_ms = (long)(s->idle_timeout_s * 1000);
    hr.total_timeout_ms = (long)(s->timeout_s * 1000);
    hr.tls_verify = s->tls_verify;
    hr.ca_bundle = s->ca_bundle;
    hr.on_body = on_http_body;
    hr.on_done = on_http_done;
    hr.user = call;
    char err[256];
    if (akg_http_start(call->client->http, &hr, &call->xfer, err, sizeof err) != AKG_OK) {
        /* reported from the timer: never inside the call that started the request */
        call->state = C_FAILING;
        call->fail_outcome = AKG_OPENAI_CONFIG;
        free(call->fail_message);
        call->fail_message = akg_strdup(err);
        uv_timer_start(&call->timer, on_fail_timer, 0, 0);
    }
}

/* ---- starting and cancelling ---------------------------------------------- */

/* The Messages API's conversation: the system messages joined into "system" (a top-level
 * field there), the others in order. */
static void anthropic_messages(cJSON *body, const akg_openai_request *req)
{
    akg_buf sys;
    akg_buf_init(&sys, 0);
    cJSON *msgs = cJSON_AddArrayToObject(body, "messages");
    for (size_t i = 0; i < req->n_messages; i++) {
        const char *role = req->messages[i].role ? req->messages[i].role : "user";
        const char *content = req->messages[i].content ? req->messages[i].content : "";
        if (strcmp(role, "system") == 0) {
            if (sys.len)
                akg_buf_puts(&sys, "\n\n");
            akg_buf_puts(&sys, content);
            continue;
        }
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", role);
        cJSON_AddStringToObject(m, "content", content);
        cJSON_AddItemToArray(msgs, m);
    }
    if (sys.len && sys.data)
        cJSON_AddStringToObject(body, "system", sys.data);
    akg_buf_free(&sys);
}

static char *request_body(const akg_openai_request *req, const akg_openai_settings *s, bool stream)
{
    cJSON *body = cJSON_CreateObject();
    if (!body)
        return NULL;
    cJSON_AddStringToObject(body, "model", s->model);
    if (s->anthropic)
        anthropic_messages(body, req);
    cJSON *msgs = s->anthropic ? NULL : cJSON_AddArrayToObject(body, "messages");
    for (size_t i = 0; msgs && i < req->n_messages; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", req->messages[i].role ? req->messages[i].role : "user");
        cJSON_AddStringToObject(m, "content",
                                req->messages[i].content ? req->messages[i].content : "");
        cJSON_AddItemToArray(msgs, m);
    }
    cJSON_AddBoolToObject(body, "stream", stream);
    if (stream && s->stream_usage && !s->anthropic) { /* the Messages API always sends usage */
        cJSON *so = cJSON_AddObjectToObject(body, "stream_options");
        cJSON_AddBoolToObject(so, "include_usage", 1);
    }
    if (s->temperature >= 0)
        cJSON_AddNumberToObject(body, "temperature", s->temperature);
    int max_tokens = req->max_tokens > 0 ? req->max_tokens : s->max_tokens;
    if (max_tokens <= 0 && s->anthropic)
        max_tokens = 8192; /* required there */
    if (max_tokens > 0)
        cJSON_AddNumberToObject(body, "max_tokens", max_tokens);
    /* extra_body as the original passes it: top-level fields, but never the conversation */
    for (const cJSON *e = s->extra_body ? s->extra_body->child : NULL; e; e = e->next) {
        if (!e->string || !strcmp(e->string, "messages") || !strcmp(e->string, "model") ||
            !strcmp(e->string, "stream") || !strcmp(e->string, "system"))
            continue;
        cJSON_DeleteItemFromObject(body, e->string);
        cJSON_AddItemToObject(body, e->string, cJSON_Duplicate(e, 1));
    }
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    return text;
}

int akg_openai_chat(akg_openai_client *c, const akg_openai_request *req, akg_openai_call **out,
                    char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (c->closing)
        return akg_fail(err, errlen, AKG_ECANCELED, "the model client is closing");
    if (!req->settings || !req->on_done)
        return akg_fail(err, errlen, AKG_EINVAL, "a chat request needs settings and on_done");
    if (!req->messages || req->n_messages == 0)
        return akg_fail(err, errlen, AKG_EINVAL, "a chat request needs at least one message");
    const akg_openai_settings *s = req->settings;
    akg_openai_call *call = calloc(1, sizeof *call);
    if (!call)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    call->client = c;
    call->s = s;
    call->on_event = req->on_event;
    call->on_done = req->on_done;
    call->user = req->user;
    call->stream = req->stream < 0 ? s->stream : req->stream != 0;
    call->anthropic = s->anthropic;
    call->start_ms = akg_now_ms();
    call->log = cJSON_CreateArray();
    call->prompt_tokens = call->completion_tokens = -1;
    akg_buf_init(&call->text, TEXT_LIMIT);
    akg_buf_init(&call->reasoning, TEXT_LIMIT);
    uv_timer_init(c->loop, &call->timer);
    call->timer.data = call;
    c->open_handles++;
    call->next = c->calls;
    if (c->calls)
        c->calls->prev = call;
    c->calls = call;

    const char *missing = !s->base_url || !*s->base_url ? "base_url"
                          : !s->model || !*s->model     ? "model"
                                                        : NULL;
    if (missing) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "the model settings of level '%s' have no %s (read from %s); set it in "
                 ".akg/settings.json under models.%s, or set %s",
                 s->level ? s->level : "?", missing, s->source ? s->source : "nothing", s->level,
                 strcmp(missing, "model") == 0 ? "AKG_AGENTS_MODEL_NAME" : "AKG_AGENTS_BASE_URL");
        call->state = C_FAILING;
        call->fail_outcome = AKG_OPENAI_CONFIG;
        call->fail_message = akg_strdup(msg);
        uv_timer_start(&call->timer, on_fail_timer, 0, 0);
        if (out)
            *out = call;
        return AKG_OK;
    }
    const char *path = s->anthropic ? "/messages" : "/chat/completions";
    size_t ulen = strlen(s->base_url) + sizeof "/chat/completions";
    call->url = malloc(ulen);
    call->body = request_body(req, s, call->stream);
    if (s->api_key && *s->api_key) {
        size_t alen = strlen(s->api_key) + sizeof "Authorization: Bearer ";
        call->auth = malloc(alen);
        if (call->auth)
            snprintf(call->auth, alen, s->anthropic ? "x-api-key: %s" : "Authorization: Bearer %s",
                     s->api_key);
    }
    endpoint *e = endpoint_of(c, s->base_url, s->max_concurrency > 0 ? s->max_concurrency : 4);
    if (!call->url || !call->body || !e || (s->api_key && *s->api_key && !call->auth)) {
        call->state = C_DONE;
        call_release(call);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    }
    snprintf(call->url, ulen, "%s%s", s->base_url, path);
    call->body_len = strlen(call->body);
    if (e->active < e->limit) {
        e->active++;
        call->ep = e;
        attempt_start(call);
    } else {
        call->state = C_QUEUED;
        call->ep = e;
        if (e->queue_tail)
            e->queue_tail->queue_next = call;
        else
            e->queue_head = call;
        e->queue_tail = call;
    }
    if (out)
        *out = call;
    return AKG_OK;
}

void akg_openai_cancel(akg_openai_call *call)
{
    if (!call || call->state == C_DONE)
        return;
    call_finish(call, AKG_OPENAI_CANCELLED, "cancelled");
}

void akg_openai_client_close(akg_openai_client *c, void (*closed)(void *user), void *user)
{
    if (!c || c->closing)
        return;
    c->closed = closed;
    c->closed_user = user;
    c->closing = true; /* no new call from a cancelled one's callback */
    /* queued calls first, so cancelling a running one does not start them */
    for (akg_openai_call *call = c->calls; call; call = call->next)
        if (call->state == C_QUEUED && call->ep) {
            queue_remove(call, call->ep);
            call->ep = NULL;
        }
    akg_openai_call *call;
    while ((call = c->calls) && call->state != C_DONE)
        akg_openai_cancel(call);
    akg_http_close(c->http, on_http_closed, c);
}
