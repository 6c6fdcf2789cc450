/* server.c: see server.h. */
#include "server.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "jobs.h"
#include "lifecycle.h"
#include "log.h"
#include "reference_index.h"
#include "results.h"
#include "selection.h"
#include "sketch_link.h"
#include "uri.h"
#include "watch.h"

#define SERVER_PUMP_BATCH 64
#define SERVER_QUEUE_CAP 100000
/* After `exit` (or the end of input) everything closes within milliseconds:
 * the workers and job children are killed, queued output gets half a second.
 * Past this, something unforeseen holds the loop and the process leaves
 * without it rather than linger. */
#define SERVER_EXIT_DEADLINE_MS 2000

typedef enum { MSG_REQUEST, MSG_NOTIFICATION } msg_kind;

struct akg_lsp_message {
    msg_kind kind;
    cJSON *json;         /* the whole message */
    const cJSON *id;     /* inside json; requests only */
    const char *method;  /* inside json */
    const cJSON *params; /* inside json; may be NULL */
    int cancelled;
    akg_lsp_message *next;
};

struct akg_lsp_outgoing {
    long long id;
    akg_lsp_response_cb cb;
    long long user_id;
    akg_lsp_outgoing *next;
};

/* ---- sending ------------------------------------------------------------ */

static void send_json(akg_lsp_server *s, cJSON *msg)
{
    if (!s->rpc || s->state == AKG_LSP_EXITING) {
        cJSON_Delete(msg);
        return;
    }
    char *text = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!text) {
        akg_lsp_log_error("out of memory printing a message");
        return;
    }
    akg_rpc_transport_send(s->rpc, text, strlen(text));
    free(text);
}

static void send_result(akg_lsp_server *s, const cJSON *id, cJSON *result)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    cJSON_AddItemToObject(msg, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(msg, "result", result ? result : cJSON_CreateNull());
    send_json(s, msg);
}

static void send_error(akg_lsp_server *s, const cJSON *id, int code, const char *message)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    cJSON_AddItemToObject(msg, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
    cJSON *err = cJSON_AddObjectToObject(msg, "error");
    cJSON_AddNumberToObject(err, "code", code);
    cJSON_AddStringToObject(err, "message", message);
    send_json(s, msg);
}

void akg_lsp_notify(akg_lsp_server *s, const char *method, cJSON *params)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    cJSON_AddStringToObject(msg, "method", method);
    if (params)
        cJSON_AddItemToObject(msg, "params", params);
    send_json(s, msg);
}

void akg_lsp_request(akg_lsp_server *s, const char *method, cJSON *params, akg_lsp_response_cb cb,
                     long long user_id)
{
    if (!s->rpc || s->state == AKG_LSP_EXITING) {
        cJSON_Delete(params);
        return;
    }
    akg_lsp_outgoing *o = calloc(1, sizeof *o);
    if (!o) {
        cJSON_Delete(params);
        return;
    }
    o->id = ++s->next_request_id;
    o->cb = cb;
    o->user_id = user_id;
    o->next = s->outgoing;
    s->outgoing = o;
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    char id[48];
    snprintf(id, sizeof id, "akg-%lld", o->id);
    cJSON_AddStringToObject(msg, "id", id);
    cJSON_AddStringToObject(msg, "method", method);
    if (params)
        cJSON_AddItemToObject(msg, "params", params);
    send_json(s, msg);
}

void akg_lsp_show_message(akg_lsp_server *s, int type, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "type", type);
    cJSON_AddStringToObject(p, "message", text);
    akg_lsp_notify(s, "window/showMessage", p);
}

static void log_to_client(akg_lsp_log_level level, const char *line, void *user)
{
    akg_lsp_server *s = user;
    if (s->state == AKG_LSP_STARTING || s->state == AKG_LSP_EXITING)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "type",
                            level == AKG_LSP_LOG_ERROR  ? 1
                            : level == AKG_LSP_LOG_WARN ? 2
                            : level == AKG_LSP_LOG_INFO ? 3
                                                        : 4);
    cJSON_AddStringToObject(p, "message", line);
    akg_lsp_notify(s, "window/logMessage", p);
}

