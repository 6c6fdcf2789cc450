/*
 * provider_openai.c: the `openai` provider, the Designer and the Coder on a model behind an
 * OpenAI-compatible endpoint (openai_client.c).
 *
 * Design: the Designer's prompt (prompts/designer.md: the reference's source, the probe's op
 * graph with shapes and dtypes, the sketch language reference within a budget, the earlier
 * attempts' feedback) goes to the model of the designer's level. Every fenced block of the
 * answer, then the text around them, is tried as a sketch; the first that parses and passes
 * the engine's checker is the design. When none does, the checker's diagnostics go back to
 * the model (prompts/designer_repair.md) at most OA_MAX_REPAIRS times, then the request ends
 * as a design error quoting them. The engine checks the design again; a design that checks
 * but computes something else is the Conductor's to route (its feedback comes back here).
 *
 * Code: a bound sketch that the backend's emitter lowers is lowered, as builtin does (the
 * lowering is deterministic and verified; a model adds nothing but risk). Otherwise the
 * Coder's prompt (prompts/coder.md: the sketch, the reference, the emitter's refusal) goes to
 * the coder's model and the kernel and model_new.py are taken from its fenced blocks.
 *
 * Route: the Conductor's prompt (prompts/conductor.md: the failure's class and detail, the
 * attempt and the budget, where the rules would send it, who may take it, the earlier attempts)
 * goes to the conductor's model, whose answer is read by route.c: a JSON object with the
 * class (truncated_output, local_code_error, design_error, environment_error, timeout), the
 * next agent (coder, designer, stop) and a suggestion. An answer without one, or a request that
 * failed (a timeout, an HTTP error), is answered with a status other than AKG_OK and its
 * reason: the pipeline's rules route then, and the report says why. One request, no repair:
 * the rules are a good answer, and a second question would cost an attempt's time.
 *
 * Levels: agent_model_config in the DSL's config.yaml maps designer/coder/conductor to
 * complex, standard or fast; without it, standard. Settings come from akg_openai_settings_load.
 *
 * Provenance: {"source": "openai", "agent", "level", "model", "settings" (never the key),
 * "requests": [{outcome, prompt_tokens, completion_tokens, attempts, elapsed_ms, checked,
 * finish_reason, asked, answer}], "prompt_tokens", "completion_tokens", "checker_rounds"}, so
 * the report and the store show what each design cost and what the model was asked and wrote
 * (a failed design's too: a small model's answers are the first thing to read).
 *
 * Lifetime: one work item per request. Its zero timer makes the first step run from a later
 * loop iteration; the item is freed once the timer is closed, no chat is pending and the op
 * is answered (or cancelled).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "akg/akg.h"
#include "akg/config.h"
#include "akg/provider.h"
#include "akg/sketch.h"
#include "openai.h"
#include "prompt.h"
#include "route.h"

#define OA_MAX_REPAIRS 2
#define OA_MAX_MESSAGES (2 + 2 * OA_MAX_REPAIRS)
#define OA_REFERENCE_BUDGET 24000
#define OA_PROBE_BUDGET 12000
#define OA_GRAMMAR_BUDGET 22000
#define OA_FEEDBACK_BUDGET 12000
#define OA_ROUTE_DETAIL_BUDGET 6000
#define OA_ROUTE_HISTORY_BUDGET 4000
#define OA_ANSWER_BUDGET 16000
/* the transcript kept in the provenance: the last message of each request (the first is the
 * filled template, whose system part is the grammar: not kept) and its answer */
#define OA_ASKED_BUDGET 8000
/* what the Coder writes in model_new.py for the library's name, which hashes the kernel */
#define OA_LIBRARY_MARK "@AKG_KERNEL_LIB@"

typedef struct {
    uv_loop_t *loop;
    akg_openai_client *client; /* created with the first request */
} oa_session;

typedef struct {
    uv_timer_t timer;
    int timer_open;
    oa_session *session;
    akg_provider_op *op; /* NULL once answered or cancelled */
    int is_code;
    int is_route; /* a Conductor's request (is_code is 0) */
    akg_design_request dreq;
    akg_code_request creq;
    akg_route_request rreq;
    akg_openai_settings *settings;
    akg_openai_call *call;
    akg_openai_message msgs[OA_MAX_MESSAGES];
    char *owned[OA_MAX_MESSAGES]; /* the messages' contents */
    size_t n_msgs;
    int repairs;
    char *lower_error; /* code: why the emitter did not lower the sketch */
    cJSON *provenance;
    /* progress of the current request (akg_provider_op_progress) */
    int request_no;
    uint64_t asked_ms, reported_ms;
    long streamed; /* chunks of the answer so far: a streamed chunk is about a token */
} oa_work;

static void maybe_free(oa_work *w)
{
    if (w->timer_open || w->call || w->op)
        return;
    for (size_t i = 0; i < w->n_msgs; i++)
        free(w->owned[i]);
    akg_openai_settings_free(w->settings);
    free(w->lower_error);
    cJSON_Delete(w->provenance);
    free(w);
}

static akg_provider_op *take_op(oa_work *w)
{
    akg_provider_op *op = w->op;
    w->op = NULL;
    if (op)
        akg_provider_op_set_data(op, NULL);
    return op;
}

static void design_fail(oa_work *w, int status, const char *msg)
{
    akg_provider_op *op = take_op(w);
    if (!op)
        return;
    /* the requests made, their tokens and transcript, go with the failure too */
    akg_design_answer a = {.status = status, .message = msg, .provenance = w->provenance};
    akg_provider_complete_design(op, &a);
}

