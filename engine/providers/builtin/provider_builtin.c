/*
 * provider_builtin.c: the `builtin` provider, offline and deterministic.
 *
 * Design requests go to the rule-based Designer (akg_designer_builtin_for, which designs
 * for the request's target: a GPU's designs for backend "cuda"), whose
 * design supplies the sketch text, the operator's name and the provenance
 * (akg_design_to_json). Code requests go to the target backend's emitter for
 * a bound sketch. Both are pure and fast, but they still answer from a later
 * loop iteration (a zero-delay uv timer per request), so a caller never sees
 * its callback run inside the call that made the request, and a request
 * cancelled before its timer fires does no work at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "akg/provider.h"
#include "akg/sketch.h"

typedef struct {
    uv_loop_t *loop;
} builtin_session;

/* One pending request. The timer's memory lives until its close callback
 * (libuv's rule), which frees the whole work item; op is NULL once the
 * request has been answered or cancelled. */
typedef struct {
    uv_timer_t timer;
    akg_provider_op *op;
    builtin_session *session;
    int is_code;
    akg_design_request design_req;
    akg_code_request code_req;
} builtin_work;

static int builtin_open(uv_loop_t *loop, void **state, char *err, size_t errlen)
{
    builtin_session *s = calloc(1, sizeof *s);
    if (!s)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory opening a builtin session");
    s->loop = loop;
    *state = s;
    return AKG_OK;
}

static void builtin_close(void *state)
{
    builtin_session *s = state;
    if (!s)
        return;
    free(s);
}

static int range_is_set(const akg_range *r)
{
    return r->start_row || r->start_col || r->end_row || r->end_col;
}

static void builtin_design(builtin_session *s, const akg_design_request *req, akg_provider_op *op)
{
    char err[1024] = "";
    akg_range where = {0};
    akg_design *d = NULL;
    akg_design_target target = {.backend = req->backend, .dsl = req->dsl, .arch = req->arch};
    int rc = akg_designer_builtin_for(&target, req->ref, req->probe, req->feedback, req->attempt,
                                      &d, &where, err, sizeof err);
    if (rc == AKG_OK && (!d || !d->sketch_text)) {
        rc = AKG_ENOMEM;
        snprintf(err, sizeof err, "the built-in Designer produced no sketch for %s",
                 d && d->op_name[0] ? d->op_name : "this reference");
    }
    if (rc != AKG_OK) {
        akg_design_free(d);
        akg_design_answer a = {.status = rc,
                               .message = err[0] ? err : akg_strerror(rc),
                               .has_where = range_is_set(&where),
                               .where = where};
        akg_provider_complete_design(op, &a);
        return;
    }
    cJSON *provenance = akg_design_to_json(d);
    akg_design_answer a = {.status = AKG_OK,
                           .sketch_text = d->sketch_text,
                           .op_name = d->op_name,
                           .provenance = provenance};
    akg_provider_complete_design(op, &a); /* the answer is valid only during the callback */
    cJSON_Delete(provenance);
    akg_design_free(d);
}

/* Lowers req's sketch into files through the backend's emitter: the sketch alone is the
 * design, so it must say where everything comes from in the task (its bind: section). */
static int builtin_lower(const akg_code_request *req, akg_kernel_files *files, char *err,
                         size_t errlen)
{
    const akg_backend *be = req->backend;
    if (!akg_sketch_has_binding(req->sketch))
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "sketch '%s' has no bind: section; only a bound sketch can be lowered "
                        "for %s/%s (add bind: items saying where each tensor and symbol comes "
                        "from in the task)",
                        akg_sketch_name(req->sketch), be->name, be->dsl);
    if (!be->emit)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "backend %s/%s has no emitter for sketches",
                        be->name, be->dsl);
    akg_emit_request er = {
        .ref = req->ref, .probe = req->probe, .safe = req->safe, .sketch_file = req->sketch_file};
    return be->emit(req->sketch, &er, files, err, errlen);
}

