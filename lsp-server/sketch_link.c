/* sketch_link.c: see sketch_link.h. */
#include "sketch_link.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

#define REPORT_READ_LIMIT ((size_t)4 << 20)
#define SKETCH_RUNS_CAP 256

static int is_file(const char *path)
{
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The folder of path (without the trailing '/') into out. */
static void folder_of(const char *path, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash == path)
        n = 1; /* the root */
    snprintf(out, outlen, "%.*s", (int)n, slash ? path : ".");
}

/* "# akg: reference PATH" on the first line: PATH (trimmed) into out. */
static int first_line_link(const char *text, size_t len, char *out, size_t outlen)
{
    const char *end = memchr(text, '\n', len);
    size_t n = end ? (size_t)(end - text) : len;
    const char *p = text, *stop = text + n;
    while (p < stop && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= stop || *p != '#')
        return 0;
    p++;
    while (p < stop && (*p == ' ' || *p == '\t'))
        p++;
    static const char key[] = "akg:";
    if ((size_t)(stop - p) < sizeof key - 1 || strncmp(p, key, sizeof key - 1) != 0)
        return 0;
    p += sizeof key - 1;
    while (p < stop && (*p == ' ' || *p == '\t'))
        p++;
    static const char word[] = "reference";
    if ((size_t)(stop - p) < sizeof word - 1 || strncmp(p, word, sizeof word - 1) != 0)
        return 0;
    p += sizeof word - 1;
    if (p >= stop || (*p != ' ' && *p != '\t' && *p != ':'))
        return 0;
    while (p < stop && (*p == ' ' || *p == '\t' || *p == ':'))
        p++;
    while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r'))
        stop--;
    if (stop == p || (size_t)(stop - p) >= outlen)
        return 0;
    memcpy(out, p, (size_t)(stop - p));
    out[stop - p] = '\0';
    return 1;
}

int akg_lsp_sketch_reference(const char *sketch_path, const char *text, size_t len, char *out,
                             size_t outlen, const char **how)
{
    if (outlen)
        out[0] = '\0';
    if (how)
        *how = NULL;
    if (!sketch_path)
        return 0;
    char dir[PATH_MAX];
    folder_of(sketch_path, dir, sizeof dir);
    char named[PATH_MAX];
    if (text && first_line_link(text, len, named, sizeof named)) {
        char joined[PATH_MAX * 2];
        if (named[0] == '/')
            snprintf(joined, sizeof joined, "%s", named);
        else
            snprintf(joined, sizeof joined, "%s/%s", dir, named);
        char *abs = akg_abspath(joined);
        snprintf(out, outlen, "%s", abs ? abs : joined);
        free(abs);
        if (how)
            *how = "first line";
        return is_file(out);
    }
    char report_path[PATH_MAX + 16];
    snprintf(report_path, sizeof report_path, "%s/report.json", dir);
    char *json = NULL;
    size_t jlen = 0;
    if (!is_file(report_path) ||
        akg_read_file(report_path, REPORT_READ_LIMIT, &json, &jlen, NULL, 0) != AKG_OK)
        return 0;
    cJSON *report = cJSON_ParseWithLength(json, jlen);
    free(json);
    const char *ref = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(report, "reference"));
    int found = 0;
    if (ref && *ref) {
        snprintf(out, outlen, "%s", ref);
        if (how)
            *how = "report.json";
        found = is_file(out);
    }
    cJSON_Delete(report);
    return found;
}

/* ---- the last run of each sketch ------------------------------------------ */

void akg_lsp_sketch_run_ended(akg_lsp_server *s, const char *sketch_path, const char *hash,
                              const cJSON *report)
{
    if (!sketch_path)
        return;
    if (!s->sketch_runs) {
        s->sketch_runs = cJSON_CreateObject();
        if (!s->sketch_runs)
            return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(s->sketch_runs, sketch_path);
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(report, "error");
    const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "file"));
    if (!err || !file || strcmp(file, sketch_path) != 0)
        return; /* passed, or failed for a reason that is not in the sketch */
    if (cJSON_GetArraySize(s->sketch_runs) >= SKETCH_RUNS_CAP)
        cJSON_DeleteItemFromArray(s->sketch_runs, 0); /* the oldest */
    cJSON *e = cJSON_Duplicate(err, 1);
    if (!e)
        return;
    cJSON_AddStringToObject(e, "hash", hash ? hash : "");
    cJSON_AddItemToObject(s->sketch_runs, sketch_path, e);
}

static unsigned number_or(const cJSON *o, const char *key, unsigned fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 1 ? (unsigned)v->valuedouble : fallback;
}

/* 1 when a diagnostic in list starts at (line, character) of LSP positions. */
static int starts_at(const cJSON *list, const cJSON *start)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, list)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(d, "range"), "start");
        if (cJSON_Compare(st, start, 1))
            return 1;
    }
    return 0;
}

void akg_lsp_sketch_run_diagnostics(akg_lsp_server *s, const akg_lsp_document *doc, cJSON *list)
{
    if (!s->sketch_runs || !doc->path)
        return;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(s->sketch_runs, doc->path);
    if (!e)
        return;
    const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "hash"));
    char now[65];
    akg_sha256_hex(doc->text.data ? doc->text.data : "", doc->text.len, now);
    if (!hash || strcmp(hash, now) != 0)
        return; /* the sketch changed since that run */
    unsigned line = number_or(e, "line", 1);
    unsigned col = number_or(e, "column", 1);
    akg_range r = akg_lsp_doc_line_range(doc, line > doc->n_lines ? 0 : line - 1);
    if (col - 1 <= r.end_col)
        r.start_col = col - 1;
    unsigned end_line = number_or(e, "end_line", 0), end_col = number_or(e, "end_column", 0);
    if (end_line >= line && end_line <= doc->n_lines && end_col >= 1 &&
        (end_line > line || end_col > col)) {
        r.end_row = end_line - 1;
        r.end_col = end_col - 1;
    }
    cJSON *range = akg_lsp_doc_range_json(doc, s->encoding, r);
    if (starts_at(list, cJSON_GetObjectItemCaseSensitive(range, "start"))) {
        cJSON_Delete(range); /* the live checker says it already */
        return;
    }
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "detail"));
    char msg[2048];
    snprintf(msg, sizeof msg, "the last run from this sketch failed (%s): %s",
             cls ? cls : "error", detail ? detail : "");
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToObject(d, "range", range);
    cJSON_AddNumberToObject(d, "severity", 1);
    cJSON_AddStringToObject(d, "code", cls ? cls : "error");
    cJSON_AddStringToObject(d, "source", "akg");
    cJSON_AddStringToObject(d, "message", msg);
    cJSON_AddItemToArray(list, d);
}

void akg_lsp_sketch_runs_free(akg_lsp_server *s)
{
    cJSON_Delete(s->sketch_runs);
    s->sketch_runs = NULL;
}
