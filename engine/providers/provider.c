/*
 * provider.c: the provider registry, sessions and pending requests (see
 * akg/provider.h).
 *
 * A session holds at most one pending op (a design, a code or a route request). The op carries the
 * caller's callback; whoever ends it (the provider completing it, or a cancellation) detaches it
 * from the session first, so a callback that frees the session or starts the next request finds the
 * session idle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/provider.h"

extern const akg_provider *const akg_provider_registry[];

typedef enum { OP_DESIGN, OP_CODE, OP_ROUTE } op_kind;

struct akg_provider_op {
    akg_provider_session *session;
    op_kind kind;
    akg_design_cb design_cb;
    akg_code_cb code_cb;
    akg_route_cb route_cb;
    void *user;
    void *data; /* the provider's */
};

struct akg_provider_session {
    const akg_provider *provider;
    void *state;
    akg_provider_op *pending;
    akg_progress_cb progress_cb; /* who hears the requests' progress (may be NULL) */
    void *progress_user;
};

/* ---- the registry -------------------------------------------------------- */

const akg_provider *const *akg_provider_list(void)
{
    return akg_provider_registry;
}

const akg_provider *akg_provider_find(const char *name)
{
    for (const akg_provider *const *p = akg_provider_registry; name && *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

const char *akg_provider_name(const akg_provider *provider)
{
    return provider ? provider->name : "";
}

void akg_provider_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (const akg_provider *const *p = akg_provider_registry; *p && at < len; p++) {
        int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", (*p)->name);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

void akg_provider_unknown_message(const char *name, char *buf, size_t len)
{
    char names[256];
    akg_provider_names(names, sizeof names);
    size_t count = 0;
    for (const akg_provider *const *p = akg_provider_registry; *p; p++)
        count++;
    if (count == 1)
        snprintf(buf, len, "unknown provider '%s' (the only provider in this build is %s)",
                 name ? name : "", names);
    else
        snprintf(buf, len, "unknown provider '%s' (the providers in this build: %s)",
                 name ? name : "", names);
}

/* ---- sessions ------------------------------------------------------------ */

int akg_provider_session_new(const akg_provider *provider, uv_loop_t *loop,
                             akg_provider_session **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!provider)
        return akg_fail(err, errlen, AKG_EINVAL, "no provider given");
    akg_provider_session *s = calloc(1, sizeof *s);
    if (!s)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory opening a %s session",
                        provider->name);
    s->provider = provider;
    int rc = provider->session_open ? provider->session_open(loop, &s->state, err, errlen) : AKG_OK;
    if (rc != AKG_OK) {
        free(s);
        return rc;
    }
    *out = s;
    return AKG_OK;
}

void akg_provider_session_free(akg_provider_session *s)
{
    if (!s)
        return;
    if (s->pending)
        akg_provider_cancel(s->pending);
    if (s->provider->session_close)
        s->provider->session_close(s->state);
    free(s);
}

const akg_provider *akg_provider_session_provider(const akg_provider_session *s)
{
    return s->provider;
}

/* ---- requests ------------------------------------------------------------ */

static akg_provider_op *op_new(akg_provider_session *s, op_kind kind, void *user, char *err,
                               size_t errlen)
{
    if (s->pending) {
        akg_fail(err, errlen, AKG_EBUSY,
                 "the %s provider is still answering this job's previous request",
                 s->provider->name);
        return NULL;
    }
    akg_provider_op *op = calloc(1, sizeof *op);
    if (!op) {
        akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
        return NULL;
    }
    op->session = s;
    op->kind = kind;
    op->user = user;
    return op;
}

/* After the provider's start function returned rc for op: on failure nothing is pending and
 * no callback will run; else *out (when given) is the pending op. */
static int op_started(akg_provider_session *s, akg_provider_op *op, int rc, akg_provider_op **out)
{
    if (rc != AKG_OK) {
        s->pending = NULL;
        free(op);
        return rc;
    }
    if (out)
        *out = op;
    return AKG_OK;
}

int akg_provider_design(akg_provider_session *s, const akg_design_request *req, akg_design_cb cb,
                        void *user, akg_provider_op **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (!s->provider->design)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "the %s provider does not design sketches",
                        s->provider->name);
    akg_provider_op *op = op_new(s, OP_DESIGN, user, err, errlen);
    if (!op)
        return s->pending ? AKG_EBUSY : AKG_ENOMEM;
    op->design_cb = cb;
    s->pending = op;
    return op_started(s, op, s->provider->design(s->state, req, op, err, errlen), out);
}