void akg_lsp_apply_trace(const char *value)
{
    int level = 0;
    if (value && strcmp(value, "messages") == 0)
        level = AKG_LSP_LOG_INFO;
    else if (value && strcmp(value, "verbose") == 0)
        level = AKG_LSP_LOG_DEBUG;
    akg_lsp_log_set_sink_level(level);
    akg_lsp_log_set_file_level(level == AKG_LSP_LOG_DEBUG ? AKG_LSP_LOG_DEBUG : AKG_LSP_LOG_INFO);
}

/* ---- parameters --------------------------------------------------------- */

const cJSON *akg_lsp_param(const cJSON *params, const char *dotted)
{
    const cJSON *cur = params;
    char key[64];
    while (cur && *dotted) {
        const char *dot = strchr(dotted, '.');
        size_t n = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (n >= sizeof key || !cJSON_IsObject(cur))
            return NULL;
        memcpy(key, dotted, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        dotted += n + (dot ? 1 : 0);
    }
    return cur;
}

const char *akg_lsp_param_string(const cJSON *params, const char *dotted)
{
    const cJSON *v = akg_lsp_param(params, dotted);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

akg_lsp_document *akg_lsp_param_document(akg_lsp_server *s, const cJSON *params, int *code,
                                         char *err, size_t errlen)
{
    const char *uri = akg_lsp_param_string(params, "textDocument.uri");
    if (!uri) {
        *code = AKG_RPC_INVALID_PARAMS;
        akg_fail(err, errlen, AKG_EINVAL, "params.textDocument.uri must be a string");
        return NULL;
    }
    akg_lsp_document *doc = akg_lsp_doc_find(&s->docs, uri);
    if (!doc) {
        *code = AKG_RPC_INVALID_PARAMS;
        akg_fail(err, errlen, AKG_ENOTFOUND, "%s is not open", uri);
        return NULL;
    }
    return doc;
}

int akg_lsp_param_offset(akg_lsp_server *s, akg_lsp_document *doc, const cJSON *params,
                         size_t *offset)
{
    const cJSON *l = akg_lsp_param(params, "position.line");
    const cJSON *c = akg_lsp_param(params, "position.character");
    if (!cJSON_IsNumber(l) || !cJSON_IsNumber(c) || l->valuedouble < 0 || c->valuedouble < 0 ||
        l->valuedouble > UINT_MAX || c->valuedouble > UINT_MAX)
        return 0;
    *offset =
        akg_lsp_doc_offset(doc, s->encoding, (unsigned)l->valuedouble, (unsigned)c->valuedouble);
    return 1;
}

/* ---- trust, engine, store ----------------------------------------------- */

const char *akg_lsp_folder_of(akg_lsp_server *s, const char *path)
{
    if (!path)
        return NULL;
    char resolved[PATH_MAX];
    const char *p = path;
    if (realpath(path, resolved))
        p = resolved;
    for (size_t i = 0; i < s->n_folders; i++) {
        char folder[PATH_MAX];
        const char *f = realpath(s->folders[i], folder) ? folder : s->folders[i];
        if (akg_lsp_path_within(p, f))
            return s->folders[i];
    }
    return NULL;
}

int akg_lsp_check_trusted(akg_lsp_server *s, const char *path, char *err, size_t errlen)
{
    if (!path)
        return akg_fail(err, errlen, AKG_EINVAL, "only file:// documents can run jobs");
    if (s->n_folders == 0)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "%s: no workspace folder is open, so no path is trusted", path);
    if (akg_lsp_folder_of(s, path))
        return AKG_OK;
    return akg_fail(err, errlen, AKG_EINVAL, "%s is outside the workspace folders; refused", path);
}

static void resolve_store_path(akg_lsp_server *s, char *out, size_t outlen)
{
    const char *p = s->settings.store_path;
    if (!p || !*p)
        p = getenv("AKG_STORE");
    if (p && *p) {
        snprintf(out, outlen, "%s", p);
        return;
    }
    const char *home = getenv("HOME");
    snprintf(out, outlen, "%s/.akg/akg.db", home && *home ? home : ".");
}

akg_store *akg_lsp_store(akg_lsp_server *s)
{
    char path[PATH_MAX];
    resolve_store_path(s, path, sizeof path);
    if (s->store && s->store_path_open && strcmp(path, s->store_path_open) == 0)
        return s->store;
    if (s->store_path_open && strcmp(path, s->store_path_open) == 0)
        return NULL; /* failed before */
    if (s->store)
        akg_store_close(s->store);
    s->store = NULL;
    free(s->store_path_open);
    s->store_path_open = akg_strdup(path);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    char err[512] = "";
    if (slash && slash != dir) {
        *slash = '\0';
        akg_mkdirs(dir, err, sizeof err);
    }
    if (akg_store_open(path, &s->store, err, sizeof err) != AKG_OK) {
        akg_lsp_log_warn("store %s: %s; results shown only from jobs run since the server started",
                         path, err);
        s->store = NULL;
    }
    return s->store;
}

akg_engine *akg_lsp_engine(akg_lsp_server *s, char *err, size_t errlen)
{
    if (s->engine)
        return s->engine;
    if (s->state != AKG_LSP_RUNNING) {
        akg_fail(err, errlen, AKG_EINVAL, "the server is shutting down");
        return NULL;
    }
    char store_path[PATH_MAX];
    resolve_store_path(s, store_path, sizeof store_path);
    akg_engine_options opts;
    memset(&opts, 0, sizeof opts);
    opts.python = s->settings.python;
    opts.store_path = store_path;
    opts.devices = s->settings.devices;
    opts.max_jobs = s->settings.max_jobs;
    opts.workspace = s->n_folders ? s->folders[0] : NULL;
    if (akg_engine_new(s->loop, &opts, &s->engine, err, errlen) != AKG_OK) {
        s->engine = NULL;
        akg_lsp_log_error("engine: %s", err);
        return NULL;
    }
    akg_lsp_log_info("engine started (store %s)", store_path);
    return s->engine;
}

static void engine_closed(void *user)
{
    akg_lsp_server *s = user;
    s->engine_closing = 0;
    akg_lsp_log_debug("engine closed");
}

/* Settings that the engine reads at creation: an idle engine is closed so
 * the next job starts one with the new values; a busy one keeps running. */
void akg_lsp_settings_changed(akg_lsp_server *s, int changed)
{
    if (changed & AKG_LSP_SETTINGS_TRACE)
        akg_lsp_apply_trace(s->settings.trace);
    if ((changed & AKG_LSP_SETTINGS_ENGINE) && s->engine && !s->jobs && !s->engine_closing) {
        akg_engine *e = s->engine;
        s->engine = NULL;
        s->engine_closing = 1;
        akg_engine_close(e, engine_closed, s);
    }
    if (changed & (AKG_LSP_SETTINGS_TARGETS | AKG_LSP_SETTINGS_ENGINE))
        akg_lsp_refresh_views(s);
}

void akg_lsp_refresh_views(akg_lsp_server *s)
{
    if (s->state != AKG_LSP_RUNNING)
        return;
    if (s->caps.code_lens_refresh)
        akg_lsp_request(s, "workspace/codeLens/refresh", NULL, NULL, 0);
    if (s->caps.inlay_hint_refresh)
        akg_lsp_request(s, "workspace/inlayHint/refresh", NULL, NULL, 0);
}

/* ---- dispatch ------------------------------------------------------------ */

static const akg_lsp_method *find_method(const char *name)
{
    const akg_lsp_method *tables[] = {akg_lsp_lifecycle_methods(), akg_lsp_feature_methods()};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const akg_lsp_method *m = tables[t]; m->name; m++)
            if (strcmp(m->name, name) == 0)
                return m;
    return NULL;
}

