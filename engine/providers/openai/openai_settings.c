/*
 * openai_settings.c: model endpoints from settings.json and the environment
 * (see openai.h), in the original AKG's format.
 *
 * The layers, each overriding the one before field by field (a level present
 * in two files takes each field from the later file that sets it; extra_body
 * objects merge): ~/.akg/settings.json (the user's), then the project's
 * .akg/settings.json (shared with the project), then .akg/settings.local.json
 * (this person's, kept out of version control), then AKG_AGENTS_BASE_URL,
 * AKG_AGENTS_MODEL_NAME and AKG_AGENTS_API_KEY (or the original's AIKG_*),
 * which apply to every level.
 *
 * Keys. A level names the variable that holds its key ("api_key_env"); the
 * original's inline "api_key" is still read. Every variable named that way is
 * remembered (akg_openai_env_is_secret) so that child processes are started
 * without it. Settings files are small and read synchronously, once a job.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "akg/akg.h"
#include "openai.h"

#define SETTINGS_LIMIT ((size_t)1 << 20)

/* ---- the variables that hold keys ---------------------------------------- */

#define SECRET_NAMES_MAX 64

static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static char *secret_names[SECRET_NAMES_MAX];
static int secret_count;
static bool secret_scanned;

static void secret_add(const char *name)
{
    if (!name || !*name)
        return;
    pthread_mutex_lock(&secret_lock);
    bool known = false;
    for (int i = 0; i < secret_count && !known; i++)
        known = strcmp(secret_names[i], name) == 0;
    if (!known && secret_count < SECRET_NAMES_MAX) {
        char *copy = akg_strdup(name);
        if (copy)
            secret_names[secret_count++] = copy;
    }
    pthread_mutex_unlock(&secret_lock);
}

static void secret_add_from(const cJSON *doc)
{
    const cJSON *models = cJSON_GetObjectItem(doc, "models");
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next)
        secret_add(cJSON_GetStringValue(cJSON_GetObjectItem(m, "api_key_env")));
    secret_add(cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "embedding"), "api_key_env")));
}

/* ---- files ----------------------------------------------------------------- */

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The project root: workspace, else the first folder from the current one up that holds .akg/
 * or .git/. Into buf; false when none. */
static bool project_root(const char *workspace, char *buf, size_t len)
{
    if (workspace && *workspace) {
        snprintf(buf, len, "%s", workspace);
        return true;
    }
    char dir[4096];
    if (!getcwd(dir, sizeof dir))
        return false;
    for (;;) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/.akg", dir);
        bool found = is_dir(probe);
        snprintf(probe, sizeof probe, "%s/.git", dir);
        found = found || is_dir(probe);
        if (found) {
            snprintf(buf, len, "%s", dir);
            return true;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = '\0';
    }
}

/* The settings files in order (user, project, local); count into *n. */
static void settings_paths(const char *workspace, char paths[3][4200], int *n)
{
    *n = 0;
    const char *home = getenv("HOME");
    if (home && *home)
        snprintf(paths[(*n)++], 4200, "%s/.akg/settings.json", home);
    char root[4096];
    if (project_root(workspace, root, sizeof root)) {
        snprintf(paths[(*n)++], 4200, "%s/.akg/settings.json", root);
        snprintf(paths[(*n)++], 4200, "%s/.akg/settings.local.json", root);
    }
}

/* Reads path into *doc (NULL when the file does not exist). */
static int load_json(const char *path, cJSON **doc, char *err, size_t errlen)
{
    *doc = NULL;
    if (access(path, F_OK) != 0)
        return AKG_OK;
    char *text = NULL;
    size_t len = 0;
    int rc = akg_read_file(path, SETTINGS_LIMIT, &text, &len, err, errlen);
    if (rc != AKG_OK)
        return rc;
    const char *end = NULL;
    *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!cJSON_IsObject(*doc)) {
        int line = 1;
        for (const char *p = text; end && p < end && *p; p++)
            line += *p == '\n';
        cJSON_Delete(*doc);
        *doc = NULL;
        free(text);
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:%d: not a JSON object (the settings file holds {\"models\": "
                        "{\"standard\": {\"base_url\": ..., \"model\": ...}}}); fix the JSON there",
                        path, line);
    }
    free(text);
    return AKG_OK;
}

