/*
 * engine_routing.c: the Conductor routes each failure to whoever made it, as the design check
 * (the reference interpreter running the sketch against the reference) tells them apart.
 *
 * Two providers of this test wrap `builtin` through the provider seam (this test links its own
 * provider registry, engine/providers/registry.c's one array, in place of the engine's):
 *  - wrong_code designs as builtin does, but the kernel it writes adds 1 to the first output
 *    element after the right computation: a kernel that disagrees with its own (right) design;
 *  - wrong_design writes builtin's sketch with relu replaced by sigmoid: a design of another
 *    function, lowered faithfully.
 * With the design check before any code (first), only after a mismatch (on_mismatch) and off,
 * the report's candidates must say who was blamed and what found it, and the Conductor must
 * send the next attempt to the Coder or the Designer accordingly. Real harness, real PyTorch,
 * real compiler; the relu fixture; two attempts per job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"
#include "akg/provider.h"

/* ---- the providers ------------------------------------------------------------------- */

extern const akg_provider akg_provider_builtin;

typedef struct {
    int wrong_design; /* else wrong code */
    akg_provider_session *inner;
} wrap_state;

typedef struct {
    wrap_state *st;
    akg_provider_op *outer;
    akg_provider_op *inner_op;
    int cancelled;
} wrap_op;

