/* test_openai.c: the OpenAI-compatible client (engine/providers/openai) against a loopback
 * replay server (replay_server.py: recorded answers and injected faults). Each fault must end in
 * its documented outcome within a bounded time, with one callback per request and nothing lost
 * (partial text kept, every attempt logged); the settings load in the original AKG's layers; the
 * key appears in no message, description or harness worker's environment. A level on the
 * Anthropic Messages API ("api": "anthropic") is asked at /messages with x-api-key and
 * anthropic-version, plain and streamed, and its max_tokens stop is the cut answer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netinet/in.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/harness.h"
#include "check.h"
#include "openai.h"
#include "replay_client.h"

#define KEY "sk-replay-SECRET-7f3e9a1c5b"
#define KEY_VAR "REPLAY_LLM_TOKEN" /* deliberately not *_API_KEY: found through the settings */

static char base_tmp[] = "/tmp/akg-openai-test-XXXXXX";

/* ---- the replay server (replay_client.h starts it) ----------------------------- */

/* A port on which nothing listens. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* ---- running one request ------------------------------------------------------ */

typedef struct {
    int done; /* on_done calls: must end at 1 */
    akg_openai_outcome outcome;
    int status, attempts;
    long prompt, completion, http_status;
    bool counted, tls_off;
    char message[4096], text[4096], finish[64];
    char log[8192];
    int deltas, retries;
    double retry_delay[8];
    akg_openai_call *call;
    bool cancel_on_first_delta;
    double elapsed_s;
} result;

/* Every text the client hands out, to check that the key is in none. */
static akg_buf everything;

static void on_event(const akg_openai_event *ev, void *user)
{
    result *r = user;
    akg_buf_append(&everything, ev->text, ev->text_len);
    if (ev->kind == AKG_OPENAI_EVENT_DELTA) {
        r->deltas++;
        if (r->cancel_on_first_delta && r->call)
            akg_openai_cancel(r->call);
    } else {
        if (r->retries < 8)
            r->retry_delay[r->retries] = ev->delay_s;
        r->retries++;
    }
}

static void on_done(const akg_openai_answer *a, void *user)
{
    result *r = user;
    r->done++;
    r->outcome = a->outcome;
    r->status = a->status;
    r->attempts = a->attempts;
    r->prompt = a->prompt_tokens;
    r->completion = a->completion_tokens;
    r->counted = a->tokens_counted;
    r->http_status = a->http_status;
    r->tls_off = a->tls_verify_off;
    snprintf(r->message, sizeof r->message, "%s", a->message);
    snprintf(r->text, sizeof r->text, "%s", a->text);
    snprintf(r->finish, sizeof r->finish, "%s", a->finish_reason);
    char *log = cJSON_PrintUnformatted(a->attempt_log);
    snprintf(r->log, sizeof r->log, "%s", log ? log : "");
    akg_buf_appendf(&everything, "%s\n%s\n%s\n%s\n", a->message, a->text, a->reasoning,
                    log ? log : "");
    free(log);
    r->call = NULL;
}

static akg_openai_settings *S; /* loaded from the test's settings.json */

static void set_base(const char *fmt, const char *scenario, const char *tag)
{
    char url[512];
    snprintf(url, sizeof url, fmt, server_port, scenario, tag);
    free(S->base_url);
    S->base_url = akg_strdup(url);
}

static const akg_openai_message MSGS[] = {
    {"system", "You design kernels."},
    {"user", "Design relu for f32[1024]."},
};