/* Merges src over dst: objects recursively, anything else replaced. */
static void merge_over(cJSON *dst, const cJSON *src)
{
    for (const cJSON *e = src->child; e; e = e->next) {
        cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, e->string);
        if (cJSON_IsObject(have) && cJSON_IsObject(e)) {
            merge_over(have, e);
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(dst, e->string);
            cJSON_AddItemToObject(dst, e->string, cJSON_Duplicate(e, 1));
        }
    }
}

/* ---- one level's fields ---------------------------------------------------- */

static const char *env_either(const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "AKG_AGENTS_%s", name);
    const char *v = getenv(key);
    if (v && *v)
        return v;
    snprintf(key, sizeof key, "AIKG_%s", name);
    v = getenv(key);
    return v && *v ? v : NULL;
}

static int number_field(const cJSON *lv, const char *name, double *out, double lo, double hi,
                        const char *level, const char *source, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItem(lv, name);
    if (!v || cJSON_IsNull(v))
        return AKG_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "models.%s.%s in %s must be a number from %g to %g; fix it there", level,
                        name, source, lo, hi);
    *out = v->valuedouble;
    return AKG_OK;
}

static int string_field(const cJSON *lv, const char *name, char **out, const char *level,
                        const char *source, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItem(lv, name);
    if (!v || cJSON_IsNull(v))
        return AKG_OK;
    if (!cJSON_IsString(v))
        return akg_fail(err, errlen, AKG_EINVAL, "models.%s.%s in %s must be a string", level, name,
                        source);
    free(*out);
    *out = akg_strdup(v->valuestring);
    return AKG_OK;
}

static void normalise_base_url(char *url)
{
    size_t n = strlen(url);
    while (n && (url[n - 1] == '/' || isspace((unsigned char)url[n - 1])))
        url[--n] = '\0';
    static const char *const tails[] = {"/chat/completions", "/messages"};
    for (size_t i = 0; i < 2; i++) {
        size_t t = strlen(tails[i]);
        if (n >= t && strcmp(url + n - t, tails[i]) == 0) {
            url[n - t] = '\0';
            break;
        }
    }
}

