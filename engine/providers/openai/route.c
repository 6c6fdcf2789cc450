/*
 * route.c: the Conductor's answer read (route.h).
 *
 * Bounded work: at most ROUTE_SCAN_BYTES of each part are scanned and at most ROUTE_MAX_OBJECTS
 * openings '{' tried in all, so a long answer of prose costs a few hundred kilobytes of
 * scanning at worst.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "akg/akg.h"
#include "prompt.h"
#include "route.h"

#define ROUTE_SCAN_BYTES 65536
#define ROUTE_MAX_OBJECTS 64

/* s lowercased, spaces and hyphens as underscores, trimmed, into out. */
static void normalize(const char *s, char *out, size_t len)
{
    size_t n = 0;
    while (*s && isspace((unsigned char)*s))
        s++;
    for (; *s && n + 1 < len; s++) {
        unsigned char c = (unsigned char)*s;
        out[n++] = c == ' ' || c == '-' ? '_' : (char)tolower(c);
    }
    while (n > 0 && out[n - 1] == '_')
        n--;
    out[n] = '\0';
}

static const struct {
    const char *name;
    akg_route_class cls;
} class_names[] = {
    {"truncated_output", AKG_ROUTE_TRUNCATED_OUTPUT},
    {"truncated", AKG_ROUTE_TRUNCATED_OUTPUT},
    {"local_code_error", AKG_ROUTE_LOCAL_CODE_ERROR},
    {"code_error", AKG_ROUTE_LOCAL_CODE_ERROR},
    {"local_error", AKG_ROUTE_LOCAL_CODE_ERROR},
    {"design_error", AKG_ROUTE_DESIGN_ERROR},
    {"environment_error", AKG_ROUTE_ENVIRONMENT_ERROR},
    {"environment", AKG_ROUTE_ENVIRONMENT_ERROR},
    {"env_error", AKG_ROUTE_ENVIRONMENT_ERROR},
    {"timeout", AKG_ROUTE_TIMEOUT},
    {"time_out", AKG_ROUTE_TIMEOUT},
};

static const struct {
    const char *name;
    akg_route_agent agent;
} agent_names[] = {
    {"coder", AKG_ROUTE_CODER},
    {"designer", AKG_ROUTE_DESIGNER},
    {"stop", AKG_ROUTE_STOP},
};

#define CLASS_SET "truncated_output, local_code_error, design_error, environment_error or timeout"
#define AGENT_SET "coder, designer or stop"

/* Checks one parsed object: 1 with *out filled, else 0 with why in err. */
static int choice_of(const cJSON *o, akg_route_choice *out, char *err, size_t errlen)
{
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(o, "class");
    const cJSON *agent = cJSON_GetObjectItemCaseSensitive(o, "next_agent");
    if (!agent)
        agent = cJSON_GetObjectItemCaseSensitive(o, "agent");
    const cJSON *sugg = cJSON_GetObjectItemCaseSensitive(o, "suggestion");
    char norm[64];
    if (!cJSON_IsString(cls)) {
        snprintf(err, errlen, "the JSON object has no \"class\" string (one of %s)", CLASS_SET);
        return 0;
    }
    normalize(cls->valuestring, norm, sizeof norm);
    size_t i;
    for (i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
        if (strcmp(norm, class_names[i].name) == 0)
            break;
    if (i == sizeof class_names / sizeof class_names[0]) {
        snprintf(err, errlen, "the class \"%.60s\" is not one of %s", cls->valuestring, CLASS_SET);
        return 0;
    }
    out->cls = class_names[i].cls;
    if (!cJSON_IsString(agent)) {
        snprintf(err, errlen, "the JSON object has no \"next_agent\" string (%s)", AGENT_SET);
        return 0;
    }
    normalize(agent->valuestring, norm, sizeof norm);
    for (i = 0; i < sizeof agent_names / sizeof agent_names[0]; i++)
        if (strcmp(norm, agent_names[i].name) == 0)
            break;
    if (i == sizeof agent_names / sizeof agent_names[0]) {
        snprintf(err, errlen, "the next agent \"%.60s\" is not one of %s", agent->valuestring,
                 AGENT_SET);
        return 0;
    }
    out->agent = agent_names[i].agent;
    if (sugg && !cJSON_IsString(sugg) && !cJSON_IsNull(sugg)) {
        snprintf(err, errlen, "the \"suggestion\" is not a string");
        return 0;
    }
    const char *s = cJSON_IsString(sugg) ? sugg->valuestring : "";
    while (isspace((unsigned char)*s))
        s++;
    out->suggestion =
        strlen(s) > ROUTE_SUGGESTION_MAX ? akg_prompt_trim(s, ROUTE_SUGGESTION_MAX) : akg_strdup(s);
    if (!out->suggestion) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = strlen(out->suggestion);
    while (n > 0 && isspace((unsigned char)out->suggestion[n - 1]))
        out->suggestion[--n] = '\0';
    return 1;
}

/* The end of the balanced object opening at s[0] == '{' (the closing brace), or NULL. */
static const char *object_end(const char *s, const char *limit)
{
    int depth = 0, in_str = 0;
    for (const char *p = s; p < limit && *p; p++) {
        if (in_str) {
            if (*p == '\\' && p + 1 < limit && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            return p;
        }
    }
    return NULL;
}

/* Tries the objects of part. 1: found; 0: none usable (first_err keeps the first object's
 * complaint); -1: out of memory. */
static int scan_part(const char *part, int *budget, int *parsed, akg_route_choice *out,
                     char *first_err, size_t errlen)
{
    size_t len = strlen(part);
    const char *limit = part + (len > ROUTE_SCAN_BYTES ? ROUTE_SCAN_BYTES : len);
    for (const char *p = part; p<limit && * budget> 0; p++) {
        if (*p != '{')
            continue;
        (*budget)--;
        const char *end = object_end(p, limit);
        if (!end)
            continue;
        cJSON *o = cJSON_ParseWithLength(p, (size_t)(end - p + 1));
        if (!cJSON_IsObject(o)) {
            cJSON_Delete(o);
            continue;
        }
        char why[256];
        int ok = choice_of(o, out, why, sizeof why);
        cJSON_Delete(o);
        if (ok)
            return ok;
        if (!*parsed)
            snprintf(first_err, errlen, "%s", why);
        (*parsed)++;
        p = end; /* an object's inner objects are not the answer */
    }
    return 0;
}

int akg_route_parse(const char *text, akg_route_choice *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return akg_fail(err, errlen, AKG_EINVAL, "the answer is empty");
    akg_answer_parts parts;
    if (akg_answer_split(text, &parts) != AKG_OK)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    int budget = ROUTE_MAX_OBJECTS, parsed = 0, rc = 0;
    char first[256] = "";
    for (size_t i = 0; i <= parts.n_blocks && rc == 0; i++) {
        const char *part = i < parts.n_blocks ? parts.blocks[i].body : parts.outside;
        if (part)
            rc = scan_part(part, &budget, &parsed, out, first, sizeof first);
    }
    akg_answer_parts_free(&parts);
    if (rc > 0)
        return AKG_OK;
    if (rc < 0)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    if (parsed)
        return akg_fail(err, errlen, AKG_EINVAL, "%s", first);
    return akg_fail(err, errlen, AKG_EINVAL,
                    "the answer holds no JSON object (expected {\"class\": ..., \"next_agent\": "
                    "..., \"suggestion\": ...})");
}

void akg_route_choice_free(akg_route_choice *c)
{
    if (!c)
        return;
    free(c->suggestion);
    c->suggestion = NULL;
}