static void handle_request(akg_lsp_server *s, akg_lsp_message *m)
{
    if (m->cancelled) {
        send_error(s, m->id, AKG_RPC_REQUEST_CANCELLED, "request cancelled");
        return;
    }
    const akg_lsp_method *method = find_method(m->method);
    int is_initialize = strcmp(m->method, "initialize") == 0;
    if (s->state == AKG_LSP_STARTING && !is_initialize) {
        send_error(s, m->id, AKG_RPC_SERVER_NOT_INITIALIZED, "the server is not initialized yet");
        return;
    }
    if (s->state == AKG_LSP_SHUTDOWN) {
        send_error(s, m->id, AKG_RPC_INVALID_REQUEST, "the server is shutting down");
        return;
    }
    if (!method || !method->is_request) {
        char msg[300];
        snprintf(msg, sizeof msg, "unknown method %.200s", m->method);
        akg_lsp_log_info("%s", msg);
        send_error(s, m->id, AKG_RPC_METHOD_NOT_FOUND, msg);
        return;
    }
    cJSON *result = NULL;
    char err[1024] = "";
    int code = method->handler(s, m->params, &result, err, sizeof err);
    if (code != 0) {
        cJSON_Delete(result);
        akg_lsp_log_info("%s failed: %s", m->method, err);
        send_error(s, m->id, code, err[0] ? err : "request failed");
    } else {
        send_result(s, m->id, result);
    }
}