/* Runs one request on a fresh loop and client; checks the loop closes cleanly. */
static void run(const char *scenario, const char *tag, int stream, result *r)
{
    memset(r, 0, sizeof *r);
    set_base("http://127.0.0.1:%d/%s/%s/v1", scenario, tag);
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_openai_client *c = NULL;
    char err[512];
    CHECK(akg_openai_client_new(&loop, &c, err, sizeof err) == AKG_OK);
    akg_openai_request req = {.settings = S,
                              .messages = MSGS,
                              .n_messages = 2,
                              .stream = stream,
                              .on_event = on_event,
                              .on_done = on_done,
                              .user = r};
    double t0 = akg_now_ms();
    CHECK(akg_openai_chat(c, &req, &r->call, err, sizeof err) == AKG_OK);
    CHECK(r->done == 0); /* never inside the call that started it */
    while (r->done == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    r->elapsed_s = (akg_now_ms() - t0) / 1000.0;
    akg_openai_client_close(c, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    CHECK(r->done == 1);
    if (r->done != 1 || getenv("AKG_TEST_VERBOSE"))
        fprintf(stderr, "[%s/%s] %s attempts=%d %.2fs: %s\n", scenario, tag,
                akg_openai_outcome_name(r->outcome), r->attempts, r->elapsed_s, r->message);
}

/* Asks the replay server what it saw for tag (a blocking GET through the same client). */
static cJSON *server_stats(const char *tag)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "curl -s http://127.0.0.1:%d/stats/%s", server_port, tag);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    akg_buf b;
    akg_buf_init(&b, 1 << 20);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        akg_buf_append(&b, chunk, n);
    pclose(p);
    cJSON *doc = cJSON_Parse(b.data ? b.data : "");
    akg_buf_free(&b);
    return doc;
}

/* ---- the cases ------------------------------------------------------------------ */

static void test_answers(void)
{
    result r;
    run("ok", "plain", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.status == AKG_OK);
    CHECK_CONTAINS(r.text, "kernel relu(x: f32[N])");
    CHECK(r.prompt == 57 && r.completion == 31 && !r.counted);
    CHECK(r.attempts == 1 && r.deltas == 0 && r.http_status == 200);
    CHECK(r.elapsed_s < 2.0);
    cJSON *st = server_stats("plain");
    const cJSON *body = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "bodies"), 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(body, "model")), "replay-model");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(body, "stream")));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(body, "max_tokens")) == 512);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(body, "top_k")) == 20); /* extra_body */
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(body, "messages")) == 2);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "auth"), 0)),
              "Bearer " KEY);
    cJSON_Delete(st);

    run("ok", "stream", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_OK);
    CHECK_STR(r.text, "The kernel tiles rows by 1024.");
    CHECK(r.deltas == 3);
    CHECK(r.prompt == 42 && r.completion == 7 && !r.counted);
    CHECK_STR(r.finish, "stop");
    st = server_stats("stream");
    body = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "bodies"), 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(body, "stream")));
    CHECK(cJSON_IsTrue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "stream_options"), "include_usage")));
    cJSON_Delete(st);

    run("nousage", "nousage", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_OK);
    CHECK_STR(r.text, "one two three");
    CHECK(r.completion == 3 && r.counted && r.prompt == -1);

    run("length", "length", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_LENGTH && r.status == AKG_OK);
    CHECK_CONTAINS(r.text, "def relu_kernel");
    CHECK_CONTAINS(r.message, "max_tokens");
    CHECK(r.attempts == 1);
    run("length", "length_s", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_LENGTH);
    CHECK_STR(r.text, "for i in range(");
}

static void test_bad_answers(void)
{
    result r;
    run("empty", "empty", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_EMPTY && r.attempts == 1);
    CHECK_CONTAINS(r.message, "no choices");
    CHECK_CONTAINS(r.message, "127.0.0.1");
    run("empty", "empty_s", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_EMPTY);

    run("badjson", "badjson", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_BAD_RESPONSE && r.attempts == 1);
    CHECK_CONTAINS(r.message, "not JSON");
    CHECK_CONTAINS(r.message, "502 Bad Gateway");
    CHECK_CONTAINS(r.message, "API root");
    run("badjson", "badjson_s", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_BAD_RESPONSE);
    CHECK_STR(r.text, "half "); /* what came before the broken event is kept */
    CHECK_CONTAINS(r.message, "not JSON");
}