static int level_fields(akg_openai_settings *s, const cJSON *lv, const char *source, char *err,
                        size_t errlen)
{
    const char *L = s->level;
    int rc = AKG_OK;
    rc = rc ? rc : string_field(lv, "base_url", &s->base_url, L, source, err, errlen);
    rc = rc ? rc : string_field(lv, "model_name", &s->model, L, source, err, errlen);
    rc = rc ? rc : string_field(lv, "model", &s->model, L, source, err, errlen);
    rc = rc ? rc : string_field(lv, "api_key_env", &s->api_key_env, L, source, err, errlen);
    rc = rc ? rc : string_field(lv, "ca_bundle", &s->ca_bundle, L, source, err, errlen);
    double max_tokens = s->max_tokens, conc = s->max_concurrency, retries = s->max_retries;
    double prompt_tokens = s->max_prompt_tokens;
    rc = rc ? rc : number_field(lv, "temperature", &s->temperature, 0, 2, L, source, err, errlen);
    rc = rc ? rc : number_field(lv, "max_tokens", &max_tokens, 1, 1e7, L, source, err, errlen);
    rc = rc ? rc
            : number_field(lv, "max_prompt_tokens", &prompt_tokens, 500, 1e7, L, source, err,
                           errlen);
    rc = rc ? rc : number_field(lv, "timeout", &s->timeout_s, 0.001, 86400, L, source, err, errlen);
    rc = rc ? rc
            : number_field(lv, "connect_timeout", &s->connect_timeout_s, 0.001, 3600, L, source,
                           err, errlen);
    rc = rc ? rc
            : number_field(lv, "first_byte_timeout", &s->first_byte_timeout_s, 0, 86400, L, source,
                           err, errlen);
    rc =
        rc ? rc
           : number_field(lv, "idle_timeout", &s->idle_timeout_s, 0, 86400, L, source, err, errlen);
    rc = rc ? rc : number_field(lv, "max_concurrency", &conc, 1, 1024, L, source, err, errlen);
    rc = rc ? rc : number_field(lv, "max_retries", &retries, 0, 100, L, source, err, errlen);
    rc =
        rc ? rc : number_field(lv, "retry_base", &s->retry_base_s, 0, 3600, L, source, err, errlen);
    rc = rc ? rc : number_field(lv, "retry_max", &s->retry_max_s, 0, 86400, L, source, err, errlen);
    if (rc)
        return rc;
    s->max_tokens = (int)max_tokens;
    s->max_prompt_tokens = (int)prompt_tokens;
    s->max_concurrency = (int)conc;
    s->max_retries = (int)retries;
    const cJSON *tls = cJSON_GetObjectItem(lv, "tls_verify");
    if (tls && !cJSON_IsBool(tls))
        return akg_fail(err, errlen, AKG_EINVAL, "models.%s.tls_verify in %s must be true or false",
                        L, source);
    if (tls)
        s->tls_verify = cJSON_IsTrue(tls);
    const cJSON *api = cJSON_GetObjectItem(lv, "api");
    if (api && !(cJSON_IsString(api) && (strcmp(api->valuestring, "openai") == 0 ||
                                         strcmp(api->valuestring, "anthropic") == 0)))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "models.%s.api in %s must be \"openai\" (chat completions) or "
                        "\"anthropic\" (the Messages API)",
                        L, source);
    if (api)
        s->anthropic = strcmp(api->valuestring, "anthropic") == 0;
    const cJSON *stream = cJSON_GetObjectItem(lv, "stream");
    if (cJSON_IsBool(stream))
        s->stream = cJSON_IsTrue(stream);
    const cJSON *usage = cJSON_GetObjectItem(lv, "stream_usage");
    if (cJSON_IsBool(usage))
        s->stream_usage = cJSON_IsTrue(usage);
    const cJSON *extra = cJSON_GetObjectItem(lv, "extra_body");
    if (extra && !cJSON_IsObject(extra))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "models.%s.extra_body in %s must be an object of request fields", L,
                        source);
    if (extra) {
        cJSON_Delete(s->extra_body);
        s->extra_body = cJSON_Duplicate(extra, 1);
    } else if (cJSON_IsTrue(cJSON_GetObjectItem(lv, "thinking_enabled"))) {
        /* the original's older spelling of {"thinking": {"type": "enabled"}} */
        cJSON_Delete(s->extra_body);
        s->extra_body = cJSON_Parse("{\"thinking\":{\"type\":\"enabled\"}}");
    }
    return AKG_OK;
}

static void defaults(akg_openai_settings *s)
{
    s->temperature = 0.2; /* the original's defaults */
    s->max_tokens = 8192;
    s->timeout_s = 300;
    s->connect_timeout_s = 10;
    s->first_byte_timeout_s = 0;
    s->idle_timeout_s = 120;
    s->tls_verify = true;
    s->max_concurrency = 4;
    s->max_retries = 4;
    s->retry_base_s = 0.5;
    s->retry_max_s = 30;
    s->stream_usage = true;
}

void akg_openai_settings_free(akg_openai_settings *s)
{
    if (!s)
        return;
    free(s->level);
    free(s->base_url);
    free(s->model);
    free(s->api_key_env);
    if (s->api_key) {
        memset(s->api_key, 0, strlen(s->api_key));
        free(s->api_key);
    }
    cJSON_Delete(s->extra_body);
    free(s->ca_bundle);
    free(s->source);
    free(s);
}