static void code_fail(oa_work *w, int status, const char *msg)
{
    akg_provider_op *op = take_op(w);
    if (!op)
        return;
    akg_code_answer a = {.status = status, .message = msg, .provenance = w->provenance};
    akg_provider_complete_code(op, &a);
}

static void route_fail(oa_work *w, int status, const char *msg)
{
    akg_provider_op *op = take_op(w);
    if (!op)
        return;
    akg_route_answer a = {
        .status = status, .message = msg, .suggestion = "", .provenance = w->provenance};
    akg_provider_complete_route(op, &a);
}

static const char *agent_of(const oa_work *w)
{
    return w->is_route ? "conductor" : w->is_code ? "coder" : "designer";
}

static const char *agent_title(const oa_work *w)
{
    return w->is_route ? "Conductor" : w->is_code ? "Coder" : "Designer";
}

static void fail(oa_work *w, int status, const char *msg)
{
    if (w->is_route)
        route_fail(w, status, msg);
    else if (w->is_code)
        code_fail(w, status, msg);
    else
        design_fail(w, status, msg);
}

/* Appends a message; content is taken (freed with the work). */
static int push_msg(oa_work *w, const char *role, char *content)
{
    if (!content || w->n_msgs >= OA_MAX_MESSAGES) {
        free(content);
        return AKG_ENOMEM;
    }
    w->owned[w->n_msgs] = content;
    w->msgs[w->n_msgs].role = role;
    w->msgs[w->n_msgs].content = content;
    w->n_msgs++;
    return AKG_OK;
}

/* The level an agent runs at: agent_model_config.<agent> of the DSL's config.yaml, else
 * standard. */
static void agent_level(const char *backend, const char *dsl, const char *agent, char *out,
                        size_t len)
{
    cJSON *cfg = NULL;
    char err[512], key[64];
    snprintf(out, len, "standard");
    if (!backend || !dsl || akg_backend_config_load(backend, dsl, &cfg, err, sizeof err) != AKG_OK)
        return;
    snprintf(key, sizeof key, "agent_model_config.%s", agent);
    const char *lv = akg_config_string(cfg, key, NULL);
    if (lv && *lv)
        snprintf(out, len, "%s", lv);
    cJSON_Delete(cfg);
}

static char *reference_source(const akg_reference *ref)
{
    char *src = NULL, err[256];
    size_t len = 0;
    if (!ref || !ref->path ||
        akg_read_file(ref->path, (size_t)4 << 20, &src, &len, err, sizeof err) != AKG_OK)
        return akg_strdup("(the reference's source is not available)");
    char *t = akg_prompt_trim(src, OA_REFERENCE_BUDGET);
    free(src);
    return t;
}

static char *op_name_of(const akg_reference *ref)
{
    const char *p = ref && ref->path ? strrchr(ref->path, '/') : NULL;
    p = p ? p + 1 : ref && ref->path ? ref->path : "op";
    char *n = akg_strdup(p);
    char *dot = n ? strrchr(n, '.') : NULL;
    if (dot)
        *dot = '\0';
    return n;
}

static char *json_text(const cJSON *j, size_t budget, const char *none)
{
    if (!j)
        return akg_strdup(none);
    char *s = cJSON_Print(j);
    char *t = s ? akg_prompt_trim(s, budget) : NULL;
    free(s);
    return t;
}

/* The earlier attempts, for the Designer: the Conductor's class and detail, the rest of the
 * failure's record, and the sketches tried. */
static char *feedback_text(const cJSON *fb, int attempt)
{
    if (!fb)
        return akg_strdup("None: this is the first attempt.");
    akg_buf b;
    akg_buf_init(&b, 0);
    const cJSON *cls = cJSON_GetObjectItem(fb, "class");
    const cJSON *detail = cJSON_GetObjectItem(fb, "detail");
    akg_buf_appendf(&b,
                    "Attempt %d failed; akg's Conductor sent it back to you, the Designer.\n"
                    "- class: %s\n- detail: %s\n",
                    attempt - 1, cJSON_IsString(cls) ? cls->valuestring : "?",
                    cJSON_IsString(detail) ? detail->valuestring : "?");
    const char *suggestion = cJSON_GetStringValue(cJSON_GetObjectItem(fb, "suggestion"));
    if (suggestion && *suggestion)
        akg_buf_appendf(&b, "- the Conductor's suggestion: %s\n", suggestion);
    cJSON *rest = cJSON_Duplicate(fb, 1);
    if (rest) {
        static const char *const shown[] = {"tried",      "class",     "detail",
                                            "suggestion", "routed_by", "conductor_class"};
        for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
            cJSON_DeleteItemFromObject(rest, shown[i]);
        char *s = cJSON_PrintUnformatted(rest);
        char *t = s ? akg_prompt_trim(s, OA_FEEDBACK_BUDGET / 3) : NULL;
        if (t && strcmp(t, "{}") != 0)
            akg_buf_appendf(&b, "- the failure's record: %s\n", t);
        free(s);
        free(t);
        cJSON_Delete(rest);
    }
    const cJSON *tried = cJSON_GetObjectItem(fb, "tried");
    if (cJSON_IsArray(tried) && cJSON_GetArraySize(tried) > 0) {
        akg_buf_puts(&b, "\nThe sketches tried so far (do not offer one of them again):\n");
        const cJSON *t;
        cJSON_ArrayForEach(t, tried)
        {
            if (cJSON_IsString(t))
                akg_buf_appendf(&b, "\n```sketch\n%s\n```\n", t->valuestring);
        }
    }
    char *all = akg_buf_take(&b);
    char *r = all ? akg_prompt_trim(all, OA_FEEDBACK_BUDGET) : NULL;
    free(all);
    return r;
}

