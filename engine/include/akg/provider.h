/*
 * provider.h: the seam designs and code come through.
 *
 * A provider answers a job's two kinds of request, asynchronously on the
 * job's libuv loop:
 *
 *  - design: the task (the parsed reference, the probe, the Conductor's last
 *    failure, the attempt, the target) answered with the text of a sketch,
 *    the operator's name and a provenance record (a cJSON object saying how
 *    the sketch was designed, for the report and the store), or with a
 *    failure: a status, a message for a person and, when the failure is
 *    about a construct of the reference, its range (the editor underlines it);
 *  - code: a checked sketch with its task, the safe-mode flag and the failure
 *    the Conductor sent back to the Coder, answered with the kernel's files
 *    (akg_kernel_files, backend.h) or a failure;
 *  - route (optional): a failed attempt (the Verifier's class and detail, the
 *    attempt and the budget, the earlier attempts) answered with the Conductor's
 *    choice: the failure's class (truncated_output, local_code_error,
 *    design_error, environment_error, timeout), the next agent (coder, designer
 *    or stop) and a suggestion for it. A provider without it, or an answer that
 *    is not usable (status not AKG_OK), leaves the routing to the pipeline's
 *    rules (engine/workflows/pipeline.c, the Conductor), which say so in the
 *    report.
 *
 * `builtin` (engine/providers/builtin/provider_builtin.c) designs by rule and
 * lowers through the backend's emitter; it has no route: the rules route. `openai`
 * asks a model for all three (engine/providers/openai/README.md). Providers are listed in
 * engine/providers/registry.c, one line each; `--provider` takes their names.
 *
 * Sessions and requests. A job opens one session (akg_provider_session_new)
 * and frees it when it ends; the session holds the provider's private state
 * across the job's requests (what it designed last, a conversation). At most
 * one request per session is pending at a time. Every request that was
 * started (AKG_OK) gets exactly one callback, on the loop's thread, from a
 * later loop iteration, never inside the call that started it.
 * akg_provider_cancel() runs the callback with AKG_ECANCELED before it
 * returns; akg_provider_session_free() cancels a pending request first.
 *
 * Ownership. A request's pointers (reference, probe, feedback, sketch, history) are
 * borrowed and must stay valid until its callback. An answer and everything
 * it points to is owned by the provider and valid only during the callback,
 * except the kernel files of a code answer, which the callback may take
 * (move the strings out and set the fields to NULL). The op handle is valid
 * until its callback starts.
 */
#ifndef AKG_PROVIDER_H
#define AKG_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "akg/backend.h"
#include "akg/task.h"

struct akg_sketch;

typedef struct akg_provider akg_provider;
typedef struct akg_provider_session akg_provider_session;
typedef struct akg_provider_op akg_provider_op;

/* ---- requests and answers ---------------------------------------------- */

typedef struct {
    const akg_reference *ref; /* the parsed reference (required) */
    const cJSON *probe;       /* the harness's probe answer (may be NULL) */
    const cJSON *feedback;    /* the last failure routed to the Designer; NULL at first */
    int attempt;              /* 1-based step of the Conductor loop */
    const char *backend, *dsl, *arch;
} akg_design_request;

typedef struct {
    int status;          /* AKG_OK; AKG_EUNSUPPORTED when nothing here designs the task;
                            AKG_ECANCELED; another akg_status on other failures */
    const char *message; /* failure: for a person, naming what could not be designed */
    bool has_where;      /* failure: where points into the reference */
    akg_range where;
    const char *sketch_text; /* success: the sketch, not yet parsed or checked */
    const char *op_name;     /* success: for file names and the report ("relu") */
    const cJSON *provenance; /* how it was designed, or what the failed attempt cost (may be
                                NULL); the report's "design" */
} akg_design_answer;

typedef struct {
    const struct akg_sketch *sketch; /* parsed and checked (required) */
    const akg_reference *ref;        /* the task: Model's signature for model_new.py */
    const cJSON *probe;              /* may be NULL */
    const akg_backend *backend;      /* the target (required) */
    bool safe;                       /* conservative lowering (the Conductor's answer to a crash) */
    const char *sketch_file;         /* the sketch's file name, for comments in the output */
    /* the last failure the Conductor sent to the Coder ({class, detail, suggestion, routed_by});
       NULL at first or after a new design */
    const cJSON *feedback;
} akg_code_request;

