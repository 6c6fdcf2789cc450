/* settings.c: see settings.h. */
#include "settings.h"

#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "log.h"

void akg_lsp_settings_init(akg_lsp_settings *s)
{
    memset(s, 0, sizeof *s);
    s->targets = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "backend", "cpu");
    cJSON_AddStringToObject(t, "dsl", "cpp");
    cJSON_AddItemToArray(s->targets, t);
    s->provider = akg_strdup("builtin");
    s->trace = akg_strdup("off");
}

void akg_lsp_settings_free(akg_lsp_settings *s)
{
    cJSON_Delete(s->targets);
    free(s->provider);
    free(s->python);
    free(s->store_path);
    free(s->trace);
    memset(s, 0, sizeof *s);
}

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return 0;
    return 1;
}

cJSON *akg_lsp_target_parse(const cJSON *item)
{
    const char *backend = NULL, *dsl = NULL, *arch = NULL;
    char tmp[160];
    if (cJSON_IsString(item)) {
        if (strlen(item->valuestring) >= sizeof tmp)
            return NULL;
        strcpy(tmp, item->valuestring);
        char *slash = strchr(tmp, '/');
        if (!slash)
            return NULL;
        *slash = '\0';
        backend = tmp;
        dsl = slash + 1;
        char *second = strchr(slash + 1, '/');
        if (second) {
            *second = '\0';
            arch = second + 1;
        }
    } else if (cJSON_IsObject(item)) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(item, "backend");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(item, "dsl");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(item, "arch");
        if (!cJSON_IsString(b) || !cJSON_IsString(d))
            return NULL;
        backend = b->valuestring;
        dsl = d->valuestring;
        if (cJSON_IsString(a))
            arch = a->valuestring;
    } else {
        return NULL;
    }
    if (!valid_name(backend) || !valid_name(dsl) || (arch && !valid_name(arch)))
        return NULL;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "backend", backend);
    cJSON_AddStringToObject(t, "dsl", dsl);
    if (arch)
        cJSON_AddStringToObject(t, "arch", arch);
    return t;
}

static int set_string(char **field, const cJSON *v, const char *key)
{
    if (!v)
        return 0;
    if (cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring)) {
        if (!*field)
            return 0;
        free(*field);
        *field = NULL;
        return 1;
    }
    if (!cJSON_IsString(v)) {
        akg_lsp_log_warn("setting akg.%s: expected a string; ignored", key);
        return 0;
    }
    if (*field && strcmp(*field, v->valuestring) == 0)
        return 0;
    free(*field);
    *field = akg_strdup(v->valuestring);
    return 1;
}

static int set_int(int *field, const cJSON *v, const char *key, int lo, int hi)
{
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi) {
        akg_lsp_log_warn("setting akg.%s: expected an integer in [%d, %d]; ignored", key, lo, hi);
        return 0;
    }
    int n = (int)v->valuedouble;
    if (n == *field)
        return 0;
    *field = n;
    return 1;
}

int akg_lsp_settings_apply(akg_lsp_settings *s, const cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return 0;
    const cJSON *section = cJSON_GetObjectItemCaseSensitive(obj, "akg");
    if (cJSON_IsObject(section))
        obj = section;
    int changed = 0;

    const cJSON *targets = cJSON_GetObjectItemCaseSensitive(obj, "targets");
    if (targets) {
        if (!cJSON_IsArray(targets)) {
            akg_lsp_log_warn("setting akg.targets: expected an array; ignored");
        } else {
            cJSON *parsed = cJSON_CreateArray();
            const cJSON *item;
            cJSON_ArrayForEach(item, targets)
            {
                cJSON *t = akg_lsp_target_parse(item);
                if (t)
                    cJSON_AddItemToArray(parsed, t);
                else
                    akg_lsp_log_warn("setting akg.targets: an entry is not \"backend/dsl\" or "
                                     "{backend, dsl}; ignored");
            }
            if (!cJSON_Compare(parsed, s->targets, 1)) {
                cJSON_Delete(s->targets);
                s->targets = parsed;
                changed |= AKG_LSP_SETTINGS_TARGETS;
            } else {
                cJSON_Delete(parsed);
            }
        }
    }
    const cJSON *provider = cJSON_GetObjectItemCaseSensitive(obj, "provider");
    if (provider && !cJSON_IsNull(provider))
        set_string(&s->provider, provider, "provider");
    if (!s->provider)
        s->provider = akg_strdup("builtin");
    if (set_string(&s->python, cJSON_GetObjectItemCaseSensitive(obj, "python"), "python"))
        changed |= AKG_LSP_SETTINGS_ENGINE;
    if (set_string(&s->store_path, cJSON_GetObjectItemCaseSensitive(obj, "storePath"), "storePath"))
        changed |= AKG_LSP_SETTINGS_ENGINE;
    if (set_int(&s->devices, cJSON_GetObjectItemCaseSensitive(obj, "devices"), "devices", 0, 64))
        changed |= AKG_LSP_SETTINGS_ENGINE;
    if (set_int(&s->max_jobs, cJSON_GetObjectItemCaseSensitive(obj, "maxJobs"), "maxJobs", 0, 64))
        changed |= AKG_LSP_SETTINGS_ENGINE;
    const cJSON *vt = cJSON_GetObjectItemCaseSensitive(obj, "verifyTimeout");
    if (vt) {
        if (cJSON_IsNumber(vt) && vt->valuedouble >= 0 && vt->valuedouble <= 86400)
            s->verify_timeout_s = vt->valuedouble;
        else
            akg_lsp_log_warn("setting akg.verifyTimeout: expected seconds in [0, 86400]; ignored");
    }
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(obj, "autoProbe");
    if (ap) {
        if (cJSON_IsBool(ap))
            s->auto_probe = cJSON_IsTrue(ap);
        else
            akg_lsp_log_warn("setting akg.autoProbe: expected a boolean; ignored");
    }
    const cJSON *trace = cJSON_GetObjectItemCaseSensitive(obj, "trace");
    if (cJSON_IsObject(trace))
        trace = cJSON_GetObjectItemCaseSensitive(trace, "server");
    if (trace && set_string(&s->trace, trace, "trace"))
        changed |= AKG_LSP_SETTINGS_TRACE;
    if (!s->trace)
        s->trace = akg_strdup("off");
    return changed;
}
