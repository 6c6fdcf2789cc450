/*
 * config.c: YAML settings into cJSON (see akg/config.h).
 *
 * A backend's config is checked where a section has a schema: the search workflows' evolve: and
 * adaptive_search: (workflows/search_settings.c), so every reader of the file sees checked
 * values and a wrong one is reported once, by file, key and range, when the file is loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../workflows/search_settings.h"
#include "akg/akg.h"
#include "akg/config.h"

static cJSON *scalar_value(const char *s, yaml_scalar_style_t style)
{
    if (style == YAML_PLAIN_SCALAR_STYLE) {
        if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0)
            return cJSON_CreateTrue();
        if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0)
            return cJSON_CreateFalse();
        if (strcmp(s, "null") == 0 || strcmp(s, "~") == 0 || *s == '\0')
            return cJSON_CreateNull();
        char *end = NULL;
        double d = strtod(s, &end);
        if (end && end != s && *end == '\0')
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(s);
}

/* Recursive descent over libyaml's event stream. */
static cJSON *parse_node(yaml_parser_t *p, yaml_event_t *ev, int depth, char *err, size_t errlen);

static int next_event(yaml_parser_t *p, yaml_event_t *ev, char *err, size_t errlen)
{
    if (!yaml_parser_parse(p, ev))
        return akg_fail(err, errlen, AKG_EPARSE, "line %zu: %s", p->problem_mark.line + 1,
                        p->problem ? p->problem : "YAML error");
    return AKG_OK;
}

static cJSON *parse_node(yaml_parser_t *p, yaml_event_t *ev, int depth, char *err, size_t errlen)
{
    if (depth > 64) {
        akg_fail(err, errlen, AKG_EPARSE, "nesting deeper than 64");
        return NULL;
    }
    if (ev->type == YAML_SCALAR_EVENT)
        return scalar_value((const char *)ev->data.scalar.value, ev->data.scalar.style);
    if (ev->type == YAML_SEQUENCE_START_EVENT) {
        cJSON *arr = cJSON_CreateArray();
        for (;;) {
            yaml_event_t e;
            if (next_event(p, &e, err, errlen)) {
                cJSON_Delete(arr);
                return NULL;
            }
            if (e.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&e);
                return arr;
            }
            cJSON *v = parse_node(p, &e, depth + 1, err, errlen);
            yaml_event_delete(&e);
            if (!v) {
                cJSON_Delete(arr);
                return NULL;
            }
            cJSON_AddItemToArray(arr, v);
        }
    }
    if (ev->type == YAML_MAPPING_START_EVENT) {
        cJSON *obj = cJSON_CreateObject();
        for (;;) {
            yaml_event_t k;
            if (next_event(p, &k, err, errlen)) {
                cJSON_Delete(obj);
                return NULL;
            }
            if (k.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&k);
                return obj;
            }
            if (k.type != YAML_SCALAR_EVENT) {
                akg_fail(err, errlen, AKG_EPARSE, "line %zu: mapping keys must be scalars",
                         k.start_mark.line + 1);
                yaml_event_delete(&k);
                cJSON_Delete(obj);
                return NULL;
            }
            char *key = akg_strdup((const char *)k.data.scalar.value);
            yaml_event_delete(&k);
            yaml_event_t v;
            if (next_event(p, &v, err, errlen)) {
                free(key);
                cJSON_Delete(obj);
                return NULL;
            }
            cJSON *val = parse_node(p, &v, depth + 1, err, errlen);
            yaml_event_delete(&v);
            if (!val) {
                free(key);
                cJSON_Delete(obj);
                return NULL;
            }
            cJSON_DeleteItemFromObject(obj, key);
            cJSON_AddItemToObject(obj, key, val);
            free(key);
        }
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        akg_fail(err, errlen, AKG_EPARSE, "line %zu: YAML aliases are not supported",
                 ev->start_mark.line + 1);
        return NULL;
    }
    akg_fail(err, errlen, AKG_EPARSE, "unexpected YAML event");
    return NULL;
}

/* The first document of a parser's input; msg gets "line N: ..." on failure. */
static int parse_document(yaml_parser_t *p, cJSON **out, char *msg, size_t msglen)
{
    cJSON *root = NULL;
    int rc = AKG_OK;
    yaml_event_t ev;
    /* stream start, document start, root node */
    for (;;) {
        if ((rc = next_event(p, &ev, msg, msglen)))
            break;
        if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            root = cJSON_CreateObject();
            break;
        }
        root = parse_node(p, &ev, 0, msg, msglen);
        yaml_event_delete(&ev);
        if (!root)
            rc = AKG_EPARSE;
        break;
    }
    *out = root;
    return rc ? rc : root ? AKG_OK : AKG_EPARSE;
}

int akg_yaml_parse(const char *text, size_t len, cJSON **out, char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    char msg[512] = "";
    int rc = parse_document(&p, out, msg, sizeof msg);
    yaml_parser_delete(&p);
    if (rc != AKG_OK)
        return akg_fail(err, errlen, rc, "%s", msg[0] ? msg : "YAML error");
    return AKG_OK;
}

int akg_yaml_load(const char *path, cJSON **out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return akg_fail(err, errlen, AKG_ENOTFOUND, "%s: %s", path, strerror(errno));
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    char msg[512] = "";
    cJSON *root = NULL;
    int rc = parse_document(&p, &root, msg, sizeof msg);
    yaml_parser_delete(&p);
    fclose(f);
    if (rc || !root)
        return akg_fail(err, errlen, rc ? rc : AKG_EPARSE, "%s: %s", path, msg);
    *out = root;
    return AKG_OK;
}

const cJSON *akg_config_get(const cJSON *root, const char *dotted)
{
    char key[256];
    const cJSON *cur = root;
    const char *p = dotted;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        p = dot ? dot + 1 : p + n;
    }
    return cur;
}

double akg_config_number(const cJSON *root, const char *dotted, double fallback)
{
    const cJSON *v = akg_config_get(root, dotted);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

const char *akg_config_string(const cJSON *root, const char *dotted, const char *fallback)
{
    const cJSON *v = akg_config_get(root, dotted);
    return cJSON_IsString(v) ? v->valuestring : fallback;
}

int akg_backend_config_load(const char *backend, const char *dsl, cJSON **out, char *err,
                            size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/backends/%s/%s/config.yaml", akg_data_dir(), backend, dsl);
    int rc = akg_yaml_load(path, out, err, errlen);
    if (rc)
        return rc;
    /* the sections with a schema: a bad value fails here, before any job runs with it */
    rc = akg_search_settings_check(*out, path, err, errlen);
    if (rc) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}
