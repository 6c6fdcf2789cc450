/* sketch_support.c: see sketch_support.h. */
#include "sketch_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "log.h"

#ifdef AKG_LSP_HAVE_SKETCH
#include "akg/sketch.h"

static void add_sketch_diags(const akg_lsp_document *doc, akg_lsp_encoding enc, cJSON *list,
                             const akg_sketch_diag_list *diags)
{
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        const akg_sketch_diag *d = akg_sketch_diag_at(diags, i);
        akg_range r = {d->span.line, d->span.col, d->span.end_line, d->span.end_col};
        if (r.end_row < r.start_row || (r.end_row == r.start_row && r.end_col < r.start_col)) {
            r.end_row = r.start_row;
            r.end_col = r.start_col;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "range", akg_lsp_doc_range_json(doc, enc, r));
        cJSON_AddNumberToObject(o, "severity",
                                d->severity == AKG_SKETCH_ERROR     ? 1
                                : d->severity == AKG_SKETCH_WARNING ? 2
                                                                    : 3);
        cJSON_AddStringToObject(o, "source", "akg-sketch");
        cJSON_AddStringToObject(o, "message", d->message ? d->message : "");
        cJSON_AddItemToArray(list, o);
    }
}

void akg_lsp_sketch_diagnostics(const akg_lsp_document *doc, akg_lsp_encoding enc, cJSON *list)
{
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    if (!diags)
        return;
    akg_sketch **sketches = NULL;
    size_t count = 0;
    int rc = akg_sketch_parse_all(doc->text.data, doc->text.len, &sketches, &count, diags);
    if (rc == 0) {
        for (size_t i = 0; i < count; i++) {
            akg_sketch_check(sketches[i], diags);
            akg_sketch_free(sketches[i]);
        }
        free(sketches);
    } else if (rc == -E2BIG) {
        akg_lsp_log_warn("%s: too large for the sketch parser", doc->uri);
    }
    add_sketch_diags(doc, enc, list, diags);
    akg_sketch_diag_list_free(diags);
}

int akg_lsp_sketch_format(const char *text, size_t len, char **out, char *err, size_t errlen)
{
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    akg_sketch **sketches = NULL;
    size_t count = 0;
    int rc = akg_sketch_parse_all(text, len, &sketches, &count, diags);
    if (rc != 0) {
        const akg_sketch_diag *d =
            diags && akg_sketch_diag_count(diags) ? akg_sketch_diag_at(diags, 0) : NULL;
        akg_fail(err, errlen, AKG_EPARSE, "the sketch does not parse%s%s; not formatted",
                 d ? ": " : "", d && d->message ? d->message : "");
        akg_sketch_diag_list_free(diags);
        return AKG_EPARSE;
    }
    akg_sketch_diag_list_free(diags);
    akg_buf b;
    akg_buf_init(&b, AKG_SKETCH_MAX_TEXT * 2);
    int status = AKG_OK;
    for (size_t i = 0; i < count; i++) {
        char *one = NULL;
        if (status == AKG_OK && akg_sketch_print(sketches[i], &one) == 0) {
            if ((i > 0 && akg_buf_puts(&b, "\n") != AKG_OK) || akg_buf_puts(&b, one) != AKG_OK)
                status = AKG_ENOMEM;
        } else {
            status = AKG_ENOMEM;
        }
        free(one);
        akg_sketch_free(sketches[i]);
    }
    free(sketches);
    if (status != AKG_OK) {
        akg_buf_free(&b);
        return akg_fail(err, errlen, status, "out of memory formatting the sketch");
    }
    *out = akg_buf_steal(&b);
    return AKG_OK;
}

#else /* the engine was built without the sketch module */

void akg_lsp_sketch_diagnostics(const akg_lsp_document *doc, akg_lsp_encoding enc, cJSON *list)
{
    (void)doc, (void)enc, (void)list;
}

int akg_lsp_sketch_format(const char *text, size_t len, char **out, char *err, size_t errlen)
{
    (void)text, (void)len, (void)out;
    return akg_fail(err, errlen, AKG_EUNSUPPORTED, "this build has no sketch printer");
}

#endif

static int is_word_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int akg_lsp_word_at(const char *text, size_t len, size_t offset, char *out, size_t outlen,
                    size_t *start, size_t *end)
{
    if (offset > len)
        offset = len;
    size_t a = offset, b = offset;
    while (a > 0 && is_word_char(text[a - 1]))
        a--;
    while (b < len && is_word_char(text[b]))
        b++;
    if (a == b || b - a >= outlen)
        return 0;
    memcpy(out, text + a, b - a);
    out[b - a] = '\0';
    if (start)
        *start = a;
    if (end)
        *end = b;
    return 1;
}

/* The name a table cell or heading documents: the first identifier inside
 * backticks (`gemm(a, b, dst=c)` documents gemm), else the first word. */