/* ---- the model's requests ------------------------------------------------------------ */

static void on_chat_done(const akg_openai_answer *a, void *user);

/* How often a streaming answer's token count is reported, at most. */
#define OA_PROGRESS_EVERY_MS 1000

static void report(oa_work *w, akg_progress_kind kind, long prompt, long completion,
                   const char *detail)
{
    if (!w->op)
        return;
    uint64_t now = uv_now(w->session->loop);
    akg_provider_progress p = {.kind = kind,
                               .agent = agent_of(w),
                               .model = w->settings && w->settings->model ? w->settings->model : "",
                               .request = w->request_no,
                               .prompt_tokens = prompt,
                               .completion_tokens = completion,
                               .elapsed_s = (double)(now - w->asked_ms) / 1000.0,
                               .detail = detail};
    w->reported_ms = now;
    akg_provider_op_progress(w->op, &p);
}

/* Text as it streams (counted, reported at most every OA_PROGRESS_EVERY_MS) and retries. */
static void on_chat_event(const akg_openai_event *ev, void *user)
{
    oa_work *w = user;
    if (ev->kind == AKG_OPENAI_EVENT_DELTA) {
        w->streamed++;
        if (uv_now(w->session->loop) - w->reported_ms >= OA_PROGRESS_EVERY_MS)
            report(w, AKG_PROGRESS_STREAMING, -1, w->streamed, NULL);
    } else if (ev->kind == AKG_OPENAI_EVENT_RETRY) {
        char why[512];
        snprintf(why, sizeof why, "%.*s; attempt %d in %.1f s", 400, ev->text ? ev->text : "",
                 ev->attempt, ev->delay_s);
        w->streamed = 0;
        report(w, AKG_PROGRESS_RETRYING, -1, -1, why);
    }
}

static int start_chat(oa_work *w, char *err, size_t errlen)
{
    akg_openai_request r = {.settings = w->settings,
                            .messages = w->msgs,
                            .n_messages = w->n_msgs,
                            .stream = -1,
                            .on_event = on_chat_event,
                            .on_done = on_chat_done,
                            .user = w};
    w->request_no++;
    w->asked_ms = uv_now(w->session->loop);
    w->streamed = 0;
    report(w, AKG_PROGRESS_ASKING, -1, -1, NULL);
    return akg_openai_chat(w->session->client, &r, &w->call, err, errlen);
}

/* After a prompt's rendering (rc): its system part (when not empty) and user part become the
 * conversation's messages and the chat starts; both strings are taken (freed on failure). */
static int send_prompt(oa_work *w, int rc, char *sys, char *user, char *err, size_t errlen)
{
    if (rc == AKG_OK && sys && *sys)
        rc = push_msg(w, "system", sys);
    else
        free(sys);
    if (rc == AKG_OK)
        rc = push_msg(w, "user", user);
    else
        free(user);
    if (rc == AKG_OK)
        rc = start_chat(w, err, errlen);
    return rc;
}

/* s with every from replaced by to; malloc'd. */
static char *replace_all(const char *s, const char *from, const char *to)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    const char *p = s, *hit;
    while ((hit = strstr(p, from)) != NULL) {
        akg_buf_append(&b, p, (size_t)(hit - p));
        akg_buf_puts(&b, to);
        p = hit + strlen(from);
    }
    akg_buf_puts(&b, p);
    return akg_buf_take(&b);
}

/* Adds text to o as key, cut to budget, with the API key (should a server echo it) replaced. */
static void add_transcript_text(cJSON *o, const char *key, const char *text, size_t budget,
                                const char *api_key)
{
    if (!text)
        return;
    char *clean = api_key && strlen(api_key) >= 4 ? replace_all(text, api_key, "[api key]")
                                                  : akg_strdup(text);
    char *t = clean ? akg_prompt_trim(clean, budget) : NULL;
    if (t)
        cJSON_AddStringToObject(o, key, t);
    free(t);
    free(clean);
}

/* Records a request in the provenance: its outcome and tokens, and the transcript (what was
 * asked last, what the model answered), so that the report and the store show what the model
 * wrote also when none of it became a design. */
static void record_request(oa_work *w, const akg_openai_answer *a, int checked)
{
    cJSON *reqs = cJSON_GetObjectItem(w->provenance, "requests");
    cJSON *r = cJSON_CreateObject();
    if (!reqs || !r) {
        cJSON_Delete(r);
        return;
    }
    cJSON_AddStringToObject(r, "outcome", akg_openai_outcome_name(a->outcome));
    cJSON_AddNumberToObject(r, "prompt_tokens", (double)a->prompt_tokens);
    cJSON_AddNumberToObject(r, "completion_tokens", (double)a->completion_tokens);
    if (a->tokens_counted)
        cJSON_AddBoolToObject(r, "tokens_counted", 1);
    cJSON_AddNumberToObject(r, "attempts", a->attempts);
    cJSON_AddNumberToObject(r, "elapsed_ms", a->elapsed_ms);
    if (a->tls_verify_off)
        cJSON_AddBoolToObject(r, "tls_verify_off", 1);
    if (!w->is_code && !w->is_route)
        cJSON_AddBoolToObject(r, "sketch_checks", checked);
    if (a->finish_reason && *a->finish_reason)
        cJSON_AddStringToObject(r, "finish_reason", a->finish_reason);
    if (w->n_msgs > 0)
        add_transcript_text(r, "asked", w->msgs[w->n_msgs - 1].content, OA_ASKED_BUDGET,
                            w->settings->api_key);
    if (a->text && (*a->text || a->outcome == AKG_OPENAI_OK))
        add_transcript_text(r, "answer", a->text, OA_ANSWER_BUDGET, w->settings->api_key);
    cJSON_AddItemToArray(reqs, r);
    const char *keys[] = {"prompt_tokens", "completion_tokens"};
    long vals[] = {a->prompt_tokens, a->completion_tokens};
    for (int i = 0; i < 2; i++) {
        cJSON *t = cJSON_GetObjectItem(w->provenance, keys[i]);
        if (t && vals[i] > 0)
            cJSON_SetNumberValue(t, t->valuedouble + (double)vals[i]);
    }
    if (a->model && *a->model && !cJSON_GetObjectItem(w->provenance, "served_by"))
        cJSON_AddStringToObject(w->provenance, "served_by", a->model);
}

