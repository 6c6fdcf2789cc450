/*
 * suite_scale.c: a suite's size per target (the "size_scale" section of the suite's suite.yaml).
 *
 * The operator suite is sized for a small CPU (bench/ops/README.md); timed on a GPU at those sizes
 * most operators would measure launch overhead. The suite's metadata names, per backend, a factor
 * and the module-level constants it multiplies: the first of them a reference defines as
 * `NAME = <integer>` at the start of a line (its batch, in the suite's spelling). The bench writes
 * each reference so scaled into a folder of its own and runs that copy; the suite's files stay as
 * they are (one copy of every operator). get_inputs_dyn_list keeps its literal shapes: those cases
 * check other shapes, the timing is on get_inputs. `--scale N` replaces the factor (1: none).
 *
 *   size_scale:
 *     cuda: {factor: 8, constants: [BATCH, ROWS]}
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/config.h"
#include "suite_internal.h"

#define SCALE_MAX_CONSTANTS 8
#define SCALE_MAX_FILE (1 << 20)

typedef struct {
    int factor;
    const char *names[SCALE_MAX_CONSTANTS];
    size_t n;
} scale_rule;

/* The rule for backend from suite_dir/suite.yaml, with override (> 0) as its factor. */
static int load_rule(const char *suite_dir, const char *backend, int override, cJSON **doc,
                     scale_rule *rule, char *err, size_t errlen)
{
    memset(rule, 0, sizeof *rule);
    rule->factor = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/suite.yaml", suite_dir);
    const cJSON *entry = NULL;
    *doc = NULL;
    FILE *probe = fopen(path, "r");
    if (probe) {
        fclose(probe);
        int rc = akg_yaml_load(path, doc, err, errlen);
        if (rc != AKG_OK)
            return rc;
        char key[256];
        snprintf(key, sizeof key, "size_scale.%s", backend);
        entry = akg_config_get(*doc, key);
    }
    if (entry) {
        const cJSON *factor = cJSON_GetObjectItem(entry, "factor");
        const cJSON *names = cJSON_GetObjectItem(entry, "constants");
        if (!cJSON_IsNumber(factor) || factor->valuedouble < 1 || factor->valuedouble > 1024 ||
            factor->valuedouble != (int)factor->valuedouble || !cJSON_IsArray(names))
            return akg_fail(err, errlen, AKG_EINVAL,
                            "%s: size_scale.%s needs factor (an integer from 1 to 1024) and "
                            "constants (a list of names), as {factor: 8, constants: [BATCH]}",
                            path, backend);
        rule->factor = (int)factor->valuedouble;
        const cJSON *name;
        cJSON_ArrayForEach(name, names)
        {
            if (!cJSON_IsString(name) || rule->n == SCALE_MAX_CONSTANTS)
                return akg_fail(err, errlen, AKG_EINVAL,
                                "%s: size_scale.%s.constants holds up to %d names (strings)", path,
                                backend, SCALE_MAX_CONSTANTS);
            rule->names[rule->n++] = name->valuestring;
        }
    }
    if (override > 0)
        rule->factor = override;
    if (rule->n == 0) { /* a factor given on the command line for a suite without a rule */
        rule->names[0] = "BATCH";
        rule->names[1] = "ROWS";
        rule->n = 2;
    }
    return AKG_OK;
}

/* Where `NAME = <digits>` starts a line of text: the offset of the digits and their count. */
static int find_constant(const char *text, const char *name, size_t *at, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, name, nl) != 0 || strncmp(line + nl, " = ", 3) != 0)
            continue;
        const char *v = line + nl + 3, *e = v;
        while (isdigit((unsigned char)*e))
            e++;
        const char *rest = e;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        if (e > v && e - v < 10 && (*rest == '\n' || *rest == '\0' || *rest == '#')) {
            *at = (size_t)(v - text);
            *len = (size_t)(e - v);
            return 1;
        }
    }
    return 0;
}

/* Writes op's scaled copy into dir and points op at it, or leaves op as it is (with a note). */
static int scale_one(akg_suite_op *op, const scale_rule *rule, const char *dir, char *err,
                     size_t errlen)
{
    char *text = NULL;
    size_t n = 0;
    int rc = akg_read_file(op->path, SCALE_MAX_FILE, &text, &n, err, errlen);
    if (rc != AKG_OK)
        return rc;
    char note[256];
    size_t at = 0, len = 0;
    size_t k = 0;
    while (k < rule->n && !find_constant(text, rule->names[k], &at, &len))
        k++;
    if (k == rule->n) {
        snprintf(note, sizeof note, "not scaled: it defines none of the constants of the rule");
        free(op->scale_note);
        op->scale_note = akg_strdup(note);
        free(text);
        return AKG_OK;
    }
    long long value = strtoll(text + at, NULL, 10);
    long long scaled = value * rule->factor;
    char digits[32];
    int dn = snprintf(digits, sizeof digits, "%lld", scaled);
    size_t out_len = n - len + (size_t)dn;
    char *out = malloc(out_len + 1);
    if (!out) {
        free(text);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory scaling %s", op->path);
    }
    memcpy(out, text, at);
    memcpy(out + at, digits, (size_t)dn);
    memcpy(out + at + dn, text + at + len, n - at - len + 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%s.py", dir, op->family, op->name);
    rc = akg_write_file(path, out, out_len, err, errlen);
    free(out);
    free(text);
    if (rc != AKG_OK)
        return rc;
    snprintf(note, sizeof note, "%s %lld -> %lld", rule->names[k], value, scaled);
    free(op->scaled_path);
    free(op->scale_note);
    op->scaled_path = akg_strdup(path);
    op->scale_note = akg_strdup(note);
    return (op->scaled_path && op->scale_note)
               ? AKG_OK
               : akg_fail(err, errlen, AKG_ENOMEM, "out of memory scaling %s", op->path);
}

int akg__suite_scale(akg_suite_listing *l, const char *suite_dir, const char *backend, int override,
                     const char *dir, int *factor, char *err, size_t errlen)
{
    cJSON *doc = NULL;
    scale_rule rule;
    *factor = 1;
    int rc = load_rule(suite_dir, backend, override, &doc, &rule, err, errlen);
    if (rc == AKG_OK && rule.factor > 1) {
        *factor = rule.factor;
        rc = akg_mkdirs(dir, err, errlen);
        for (size_t i = 0; rc == AKG_OK && i < l->n_ops; i++)
            rc = scale_one(&l->ops[i], &rule, dir, err, errlen);
    }
    cJSON_Delete(doc);
    return rc;
}
