/* test_openai_session.c: the `openai` provider through the provider seam (akg/provider.h) against
 * the replay server, the cases the end-to-end test cannot time: a model that never writes a
 * sketch gets the checker's word back a bounded number of times, then the request ends as a
 * design error saying so; a cancelled request and a session freed with one pending end at once
 * with AKG_ECANCELED, and the loop closes with no handle left. The Conductor's route request:
 * builtin has none; openai's answers with the model's class, agent and suggestion, its prompt
 * holding the failure and the earlier attempts, and a cancelled one ends at once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "akg/akg.h"
#include "akg/provider.h"
#include "check.h"
#include "replay_client.h"

#define KEY "sk-replay-session-5d1c0b7e"



static int stats_requests(const char *tag)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "curl -s http://127.0.0.1:%d/stats/%s | %s -c 'import json,sys; "
             "print(json.load(sys.stdin)[\"requests\"])'",
             server_port, tag, getenv("AKG_PYTHON") ? getenv("AKG_PYTHON") : "/usr/bin/python3");
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

typedef struct {
    int calls;
    int status;
    char message[8192];
    double at_ms;
} outcome;

static void on_design(const akg_design_answer *a, void *user)
{
    outcome *o = user;
    o->calls++;
    o->status = a->status;
    o->at_ms = akg_now_ms();
    snprintf(o->message, sizeof o->message, "%s", a->message ? a->message : "");
}

static akg_reference *relu_reference(void)
{
    char path[4096], err[256];
    char *src = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/tests/fixtures/refs/relu.py", getenv("AKG_SOURCE_DIR"));
    if (akg_read_file(path, 1 << 20, &src, &len, err, sizeof err) != AKG_OK)
        return NULL;
    akg_reference *ref = akg_reference_parse(src, len, path);
    free(src);
    return ref;
}

static void point_at(const char *scenario, const char *tag)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/%s/%s/v1", server_port, scenario, tag);
    setenv("AKG_AGENTS_BASE_URL", url, 1);
}

static void test_no_sketch_is_bounded(uv_loop_t *loop, const akg_reference *ref)
{
    point_at("script-nosketch", "bounded");
    akg_provider_session *s = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("openai"), loop, &s, err, sizeof err) ==
          AKG_OK);
    outcome o = {0};
    akg_design_request req = {
        .ref = ref, .attempt = 1, .backend = "cpu", .dsl = "cpp", .arch = "x86_64"};
    CHECK(akg_provider_design(s, &req, on_design, &o, NULL, err, sizeof err) == AKG_OK);
    CHECK(o.calls == 0); /* never inside the call */
    while (o.calls == 0 && uv_run(loop, UV_RUN_ONCE))
        ;
    CHECK(o.calls == 1);
    CHECK(o.status == AKG_EINVAL);
    CHECK_CONTAINS(o.message, "gave no sketch that checks in 3 answers");
    CHECK_CONTAINS(o.message, "the answer holds no sketch");
    CHECK_CONTAINS(o.message, "replay-model");
    CHECK(strstr(o.message, KEY) == NULL);
    CHECK(stats_requests("bounded") == 3);
    akg_provider_session_free(s);
}

static void on_cancel_timer(uv_timer_t *t)
{
    akg_provider_cancel(t->data);
}

static void test_cancel(uv_loop_t *loop, const akg_reference *ref)
{
    point_at("hang", "cancel");
    akg_provider_session *s = NULL;
    char err[512];
    CHECK(akg_provider_session_new(akg_provider_find("openai"), loop, &s, err, sizeof err) ==
          AKG_OK);
    outcome o = {0};
    akg_provider_op *op = NULL;
    akg_design_request req = {
        .ref = ref, .attempt = 1, .backend = "cpu", .dsl = "cpp", .arch = "x86_64"};
    CHECK(akg_provider_design(s, &req, on_design, &o, &op, err, sizeof err) == AKG_OK);
    uv_timer_t timer;
    uv_timer_init(loop, &timer);
    timer.data = op;
    double t0 = akg_now_ms();
    uv_timer_start(&timer, on_cancel_timer, 500, 0);
    while (o.calls == 0 && uv_run(loop, UV_RUN_ONCE))
        ;
    CHECK(o.calls == 1);
    CHECK(o.status == AKG_ECANCELED);
    CHECK(o.at_ms - t0 < 3000); /* at the cancel, not at a timeout */
    CHECK(stats_requests("cancel") == 1);
    uv_close((uv_handle_t *)&timer, NULL);

    /* a session freed with a request pending answers it first */
    point_at("hang", "free");
    outcome o2 = {0};
    CHECK(akg_provider_design(s, &req, on_design, &o2, NULL, err, sizeof err) == AKG_OK);
    for (int i = 0; i < 20 && stats_requests("free") < 1; i++) /* the chat is on the wire */
        uv_run(loop, UV_RUN_NOWAIT), usleep(50000);
    akg_provider_session_free(s);
    CHECK(o2.calls == 1);
    CHECK(o2.status == AKG_ECANCELED);
}

typedef struct {
    int calls;
    int status;
    akg_route_class cls;
    akg_route_agent agent;
    char suggestion[512];
    double prompt_tokens;
    double at_ms;
} route_outcome;

