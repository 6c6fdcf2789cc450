/* test_provider.c: the provider registry and the builtin provider's requests
 * on a real libuv loop: answers come from a later loop iteration, exactly
 * once; cancelling answers AKG_ECANCELED at once and does no work; freeing a
 * session cancels what is pending; a session takes one request at a time.
 * Each test ends by closing its loop, so a leaked handle fails it. */
#include <stdlib.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/provider.h"
#include "akg/sketch.h"
#include "check.h"

#define HEADER "import torch\nimport torch.nn as nn\n"
#define GETTERS "def get_inputs():\n    return [torch.randn(8, 16)]\ndef get_init_inputs():\n    return []\n"

static const char *relu_src = HEADER "class Model(nn.Module):\n"
                                     "    def __init__(self):\n"
                                     "        super().__init__()\n"
                                     "    def forward(self, x):\n"
                                     "        return torch.relu(x)\n" GETTERS;

static const char *fft_src = HEADER "class Model(nn.Module):\n"
                                    "    def __init__(self):\n"
                                    "        super().__init__()\n"
                                    "    def forward(self, x):\n"
                                    "        return torch.fft.fft(x).real\n" GETTERS;

static const char *probe_json =
    "{\"inputs\":[{\"kind\":\"tensor\",\"shape\":[8,16],\"dtype\":\"float32\"}],"
    "\"init_inputs\":[],"
    "\"outputs\":[{\"kind\":\"tensor\",\"shape\":[8,16],\"dtype\":\"float32\"}]}";

/* What a callback saw. */
typedef struct {
    int calls;
    int status;
    int in_call; /* set while the request call is on the stack */
    int during_call;
    char sketch[8192];
    char op[64];
    char math[16];
    int has_where;
    char message[1024];
    akg_kernel_files files;
} seen;

static void on_design(const akg_design_answer *a, void *user)
{
    seen *s = user;
    s->calls++;
    s->during_call |= s->in_call;
    s->status = a->status;
    s->has_where = a->has_where;
    snprintf(s->message, sizeof s->message, "%s", a->message ? a->message : "");
    if (a->status == AKG_OK) {
        snprintf(s->sketch, sizeof s->sketch, "%s", a->sketch_text);
        snprintf(s->op, sizeof s->op, "%s", a->op_name);
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(a->provenance, "math"));
        snprintf(s->math, sizeof s->math, "%s", m ? m : "");
    }
}

static void on_code(akg_code_answer *a, void *user)
{
    seen *s = user;
    s->calls++;
    s->during_call |= s->in_call;
    s->status = a->status;
    snprintf(s->message, sizeof s->message, "%s", a->message ? a->message : "");
    if (a->status == AKG_OK && a->files) {
        /* take the files: the provider must not free what was taken */
        s->files = *a->files;
        memset(a->files, 0, sizeof *a->files);
    }
}

static int loop_closes(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    return uv_loop_close(loop) == 0;
}

static void test_registry(void)
{
    const akg_provider *b = akg_provider_find("builtin");
    CHECK(b != NULL);
    CHECK_STR(akg_provider_name(b), "builtin");
    CHECK(akg_provider_find("openai") != NULL);
    CHECK(akg_provider_find("nonesuch") == NULL);
    CHECK(akg_provider_find(NULL) == NULL);
    CHECK(akg_provider_list()[0] == b);
    char names[128];
    akg_provider_names(names, sizeof names);
    CHECK_STR(names, "builtin, openai");
    char msg[256];
    akg_provider_unknown_message("nonesuch", msg, sizeof msg);
    CHECK_STR(msg, "unknown provider 'nonesuch' (the providers in this build: builtin, openai)");
}

static akg_design_request design_request(const akg_reference *ref, const cJSON *probe)
{
    akg_design_request r = {.ref = ref, .probe = probe, .attempt = 1, .backend = "cpu",
                            .dsl = "cpp", .arch = "x86_64"};
    return r;
}

/* design, then code from the designed sketch, on one session */
static void test_design_then_code(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_reference *ref = akg_reference_parse(relu_src, strlen(relu_src), "relu.py");
    cJSON *probe = cJSON_Parse(probe_json);
    akg_provider_session *session = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), &loop, &session, err,
                                   sizeof err) == AKG_OK);
    seen d = {0};
    akg_design_request req = design_request(ref, probe);
    akg_provider_op *op = NULL;
    d.in_call = 1;
    CHECK(akg_provider_design(session, &req, on_design, &d, &op, err, sizeof err) == AKG_OK);
    d.in_call = 0;
    CHECK(op != NULL);
    CHECK(d.calls == 0); /* never inside the call */
    /* one request at a time */
    seen busy = {0};
    CHECK(akg_provider_design(session, &req, on_design, &busy, NULL, err, sizeof err) ==
          AKG_EBUSY);
    CHECK_CONTAINS(err, "still answering");
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(d.calls == 1);
    CHECK(!d.during_call);
    CHECK(busy.calls == 0);
    CHECK(d.status == AKG_OK);
    CHECK_STR(d.op, "relu");
    CHECK_STR(d.math, "fast");
    CHECK_CONTAINS(d.sketch, "sketch relu");

    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(d.sketch, strlen(d.sketch), &sk, diags) == 0);
    CHECK(sk && akg_sketch_check(sk, diags) == 0);
    akg_sketch_diag_list_free(diags);
    seen c = {0};
    akg_code_request creq = {.sketch = sk, .ref = ref, .probe = probe,
                             .backend = akg_backend_find("cpu", "cpp"),
                             .sketch_file = "sketch.sketch"};
    c.in_call = 1;
    CHECK(akg_provider_code(session, &creq, on_code, &c, NULL, err, sizeof err) == AKG_OK);
    c.in_call = 0;
    CHECK(c.calls == 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(c.calls == 1);
    CHECK(!c.during_call);
    CHECK(c.status == AKG_OK);
    CHECK(c.files.kernel_source && strstr(c.files.kernel_source, "akg_kernel"));
    CHECK(c.files.model_new_source && strstr(c.files.model_new_source, "class ModelNew"));
    akg_kernel_files_free(&c.files);
    akg_sketch_free(sk);
    akg_provider_session_free(session);
    cJSON_Delete(probe);
    akg_reference_free(ref);
    CHECK(loop_closes(&loop));
}