static char *replace_first(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        return NULL;
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static int wrap_open(uv_loop_t *loop, void **state, char *err, size_t errlen, int wrong_design)
{
    wrap_state *st = calloc(1, sizeof *st);
    if (!st)
        return snprintf(err, errlen, "out of memory"), -1;
    st->wrong_design = wrong_design;
    if (akg_provider_session_new(&akg_provider_builtin, loop, &st->inner, err, errlen)) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static int open_wrong_code(uv_loop_t *loop, void **state, char *err, size_t errlen)
{
    return wrap_open(loop, state, err, errlen, 0);
}

static int open_wrong_design(uv_loop_t *loop, void **state, char *err, size_t errlen)
{
    return wrap_open(loop, state, err, errlen, 1);
}

static void wrap_close(void *state)
{
    wrap_state *st = state;
    akg_provider_session_free(st->inner);
    free(st);
}

static void on_inner_design(const akg_design_answer *a, void *user)
{
    wrap_op *w = user;
    akg_provider_op *outer = w->outer;
    int cancelled = w->cancelled;
    int wrong = w->st->wrong_design;
    free(w);
    if (cancelled)
        return; /* the session completed the outer op already */
    akg_provider_op_set_data(outer, NULL);
    if (a->status != 0 || !wrong) {
        akg_provider_complete_design(outer, a);
        return;
    }
    char *text = replace_first(a->sketch_text, "relu(", "sigmoid(");
    akg_design_answer b = *a;
    if (!text) {
        b.status = AKG_EINVAL;
        b.message = "the test's wrong_design found no relu( in builtin's sketch";
        b.sketch_text = NULL;
    } else {
        b.sketch_text = text;
    }
    akg_provider_complete_design(outer, &b);
    free(text);
}

static int wrap_design(void *state, const akg_design_request *req, akg_provider_op *op, char *err,
                       size_t errlen)
{
    wrap_state *st = state;
    wrap_op *w = calloc(1, sizeof *w);
    if (!w)
        return snprintf(err, errlen, "out of memory"), -1;
    w->st = st;
    w->outer = op;
    akg_provider_op_set_data(op, w);
    if (akg_provider_design(st->inner, req, on_inner_design, w, &w->inner_op, err, errlen)) {
        free(w);
        return -1;
    }
    return 0;
}

/* The kernel ABI's entry renamed, and an entry that runs it and then spoils one element. */
static const char WRAPPER[] =
    "\nextern \"C\" int akg_kernel(void *const *akg_tensors, const int64_t *akg_symbols,\n"
    "                          const double *akg_params) {\n"
    "  int rc = akg_kernel_right(akg_tensors, akg_symbols, akg_params);\n"
    "  ((float *)akg_tensors[1])[0] += 1.0f; /* relu's output, tensor 1 */\n"
    "  return rc;\n"
    "}\n";

static void on_inner_code(akg_code_answer *a, void *user)
{
    wrap_op *w = user;
    akg_provider_op *outer = w->outer;
    int cancelled = w->cancelled;
    int wrong = !w->st->wrong_design;
    free(w);
    if (cancelled)
        return;
    akg_provider_op_set_data(outer, NULL);
    if (a->status != 0 || !wrong || !a->files) {
        akg_provider_complete_code(outer, a);
        return;
    }
    char *renamed = replace_first(a->files->kernel_source, "extern \"C\" int akg_kernel(",
                                  "static int akg_kernel_right(");
    size_t n = renamed ? strlen(renamed) + sizeof WRAPPER : 0;
    char *src = renamed ? malloc(n) : NULL;
    if (!src) {
        free(renamed);
        akg_code_answer b = {.status = AKG_EINVAL, .message = "the test's wrong_code found no entry"};
        akg_provider_complete_code(outer, &b);
        return;
    }
    snprintf(src, n, "%s%s", renamed, WRAPPER);
    free(renamed);
    free(a->files->kernel_source);
    a->files->kernel_source = src;
    akg_provider_complete_code(outer, a);
}

static int wrap_code(void *state, const akg_code_request *req, akg_provider_op *op, char *err,
                     size_t errlen)
{
    wrap_state *st = state;
    wrap_op *w = calloc(1, sizeof *w);
    if (!w)
        return snprintf(err, errlen, "out of memory"), -1;
    w->st = st;
    w->outer = op;
    akg_provider_op_set_data(op, w);
    if (akg_provider_code(st->inner, req, on_inner_code, w, &w->inner_op, err, errlen)) {
        free(w);
        return -1;
    }
    return 0;
}

static void wrap_cancel(void *state, akg_provider_op *op)
{
    (void)state;
    wrap_op *w = akg_provider_op_data(op);
    if (w) {
        w->cancelled = 1;
        akg_provider_cancel(w->inner_op); /* its callback frees w */
    }
}

static const akg_provider wrong_code = {.name = "wrong_code",
                                        .description = "builtin's kernels, one element spoilt",
                                        .session_open = open_wrong_code,
                                        .session_close = wrap_close,
                                        .design = wrap_design,
                                        .code = wrap_code,
                                        .cancel = wrap_cancel};
static const akg_provider wrong_design = {.name = "wrong_design",
                                          .description = "builtin's designs of sigmoid for relu",
                                          .session_open = open_wrong_design,
                                          .session_close = wrap_close,
                                          .design = wrap_design,
                                          .code = wrap_code,
                                          .cancel = wrap_cancel};

/* this test's registry, in place of engine/providers/registry.c's */
const akg_provider *const akg_provider_registry[] = {&akg_provider_builtin, &wrong_code,
                                                     &wrong_design, NULL};

/* ---- the cases ----------------------------------------------------------------------- */

typedef struct {
    const char *provider, *design_check;
    const char *want_class;
    const char *want_blame;    /* every candidate's */
    const char *want_found_by; /* every candidate's */
    const char *want_check;    /* every candidate's design_check, or NULL: absent */
    int want_kernels;          /* KERNEL events */
    int want_late_checks;      /* design checks started after a mismatch */
    const char *want_route;    /* the Conductor's log: "routing to the Coder" / "Designer" */
    const char *want_detail;   /* in the error's detail */
} case_t;

static const case_t cases[] = {
    {"wrong_code", "first", "numerical_mismatch", "code", "verify", "pass", 2, 0,
     "routing to the Coder", "the kernel disagrees with its own design"},
    {"wrong_code", "on_mismatch", "numerical_mismatch", "code", "verify", "pass", 2, 1,
     "routing to the Coder", "the kernel disagrees with its own design"},
    {"wrong_design", "first", "design_error", "design", "design_check", "fail", 0, 0,
     "routing to the Designer", "the design computes another function"},
    {"wrong_design", "on_mismatch", "design_error", "design", "verify", "fail", 2, 2,
     "routing to the Designer", "the design check finds the design wrong"},
    {"wrong_design", "off", "numerical_mismatch", "design", "verify", NULL, 2, 0,
     "routing to the Designer", "out of tolerance"},
};
#define NCASES (sizeof cases / sizeof cases[0])

static uv_loop_t loop;
static akg_engine *engine;
static size_t current;
static int failures, kernels, late_checks, routed;
static char tmpdir[] = "/tmp/akg-engine-routing-XXXXXX";

static void start_next(void);

static void fail(const char *what, const char *got)
{
    const case_t *c = &cases[current];
    printf("FAIL %s/%s: %s%s%s\n", c->provider, c->design_check, what, got ? ": " : "",
           got ? got : "");
    failures++;
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_report(const akg_event *ev)
{
    const case_t *c = &cases[current];
    const cJSON *err = cJSON_GetObjectItem(ev->data, "error");
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(err, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(err, "detail"));
    if (ev->status != AKG_JOB_FAIL)
        fail("the job did not fail", akg_job_status_name(ev->status));
    if (!same(cls, c->want_class))
        fail("error class", cls);
    if (!detail || !strstr(detail, c->want_detail))
        fail("error detail", detail);
    const cJSON *cands = cJSON_GetObjectItem(ev->data, "candidates");
    if (cJSON_GetArraySize(cands) != 2)
        fail("want 2 candidates (2 attempts)", NULL);
    const cJSON *cand;
    cJSON_ArrayForEach(cand, cands)
    {
        const char *blame = cJSON_GetStringValue(cJSON_GetObjectItem(cand, "blame"));
        const char *found = cJSON_GetStringValue(cJSON_GetObjectItem(cand, "found_by"));
        const char *check = cJSON_GetStringValue(cJSON_GetObjectItem(cand, "design_check"));
        if (!same(blame, c->want_blame))
            fail("blame", blame);
        if (!same(found, c->want_found_by))
            fail("found_by", found);
        if (!same(check, c->want_check))
            fail("design_check", check);
    }
    if (kernels != c->want_kernels) {
        char n[32];
        snprintf(n, sizeof n, "%d", kernels);
        fail("kernels written", n);
    }
    if (late_checks != c->want_late_checks) {
        char n[32];
        snprintf(n, sizeof n, "%d", late_checks);
        fail("design checks after a mismatch", n);
    }
    if (!routed)
        fail("the Conductor did not log", c->want_route);
    const cJSON *dc = cJSON_GetObjectItem(ev->data, "design_check");
    if (c->want_check && !dc)
        fail("report.design_check missing", NULL);
    if (!c->want_check && dc)
        fail("report.design_check present with the check off", NULL);
}

static void on_event(const akg_event *ev, void *user)
{
    (void)user;
    const case_t *c = &cases[current];
    if (ev->kind == AKG_EVENT_KERNEL)
        kernels++;
    if (ev->kind == AKG_EVENT_STAGE && ev->message &&
        strstr(ev->message, "the kernel disagrees with the reference: checking its design"))
        late_checks++;
    if (ev->kind == AKG_EVENT_LOG && ev->message && strstr(ev->message, c->want_route))
        routed = 1;
    if (ev->kind != AKG_EVENT_DONE)
        return;
    int before = failures;
    check_report(ev);
    printf("%s %s/%s\n", failures == before ? "ok  " : "FAIL", c->provider, c->design_check);
    current++;
    start_next();
}

static void on_closed(void *user)
{
    (void)user;
}

static void start_next(void)
{
    if (current >= NCASES) {
        akg_engine_close(engine, on_closed, NULL);
        return;
    }
    const case_t *c = &cases[current];
    kernels = late_checks = routed = 0;
    const char *src = getenv("AKG_SOURCE_DIR");
    char ref[4096], out[4096];
    snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", src ? src : ".");
    snprintf(out, sizeof out, "%s/run%zu", tmpdir, current);
    akg_job_options o = {0};
    o.reference_path = ref;
    o.provider = c->provider;
    o.design_check = c->design_check;
    o.output_dir = out;
    o.max_step = 2;
    o.trials = 2;
    char err[512];
    akg_job *job;
    if (akg_job_start(engine, &o, on_event, NULL, &job, err, sizeof err) != AKG_OK) {
        fail("cannot start", err);
        current++;
        start_next();
    }
}

int main(void)
{
    if (!mkdtemp(tmpdir))
        return 2;
    char store[256];
    snprintf(store, sizeof store, "%s/akg.db", tmpdir);
    uv_loop_init(&loop);
    akg_engine_options eo = {0};
    eo.store_path = store;
    char err[512];
    if (akg_engine_new(&loop, &eo, &engine, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    start_next();
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0) {
        printf("FAIL the loop still has open handles\n");
        failures++;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        failures++;
    printf("%zu cases, %d failures\n", NCASES, failures);
    return failures ? 1 : 0;
}