/* Tries one candidate text as a sketch: 1 when it parses and checks (*out holds it), else 0
 * with the diagnostics appended to diag_text when it is the first failure seen. */
static int try_sketch(const char *text, akg_sketch **out, akg_buf *diag_text)
{
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    akg_sketch *sk = NULL;
    if (!diags)
        return 0;
    int rc = akg_sketch_parse(text, strlen(text), &sk, diags);
    if (rc == 0 && akg_sketch_check(sk, diags) != 0)
        rc = -1;
    if (rc == 0) {
        akg_sketch_diag_list_free(diags);
        *out = sk;
        return 1;
    }
    if (diag_text->len == 0) {
        for (size_t i = 0; i < akg_sketch_diag_count(diags) && i < 12; i++) {
            const akg_sketch_diag *d = akg_sketch_diag_at(diags, i);
            if (d->severity != AKG_SKETCH_ERROR)
                continue;
            char *line = akg_sketch_diag_format("sketch.sketch", d);
            if (line)
                akg_buf_appendf(diag_text, "%s\n", line);
            free(line);
        }
        if (diag_text->len == 0)
            akg_buf_puts(diag_text, "sketch.sketch: error: the sketch does not parse\n");
    }
    akg_sketch_free(sk);
    akg_sketch_diag_list_free(diags);
    return 0;
}

/* The first sketch of the answer that checks: its text into *text (malloc'd). */
static int find_sketch(const char *answer, char **text, akg_sketch **sk, akg_buf *diag_text)
{
    akg_answer_parts parts;
    if (akg_answer_split(answer, &parts) != AKG_OK)
        return 0;
    size_t n = parts.n_blocks + 1;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        const char *src = i < parts.n_blocks ? parts.blocks[i].body : parts.outside;
        char *cand = akg_answer_sketch_from(src);
        if (!cand)
            continue;
        if (try_sketch(cand, sk, diag_text)) {
            *text = cand;
            found = 1;
        } else {
            free(cand);
        }
    }
    akg_answer_parts_free(&parts);
    return found;
}

static void design_answered(oa_work *w, const akg_openai_answer *a)
{
    char *text = NULL;
    akg_sketch *sk = NULL;
    akg_buf diag;
    akg_buf_init(&diag, 1 << 16);
    int found = find_sketch(a->text, &text, &sk, &diag);
    record_request(w, a, found);
    if (found) {
        cJSON_AddNumberToObject(w->provenance, "checker_rounds", w->repairs);
        char *name = akg_strdup(akg_sketch_name(sk));
        cJSON_AddStringToObject(w->provenance, "sketch", name ? name : "");
        akg_provider_op *op = take_op(w);
        akg_design_answer ans = {.status = AKG_OK,
                                 .sketch_text = text,
                                 .op_name = name ? name : "op",
                                 .provenance = w->provenance};
        if (op)
            akg_provider_complete_design(op, &ans);
        akg_sketch_free(sk);
        free(text);
        free(name);
        akg_buf_free(&diag);
        return;
    }
    if (diag.len == 0)
        akg_buf_puts(&diag, "the answer holds no sketch: write one fenced block whose first "
                            "line is `sketch NAME {`\n");
    if (a->outcome == AKG_OPENAI_LENGTH)
        akg_buf_puts(&diag, "(your answer was cut at max_tokens: write a shorter one)\n");
    char msg[4096];
    if (w->repairs >= OA_MAX_REPAIRS) {
        snprintf(msg, sizeof msg,
                 "the openai Designer (model %s at level %s) gave no sketch that checks in %d "
                 "answers; the last answer's errors:\n%s(a larger model, a higher level in "
                 "agent_model_config, or --sketch with a design of your own would work)",
                 w->settings->model, w->settings->level, w->repairs + 1,
                 diag.data ? diag.data : "");
        akg_buf_free(&diag);
        design_fail(w, AKG_EINVAL, msg);
        return;
    }
    w->repairs++;
    char which[64], *sys = NULL, *user = NULL, err[1024];
    snprintf(which, sizeof which, " (answer %d of at most %d)", w->repairs, OA_MAX_REPAIRS + 1);
    akg_prompt_var vars[] = {{"which", which}, {"diagnostics", diag.data ? diag.data : ""}};
    int rc = akg_prompt_render("designer_repair", vars, 2, &sys, &user, err, sizeof err);
    akg_buf_free(&diag);
    free(sys);
    if (rc == AKG_OK)
        rc = push_msg(w, "assistant", akg_prompt_trim(a->text, OA_ANSWER_BUDGET));
    if (rc == AKG_OK) {
        rc = push_msg(w, "user", user);
        user = NULL;
    }
    free(user);
    if (rc == AKG_OK)
        rc = start_chat(w, err, sizeof err);
    if (rc != AKG_OK)
        design_fail(w, rc, err[0] ? err : "out of memory asking the Designer again");
}

