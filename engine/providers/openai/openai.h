/*
 * openai.h: the OpenAI-compatible chat-completions client and its settings.
 *
 * Settings (openai_settings.c). Compatible with the original AKG's
 * settings.json: {"models": {"complex": {...}, "standard": {...}, "fast": {...}},
 * "default_model": "standard", "stream_output": false}, each level holding
 * base_url, model (or model_name), api_key_env (the NAME of the environment
 * variable that holds the key), temperature, max_tokens, timeout, extra_body.
 * Files, later ones overriding earlier ones field by field: ~/.akg/settings.json,
 * <project>/.akg/settings.json, <project>/.akg/settings.local.json; then the
 * environment: AKG_AGENTS_BASE_URL, AKG_AGENTS_MODEL_NAME, AKG_AGENTS_API_KEY
 * (the original's AIKG_* names too) override every level.
 *
 * The key is a secret: it is read from the environment (or, for the original's
 * format, a file's "api_key"), held in memory, sent only in the Authorization
 * header, and never written into a message, a description or a log line; the
 * harness workers' environment is built without it (akg_openai_env_is_secret).
 *
 * Client (openai_client.c, on http_uv.c). One client per loop; requests are
 * POST {base_url}/chat/completions (or {base_url}/messages for a level whose
 * "api" is "anthropic": the Anthropic Messages API, answers read into the same
 * akg_openai_answer), streamed (SSE) or not, run on the loop and never block it. Each request ends
 * with exactly one on_done, from a later loop iteration; see akg_openai_outcome for what each
 * ending means.
 */
#ifndef AKG_OPENAI_H
#define AKG_OPENAI_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <uv.h>

/* ---- settings ------------------------------------------------------------ */

typedef struct {
    char *level;        /* "complex", "standard", "fast" */
    char *base_url;     /* the API root, no trailing slash ("http://127.0.0.1:8080/v1") */
    char *model;        /* the model name the server knows */
    char *api_key_env;  /* the variable the key came from (a name, never the key); may be NULL */
    char *api_key;      /* SECRET: never print; NULL when the endpoint takes no key */
    double temperature; /* < 0: not sent */
    int max_tokens;     /* 0: not sent */
    /* the prompt's size for a small context ("max_prompt_tokens"), in tokens estimated as 4 bytes
     * each: the Designer's sketch reference, skills and probe are cut to fit; 0: no limit (the
     * default budgets: the reference's four main sections, the DSL's skills_token_budget) */
    int max_prompt_tokens;
    double timeout_s;            /* one attempt, first byte to last (settings' "timeout"; 300) */
    double connect_timeout_s;    /* 10 */
    double first_byte_timeout_s; /* until the answer's first byte; 0: timeout_s */
    double idle_timeout_s;       /* between two bytes of a started answer; 0: none (default 60) */
    cJSON *extra_body;           /* merged into every request body; may be NULL */
    bool tls_verify;             /* true unless "tls_verify": false is set explicitly */
    char *ca_bundle;             /* may be NULL */
    int max_concurrency;         /* requests in flight per base_url; 4 */
    int max_retries;             /* further attempts after a retryable failure; 4 */
    double retry_base_s;         /* back-off: base * 2^(n-1), jittered; 0.5 */
    double retry_max_s;          /* the longest back-off or Retry-After honoured; 30 */
    bool stream;                 /* "stream_output" */
    bool stream_usage;           /* ask for usage in the stream's last chunk; true */
    /* "api": "anthropic": the Anthropic Messages API (POST {base_url}/messages, the key in
     * x-api-key, anthropic-version 2023-06-01, the system messages as "system"); else the
     * OpenAI chat-completions API */
    bool anthropic;
    char *source; /* the files and variables that made it (for messages) */
} akg_openai_settings;

/* Loads the settings of level (NULL: the files' default_model, else "standard") for the
 * project at workspace (NULL: the first folder holding .akg/ or .git/ from the current one
 * up). *out is the caller's, freed with akg_openai_settings_free. Fails with a message naming
 * the files read and what to add when no base_url or model is set. */
int akg_openai_settings_load(const char *workspace, const char *level, akg_openai_settings **out,
                             char *err, size_t errlen);
void akg_openai_settings_free(akg_openai_settings *s);
/* For reports and the store: level, base_url, model, api_key_env, tls_verify, timeouts,
 * source; never the key. The caller deletes it. */
cJSON *akg_openai_settings_describe(const akg_openai_settings *s);

/* Whether an environment entry ("NAME=value") carries an API key and must not reach a child
 * process: AKG_AGENTS_API_KEY, AIKG_API_KEY, any *_API_KEY, and every variable a settings file
 * names as api_key_env (the user's and the current project's files, and those loaded). */
bool akg_openai_env_is_secret(const char *entry);

/* ---- the client ---------------------------------------------------------- */