static void handle_notification(akg_lsp_server *s, akg_lsp_message *m)
{
    int is_exit = strcmp(m->method, "exit") == 0;
    if (s->state == AKG_LSP_STARTING && !is_exit)
        return; /* dropped, as the spec says */
    if (s->state == AKG_LSP_SHUTDOWN && !is_exit)
        return;
    const akg_lsp_method *method = find_method(m->method);
    if (!method || method->is_request) {
        if (strncmp(m->method, "$/", 2) != 0)
            akg_lsp_log_debug("ignored notification %.200s", m->method);
        return;
    }
    cJSON *result = NULL;
    char err[1024] = "";
    if (method->handler(s, m->params, &result, err, sizeof err) != 0)
        akg_lsp_log_warn("%s: %s", m->method, err);
    cJSON_Delete(result);
}

static void message_free(akg_lsp_message *m)
{
    cJSON_Delete(m->json);
    free(m);
}

static void on_pump(uv_idle_t *h)
{
    akg_lsp_server *s = h->data;
    for (int i = 0; i < SERVER_PUMP_BATCH && s->queue_head && s->state != AKG_LSP_EXITING; i++) {
        akg_lsp_message *m = s->queue_head;
        s->queue_head = m->next;
        if (!s->queue_head)
            s->queue_tail = NULL;
        s->queue_len--;
        if (m->kind == MSG_REQUEST)
            handle_request(s, m);
        else
            handle_notification(s, m);
        message_free(m);
    }
    if ((!s->queue_head || s->state == AKG_LSP_EXITING) && s->pump_active) {
        uv_idle_stop(&s->pump);
        s->pump_active = 0;
    }
}

static void handle_response(akg_lsp_server *s, const cJSON *msg)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    long long n = -1;
    if (cJSON_IsString(id) && strncmp(id->valuestring, "akg-", 4) == 0)
        n = strtoll(id->valuestring + 4, NULL, 10);
    for (akg_lsp_outgoing **pp = &s->outgoing; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == n) {
            akg_lsp_outgoing *o = *pp;
            *pp = o->next;
            const cJSON *error = cJSON_GetObjectItemCaseSensitive(msg, "error");
            const cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
            if (o->cb)
                o->cb(s, error ? NULL : result, error, o->user_id);
            free(o);
            return;
        }
    }
    akg_lsp_log_debug("a response to no request of ours; ignored");
}

static void handle_cancel_request(akg_lsp_server *s, const cJSON *params)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "id");
    if (!id)
        return;
    for (akg_lsp_message *m = s->queue_head; m; m = m->next)
        if (m->kind == MSG_REQUEST && cJSON_Compare(m->id, id, 1))
            m->cancelled = 1;
    /* Requests already answered: nothing to do (every answer went out once). */
}