static const char *kernel_file_of(const char *dsl, const char **lang, int *built)
{
    *built = 0;
    if (strcmp(dsl, "cpp") == 0) {
        *lang = "cpp";
        *built = 1;
        return "kernel.cpp";
    }
    if (strcmp(dsl, "cuda") == 0) {
        *lang = "cuda";
        *built = 1;
        return "kernel.cu";
    }
    *lang = "python";
    return "kernel.py";
}

/* Whether a fence's tag names lang ("cpp" also as "c++" or "cc", "cuda" as "cu"). */
static int tag_is(const char *tag, const char *lang)
{
    if (strcasecmp(tag, lang) == 0)
        return 1;
    if (strcmp(lang, "cpp") == 0)
        return strcasecmp(tag, "c++") == 0 || strcasecmp(tag, "cc") == 0;
    if (strcmp(lang, "cuda") == 0)
        return strcasecmp(tag, "cu") == 0;
    return 0;
}

static void code_answered(oa_work *w, const akg_openai_answer *a)
{
    record_request(w, a, 0);
    const char *lang;
    int built;
    const char *kfile = kernel_file_of(w->creq.backend->dsl, &lang, &built);
    akg_answer_parts parts;
    if (akg_answer_split(a->text, &parts) != AKG_OK) {
        code_fail(w, AKG_ENOMEM, "out of memory reading the Coder's answer");
        return;
    }
    const char *kernel = NULL, *model_new = NULL;
    /* model_new.py is the block defining ModelNew; the kernel the first other block tagged
     * with the kernel's language, else the first other block with text */
    const char *fallback = NULL;
    for (size_t i = 0; i < parts.n_blocks; i++) {
        const char *body = parts.blocks[i].body, *tag = parts.blocks[i].tag;
        if (!model_new && strstr(body, "class ModelNew"))
            model_new = body;
        else if (!kernel && *body && tag_is(tag, lang))
            kernel = body;
        else if (!fallback && *body)
            fallback = body;
    }
    if (!kernel)
        kernel = fallback;
    if (!kernel && model_new && !built)
        kernel = model_new; /* a Python DSL: the kernel may live in model_new.py */
    if (!kernel || !model_new) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "the openai Coder (model %s at level %s) answered without %s; it must write "
                 "the kernel in a fenced block and model_new.py (class ModelNew) in another",
                 w->settings->model, w->settings->level,
                 !model_new ? "model_new.py (no block defines class ModelNew)" : "a kernel");
        akg_answer_parts_free(&parts);
        code_fail(w, AKG_EINVAL, msg);
        return;
    }
    akg_kernel_files files = {0};
    char hash[65], lib[64];
    akg_sha256_hex(kernel, strlen(kernel), hash);
    snprintf(lib, sizeof lib, "kernel_%.12s.so", hash);
    files.kernel_source = akg_strdup(kernel);
    files.kernel_filename = akg_strdup(kfile);
    files.library_filename = built ? akg_strdup(lib) : NULL;
    files.model_new_source =
        built ? replace_all(model_new, OA_LIBRARY_MARK, lib) : akg_strdup(model_new);
    akg_answer_parts_free(&parts);
    akg_provider_op *op = take_op(w);
    if (!files.kernel_source || !files.kernel_filename || !files.model_new_source) {
        akg_kernel_files_free(&files);
        if (op) {
            akg_code_answer fa = {
                .status = AKG_ENOMEM, .message = "out of memory", .provenance = w->provenance};
            akg_provider_complete_code(op, &fa);
        }
        return;
    }
    akg_code_answer ans = {.status = AKG_OK, .files = &files, .provenance = w->provenance};
    if (op)
        akg_provider_complete_code(op, &ans);
    akg_kernel_files_free(&files);
}

/* The Conductor's answer: a routing (route.c), else the reason it is not usable. */
static void route_answered(oa_work *w, const akg_openai_answer *a)
{
    record_request(w, a, 0);
    akg_route_choice c;
    char why[512];
    int rc = akg_route_parse(a->text, &c, why, sizeof why);
    if (rc != AKG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "the Conductor's model (%s at level %s) gave no usable routing%s: %s",
                 w->settings->model, w->settings->level,
                 a->outcome == AKG_OPENAI_LENGTH ? " (its answer was cut at max_tokens)" : "", why);
        route_fail(w, rc, msg);
        return;
    }
    cJSON_AddStringToObject(w->provenance, "class", akg_route_class_name(c.cls));
    cJSON_AddStringToObject(w->provenance, "next_agent", akg_route_agent_name(c.agent));
    akg_provider_op *op = take_op(w);
    akg_route_answer ans = {.status = AKG_OK,
                            .cls = c.cls,
                            .agent = c.agent,
                            .suggestion = c.suggestion,
                            .provenance = w->provenance};
    if (op)
        akg_provider_complete_route(op, &ans);
    akg_route_choice_free(&c);
}

static void on_chat_done(const akg_openai_answer *a, void *user)
{
    oa_work *w = user;
    w->call = NULL;
    if (!w->op || a->outcome == AKG_OPENAI_CANCELLED) {
        maybe_free(w);
        return;
    }
    if (a->outcome == AKG_OPENAI_OK || a->outcome == AKG_OPENAI_LENGTH)
        report(w, AKG_PROGRESS_ANSWERED, a->prompt_tokens, a->completion_tokens, NULL);
    if (a->outcome != AKG_OPENAI_OK && a->outcome != AKG_OPENAI_LENGTH) {
        record_request(w, a, 0);
        char msg[2048];
        snprintf(msg, sizeof msg, "the openai %s's request failed (%s): %s", agent_title(w),
                 akg_openai_outcome_name(a->outcome), a->message ? a->message : "no answer");
        fail(w, a->status != AKG_OK ? a->status : AKG_EIO, msg);
    } else if (w->is_route) {
        route_answered(w, a);
    } else if (w->is_code) {
        code_answered(w, a);
    } else {
        design_answered(w, a);
    }
    maybe_free(w);
}