int akg_openai_settings_load(const char *workspace, const char *level, akg_openai_settings **out,
                             char *err, size_t errlen)
{
    *out = NULL;
    char paths[3][4200];
    int npaths = 0;
    settings_paths(workspace, paths, &npaths);
    cJSON *merged = cJSON_CreateObject();
    akg_buf source;
    akg_buf_init(&source, 1 << 16);
    akg_buf looked;
    akg_buf_init(&looked, 1 << 16);
    int rc = AKG_OK;
    for (int i = 0; i < npaths && rc == AKG_OK; i++) {
        cJSON *doc = NULL;
        rc = load_json(paths[i], &doc, err, errlen);
        akg_buf_appendf(&looked, "%s%s", looked.len ? ", " : "", paths[i]);
        if (rc == AKG_OK && doc) {
            const cJSON *models = cJSON_GetObjectItem(doc, "models");
            if (models && !cJSON_IsObject(models))
                rc = akg_fail(err, errlen, AKG_EINVAL,
                              "%s: \"models\" must map levels (complex, standard, fast) to "
                              "endpoints",
                              paths[i]);
            secret_add_from(doc);
            merge_over(merged, doc);
            akg_buf_appendf(&source, "%s%s", source.len ? ", " : "", paths[i]);
        }
        cJSON_Delete(doc);
    }
    akg_openai_settings *s = rc == AKG_OK ? calloc(1, sizeof *s) : NULL;
    if (rc == AKG_OK && !s)
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    if (rc == AKG_OK) {
        defaults(s);
        const char *def = cJSON_GetStringValue(cJSON_GetObjectItem(merged, "default_model"));
        s->level = akg_strdup(level && *level ? level : def && *def ? def : "standard");
        s->stream = cJSON_IsTrue(cJSON_GetObjectItem(merged, "stream_output"));
        const cJSON *lv = cJSON_GetObjectItem(cJSON_GetObjectItem(merged, "models"), s->level);
        if (lv && !cJSON_IsObject(lv))
            rc = akg_fail(err, errlen, AKG_EINVAL, "models.%s in %s must be an object", s->level,
                          source.data ? source.data : "the settings");
        else if (lv)
            rc = level_fields(s, lv, source.data ? source.data : "the settings", err, errlen);
    }
    if (rc == AKG_OK) {
        /* the environment, over every level */
        const char *v;
        if ((v = env_either("BASE_URL"))) {
            free(s->base_url);
            s->base_url = akg_strdup(v);
            akg_buf_appendf(&source, "%sAKG_AGENTS_BASE_URL", source.len ? ", " : "");
        }
        if ((v = env_either("MODEL_NAME"))) {
            free(s->model);
            s->model = akg_strdup(v);
            akg_buf_appendf(&source, "%sAKG_AGENTS_MODEL_NAME", source.len ? ", " : "");
        }
        if ((v = env_either("API_KEY"))) {
            s->api_key = akg_strdup(v);
            free(s->api_key_env);
            s->api_key_env =
                akg_strdup(getenv("AKG_AGENTS_API_KEY") ? "AKG_AGENTS_API_KEY" : "AIKG_API_KEY");
        } else if (s->api_key_env && (v = getenv(s->api_key_env)) && *v) {
            s->api_key = akg_strdup(v);
        } else {
            const cJSON *lv = cJSON_GetObjectItem(cJSON_GetObjectItem(merged, "models"), s->level);
            const char *inline_key = cJSON_GetStringValue(cJSON_GetObjectItem(lv, "api_key"));
            if (inline_key && *inline_key)
                s->api_key = akg_strdup(inline_key);
        }
        secret_add(s->api_key_env);
        if (s->base_url)
            normalise_base_url(s->base_url);
        s->source = akg_buf_take(&source);
        if (!s->base_url || !*s->base_url || !s->model || !*s->model) {
            bool no_url = !s->base_url || !*s->base_url;
            rc = akg_fail(
                err, errlen, AKG_ENOTFOUND,
                "no model endpoint for level '%s': %s is not set (looked at %s and the "
                "environment); write .akg/settings.json as {\"models\": {\"%s\": {\"base_url\": "
                "\"http://127.0.0.1:8080/v1\", \"model\": \"<name>\", \"api_key_env\": "
                "\"<VARIABLE>\"}}} or set AKG_AGENTS_BASE_URL and AKG_AGENTS_MODEL_NAME",
                s->level, no_url ? "base_url" : "model",
                looked.data ? looked.data : "no settings file", s->level);
        } else if (strncmp(s->base_url, "http://", 7) != 0 &&
                   strncmp(s->base_url, "https://", 8) != 0) {
            rc = akg_fail(err, errlen, AKG_EINVAL,
                          "base_url of level '%s' must start with http:// or https:// (from %s)",
                          s->level, s->source ? s->source : "the settings");
        }
    }
    akg_buf_free(&source);
    akg_buf_free(&looked);
    cJSON_Delete(merged);
    if (rc != AKG_OK) {
        akg_openai_settings_free(s);
        return rc;
    }
    *out = s;
    return AKG_OK;
}