static int documented_name(const char *s, size_t len, char *out, size_t outlen)
{
    const char *tick = memchr(s, '`', len);
    const char *p = tick ? tick + 1 : s;
    const char *end = s + len;
    while (p < end && (*p == ' ' || *p == '@'))
        p++;
    size_t n = 0;
    while (p + n < end && is_word_char(p[n]))
        n++;
    if (n == 0 || n >= outlen)
        return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

static char *trimmed_copy(const char *s, size_t len)
{
    while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

/* Looks name up in the reference: a table row whose first cell documents it
 * (the other cells are the meaning), or a heading that documents it (the
 * text up to the next heading). */
static char *lookup_reference(const char *md, size_t len, const char *name)
{
    const char *line = md, *end = md + len;
    int in_fence = 0; /* inside ``` ... ```: comments there are not headings */
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            eol = end;
        size_t n = (size_t)(eol - line);
        char found[64];
        if (n >= 3 && strncmp(line, "```", 3) == 0) {
            in_fence = !in_fence;
        } else if (in_fence) {
            /* skip */
        } else if (n > 2 && line[0] == '|') {
            const char *cell_end = memchr(line + 1, '|', n - 1);
            if (cell_end &&
                documented_name(line + 1, (size_t)(cell_end - line - 1), found, sizeof found) &&
                strcmp(found, name) == 0) {
                /* "| `sig` | meaning |": keep the signature, then the rest. */
                akg_buf b;
                akg_buf_init(&b, 8192);
                char *sig = trimmed_copy(line + 1, (size_t)(cell_end - line - 1));
                akg_buf_appendf(&b, "%s\n\n", sig ? sig : name);
                free(sig);
                const char *c = cell_end + 1;
                while (c < eol) {
                    const char *next = memchr(c, '|', (size_t)(eol - c));
                    if (!next)
                        next = eol;
                    char *cell = trimmed_copy(c, (size_t)(next - c));
                    if (cell && *cell)
                        akg_buf_appendf(&b, "%s\n\n", cell);
                    free(cell);
                    c = next + 1;
                }
                return akg_buf_take(&b);
            }
        } else if (n > 1 && line[0] == '#') {
            const char *h = line;
            while (h < eol && *h == '#')
                h++;
            if (documented_name(h, (size_t)(eol - h), found, sizeof found) &&
                strcmp(found, name) == 0) {
                const char *body = eol < end ? eol + 1 : end;
                const char *stop = body;
                while (stop < end) {
                    if (*stop == '#' && (stop == body || stop[-1] == '\n'))
                        break;
                    const char *nl = memchr(stop, '\n', (size_t)(end - stop));
                    stop = nl ? nl + 1 : end;
                }
                size_t blen = (size_t)(stop - body);
                if (blen > 4000)
                    blen = 4000;
                akg_buf b;
                akg_buf_init(&b, 8192);
                char *head = trimmed_copy(h, (size_t)(eol - h));
                akg_buf_appendf(&b, "**%s**\n\n", head ? head : name);
                free(head);
                akg_buf_append(&b, body, blen);
                return akg_buf_take(&b);
            }
        }
        line = eol + 1;
    }
    return NULL;
}

/* 1 when a backtick span documents name: name appears at the top level of
 * the span (not inside parentheses) at the start or after a space, '/' or
 * "= ", as in `relu(x)=max(x,0)`, `add sub mul div`, `t = alloc([...])`. */
static int span_documents(const char *span, size_t len, const char *name)
{
    size_t n = strlen(name);
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = span[i];
        if (c == '(' || c == '[')
            depth++;
        else if ((c == ')' || c == ']') && depth > 0)
            depth--;
        if (depth || !is_word_char(c) || (i > 0 && is_word_char(span[i - 1])))
            continue;
        int at_start = i == 0 || span[i - 1] == ' ' || span[i - 1] == '/' || span[i - 1] == '\n';
        if (at_start && i + n <= len && strncmp(span + i, name, n) == 0 &&
            (i + n == len || !is_word_char(span[i + n])))
            return 1;
    }
    return 0;
}

/* The prose of the reference: a paragraph (text between blank lines) with a
 * backtick span that documents name. Semantics paragraphs (they open with
 * a bold "**Category.**") are preferred over syntax notes. */
static char *lookup_prose(const char *md, size_t len, const char *name)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *para = md, *end = md + len;
        while (para < end) {
            const char *stop = para;
            while (stop < end) {
                const char *nl = memchr(stop, '\n', (size_t)(end - stop));
                if (!nl) {
                    stop = end;
                    break;
                }
                stop = nl + 1;
                if (stop < end &&
                    (*stop == '\n' || (*stop == '\r' && stop + 1 < end && stop[1] == '\n')))
                    break;
            }
            int bold = para + 2 <= end && para[0] == '*' && para[1] == '*';
            int fenced = para + 3 <= end && strncmp(para, "```", 3) == 0;
            if ((pass == 0) == bold && !fenced) {
                const char *tick = memchr(para, '`', (size_t)(stop - para));
                while (tick) {
                    const char *close = memchr(tick + 1, '`', (size_t)(stop - tick - 1));
                    if (!close)
                        break;
                    if (span_documents(tick + 1, (size_t)(close - tick - 1), name)) {
                        akg_buf b;
                        akg_buf_init(&b, 16384);
                        size_t plen = (size_t)(stop - para);
                        if (plen > 3000)
                            plen = 3000;
                        akg_buf_appendf(&b, "`%.*s`\n\n", (int)(close - tick - 1), tick + 1);
                        akg_buf_append(&b, para, plen);
                        akg_buf_puts(&b, "\n\n*Unified Sketch language reference*");
                        return akg_buf_take(&b);
                    }
                    tick = memchr(close + 1, '`', (size_t)(stop - close - 1));
                }
            }
            para = stop;
            while (para < end && (*para == '\n' || *para == '\r'))
                para++;
        }
    }
    return NULL;
}

char *akg_lsp_sketch_op_doc(const char *name)
{
    static char *reference; /* read once per process */
    static size_t reference_len;
    static int tried;
    if (!tried) {
        tried = 1;
        char path[4096], err[256];
        snprintf(path, sizeof path, "%s/sketch-grammar/README.md", akg_data_dir());
        if (akg_read_file(path, (size_t)4 << 20, &reference, &reference_len, err, sizeof err) !=
            AKG_OK) {
            akg_lsp_log_info("sketch language reference: %s", err);
            reference = NULL;
        }
    }
    if (!reference || !name || !*name)
        return NULL;
    char *doc = lookup_reference(reference, reference_len, name);
    return doc ? doc : lookup_prose(reference, reference_len, name);
}