/* ---- the first step of each request --------------------------------------------------- */

static int prepare(oa_work *w, const char *agent, char *err, size_t errlen)
{
    oa_session *s = w->session;
    const char *backend = w->is_route  ? w->rreq.backend
                          : w->is_code ? w->creq.backend->name
                                       : w->dreq.backend;
    const char *dsl = w->is_route ? w->rreq.dsl : w->is_code ? w->creq.backend->dsl : w->dreq.dsl;
    char level[64];
    agent_level(backend, dsl, agent, level, sizeof level);
    int rc = akg_openai_settings_load(NULL, level, &w->settings, err, errlen);
    if (rc != AKG_OK)
        return rc;
    if (!s->client && (rc = akg_openai_client_new(s->loop, &s->client, err, errlen)) != AKG_OK)
        return rc;
    w->provenance = cJSON_CreateObject();
    if (!w->provenance)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    cJSON_AddStringToObject(w->provenance, "source", "openai");
    cJSON_AddStringToObject(w->provenance, "agent", agent);
    cJSON_AddStringToObject(w->provenance, "level", w->settings->level);
    cJSON_AddStringToObject(w->provenance, "model", w->settings->model);
    cJSON *desc = akg_openai_settings_describe(w->settings);
    if (desc)
        cJSON_AddItemToObject(w->provenance, "settings", desc);
    cJSON_AddItemToObject(w->provenance, "requests", cJSON_CreateArray());
    cJSON_AddNumberToObject(w->provenance, "prompt_tokens", 0);
    cJSON_AddNumberToObject(w->provenance, "completion_tokens", 0);
    return AKG_OK;
}

/* A share (in percent) of the level's max_prompt_tokens, in bytes (4 a token), at most
 * fallback; fallback when no limit is set. */
static size_t prompt_share(const oa_work *w, int percent, size_t fallback)
{
    int limit = w->settings ? w->settings->max_prompt_tokens : 0;
    if (limit <= 0)
        return fallback;
    size_t b = (size_t)limit * 4 * (size_t)percent / 100;
    return b < fallback ? b : fallback;
}

static int design_start_chat(oa_work *w, char *err, size_t errlen)
{
    const akg_design_request *r = &w->dreq;
    int rc = prepare(w, "designer", err, errlen);
    if (rc != AKG_OK)
        return rc;
    char attempt[16];
    snprintf(attempt, sizeof attempt, "%d", r->attempt);
    /* a small context (max_prompt_tokens): the sketch reference about 55% of it, the probe 8%,
     * the skills 10% (skills_tokens); the reference source and the feedback as they are */
    char *grammar = akg_prompt_grammar(prompt_share(w, 55, OA_GRAMMAR_BUDGET), err, errlen);
    char *reference = reference_source(r->ref);
    char *probe = json_text(r->probe, prompt_share(w, 8, OA_PROBE_BUDGET),
                            "{\"note\": \"the reference was not probed\"}");
    char skills_tokens[32] = "";
    if (w->settings->max_prompt_tokens > 0)
        snprintf(skills_tokens, sizeof skills_tokens, "%d",
                 w->settings->max_prompt_tokens * 10 / 100);
    char *feedback = feedback_text(r->feedback, r->attempt);
    char *op = op_name_of(r->ref);
    char *sys = NULL, *user = NULL;
    if (!grammar) {
        rc = AKG_EIO;
    } else if (!reference || !probe || !feedback || !op) {
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    } else {
        akg_prompt_var vars[] = {
            {"backend", r->backend},
            {"dsl", r->dsl},
            {"arch", r->arch},
            {"attempt", attempt},
            {"op_name", op},
            {"grammar", grammar},
            {"reference", reference},
            {"probe", probe},
            {"feedback", feedback},
            {"debugging", r->feedback ? "yes" : ""},
            {"skills_tokens", skills_tokens},
        };
        rc = akg_prompt_render("designer", vars, sizeof vars / sizeof vars[0], &sys, &user, err,
                               errlen);
    }
    free(grammar);
    free(reference);
    free(probe);
    free(feedback);
    free(op);
    return send_prompt(w, rc, sys, user, err, errlen);
}

/* Lowers through the emitter (AKG_OK with files), else keeps why in w->lower_error. */
static int code_lower(oa_work *w, akg_kernel_files *files)
{
    const akg_code_request *req = &w->creq;
    char err[1024] = "";
    int rc;
    if (!akg_sketch_has_binding(req->sketch))
        rc = akg_fail(err, sizeof err, AKG_EUNSUPPORTED,
                      "sketch '%s' has no bind: section, so the emitter cannot lower it",
                      akg_sketch_name(req->sketch));
    else if (!req->backend->emit)
        rc = akg_fail(err, sizeof err, AKG_EUNSUPPORTED, "backend %s/%s has no emitter",
                      req->backend->name, req->backend->dsl);
    else {
        akg_emit_request er = {.ref = req->ref,
                               .probe = req->probe,
                               .safe = req->safe,
                               .sketch_file = req->sketch_file};
        rc = req->backend->emit(req->sketch, &er, files, err, sizeof err);
    }
    if (rc == AKG_OK && (!files->kernel_source || !files->kernel_filename))
        rc = akg_fail(err, sizeof err, AKG_EIO, "the emitter returned no kernel source");
    if (rc != AKG_OK) {
        akg_kernel_files_free(files);
        w->lower_error = akg_strdup(err[0] ? err : akg_strerror(rc));
    }
    return rc;
}