cJSON *akg_openai_settings_describe(const akg_openai_settings *s)
{
    cJSON *d = cJSON_CreateObject();
    if (!d || !s)
        return d;
    cJSON_AddStringToObject(d, "provider", "openai");
    cJSON_AddStringToObject(d, "level", s->level ? s->level : "");
    /* base_url without user:password@ */
    const char *u = s->base_url ? s->base_url : "";
    const char *scheme = strstr(u, "://");
    const char *host = scheme ? scheme + 3 : u;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    char shown[2048];
    if (at && (!slash || at < slash))
        snprintf(shown, sizeof shown, "%.*s%s", (int)(host - u), u, at + 1);
    else
        snprintf(shown, sizeof shown, "%s", u);
    cJSON_AddStringToObject(d, "base_url", shown);
    cJSON_AddStringToObject(d, "model", s->model ? s->model : "");
    if (s->api_key_env)
        cJSON_AddStringToObject(d, "api_key_env", s->api_key_env);
    cJSON_AddBoolToObject(d, "api_key_set", s->api_key && *s->api_key);
    cJSON_AddBoolToObject(d, "tls_verify", s->tls_verify);
    cJSON_AddBoolToObject(d, "stream", s->stream);
    cJSON_AddStringToObject(d, "api", s->anthropic ? "anthropic" : "openai");
    cJSON_AddNumberToObject(d, "timeout_s", s->timeout_s);
    cJSON_AddNumberToObject(d, "max_tokens", s->max_tokens);
    if (s->max_prompt_tokens > 0)
        cJSON_AddNumberToObject(d, "max_prompt_tokens", s->max_prompt_tokens);
    if (s->temperature >= 0)
        cJSON_AddNumberToObject(d, "temperature", s->temperature);
    cJSON_AddStringToObject(d, "source", s->source ? s->source : "");
    return d;
}

/* ---- what a child process must not inherit -------------------------------- */

static void secret_scan_once(void)
{
    pthread_mutex_lock(&secret_lock);
    bool scanned = secret_scanned;
    secret_scanned = true;
    pthread_mutex_unlock(&secret_lock);
    if (scanned)
        return;
    char paths[3][4200];
    int n = 0;
    settings_paths(NULL, paths, &n);
    for (int i = 0; i < n; i++) {
        cJSON *doc = NULL;
        if (load_json(paths[i], &doc, NULL, 0) == AKG_OK && doc)
            secret_add_from(doc);
        cJSON_Delete(doc);
    }
}

bool akg_openai_env_is_secret(const char *entry)
{
    if (!entry)
        return false;
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
    static const char suffix[] = "_API_KEY";
    size_t sl = sizeof suffix - 1;
    if (n >= sl && strncmp(entry + n - sl, suffix, sl) == 0)
        return true; /* AKG_AGENTS_API_KEY, AIKG_API_KEY, OPENAI_API_KEY, ... */
    secret_scan_once();
    bool hit = false;
    pthread_mutex_lock(&secret_lock);
    for (int i = 0; i < secret_count && !hit; i++)
        hit = strlen(secret_names[i]) == n && strncmp(secret_names[i], entry, n) == 0;
    pthread_mutex_unlock(&secret_lock);
    return hit;
}