static size_t on_message(void *user, const char *body, size_t len)
{
    akg_lsp_server *s = user;
    if (s->state == AKG_LSP_EXITING)
        return len;
    if (!akg_rpc_utf8_valid(body, len)) {
        send_error(s, NULL, AKG_RPC_PARSE_ERROR, "message is not valid UTF-8");
        return len;
    }
    cJSON *json = cJSON_ParseWithLength(body, len);
    if (!json) {
        send_error(s, NULL, AKG_RPC_PARSE_ERROR, "message is not valid JSON");
        return akg_rpc_find_resync(body, len);
    }
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(json, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(json, "id");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(json, "params");
    int id_ok =
        id && (cJSON_IsString(id) ||
               (cJSON_IsNumber(id) && id->valuedouble == (double)(long long)id->valuedouble));
    if (!cJSON_IsObject(json)) {
        send_error(s, NULL, AKG_RPC_INVALID_REQUEST, "a message must be a JSON object");
        cJSON_Delete(json);
        return len;
    }
    if (!method) {
        if (id && (cJSON_GetObjectItemCaseSensitive(json, "result") ||
                   cJSON_GetObjectItemCaseSensitive(json, "error")))
            handle_response(s, json);
        else
            send_error(s, id_ok ? id : NULL, AKG_RPC_INVALID_REQUEST, "a message without a method");
        cJSON_Delete(json);
        return len;
    }
    if (!cJSON_IsString(method) || (id && !id_ok) ||
        (params && !cJSON_IsObject(params) && !cJSON_IsArray(params))) {
        if (id || !cJSON_IsString(method))
            send_error(s, id_ok ? id : NULL, AKG_RPC_INVALID_REQUEST,
                       "method must be a string, id a number or string, params an object or array");
        cJSON_Delete(json);
        return len;
    }
    if (!id && strcmp(method->valuestring, "$/cancelRequest") == 0) {
        handle_cancel_request(s, params);
        cJSON_Delete(json);
        return len;
    }
    if (s->queue_len >= SERVER_QUEUE_CAP) {
        if (id)
            send_error(s, id, AKG_RPC_REQUEST_FAILED, "the server is overloaded; try again");
        cJSON_Delete(json);
        return len;
    }
    akg_lsp_message *m = calloc(1, sizeof *m);
    if (!m) {
        if (id)
            send_error(s, id, AKG_RPC_INTERNAL_ERROR, "out of memory");
        cJSON_Delete(json);
        return len;
    }
    m->kind = id ? MSG_REQUEST : MSG_NOTIFICATION;
    m->json = json;
    m->id = id;
    m->method = method->valuestring;
    m->params = params;
    if (s->queue_tail)
        s->queue_tail->next = m;
    else
        s->queue_head = m;
    s->queue_tail = m;
    s->queue_len++;
    if (!s->pump_active) {
        uv_idle_start(&s->pump, on_pump);
        s->pump_active = 1;
    }
    return len;
}

static void on_framing_error(void *user, int code, const char *message)
{
    akg_lsp_server *s = user;
    send_error(s, NULL, code, message);
}

static void on_eof(void *user)
{
    akg_lsp_server *s = user;
    akg_lsp_log_info("input ended");
    if (s->state == AKG_LSP_EXITING)
        return;
    /* The client went away without `exit`: leave as the spec's exit would. */
    s->exit_code = s->shutdown_received ? 0 : 1;
    akg_lsp_server_stop(s);
}

/* ---- start and stop ------------------------------------------------------ */

static void on_handle_closed(uv_handle_t *h)
{
    akg_lsp_server *s = h->data;
    s->handles_open--;
}

static void on_transport_closed(void *user)
{
    akg_lsp_server *s = user;
    s->handles_open--;
}

static void on_exit_deadline(uv_timer_t *t)
{
    akg_lsp_server *s = t->data;
    akg_lsp_log_error("still closing %d ms after the stop (%d server handle(s) open, engine %s); "
                      "leaving without them",
                      SERVER_EXIT_DEADLINE_MS, s->handles_open,
                      s->engine_closing ? "closing" : "closed");
    s->exit_forced = 1;
    uv_stop(s->loop);
}

void akg_lsp_server_stop(akg_lsp_server *s)
{
    if (s->state == AKG_LSP_EXITING)
        return;
    s->state = AKG_LSP_EXITING;
    akg_lsp_log_set_sink(NULL, NULL, 0);
    akg_lsp_jobs_cancel_all(s);
    if (s->pump_active)
        uv_idle_stop(&s->pump);
    s->pump_active = 0;
    uv_close((uv_handle_t *)&s->pump, on_handle_closed);
    uv_close((uv_handle_t *)&s->debounce, on_handle_closed);
    akg_lsp_watch_close(s);
    if (s->engine) {
        akg_engine *e = s->engine;
        s->engine = NULL;
        s->engine_closing = 1;
        akg_engine_close(e, engine_closed, s);
    }
    if (s->rpc) {
        akg_rpc_transport *t = s->rpc;
        s->rpc = NULL;
        akg_rpc_transport_close(t, on_transport_closed, s);
    }
    if (uv_timer_init(s->loop, &s->exit_deadline) == 0) {
        s->exit_deadline.data = s;
        s->exit_deadline_open = 1;
        uv_timer_start(&s->exit_deadline, on_exit_deadline, SERVER_EXIT_DEADLINE_MS, 0);
        uv_unref((uv_handle_t *)&s->exit_deadline);
    }
}

int akg_lsp_server_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_message,
                       akg_lsp_server **out, char *err, size_t errlen)
{
    akg_lsp_server *s = calloc(1, sizeof *s);
    if (!s)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    s->loop = loop;
    s->exit_code = 1;
    s->max_message = max_message;
    akg_lsp_settings_init(&s->settings);
    uv_idle_init(loop, &s->pump);
    s->pump.data = s;
    uv_timer_init(loop, &s->debounce);
    s->debounce.data = s;
    s->handles_open = 2;
    int rc = akg_rpc_transport_new(loop, in_fd, out_fd, max_message, on_message, on_framing_error,
                                   on_eof, s, &s->rpc, err, errlen);
    if (rc != AKG_OK) {
        s->state = AKG_LSP_EXITING;
        uv_close((uv_handle_t *)&s->pump, on_handle_closed);
        uv_close((uv_handle_t *)&s->debounce, on_handle_closed);
        uv_run(loop, UV_RUN_DEFAULT);
        akg_lsp_server_free(s);
        return rc;
    }
    s->handles_open++;
    akg_lsp_log_set_sink(log_to_client, s, 0);
    *out = s;
    return AKG_OK;
}