/* The Coder's {{last_error}}: why the emitter refused, and the failure the Conductor sent back
 * (its class, the detail within a budget, the Conductor's suggestion) when there is one. */
static char *coder_last_error(const akg_code_request *r, const char *lower_error)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    akg_buf_appendf(&b,
                    "akg's emitter for %s/%s could not lower this sketch: %s. Write the kernel "
                    "yourself%s.",
                    r->backend->name, r->backend->dsl, lower_error ? lower_error : "?",
                    r->safe ? "; the last kernel failed, so keep it conservative (no unchecked "
                              "indexing, no racy writes)"
                            : "");
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(r->feedback, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(r->feedback, "detail"));
    const char *suggestion = cJSON_GetStringValue(cJSON_GetObjectItem(r->feedback, "suggestion"));
    if (cls && detail) {
        char *d = akg_prompt_trim(detail, OA_FEEDBACK_BUDGET / 2);
        akg_buf_appendf(&b,
                        "\n\nThe last kernel failed (%s); akg's Conductor sent it back to "
                        "you, the Coder:\n\n```\n%s\n```\n",
                        cls, d ? d : "");
        free(d);
    }
    if (suggestion && *suggestion)
        akg_buf_appendf(&b, "\nThe Conductor's suggestion: %s\n", suggestion);
    return akg_buf_take(&b);
}

static int code_start_chat(oa_work *w, char *err, size_t errlen)
{
    const akg_code_request *r = &w->creq;
    int rc = prepare(w, "coder", err, errlen);
    if (rc != AKG_OK)
        return rc;
    const char *lang;
    int built;
    const char *kfile = kernel_file_of(r->backend->dsl, &lang, &built);
    char *sketch = NULL;
    if (akg_sketch_print(r->sketch, &sketch) != 0)
        sketch = NULL;
    char *reference = reference_source(r->ref);
    char *last = coder_last_error(r, w->lower_error);
    char library_note[512];
    snprintf(library_note, sizeof library_note,
             "; akg builds `%s` into a shared library in the same folder: load it with "
             "`ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), \"%s\"))` "
             "(akg puts the library's name in place of %s)",
             kfile, OA_LIBRARY_MARK, OA_LIBRARY_MARK);
    char skills_tokens[32] = "";
    if (w->settings->max_prompt_tokens > 0)
        snprintf(skills_tokens, sizeof skills_tokens, "%d",
                 w->settings->max_prompt_tokens * 10 / 100);
    char *sys = NULL, *user = NULL;
    if (!sketch || !reference || !last) {
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    } else {
        akg_prompt_var vars[] = {
            {"backend", r->backend->name},
            {"dsl", r->backend->dsl},
            {"arch", r->backend->default_arch},
            {"lang", lang},
            {"kernel_file", kfile},
            {"library", built ? library_note : ""},
            {"sketch", sketch},
            {"reference", reference},
            {"last_error", last},
            {"debugging", r->safe ? "yes" : ""},
            {"skills_tokens", skills_tokens},
        };
        rc = akg_prompt_render("coder", vars, sizeof vars / sizeof vars[0], &sys, &user, err,
                               errlen);
    }
    free(sketch);
    free(reference);
    free(last);
    return send_prompt(w, rc, sys, user, err, errlen);
}

/* The attempts before this one, a line each: the class, who routed it where, the detail's
 * start (the report's candidates, whose last is the failure being routed). */
static char *history_text(const cJSON *history, int attempt)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, history)
    {
        const cJSON *step = cJSON_GetObjectItem(c, "step");
        if (!cJSON_IsNumber(step) || step->valueint >= attempt)
            continue;
        const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
        const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(c, "error_class"));
        const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(c, "detail"));
        const cJSON *cd = cJSON_GetObjectItem(c, "conductor");
        const char *agent = cJSON_GetStringValue(cJSON_GetObjectItem(cd, "agent"));
        const char *by = cJSON_GetStringValue(cJSON_GetObjectItem(cd, "routed_by"));
        akg_buf_appendf(&b, "- attempt %d: %s", step->valueint, status ? status : "?");
        if (cls)
            akg_buf_appendf(&b, " (%s)", cls);
        if (agent)
            akg_buf_appendf(&b, ", sent to the %s by the %s", agent, by ? by : "rules");
        if (detail)
            akg_buf_appendf(&b, ": %.300s%s", detail, strlen(detail) > 300 ? " [...]" : "");
        akg_buf_puts(&b, "\n");
        n++;
    }
    if (n == 0)
        akg_buf_puts(&b, "None: this was the first attempt.\n");
    char *all = akg_buf_take(&b);
    char *t = all ? akg_prompt_trim(all, OA_ROUTE_HISTORY_BUDGET) : NULL;
    free(all);
    return t;
}