static void test_connection_faults(void)
{
    result r;
    /* refused: retried (1 + max_retries 2) with back-off from 0.05 s */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", closed_port());
    memset(&r, 0, sizeof r);
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_openai_client *c = NULL;
    char err[256];
    CHECK(akg_openai_client_new(&loop, &c, err, sizeof err) == AKG_OK);
    free(S->base_url);
    S->base_url = akg_strdup(url);
    akg_openai_request req = {.settings = S,
                              .messages = MSGS,
                              .n_messages = 2,
                              .stream = 0,
                              .on_event = on_event,
                              .on_done = on_done,
                              .user = &r};
    double t0 = akg_now_ms();
    CHECK(akg_openai_chat(c, &req, NULL, err, sizeof err) == AKG_OK);
    while (!r.done && uv_run(&loop, UV_RUN_ONCE))
        ;
    double elapsed = (akg_now_ms() - t0) / 1000;
    akg_openai_client_close(c, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    CHECK(r.outcome == AKG_OPENAI_CONNECT && r.attempts == 3 && r.retries == 2);
    CHECK(elapsed < 2.0);
    CHECK_CONTAINS(r.message, url);
    CHECK_CONTAINS(r.message, "nothing answered after 3 attempts");
    CHECK_CONTAINS(r.message, "start the server");

    /* a hang: the first-byte timeout (1 s), not retried */
    run("hang", "hang", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_TIMEOUT && r.attempts == 1 && r.status == AKG_ETIMEDOUT);
    CHECK(r.elapsed_s >= 0.9 && r.elapsed_s < 2.5);
    CHECK_CONTAINS(r.message, "first-byte timeout of 1.0 s");

    /* a stream that stops after one chunk: the idle timeout, the part kept */
    run("stall", "stall", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_TIMEOUT);
    CHECK(r.elapsed_s >= 0.9 && r.elapsed_s < 2.5);
    CHECK_STR(r.text, "The kernel ");
    CHECK_CONTAINS(r.message, "idle timeout");

    /* a stream cut mid-chunk: retried, then truncated with the part of the last attempt */
    run("trunc", "trunc", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_TRUNCATED && r.attempts == 3 && r.retries == 2);
    CHECK_STR(r.text, "The kernel ");
    CHECK(r.elapsed_s < 3.0);
    CHECK_CONTAINS(r.message, "cut");
    run("trunconce", "trunconce", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.attempts == 2 && r.retries == 1);
    CHECK_STR(r.text, "The kernel tiles rows by 1024."); /* the retry's text alone */

    /* TLS against a plain HTTP port: fails at once, not retried; verification off is reported */
    S->tls_verify = false;
    set_base("https://127.0.0.1:%d/%s/%s/v1", "ok", "tls");
    memset(&r, 0, sizeof r);
    uv_loop_init(&loop);
    CHECK(akg_openai_client_new(&loop, &c, err, sizeof err) == AKG_OK);
    t0 = akg_now_ms();
    CHECK(akg_openai_chat(c, &req, NULL, err, sizeof err) == AKG_OK);
    while (!r.done && uv_run(&loop, UV_RUN_ONCE))
        ;
    elapsed = (akg_now_ms() - t0) / 1000;
    akg_openai_client_close(c, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    S->tls_verify = true;
    CHECK(r.outcome == AKG_OPENAI_TLS && r.attempts == 1 && r.tls_off);
    CHECK(elapsed < 2.0);
    CHECK_CONTAINS(r.message, "TLS");
}

static void test_server_errors(void)
{
    result r;
    run("r429s", "r429s", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.attempts == 3 && r.retries == 2);
    CHECK(r.retry_delay[0] == 1.0 && r.retry_delay[1] == 1.0); /* Retry-After: 1, honoured */
    CHECK(r.elapsed_s >= 1.9 && r.elapsed_s < 4.0);
    CHECK_CONTAINS(r.log, "\"outcome\":\"rate_limited\",\"http_status\":429");

    run("r429d", "r429d", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.attempts == 3);
    CHECK(r.retry_delay[0] >= 0 && r.retry_delay[0] <= 2.0); /* an HTTP date 1.5 s ahead */
    CHECK(r.elapsed_s < 6.0);

    run("r429long", "r429long", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_RATE_LIMITED && r.attempts == 1 && r.retries == 0);
    CHECK(r.elapsed_s < 1.0);
    CHECK_CONTAINS(r.message, "asked to wait 3600 s");

    run("e500", "e500", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_SERVER_ERROR && r.attempts == 3 && r.http_status == 500);
    CHECK_CONTAINS(r.message, "CUDA out of memory in the model server");
    CHECK(r.elapsed_s < 2.0);
    run("e500once", "e500once", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.attempts == 2);

    run("echokey", "echokey", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_AUTH && r.attempts == 1);
    CHECK_CONTAINS(r.message, "[api key]"); /* the server's echo, redacted */
    CHECK_CONTAINS(r.message, KEY_VAR);
    CHECK(strstr(r.message, KEY) == NULL);

    run("nosuch", "nosuch", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_HTTP_ERROR && r.http_status == 404);
    CHECK_CONTAINS(r.message, "ends in /v1");
}

/* ---- cancellation, the concurrency limit, closing with requests pending --------- */

static void on_cancel_timer(uv_timer_t *t)
{
    result *r = t->data;
    double t0 = akg_now_ms();
    akg_openai_cancel(r->call);
    CHECK(r->done == 1); /* before cancel returned */
    CHECK(akg_now_ms() - t0 < 50);
    uv_close((uv_handle_t *)t, NULL);
}

static void test_cancel(void)
{
    result r;
    memset(&r, 0, sizeof r);
    set_base("http://127.0.0.1:%d/%s/%s/v1", "hang", "cancel");
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_openai_client *c = NULL;
    char err[256];
    CHECK(akg_openai_client_new(&loop, &c, err, sizeof err) == AKG_OK);
    akg_openai_request req = {.settings = S,
                              .messages = MSGS,
                              .n_messages = 2,
                              .stream = 1,
                              .on_event = on_event,
                              .on_done = on_done,
                              .user = &r};
    double t0 = akg_now_ms();
    CHECK(akg_openai_chat(c, &req, &r.call, err, sizeof err) == AKG_OK);
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    t.data = &r;
    uv_timer_start(&t, on_cancel_timer, 200, 0);
    while (!r.done && uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK(r.outcome == AKG_OPENAI_CANCELLED && r.status == AKG_ECANCELED);
    CHECK((akg_now_ms() - t0) / 1000 < 0.6);

    /* cancelled from inside the stream's first delta: no further delta, one callback */
    result r2;
    memset(&r2, 0, sizeof r2);
    r2.cancel_on_first_delta = true;
    set_base("http://127.0.0.1:%d/%s/%s/v1", "ok", "cancel2");
    req.user = &r2;
    CHECK(akg_openai_chat(c, &req, &r2.call, err, sizeof err) == AKG_OK);
    while (!r2.done && uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK(r2.done == 1 && r2.outcome == AKG_OPENAI_CANCELLED && r2.deltas == 1);
    akg_openai_client_close(c, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    CHECK(r2.done == 1);
}

static void on_client_closed(void *user)
{
    *(int *)user += 1;
}

static void test_concurrency_and_close(void)
{
    enum { N = 5 };
    result rs[N];
    memset(rs, 0, sizeof rs);
    set_base("http://127.0.0.1:%d/%s/%s/v1", "slow", "conc");
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_openai_client *c = NULL;
    char err[256];
    CHECK(akg_openai_client_new(&loop, &c, err, sizeof err) == AKG_OK);
    akg_openai_request req = {.settings = S,
                              .messages = MSGS,
                              .n_messages = 2,
                              .stream = 0,
                              .on_event = on_event,
                              .on_done = on_done};
    double t0 = akg_now_ms();
    for (int i = 0; i < N; i++) {
        req.user = &rs[i];
        CHECK(akg_openai_chat(c, &req, &rs[i].call, err, sizeof err) == AKG_OK);
    }
    int done = 0;
    while (done < N && uv_run(&loop, UV_RUN_ONCE)) {
        done = 0;
        for (int i = 0; i < N; i++)
            done += rs[i].done;
    }
    double elapsed = (akg_now_ms() - t0) / 1000;
    for (int i = 0; i < N; i++)
        CHECK(rs[i].done == 1 && rs[i].outcome == AKG_OPENAI_OK);
    /* max_concurrency 2: three waves of 0.3 s */
    CHECK(elapsed >= 0.85 && elapsed < 3.0);
    cJSON *st = server_stats("conc");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(st, "max_active")) == 2);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(st, "requests")) == N);
    cJSON_Delete(st);

    /* closing with two running and three queued: every one answered CANCELLED, loop clean */
    memset(rs, 0, sizeof rs);
    set_base("http://127.0.0.1:%d/%s/%s/v1", "hang", "close");
    for (int i = 0; i < N; i++) {
        req.user = &rs[i];
        CHECK(akg_openai_chat(c, &req, &rs[i].call, err, sizeof err) == AKG_OK);
    }
    for (int i = 0; i < 20; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    int closed = 0;
    akg_openai_client_close(c, on_client_closed, &closed);
    for (int i = 0; i < N; i++)
        CHECK(rs[i].done == 1); /* answered before close returned */
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(closed == 1);
    for (int i = 0; i < N; i++)
        CHECK(rs[i].done == 1 && rs[i].outcome == AKG_OPENAI_CANCELLED);
    CHECK(uv_loop_close(&loop) == 0);
}

/* ---- settings ------------------------------------------------------------------- */

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s", path);
    *strrchr(folder, '/') = '\0';
    akg_mkdirs(folder, NULL, 0);
    CHECK(akg_write_file(path, text, strlen(text), NULL, 0) == AKG_OK);
}

static void test_settings(const char *home, const char *proj)
{
    char err[2048];
    akg_openai_settings *s = NULL;
    /* nothing configured: the message says where it looked and what to write */
    unsetenv("AKG_AGENTS_BASE_URL");
    CHECK(akg_openai_settings_load(proj, "standard", &s, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "no model endpoint for level 'standard'");
    CHECK_CONTAINS(err, ".akg/settings.json");
    CHECK_CONTAINS(err, "AKG_AGENTS_BASE_URL");

    write_text(home, ".akg/settings.json",
               "{\"models\": {\"standard\": {\"base_url\": \"http://user.example/v1/\", "
               "\"model_name\": \"user-model\", \"temperature\": 0.5, \"api_key_env\": \"" KEY_VAR
               "\"}, \"fast\": {\"base_url\": \"http://fast.example/v1\", \"model\": \"f\"}}, "
               "\"default_model\": \"fast\"}");
    write_text(proj, ".akg/settings.json",
               "{\"models\": {\"standard\": {\"model\": \"project-model\", \"extra_body\": "
               "{\"top_k\": 20}}}}");
    write_text(proj, ".akg/settings.local.json",
               "{\"models\": {\"standard\": {\"max_tokens\": 99, \"tls_verify\": false, "
               "\"max_prompt_tokens\": 3000}}}");
    CHECK(akg_openai_settings_load(proj, "standard", &s, err, sizeof err) == AKG_OK);
    if (s) {
        CHECK_STR(s->base_url, "http://user.example/v1"); /* trailing slash dropped */
        CHECK_STR(s->model, "project-model");
        CHECK(s->temperature == 0.5 && s->max_tokens == 99 && !s->tls_verify);
        CHECK(s->max_prompt_tokens == 3000);
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(s->extra_body, "top_k")) == 20);
        CHECK_STR(s->api_key, KEY);
        CHECK_STR(s->api_key_env, KEY_VAR);
        CHECK(s->timeout_s == 300); /* the original's default */
        cJSON *d = akg_openai_settings_describe(s);
        char *text = cJSON_PrintUnformatted(d);
        CHECK(text && !strstr(text, KEY));
        CHECK_CONTAINS(text, "\"api_key_set\":true");
        CHECK_CONTAINS(text, "\"tls_verify\":false");
        CHECK_CONTAINS(text, "\"max_prompt_tokens\":3000");
        akg_buf_appendf(&everything, "%s\n", text ? text : "");
        free(text);
        cJSON_Delete(d);
        akg_openai_settings_free(s);
    }
    CHECK(akg_openai_settings_load(proj, NULL, &s, err, sizeof err) == AKG_OK);
    if (s) {
        CHECK_STR(s->level, "fast"); /* default_model */
        CHECK_STR(s->model, "f");
        akg_openai_settings_free(s);
    }
    /* the environment over every level */
    setenv("AKG_AGENTS_BASE_URL", "http://env.example:8000/v1", 1);
    setenv("AKG_AGENTS_MODEL_NAME", "env-model", 1);
    CHECK(akg_openai_settings_load(proj, "complex", &s, err, sizeof err) == AKG_OK);
    if (s) {
        CHECK_STR(s->base_url, "http://env.example:8000/v1");
        CHECK_STR(s->model, "env-model");
        CHECK_CONTAINS(s->source, "AKG_AGENTS_BASE_URL");
        akg_openai_settings_free(s);
    }
    unsetenv("AKG_AGENTS_BASE_URL");
    unsetenv("AKG_AGENTS_MODEL_NAME");
    /* mistakes name the file and the field */
    write_text(proj, ".akg/settings.local.json",
               "{\"models\": {\"standard\": {\"temperature\": "
               "\"hot\"}}}");
    CHECK(akg_openai_settings_load(proj, "standard", &s, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "models.standard.temperature");
    write_text(proj, ".akg/settings.local.json", "{\"models\": {\n  \"standard\": {,}}}");
    CHECK(akg_openai_settings_load(proj, "standard", &s, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "settings.local.json:2");
    write_text(proj, ".akg/settings.local.json",
               "{\"models\": {\"standard\": {\"api\": \"claude\"}}}");
    CHECK(akg_openai_settings_load(proj, "standard", &s, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "models.standard.api");
    CHECK_CONTAINS(err, "\"anthropic\" (the Messages API)");
    write_text(proj, ".akg/settings.local.json", "{}");
}

/* ---- the Anthropic Messages API (a level's "api": "anthropic") ----------------------- */

static void test_anthropic(void)
{
    result r;
    S->anthropic = true;
    run("script-relu", "anth_plain", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_OK && r.status == AKG_OK);
    CHECK_CONTAINS(r.text, "sketch relu");
    CHECK(r.prompt == 5123 && r.completion == 311 && !r.counted);
    CHECK_STR(r.finish, "end_turn");
    cJSON *st = server_stats("anth_plain");
    const cJSON *body = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "bodies"), 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(body, "system")), "You design kernels.");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(body, "messages")) == 1); /* the user's */
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(body, "max_tokens")) == 512);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "x_api_key"), 0)),
              KEY);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "auth"), 0)), "");
    CHECK_STR(
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "anthropic_version"), 0)),
        "2023-06-01");
    CHECK_CONTAINS(
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "paths"), 0)),
        "/v1/messages");
    cJSON_Delete(st);

    /* streamed: the text from content_block_delta, usage from message_start and message_delta */
    run("script-relu", "anth_stream", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_OK);
    CHECK_CONTAINS(r.text, "sketch relu");
    CHECK(r.deltas > 1);
    CHECK(r.prompt == 5123 && r.completion == 311 && !r.counted);
    CHECK_STR(r.finish, "end_turn");

    /* stop_reason max_tokens is the cut answer, plain and streamed */
    run("script-cut", "anth_cut", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_LENGTH && r.status == AKG_OK);
    CHECK_CONTAINS(r.text, "symbols: N");
    CHECK_STR(r.finish, "max_tokens");
    run("script-cut", "anth_cut_s", 1, &r);
    CHECK(r.outcome == AKG_OPENAI_LENGTH);
    CHECK_CONTAINS(r.text, "tensors: x[N]: f32;");

    /* a path the server does not know: the message names the Messages API's path */
    run("ok", "anth_404", 0, &r);
    CHECK(r.outcome == AKG_OPENAI_HTTP_ERROR && r.attempts == 1);
    CHECK_CONTAINS(r.message, "/v1/messages must exist");
    S->anthropic = false;
}

