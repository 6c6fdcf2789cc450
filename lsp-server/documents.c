/* documents.c: see documents.h. */
#include "documents.h"

#include <stdlib.h>
#include <string.h>

#include "uri.h"

static int index_lines(akg_lsp_document *doc)
{
    size_t n = 1;
    for (size_t i = 0; i < doc->text.len; i++)
        if (doc->text.data[i] == '\n')
            n++;
    if (n > doc->lines_cap) {
        size_t cap = n + n / 2 + 16;
        size_t *p = realloc(doc->line_starts, cap * sizeof *p);
        if (!p)
            return AKG_ENOMEM;
        doc->line_starts = p;
        doc->lines_cap = cap;
    }
    size_t k = 0;
    doc->line_starts[k++] = 0;
    for (size_t i = 0; i < doc->text.len; i++)
        if (doc->text.data[i] == '\n')
            doc->line_starts[k++] = i + 1;
    doc->n_lines = k;
    return AKG_OK;
}

static akg_lsp_doc_kind classify(const char *uri, const char *language_id)
{
    if ((language_id && strcmp(language_id, "sketch") == 0) || akg_lsp_ends_with(uri, ".sketch"))
        return AKG_LSP_DOC_SKETCH;
    if ((language_id && strcmp(language_id, "python") == 0) || akg_lsp_ends_with(uri, ".py"))
        return AKG_LSP_DOC_PYTHON;
    return AKG_LSP_DOC_OTHER;
}

static void doc_free(akg_lsp_document *doc)
{
    free(doc->uri);
    free(doc->path);
    free(doc->language_id);
    akg_buf_free(&doc->text);
    free(doc->line_starts);
    akg_reference_free(doc->ref);
    free(doc);
}

int akg_lsp_doc_open(akg_lsp_documents *docs, const char *uri, const char *language_id, int version,
                     const char *text, size_t len, akg_lsp_document **out, char *err, size_t errlen)
{
    if (len > AKG_LSP_MAX_DOCUMENT)
        return akg_fail(err, errlen, AKG_ENOMEM, "%s: %zu bytes is over the %zu-byte limit", uri,
                        len, AKG_LSP_MAX_DOCUMENT);
    akg_lsp_document *old = akg_lsp_doc_find(docs, uri);
    if (!old && docs->count >= AKG_LSP_MAX_DOCUMENTS)
        return akg_fail(err, errlen, AKG_ENOMEM, "too many open documents (%d)",
                        AKG_LSP_MAX_DOCUMENTS);
    akg_lsp_document *doc = calloc(1, sizeof *doc);
    if (!doc)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    akg_buf_init(&doc->text, AKG_LSP_MAX_DOCUMENT);
    doc->uri = akg_strdup(uri);
    doc->path = akg_lsp_uri_to_path(uri);
    doc->language_id = akg_strdup(language_id ? language_id : "");
    doc->version = version;
    doc->kind = classify(uri, language_id);
    doc->dirty = 1;
    if (!doc->uri || !doc->language_id || akg_buf_append(&doc->text, text, len) != AKG_OK ||
        index_lines(doc) != AKG_OK) {
        doc_free(doc);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    }
    if (old)
        akg_lsp_doc_close(docs, uri);
    doc->next = docs->head;
    docs->head = doc;
    docs->count++;
    if (out)
        *out = doc;
    return AKG_OK;
}

akg_lsp_document *akg_lsp_doc_find(akg_lsp_documents *docs, const char *uri)
{
    if (!uri)
        return NULL;
    for (akg_lsp_document *d = docs->head; d; d = d->next)
        if (strcmp(d->uri, uri) == 0)
            return d;
    return NULL;
}

akg_lsp_document *akg_lsp_doc_find_path(akg_lsp_documents *docs, const char *path)
{
    if (!path)
        return NULL;
    for (akg_lsp_document *d = docs->head; d; d = d->next)
        if (d->path && strcmp(d->path, path) == 0)
            return d;
    return NULL;
}

int akg_lsp_doc_close(akg_lsp_documents *docs, const char *uri)
{
    for (akg_lsp_document **pp = &docs->head; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->uri, uri) == 0) {
            akg_lsp_document *d = *pp;
            *pp = d->next;
            docs->count--;
            doc_free(d);
            return AKG_OK;
        }
    }
    return AKG_ENOTFOUND;
}