typedef struct {
    int status;              /* AKG_OK, AKG_ECANCELED, or why the sketch could not be lowered */
    const char *message;     /* failure: for a person */
    akg_kernel_files *files; /* success: the callback may take the strings (see above) */
    const cJSON *provenance; /* how it was written (a model's requests, tokens), success or not;
                                NULL for a rule-based lowering; the report's "code" */
} akg_code_answer;

/* The failure classes a route answer names, and where the next attempt goes. */
typedef enum {
    AKG_ROUTE_TRUNCATED_OUTPUT,  /* an agent's answer was cut (a kernel or sketch incomplete) */
    AKG_ROUTE_LOCAL_CODE_ERROR,  /* the kernel is wrong where the design is right */
    AKG_ROUTE_DESIGN_ERROR,      /* the design computes something else, or cannot be lowered */
    AKG_ROUTE_ENVIRONMENT_ERROR, /* the machine: a missing compiler, runtime or device */
    AKG_ROUTE_TIMEOUT            /* the kernel (or its build) ran out of time */
} akg_route_class;

typedef enum { AKG_ROUTE_CODER, AKG_ROUTE_DESIGNER, AKG_ROUTE_STOP } akg_route_agent;

/* "truncated_output", ...; "coder", "designer", "stop" (static strings). */
const char *akg_route_class_name(akg_route_class cls);
const char *akg_route_agent_name(akg_route_agent agent);

typedef struct {
    const char *error_class; /* the Verifier's (or the build's, the design check's) class */
    const char *detail;      /* its detail */
    const char *found_by;    /* "verify" or "design_check" */
    const char *rule_agent;  /* where the rules would send it: "coder" or "designer" */
    int attempt;             /* 1-based: the attempt that failed */
    int max_attempts;        /* the job's budget (max_step) */
    /* the earlier failed attempts, oldest first: [{step, error_class, detail, agent,
       routed_by}] (may be NULL) */
    const cJSON *history;
    bool designer_allowed; /* false: the design is the user's, only the Coder or stop */
    bool coder_allowed;    /* false: the design itself was found wrong, no code of it passes */
    const char *backend, *dsl, *arch;
    const char *op_name; /* may be NULL */
} akg_route_request;

typedef struct {
    int status;          /* AKG_OK: cls, agent and suggestion hold the choice; AKG_ECANCELED;
                            another status: no usable answer (the rules route) */
    const char *message; /* not AKG_OK: why, for the report ("the model's answer is not JSON") */
    akg_route_class cls;
    akg_route_agent agent;
    const char *suggestion;  /* for the next agent's prompt ("" when none) */
    const cJSON *provenance; /* the model's requests and tokens, usable or not (may be NULL) */
} akg_route_answer;

typedef void (*akg_design_cb)(const akg_design_answer *answer, void *user);
typedef void (*akg_code_cb)(akg_code_answer *answer, void *user);
typedef void (*akg_route_cb)(const akg_route_answer *answer, void *user);

/* Progress of a pending request, for the front ends (who is asked, which model, the tokens so
 * far). A provider that asks a model reports it; builtin reports nothing. */
typedef enum {
    AKG_PROGRESS_ASKING,    /* a request to the model starts */
    AKG_PROGRESS_STREAMING, /* the answer streams: completion_tokens counted so far */
    AKG_PROGRESS_RETRYING,  /* an attempt failed; detail says why and the wait */
    AKG_PROGRESS_ANSWERED   /* the model answered: the tokens of the request */
} akg_progress_kind;

typedef struct {
    akg_progress_kind kind;
    const char *agent;      /* "designer", "coder" or "conductor" */
    const char *model;      /* the model asked; "" when unknown */
    int request;            /* 1-based: the request of this op (a repair asks again) */
    long prompt_tokens;     /* -1 when unknown */
    long completion_tokens; /* -1 when unknown */
    double elapsed_s;       /* since the request started */
    const char *detail;     /* RETRYING: why and the wait; else NULL */
} akg_provider_progress;

/* Runs on the loop's thread, possibly deep inside the provider's transfer: it must not cancel
 * the request or free the session (the pipeline copies what it needs and reports it from a
 * later loop iteration). p and its strings are valid during the call only. */
typedef void (*akg_progress_cb)(const akg_provider_progress *p, void *user);

/* ---- the registry -------------------------------------------------------- */