static void builtin_code(builtin_session *s, const akg_code_request *req, akg_provider_op *op)
{
    char err[1024] = "";
    akg_kernel_files files = {0};
    int rc = builtin_lower(req, &files, err, sizeof err);
    if (rc == AKG_OK && (!files.kernel_source || !files.kernel_filename)) {
        rc = AKG_ENOMEM;
        snprintf(err, sizeof err, "the emitter of %s/%s returned no kernel source",
                 req->backend->name, req->backend->dsl);
    }
    akg_code_answer a = {.status = rc,
                         .message = rc ? (err[0] ? err : akg_strerror(rc)) : NULL,
                         .files = rc ? NULL : &files};
    akg_provider_complete_code(op, &a);
    akg_kernel_files_free(&files); /* what the callback did not take */
}

static void on_work_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_work(uv_timer_t *t)
{
    builtin_work *w = t->data;
    akg_provider_op *op = w->op;
    w->op = NULL;
    uv_close((uv_handle_t *)&w->timer, on_work_closed);
    if (!op)
        return;
    akg_provider_op_set_data(op, NULL);
    if (w->is_code)
        builtin_code(w->session, &w->code_req, op);
    else
        builtin_design(w->session, &w->design_req, op);
}

/* Schedules w (its request already copied in) to run on the next loop
 * iteration as op's work. */
static int start_work(void *state, akg_provider_op *op, builtin_work *w, char *err, size_t errlen)
{
    builtin_session *s = state;
    if (uv_timer_init(s->loop, &w->timer) != 0) {
        free(w);
        return akg_fail(err, errlen, AKG_EIO, "cannot create the builtin provider's timer");
    }
    w->op = op;
    w->session = s;
    w->timer.data = w;
    if (uv_timer_start(&w->timer, on_work, 0, 0) != 0) {
        w->op = NULL;
        uv_close((uv_handle_t *)&w->timer, on_work_closed);
        return akg_fail(err, errlen, AKG_EIO, "cannot schedule the builtin provider's work");
    }
    akg_provider_op_set_data(op, w);
    return AKG_OK;
}

static int builtin_design_start(void *state, const akg_design_request *req, akg_provider_op *op,
                                char *err, size_t errlen)
{
    if (!req->ref)
        return akg_fail(err, errlen, AKG_EINVAL, "a design request needs the parsed reference");
    builtin_work *w = calloc(1, sizeof *w);
    if (!w)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    w->design_req = *req;
    return start_work(state, op, w, err, errlen);
}

static int builtin_code_start(void *state, const akg_code_request *req, akg_provider_op *op,
                              char *err, size_t errlen)
{
    if (!req->sketch || !req->backend)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "a code request needs a checked sketch and a backend");
    builtin_work *w = calloc(1, sizeof *w);
    if (!w)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    w->is_code = 1;
    w->code_req = *req;
    return start_work(state, op, w, err, errlen);
}

/* The work's timer is closed here; its close callback frees the work, and
 * the session answers the op with AKG_ECANCELED. */
static void builtin_cancel(void *state, akg_provider_op *op)
{
    (void)state;
    builtin_work *w = akg_provider_op_data(op);
    if (!w)
        return;
    akg_provider_op_set_data(op, NULL);
    w->op = NULL;
    uv_timer_stop(&w->timer);
    if (!uv_is_closing((uv_handle_t *)&w->timer))
        uv_close((uv_handle_t *)&w->timer, on_work_closed);
}

const akg_provider akg_provider_builtin = {
    .name = "builtin",
    .description = "offline: designs sketches by rule from the op graph and lowers them "
                   "through the backend's emitter",
    .session_open = builtin_open,
    .session_close = builtin_close,
    .design = builtin_design_start,
    .code = builtin_code_start,
    .cancel = builtin_cancel,
};