void akg_lsp_docs_free(akg_lsp_documents *docs)
{
    while (docs->head) {
        akg_lsp_document *d = docs->head;
        docs->head = d->next;
        doc_free(d);
    }
    docs->count = 0;
}

/* Length in bytes of the UTF-8 sequence starting with c (1 for stray bytes). */
static size_t utf8_len(unsigned char c)
{
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    if (c >= 0xE0)
        return c <= 0xEF ? 3 : 1;
    if (c >= 0xC2)
        return 2;
    return 1;
}

/* Code units one character of n bytes counts for. */
static unsigned units(akg_lsp_encoding enc, size_t n)
{
    if (enc == AKG_LSP_UTF8)
        return (unsigned)n;
    if (enc == AKG_LSP_UTF32)
        return 1;
    return n == 4 ? 2 : 1;
}

const char *akg_lsp_doc_line(const akg_lsp_document *doc, unsigned row, size_t *len)
{
    if (row >= doc->n_lines) {
        *len = 0;
        return doc->text.data + doc->text.len;
    }
    size_t start = doc->line_starts[row];
    size_t end = row + 1 < doc->n_lines ? doc->line_starts[row + 1] - 1 : doc->text.len;
    if (end > start && doc->text.data[end - 1] == '\r')
        end--;
    *len = end - start;
    return doc->text.data + start;
}

size_t akg_lsp_doc_offset(const akg_lsp_document *doc, akg_lsp_encoding enc, unsigned line,
                          unsigned character)
{
    if (line >= doc->n_lines)
        return doc->text.len;
    size_t len;
    const char *s = akg_lsp_doc_line(doc, line, &len);
    size_t i = 0;
    unsigned counted = 0;
    while (i < len) {
        size_t n = utf8_len((unsigned char)s[i]);
        if (i + n > len)
            n = len - i;
        unsigned u = units(enc, n);
        if (counted + u > character)
            break;
        counted += u;
        i += n;
    }
    return doc->line_starts[line] + i;
}

static unsigned row_of(const akg_lsp_document *doc, size_t offset)
{
    size_t lo = 0, hi = doc->n_lines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (doc->line_starts[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return (unsigned)lo;
}

void akg_lsp_doc_position(const akg_lsp_document *doc, akg_lsp_encoding enc, size_t offset,
                          unsigned *line, unsigned *character)
{
    if (offset > doc->text.len)
        offset = doc->text.len;
    unsigned row = row_of(doc, offset);
    size_t len;
    const char *s = akg_lsp_doc_line(doc, row, &len);
    size_t want = offset - doc->line_starts[row];
    if (want > len)
        want = len;
    size_t i = 0;
    unsigned counted = 0;
    while (i < want) {
        size_t n = utf8_len((unsigned char)s[i]);
        if (i + n > len)
            n = len - i;
        counted += units(enc, n);
        i += n;
    }
    *line = row;
    *character = counted;
}

size_t akg_lsp_doc_point_offset(const akg_lsp_document *doc, unsigned row, unsigned col)
{
    if (row >= doc->n_lines)
        return doc->text.len;
    size_t len;
    akg_lsp_doc_line(doc, row, &len);
    if (col > len)
        col = (unsigned)len;
    return doc->line_starts[row] + col;
}

cJSON *akg_lsp_doc_position_json(const akg_lsp_document *doc, akg_lsp_encoding enc, size_t offset)
{
    unsigned line, ch;
    akg_lsp_doc_position(doc, enc, offset, &line, &ch);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "line", line);
    cJSON_AddNumberToObject(p, "character", ch);
    return p;
}

cJSON *akg_lsp_doc_range_json(const akg_lsp_document *doc, akg_lsp_encoding enc, akg_range r)
{
    cJSON *range = cJSON_CreateObject();
    cJSON_AddItemToObject(range, "start",
                          akg_lsp_doc_position_json(
                              doc, enc, akg_lsp_doc_point_offset(doc, r.start_row, r.start_col)));
    cJSON_AddItemToObject(
        range, "end",
        akg_lsp_doc_position_json(doc, enc, akg_lsp_doc_point_offset(doc, r.end_row, r.end_col)));
    return range;
}

akg_range akg_lsp_doc_line_range(const akg_lsp_document *doc, unsigned row)
{
    size_t len;
    akg_lsp_doc_line(doc, row, &len);
    akg_range r = {row, 0, row, (unsigned)len};
    return r;
}

static int read_position(const cJSON *pos, unsigned *line, unsigned *character)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(pos, "line");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(pos, "character");
    if (!cJSON_IsNumber(l) || !cJSON_IsNumber(c) || l->valuedouble < 0 || c->valuedouble < 0 ||
        l->valuedouble > 4294967295.0 || c->valuedouble > 4294967295.0)
        return 0;
    *line = (unsigned)l->valuedouble;
    *character = (unsigned)c->valuedouble;
    return 1;
}