static void on_route(const akg_route_answer *a, void *user)
{
    route_outcome *o = user;
    o->calls++;
    o->status = a->status;
    o->cls = a->cls;
    o->agent = a->agent;
    o->at_ms = akg_now_ms();
    snprintf(o->suggestion, sizeof o->suggestion, "%s", a->suggestion ? a->suggestion : "");
    o->prompt_tokens = cJSON_GetNumberValue(cJSON_GetObjectItem(a->provenance, "prompt_tokens"));
}

static void on_cancel_route(uv_timer_t *t)
{
    akg_provider_cancel(t->data);
}

static void test_route(uv_loop_t *loop)
{
    char err[512];
    cJSON *history = cJSON_Parse("[{\"step\": 1, \"status\": \"fail\", \"error_class\": "
                                 "\"build_error\", \"detail\": \"kernel.cpp:3: error\", "
                                 "\"conductor\": {\"routed_by\": \"rules\", \"agent\": "
                                 "\"coder\"}}, {\"step\": 2}]");
    akg_route_request req = {.error_class = "build_error",
                             .detail = "kernel.cpp:5: error: expected ';'",
                             .found_by = "verify",
                             .rule_agent = "coder",
                             .attempt = 2,
                             .max_attempts = 4,
                             .history = history,
                             .designer_allowed = true,
                             .coder_allowed = true,
                             .backend = "cpu",
                             .dsl = "cpp",
                             .arch = "x86_64",
                             .op_name = "relu"};

    /* builtin routes by the pipeline's rules: it has no route request */
    akg_provider_session *b = NULL;
    CHECK(akg_provider_session_new(akg_provider_find("builtin"), loop, &b, err, sizeof err) ==
          AKG_OK);
    route_outcome none = {0};
    CHECK(!akg_provider_can_route(b));
    CHECK(akg_provider_route(b, &req, on_route, &none, NULL, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "does not route failures");
    CHECK(none.calls == 0);
    akg_provider_session_free(b);

    point_at("script-route", "route");
    akg_provider_session *s = NULL;
    CHECK(akg_provider_session_new(akg_provider_find("openai"), loop, &s, err, sizeof err) ==
          AKG_OK);
    CHECK(akg_provider_can_route(s));
    route_outcome o = {0};
    CHECK(akg_provider_route(s, &req, on_route, &o, NULL, err, sizeof err) == AKG_OK);
    CHECK(o.calls == 0); /* never inside the call that started it */
    while (o.calls == 0 && uv_run(loop, UV_RUN_ONCE))
        ;
    CHECK(o.calls == 1 && o.status == AKG_OK);
    CHECK(o.cls == AKG_ROUTE_DESIGN_ERROR && o.agent == AKG_ROUTE_DESIGNER);
    CHECK_CONTAINS(o.suggestion, "CONDUCTOR-HINT-7f3a");
    CHECK(o.prompt_tokens == 1200);
    CHECK(stats_requests("route") == 1);
    /* the prompt: the failure, the budget, the earlier attempt (not the current one) */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "curl -s http://127.0.0.1:%d/stats/route", server_port);
    FILE *p = popen(cmd, "r");
    char *seen = calloc(1, 1 << 20);
    if (p && seen && fread(seen, 1, (1 << 20) - 1, p) > 0) {
        CHECK_CONTAINS(seen, "Attempt 2 of 4 failed: operator `relu`");
        CHECK_CONTAINS(seen, "expected ';'");
        CHECK_CONTAINS(seen, "- attempt 1: fail (build_error), sent to the coder by the rules");
        CHECK(strstr(seen, "- attempt 2") == NULL);
    } else {
        CHECK(!"the replay server's stats");
    }
    if (p)
        pclose(p);
    free(seen);

    /* a cancelled route request ends at once */
    point_at("hang", "route_cancel");
    route_outcome c = {0};
    akg_provider_op *op = NULL;
    CHECK(akg_provider_route(s, &req, on_route, &c, &op, err, sizeof err) == AKG_OK);
    uv_timer_t timer;
    uv_timer_init(loop, &timer);
    timer.data = op;
    double t0 = akg_now_ms();
    uv_timer_start(&timer, on_cancel_route, 300, 0);
    while (c.calls == 0 && uv_run(loop, UV_RUN_ONCE))
        ;
    CHECK(c.calls == 1 && c.status == AKG_ECANCELED);
    CHECK(c.at_ms - t0 < 3000);
    uv_close((uv_handle_t *)&timer, NULL);
    akg_provider_session_free(s);
    cJSON_Delete(history);
}

int main(void)
{
    char home[] = "/tmp/akg-openai-session-XXXXXX";
    if (!mkdtemp(home) || chdir(home) != 0)
        return 1;
    setenv("HOME", home, 1); /* no settings of the user's */
    setenv("AKG_AGENTS_MODEL_NAME", "replay-model", 1);
    setenv("AKG_AGENTS_API_KEY", KEY, 1);
    if (start_server() != 0) {
        fprintf(stderr, "cannot start the replay server\n");
        return 1;
    }
    akg_reference *ref = relu_reference();
    CHECK(ref != NULL);
    uv_loop_t loop;
    uv_loop_init(&loop);
    if (ref) {
        test_no_sketch_is_bounded(&loop, ref);
        test_cancel(&loop, ref);
    }
    test_route(&loop);
    uv_run(&loop, UV_RUN_DEFAULT); /* the clients' handles close */
    CHECK(uv_loop_close(&loop) == 0);
    akg_reference_free(ref);
    stop_server();
    rmdir(home);
    return check_summary();
}