/* The provider registered under name, or NULL. */
const akg_provider *akg_provider_find(const char *name);
/* The registry, NULL-terminated, in registration order. */
const akg_provider *const *akg_provider_list(void);
/* "builtin, ..." into buf, for messages and --help. */
void akg_provider_names(char *buf, size_t len);
/* The message for an unknown provider name ("unknown provider 'x' (the only
 * provider in this build is builtin)") into buf. */
void akg_provider_unknown_message(const char *name, char *buf, size_t len);
const char *akg_provider_name(const akg_provider *provider);

/* ---- sessions and requests (what the pipeline calls) --------------------- */

/* Opens a session of provider on loop. *out is owned by the caller and
 * released with akg_provider_session_free. */
int akg_provider_session_new(const akg_provider *provider, uv_loop_t *loop,
                             akg_provider_session **out, char *err, size_t errlen);
/* Cancels a pending request (its callback runs first), then frees the session. */
void akg_provider_session_free(akg_provider_session *session);
const akg_provider *akg_provider_session_provider(const akg_provider_session *session);
/* Who hears the progress of the session's requests (cb NULL: nobody). */
void akg_provider_session_set_progress(akg_provider_session *session, akg_progress_cb cb,
                                       void *user);

/* Starts a request. On AKG_OK, *op (may be NULL) is the pending request and
 * cb will run exactly once. Otherwise nothing is pending and no callback runs:
 * AKG_EBUSY when a request of this session is pending, another status with a
 * message when the provider cannot start it. */
int akg_provider_design(akg_provider_session *session, const akg_design_request *req,
                        akg_design_cb cb, void *user, akg_provider_op **op, char *err,
                        size_t errlen);
int akg_provider_code(akg_provider_session *session, const akg_code_request *req, akg_code_cb cb,
                      void *user, akg_provider_op **op, char *err, size_t errlen);
/* Whether the session's provider routes failures (has a route operation). */
bool akg_provider_can_route(const akg_provider_session *session);
/* Asks the provider where a failed attempt goes next; as the others (AKG_EUNSUPPORTED when
 * the provider has no route: the caller's rules decide). */
int akg_provider_route(akg_provider_session *session, const akg_route_request *req, akg_route_cb cb,
                       void *user, akg_provider_op **op, char *err, size_t errlen);
/* Cancels a pending request: the provider stops its work (timers, transfers)
 * and the callback runs with AKG_ECANCELED before this returns. */
void akg_provider_cancel(akg_provider_op *op);

/* ---- writing a provider -------------------------------------------------- */

/* What a provider registers. Every function runs on the loop's thread. */
struct akg_provider {
    const char *name;        /* "builtin" */
    const char *description; /* one line for --help */
    /* Creates the private state of one session in *state. */
    int (*session_open)(uv_loop_t *loop, void **state, char *err, size_t errlen);
    /* Frees it; no request is pending then. */
    void (*session_close)(void *state);
    /* Start a request. The provider completes op later, from a later loop
     * iteration, with akg_provider_complete_design / _code; a non-zero return
     * (with err) means it did not start and must never complete op. */
    int (*design)(void *state, const akg_design_request *req, akg_provider_op *op, char *err,
                  size_t errlen);
    int (*code)(void *state, const akg_code_request *req, akg_provider_op *op, char *err,
                size_t errlen);
    /* Stops the work of the pending op; the session completes it with
     * AKG_ECANCELED, and the provider must not complete it afterwards. */
    void (*cancel)(void *state, akg_provider_op *op);
    /* Start a route request, as design and code; NULL: the pipeline's rules route every
     * failure. Last, so that a provider written before it (positional fields) has none. */
    int (*route)(void *state, const akg_route_request *req, akg_provider_op *op, char *err,
                 size_t errlen);
};

/* A provider's own pointer for a pending op (its timer, its transfer). */
void akg_provider_op_set_data(akg_provider_op *op, void *data);
void *akg_provider_op_data(const akg_provider_op *op);
/* Reports progress of the pending op to its session's listener (nothing when none). */
void akg_provider_op_progress(const akg_provider_op *op, const akg_provider_progress *progress);
/* Completes op with answer (runs the callback; op is freed after it). */
void akg_provider_complete_design(akg_provider_op *op, const akg_design_answer *answer);
void akg_provider_complete_code(akg_provider_op *op, akg_code_answer *answer);
void akg_provider_complete_route(akg_provider_op *op, const akg_route_answer *answer);

#endif