int akg_lsp_doc_apply_change(akg_lsp_document *doc, akg_lsp_encoding enc, const cJSON *change,
                             char *err, size_t errlen)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(change, "text");
    if (!cJSON_IsString(text))
        return akg_fail(err, errlen, AKG_EINVAL, "content change without a string \"text\"");
    size_t tlen = strlen(text->valuestring);
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(change, "range");
    size_t start = 0, end = doc->text.len;
    if (range) {
        unsigned sl, sc, el, ec;
        if (!cJSON_IsObject(range) ||
            !read_position(cJSON_GetObjectItemCaseSensitive(range, "start"), &sl, &sc) ||
            !read_position(cJSON_GetObjectItemCaseSensitive(range, "end"), &el, &ec))
            return akg_fail(err, errlen, AKG_EINVAL, "content change with a malformed range");
        start = akg_lsp_doc_offset(doc, enc, sl, sc);
        end = akg_lsp_doc_offset(doc, enc, el, ec);
        if (end < start)
            return akg_fail(err, errlen, AKG_EINVAL,
                            "content change whose range ends before it starts");
    }
    size_t new_len = doc->text.len - (end - start) + tlen;
    if (new_len > AKG_LSP_MAX_DOCUMENT)
        return akg_fail(err, errlen, AKG_ENOMEM,
                        "%s would grow to %zu bytes, over the %zu-byte limit", doc->uri, new_len,
                        AKG_LSP_MAX_DOCUMENT);
    akg_buf next;
    akg_buf_init(&next, AKG_LSP_MAX_DOCUMENT);
    if (akg_buf_append(&next, doc->text.data, start) != AKG_OK ||
        akg_buf_append(&next, text->valuestring, tlen) != AKG_OK ||
        akg_buf_append(&next, doc->text.data + end, doc->text.len - end) != AKG_OK) {
        akg_buf_free(&next);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory applying a change");
    }
    akg_buf_free(&doc->text);
    doc->text = next;
    doc->dirty = 1;
    if (index_lines(doc) != AKG_OK)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    return AKG_OK;
}

int akg_lsp_encoding_parse(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "utf-16") == 0)
        return AKG_LSP_UTF16;
    if (strcmp(name, "utf-8") == 0)
        return AKG_LSP_UTF8;
    if (strcmp(name, "utf-32") == 0)
        return AKG_LSP_UTF32;
    return -1;
}

const char *akg_lsp_encoding_name(akg_lsp_encoding enc)
{
    return enc == AKG_LSP_UTF8 ? "utf-8" : enc == AKG_LSP_UTF32 ? "utf-32" : "utf-16";
}

cJSON *akg_lsp_doc_workspace_edit(const akg_lsp_document *doc, cJSON *edits, int versioned)
{
    cJSON *we = cJSON_CreateObject();
    if (versioned) {
        cJSON *changes = cJSON_AddArrayToObject(we, "documentChanges");
        cJSON *tde = cJSON_CreateObject();
        cJSON *id = cJSON_AddObjectToObject(tde, "textDocument");
        cJSON_AddStringToObject(id, "uri", doc->uri);
        cJSON_AddNumberToObject(id, "version", doc->version);
        cJSON_AddItemToObject(tde, "edits", edits);
        cJSON_AddItemToArray(changes, tde);
    } else {
        cJSON *changes = cJSON_AddObjectToObject(we, "changes");
        cJSON_AddItemToObject(changes, doc->uri, edits);
    }
    return we;
}