/* ---- the key reaches no harness worker ------------------------------------------- */

static const char ENV_WORKER[] =
    "import json, os, sys\n"
    "open(sys.argv[0] + '.env', 'w').write(json.dumps(dict(os.environ)))\n"
    "print(json.dumps({'event': 'ready'}), flush=True)\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'id': json.loads(line)['id'], 'ok': True}), flush=True)\n";

static void on_answer(const cJSON *ans, void *user)
{
    *(int *)user = 1;
}

static void test_harness_env(const char *dir)
{
    CHECK(akg_openai_env_is_secret(KEY_VAR "=x")); /* named by the settings loaded above */
    CHECK(akg_openai_env_is_secret("AKG_AGENTS_API_KEY=x"));
    CHECK(akg_openai_env_is_secret("OPENAI_API_KEY=x"));
    CHECK(!akg_openai_env_is_secret("PATH=/usr/bin"));
    CHECK(!akg_openai_env_is_secret("AKG_AGENTS_BASE_URL=http://x"));
    setenv("AKG_AGENTS_API_KEY", KEY, 1);
    char script[1024], envfile[1100];
    snprintf(script, sizeof script, "%s/env_worker.py", dir);
    snprintf(envfile, sizeof envfile, "%s.env", script);
    CHECK(akg_write_file(script, ENV_WORKER, strlen(ENV_WORKER), NULL, 0) == AKG_OK);
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_harness_options ho = {0};
    ho.python = getenv("AKG_PYTHON") ? getenv("AKG_PYTHON") : "/usr/bin/python3";
    ho.worker_script = script;
    ho.workers = 1;
    ho.threads = 1;
    ho.device_kind = "cpu";
    akg_harness *pool = NULL;
    char err[512];
    CHECK(akg_harness_new(&loop, &ho, &pool, err, sizeof err) == AKG_OK);
    int answered = 0;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "verify");
    CHECK(akg_harness_submit(pool, req, 30, on_answer, &answered, NULL) == AKG_OK);
    while (!answered && uv_run(&loop, UV_RUN_ONCE))
        ;
    akg_harness_close(pool, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    unsetenv("AKG_AGENTS_API_KEY");
    char *env = NULL;
    size_t len = 0;
    CHECK(akg_read_file(envfile, 1 << 20, &env, &len, NULL, 0) == AKG_OK);
    CHECK(env && strstr(env, "\"PATH\"")); /* the environment did arrive */
    CHECK(env && !strstr(env, KEY));
    CHECK(env && !strstr(env, KEY_VAR));
    CHECK(env && !strstr(env, "AKG_AGENTS_API_KEY"));
    free(env);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(base_tmp))
        return 2;
    akg_buf_init(&everything, 64 << 20);
    char home[256], proj[256];
    snprintf(home, sizeof home, "%s/home", base_tmp);
    snprintf(proj, sizeof proj, "%s/proj", base_tmp);
    akg_mkdirs(home, NULL, 0);
    akg_mkdirs(proj, NULL, 0);
    setenv("HOME", home, 1);
    setenv(KEY_VAR, KEY, 1);
    unsetenv("AKG_AGENTS_API_KEY");
    unsetenv("AIKG_API_KEY");
    unsetenv("AIKG_BASE_URL");
    unsetenv("AIKG_MODEL_NAME");
    test_settings(home, proj);

    if (start_server() != 0) {
        fprintf(stderr, "could not start the replay server (%s)\n", REPLAY_SERVER);
        return 1;
    }
    /* the settings the fault cases run with: short timeouts and back-offs */
    char settings[1024];
    snprintf(settings, sizeof settings,
             "{\"models\": {\"standard\": {\"base_url\": \"http://127.0.0.1:%d/v1\", \"model\": "
             "\"replay-model\", \"api_key_env\": \"" KEY_VAR "\", \"max_tokens\": 512, "
             "\"extra_body\": {\"top_k\": 20}, \"timeout\": 3, \"connect_timeout\": 1, "
             "\"first_byte_timeout\": 1, \"idle_timeout\": 1, \"retry_base\": 0.05, "
             "\"retry_max\": 5, \"max_retries\": 2, \"max_concurrency\": 2}}}",
             server_port);
    write_text(proj, ".akg/settings.json", settings);
    char err[1024];
    if (akg_openai_settings_load(proj, "standard", &S, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "settings: %s\n", err);
        stop_server();
        return 1;
    }
    test_answers();
    test_bad_answers();
    test_connection_faults();
    test_server_errors();
    test_cancel();
    test_concurrency_and_close();
    test_anthropic();
    test_harness_env(base_tmp);
    akg_openai_settings_free(S);
    stop_server();

    /* the key is in nothing the client handed out */
    CHECK(everything.len > 1000);
    CHECK(everything.data && strstr(everything.data, KEY) == NULL);
    akg_buf_free(&everything);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base_tmp);
    return check_summary();
}