static int route_start_chat(oa_work *w, char *err, size_t errlen)
{
    const akg_route_request *r = &w->rreq;
    int rc = prepare(w, "conductor", err, errlen);
    if (rc != AKG_OK)
        return rc;
    char attempt[16], max_attempts[16];
    snprintf(attempt, sizeof attempt, "%d", r->attempt);
    snprintf(max_attempts, sizeof max_attempts, "%d", r->max_attempts);
    const char *allowed = r->designer_allowed && r->coder_allowed ? "coder, designer or stop"
                          : r->designer_allowed ? "designer or stop (the design itself was found "
                                                  "wrong: no kernel of it can pass)"
                          : r->coder_allowed    ? "coder or stop (the design is the user's: no "
                                                  "other design is tried)"
                                                : "stop";
    const char *found_by = r->found_by && strcmp(r->found_by, "design_check") == 0
                               ? "design check (the sketch run in a reference interpreter)"
                               : "Verifier";
    const char *rule =
        r->rule_agent && strcmp(r->rule_agent, "designer") == 0 ? "Designer" : "Coder";
    char *detail = akg_prompt_trim(r->detail, OA_ROUTE_DETAIL_BUDGET);
    char *history = history_text(r->history, r->attempt);
    char *sys = NULL, *user = NULL;
    if (!detail || !history) {
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    } else {
        akg_prompt_var vars[] = {
            {"backend", r->backend},
            {"dsl", r->dsl},
            {"arch", r->arch},
            {"op_name", r->op_name ? r->op_name : "op"},
            {"attempt", attempt},
            {"max_attempts", max_attempts},
            {"error_class", r->error_class},
            {"found_by", found_by},
            {"rule_agent", rule},
            {"allowed", allowed},
            {"detail", detail},
            {"history", history},
        };
        rc = akg_prompt_render("conductor", vars, sizeof vars / sizeof vars[0], &sys, &user, err,
                               errlen);
    }
    free(detail);
    free(history);
    return send_prompt(w, rc, sys, user, err, errlen);
}

static void on_timer_closed(uv_handle_t *h)
{
    oa_work *w = h->data;
    w->timer_open = 0;
    maybe_free(w);
}

static void on_first_step(uv_timer_t *t)
{
    oa_work *w = t->data;
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
    if (!w->op)
        return;
    char err[2048] = "";
    int rc;
    if (w->is_route) {
        rc = route_start_chat(w, err, sizeof err);
    } else if (w->is_code) {
        akg_kernel_files files = {0};
        if (code_lower(w, &files) == AKG_OK) {
            akg_provider_op *op = take_op(w);
            akg_code_answer a = {.status = AKG_OK, .files = &files};
            akg_provider_complete_code(op, &a);
            akg_kernel_files_free(&files);
            return;
        }
        rc = code_start_chat(w, err, sizeof err);
    } else {
        rc = design_start_chat(w, err, sizeof err);
    }
    if (rc != AKG_OK)
        fail(w, rc, err[0] ? err : akg_strerror(rc));
}

static int start_work(oa_session *s, akg_provider_op *op, oa_work *w, char *err, size_t errlen)
{
    w->session = s;
    if (uv_timer_init(s->loop, &w->timer) != 0) {
        free(w);
        return akg_fail(err, errlen, AKG_EIO, "cannot create the openai provider's timer");
    }
    w->timer_open = 1;
    w->timer.data = w;
    if (uv_timer_start(&w->timer, on_first_step, 0, 0) != 0) {
        uv_close((uv_handle_t *)&w->timer, on_timer_closed);
        return akg_fail(err, errlen, AKG_EIO, "cannot schedule the openai provider's work");
    }
    w->op = op;
    akg_provider_op_set_data(op, w);
    return AKG_OK;
}

static int oa_open(uv_loop_t *loop, void **state, char *err, size_t errlen)
{
    oa_session *s = calloc(1, sizeof *s);
    if (!s)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory opening an openai session");
    s->loop = loop;
    *state = s;
    return AKG_OK;
}

static void oa_close(void *state)
{
    oa_session *s = state;
    if (!s)
        return;
    if (s->client)
        akg_openai_client_close(s->client, NULL, NULL);
    free(s);
}

static int oa_design(void *state, const akg_design_request *req, akg_provider_op *op, char *err,
                     size_t errlen)
{
    if (!req->ref)
        return akg_fail(err, errlen, AKG_EINVAL, "a design request needs the parsed reference");
    oa_work *w = calloc(1, sizeof *w);
    if (!w)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    w->dreq = *req;
    return start_work(state, op, w, err, errlen);
}

static int oa_code(void *state, const akg_code_request *req, akg_provider_op *op, char *err,
                   size_t errlen)
{
    if (!req->sketch || !req->backend)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "a code request needs a checked sketch and a backend");
    oa_work *w = calloc(1, sizeof *w);
    if (!w)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    w->is_code = 1;
    w->creq = *req;
    return start_work(state, op, w, err, errlen);
}

static int oa_route(void *state, const akg_route_request *req, akg_provider_op *op, char *err,
                    size_t errlen)
{
    if (!req->error_class || !req->detail)
        return akg_fail(err, errlen, AKG_EINVAL, "a route request needs the failure's class");
    oa_work *w = calloc(1, sizeof *w);
    if (!w)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    w->is_route = 1;
    w->rreq = *req;
    return start_work(state, op, w, err, errlen);
}

/* Stops the pending step; the session answers op with AKG_ECANCELED. */
static void oa_cancel(void *state, akg_provider_op *op)
{
    (void)state;
    oa_work *w = akg_provider_op_data(op);
    if (!w)
        return;
    akg_provider_op_set_data(op, NULL);
    w->op = NULL;
    if (w->timer_open) {
        uv_timer_stop(&w->timer);
        if (!uv_is_closing((uv_handle_t *)&w->timer))
            uv_close((uv_handle_t *)&w->timer, on_timer_closed);
    }
    if (w->call)
        akg_openai_cancel(w->call); /* on_chat_done runs now and frees w once all is closed */
}

const akg_provider akg_provider_openai = {
    .name = "openai",
    .description = "a model behind an OpenAI-compatible endpoint (settings.json, "
                   "AKG_AGENTS_BASE_URL) designs the sketches and routes failed attempts; "
                   "bound sketches are lowered through the backend's emitter, others coded by "
                   "the model",
    .session_open = oa_open,
    .session_close = oa_close,
    .design = oa_design,
    .code = oa_code,
    .cancel = oa_cancel,
    .route = oa_route,
};