void akg_lsp_server_free(akg_lsp_server *s)
{
    if (!s)
        return;
    if (s->exit_deadline_open) {
        /* The last handle: its memory is ours, so wait for its close. */
        s->exit_deadline_open = 0;
        uv_close((uv_handle_t *)&s->exit_deadline, NULL);
        uv_run(s->loop, UV_RUN_DEFAULT);
    }
    while (s->queue_head) {
        akg_lsp_message *m = s->queue_head;
        s->queue_head = m->next;
        message_free(m);
    }
    while (s->outgoing) {
        akg_lsp_outgoing *o = s->outgoing;
        s->outgoing = o->next;
        free(o);
    }
    akg_lsp_jobs_free(s);
    akg_lsp_results_free(s);
    akg_lsp_sketch_runs_free(s);
    akg_lsp_selections_free(s);
    akg_lsp_docs_free(&s->docs);
    for (size_t i = 0; i < s->n_folders; i++)
        free(s->folders[i]);
    free(s->folders);
    if (s->store)
        akg_store_close(s->store);
    free(s->store_path_open);
    akg_lsp_settings_free(&s->settings);
    free(s);
}

int akg_lsp_server_exit_code(const akg_lsp_server *s)
{
    return s->exit_code;
}

int akg_lsp_server_exit_forced(const akg_lsp_server *s)
{
    return s->exit_forced;
}