int akg_provider_code(akg_provider_session *s, const akg_code_request *req, akg_code_cb cb,
                      void *user, akg_provider_op **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (!s->provider->code)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "the %s provider does not write code",
                        s->provider->name);
    akg_provider_op *op = op_new(s, OP_CODE, user, err, errlen);
    if (!op)
        return s->pending ? AKG_EBUSY : AKG_ENOMEM;
    op->code_cb = cb;
    s->pending = op;
    return op_started(s, op, s->provider->code(s->state, req, op, err, errlen), out);
}

bool akg_provider_can_route(const akg_provider_session *s)
{
    return s && s->provider->route;
}

int akg_provider_route(akg_provider_session *s, const akg_route_request *req, akg_route_cb cb,
                       void *user, akg_provider_op **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (!s->provider->route)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "the %s provider does not route failures (the rules do)",
                        s->provider->name);
    akg_provider_op *op = op_new(s, OP_ROUTE, user, err, errlen);
    if (!op)
        return s->pending ? AKG_EBUSY : AKG_ENOMEM;
    op->route_cb = cb;
    s->pending = op;
    return op_started(s, op, s->provider->route(s->state, req, op, err, errlen), out);
}

const char *akg_route_class_name(akg_route_class cls)
{
    switch (cls) {
    case AKG_ROUTE_TRUNCATED_OUTPUT:
        return "truncated_output";
    case AKG_ROUTE_LOCAL_CODE_ERROR:
        return "local_code_error";
    case AKG_ROUTE_DESIGN_ERROR:
        return "design_error";
    case AKG_ROUTE_ENVIRONMENT_ERROR:
        return "environment_error";
    case AKG_ROUTE_TIMEOUT:
        return "timeout";
    }
    return "?";
}

const char *akg_route_agent_name(akg_route_agent agent)
{
    switch (agent) {
    case AKG_ROUTE_CODER:
        return "coder";
    case AKG_ROUTE_DESIGNER:
        return "designer";
    case AKG_ROUTE_STOP:
        return "stop";
    }
    return "?";
}

void akg_provider_op_set_data(akg_provider_op *op, void *data)
{
    op->data = data;
}

void *akg_provider_op_data(const akg_provider_op *op)
{
    return op->data;
}

void akg_provider_session_set_progress(akg_provider_session *session, akg_progress_cb cb,
                                       void *user)
{
    if (!session)
        return;
    session->progress_cb = cb;
    session->progress_user = user;
}

void akg_provider_op_progress(const akg_provider_op *op, const akg_provider_progress *progress)
{
    if (op && op->session && op->session->progress_cb && progress)
        op->session->progress_cb(progress, op->session->progress_user);
}

/* Detaches op from its session so the callback finds the session idle. */
static void op_detach(akg_provider_op *op)
{
    if (op->session && op->session->pending == op)
        op->session->pending = NULL;
    op->session = NULL;
}

void akg_provider_complete_design(akg_provider_op *op, const akg_design_answer *answer)
{
    op_detach(op);
    akg_design_cb cb = op->design_cb;
    void *user = op->user;
    free(op);
    if (cb)
        cb(answer, user);
}

void akg_provider_complete_code(akg_provider_op *op, akg_code_answer *answer)
{
    op_detach(op);
    akg_code_cb cb = op->code_cb;
    void *user = op->user;
    free(op);
    if (cb)
        cb(answer, user);
}

void akg_provider_complete_route(akg_provider_op *op, const akg_route_answer *answer)
{
    op_detach(op);
    akg_route_cb cb = op->route_cb;
    void *user = op->user;
    free(op);
    if (cb)
        cb(answer, user);
}

void akg_provider_cancel(akg_provider_op *op)
{
    akg_provider_session *s = op->session;
    if (s && s->provider->cancel)
        s->provider->cancel(s->state, op);
    if (op->kind == OP_DESIGN) {
        akg_design_answer a = {.status = AKG_ECANCELED, .message = "cancelled"};
        akg_provider_complete_design(op, &a);
    } else if (op->kind == OP_CODE) {
        akg_code_answer a = {.status = AKG_ECANCELED, .message = "cancelled"};
        akg_provider_complete_code(op, &a);
    } else {
        akg_route_answer a = {.status = AKG_ECANCELED, .message = "cancelled", .suggestion = ""};
        akg_provider_complete_route(op, &a);
    }
}