typedef struct akg_openai_client akg_openai_client;
typedef struct akg_openai_call akg_openai_call;

typedef enum {
    AKG_OPENAI_OK,           /* an answer (finish_reason "stop" or another than "length") */
    AKG_OPENAI_LENGTH,       /* finish_reason "length": text holds the answer cut at max_tokens */
    AKG_OPENAI_CANCELLED,    /* akg_openai_cancel or akg_openai_client_close */
    AKG_OPENAI_CONFIG,       /* the settings cannot make a request (no base_url, no model) */
    AKG_OPENAI_CONNECT,      /* nothing answered at base_url (after the retries) */
    AKG_OPENAI_TLS,          /* the TLS handshake or certificate check failed (not retried) */
    AKG_OPENAI_TIMEOUT,      /* first-byte, idle or total timeout (not retried) */
    AKG_OPENAI_RATE_LIMITED, /* 429 after the retries, or a Retry-After beyond retry_max_s */
    AKG_OPENAI_SERVER_ERROR, /* 5xx after the retries */
    AKG_OPENAI_AUTH,         /* 401/403: the key (not retried) */
    AKG_OPENAI_HTTP_ERROR,   /* another 4xx: the request (not retried) */
    AKG_OPENAI_BAD_RESPONSE, /* not JSON, or not a chat-completions answer (not retried) */
    AKG_OPENAI_EMPTY,        /* no choices in the answer (not retried) */
    AKG_OPENAI_TRUNCATED,    /* the stream or body was cut (after the retries); text: the part */
} akg_openai_outcome;

/* A static name for an outcome ("ok", "length", "connect", ...). */
const char *akg_openai_outcome_name(akg_openai_outcome outcome);

typedef struct {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
} akg_openai_message;

/* Events during a request, for progress: text as it streams, and retries. */
typedef enum { AKG_OPENAI_EVENT_DELTA, AKG_OPENAI_EVENT_RETRY } akg_openai_event_kind;

typedef struct {
    akg_openai_event_kind kind;
    const char *text; /* DELTA: the new text (not NUL-terminated: text_len); RETRY: why */
    size_t text_len;
    int attempt;    /* the attempt the event belongs to (1-based); RETRY: the next one */
    double delay_s; /* RETRY: the wait before it */
} akg_openai_event;

typedef struct {
    akg_openai_outcome outcome;
    int status;                /* an akg_status: AKG_OK for OK and LENGTH */
    const char *message;       /* not OK: for a person, naming the endpoint and what would work */
    const char *text;          /* the answer's content ("" when none; the part for TRUNCATED) */
    const char *reasoning;     /* reasoning_content where the server sends it, else "" */
    const char *finish_reason; /* as sent, or "" */
    const char *model;         /* as the server names it, or "" */
    long prompt_tokens;        /* from usage; -1 when the server sent none */
    long completion_tokens;    /* from usage; else counted (one a streamed chunk); -1 */
    bool tokens_counted;       /* completion_tokens was counted, not reported by the server */
    int attempts;
    long http_status; /* of the last attempt; 0 when none */
    double elapsed_ms;
    bool tls_verify_off;      /* the request ran with certificate checks off (settings) */
    const cJSON *attempt_log; /* [{attempt, outcome, http_status, detail, waited_s}] */
} akg_openai_answer;

typedef struct {
    const akg_openai_settings *settings; /* borrowed until on_done */
    const akg_openai_message *messages;
    size_t n_messages;
    int stream;     /* -1: the settings' stream_output; 0 or 1 */
    int max_tokens; /* 0: the settings' */
    void (*on_event)(const akg_openai_event *event, void *user); /* may be NULL */
    /* answer and what it points to are valid during the callback only */
    void (*on_done)(const akg_openai_answer *answer, void *user);
    void *user;
} akg_openai_request;

/* Creates a client on loop; *out is the caller's, released with akg_openai_client_close. */
int akg_openai_client_new(uv_loop_t *loop, akg_openai_client **out, char *err, size_t errlen);
/* Cancels every request (their on_done runs with CANCELLED) and frees the client once its
 * handles are closed (closed, may be NULL, runs then). */
void akg_openai_client_close(akg_openai_client *client, void (*closed)(void *user), void *user);

/* Starts a chat completion. On AKG_OK *call (may be NULL) is valid until on_done starts. On
 * failure (messages missing, out of memory) nothing runs; settings problems are answered
 * through on_done (CONFIG) like every other failure. */
int akg_openai_chat(akg_openai_client *client, const akg_openai_request *req,
                    akg_openai_call **call, char *err, size_t errlen);
/* Stops the request at once (the transfer is aborted, a back-off or a queued wait ends);
 * on_done runs with CANCELLED before this returns. */
void akg_openai_cancel(akg_openai_call *call);

#endif