/* cancelling answers at once, with AKG_ECANCELED, and the work never runs */
static void test_cancel(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_reference *ref = akg_reference_parse(relu_src, strlen(relu_src), "relu.py");
    cJSON *probe = cJSON_Parse(probe_json);
    akg_provider_session *session = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), &loop, &session, err,
                                   sizeof err) == AKG_OK);
    seen d = {0};
    akg_design_request req = design_request(ref, probe);
    akg_provider_op *op = NULL;
    CHECK(akg_provider_design(session, &req, on_design, &d, &op, err, sizeof err) == AKG_OK);
    akg_provider_cancel(op);
    CHECK(d.calls == 1);
    CHECK(d.status == AKG_ECANCELED);
    CHECK(d.sketch[0] == '\0');
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(d.calls == 1); /* nothing more after the loop ran */

    /* the session is idle again: the next request runs */
    seen again = {0};
    CHECK(akg_provider_design(session, &req, on_design, &again, NULL, err, sizeof err) ==
          AKG_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(again.calls == 1 && again.status == AKG_OK);

    /* freeing a session cancels its pending request first */
    seen pending = {0};
    CHECK(akg_provider_design(session, &req, on_design, &pending, NULL, err, sizeof err) ==
          AKG_OK);
    akg_provider_session_free(session);
    CHECK(pending.calls == 1);
    CHECK(pending.status == AKG_ECANCELED);
    cJSON_Delete(probe);
    akg_reference_free(ref);
    CHECK(loop_closes(&loop));
    CHECK(pending.calls == 1);
}

/* a callback may free the session it was answered on */
static akg_provider_session *freed_in_callback;

static void on_design_free_session(const akg_design_answer *a, void *user)
{
    seen *s = user;
    s->calls++;
    s->status = a->status;
    akg_provider_session_free(freed_in_callback);
    freed_in_callback = NULL;
}

static void test_free_in_callback(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_reference *ref = akg_reference_parse(relu_src, strlen(relu_src), "relu.py");
    cJSON *probe = cJSON_Parse(probe_json);
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), &loop, &freed_in_callback, err,
                                   sizeof err) == AKG_OK);
    seen d = {0};
    akg_design_request req = design_request(ref, probe);
    CHECK(akg_provider_design(freed_in_callback, &req, on_design_free_session, &d, NULL, err,
                              sizeof err) == AKG_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(d.calls == 1 && d.status == AKG_OK);
    CHECK(freed_in_callback == NULL);
    cJSON_Delete(probe);
    akg_reference_free(ref);
    CHECK(loop_closes(&loop));
}

/* what the rules cannot design fails with a message and the call's range */
static void test_unsupported(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_reference *ref = akg_reference_parse(fft_src, strlen(fft_src), "fft.py");
    cJSON *probe = cJSON_Parse(probe_json);
    akg_provider_session *session = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), &loop, &session, err,
                                   sizeof err) == AKG_OK);
    seen d = {0};
    akg_design_request req = design_request(ref, probe);
    CHECK(akg_provider_design(session, &req, on_design, &d, NULL, err, sizeof err) == AKG_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(d.calls == 1);
    CHECK(d.status == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(d.message, "torch.fft.fft");
    CHECK(d.has_where);
    akg_provider_session_free(session);
    cJSON_Delete(probe);
    akg_reference_free(ref);
    CHECK(loop_closes(&loop));
}

/* an unbound sketch with no design of the session's to lower it from */
static void test_unbound_code(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_reference *ref = akg_reference_parse(relu_src, strlen(relu_src), "relu.py");
    const char *text = "sketch relu {\n"
                       "  symbols: N;\n"
                       "  tensors: x[N]: f32; out[N]: f32;\n"
                       "  for i in range(0, N, 64):\n"
                       "    t = alloc([64])\n"
                       "    load(x[i:i+64] -> t)\n"
                       "    store(relu(t) -> out[i:i+64])\n"
                       "}\n";
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(text, strlen(text), &sk, diags) == 0);
    CHECK(sk && akg_sketch_check(sk, diags) == 0);
    akg_sketch_diag_list_free(diags);
    akg_provider_session *session = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), &loop, &session, err,
                                   sizeof err) == AKG_OK);
    seen c = {0};
    akg_code_request creq = {.sketch = sk, .ref = ref,
                             .backend = akg_backend_find("cpu", "cpp")};
    CHECK(akg_provider_code(session, &creq, on_code, &c, NULL, err, sizeof err) == AKG_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(c.calls == 1);
    CHECK(c.status == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(c.message, "no bind: section");
    akg_provider_session_free(session);
    akg_sketch_free(sk);
    akg_reference_free(ref);
    CHECK(loop_closes(&loop));
}

int main(void)
{
    test_registry();
    test_design_then_code();
    test_cancel();
    test_free_in_callback();
    test_unsupported();
    test_unbound_code();
    return check_summary();
}
