/*
 * documents.h: the text of the documents the client has open.
 *
 * Each document keeps its text, its version and an index of line starts, so a
 * position in any of the negotiated encodings (UTF-16 as LSP's default, UTF-8,
 * UTF-32) maps to a byte offset and back. Edits are applied incrementally.
 * Positions past the end of a line or of the text are clamped, as the spec
 * asks; a position inside a multi-unit character snaps to its start.
 */
#ifndef AKG_LSP_DOCUMENTS_H
#define AKG_LSP_DOCUMENTS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "akg/akg.h"
#include "akg/task.h"

#define AKG_LSP_MAX_DOCUMENT ((size_t)32 << 20)
#define AKG_LSP_MAX_DOCUMENTS 4096

typedef enum { AKG_LSP_UTF16 = 0, AKG_LSP_UTF8 = 1, AKG_LSP_UTF32 = 2 } akg_lsp_encoding;

typedef enum { AKG_LSP_DOC_OTHER, AKG_LSP_DOC_PYTHON, AKG_LSP_DOC_SKETCH } akg_lsp_doc_kind;

typedef struct akg_lsp_document {
    char *uri;
    char *path; /* absolute path for file:// URIs, else NULL */
    char *language_id;
    int version;
    akg_lsp_doc_kind kind;
    akg_buf text;
    size_t *line_starts; /* byte offset of each line; n_lines >= 1 */
    size_t n_lines, lines_cap;
    /* Reference index (reference_index.c): */
    akg_reference *ref; /* the last parse; NULL before the first */
    int dirty;          /* text changed since ref was parsed */
    char hash[65];      /* SHA-256 of the text ref was parsed from */
    struct akg_lsp_document *next;
} akg_lsp_document;

typedef struct {
    akg_lsp_document *head;
    size_t count;
} akg_lsp_documents;

/* Opens (or replaces) uri with text. The set owns the document; it lives
 * until akg_lsp_doc_close or akg_lsp_docs_free. */
int akg_lsp_doc_open(akg_lsp_documents *docs, const char *uri, const char *language_id, int version,
                     const char *text, size_t len, akg_lsp_document **out, char *err,
                     size_t errlen);
akg_lsp_document *akg_lsp_doc_find(akg_lsp_documents *docs, const char *uri);
akg_lsp_document *akg_lsp_doc_find_path(akg_lsp_documents *docs, const char *path);
/* A WorkspaceEdit of edits (a TextEdit array, taken) to doc: with versioned, documentChanges
 * naming doc's version (the editor refuses it if the document moved on), else changes. */
cJSON *akg_lsp_doc_workspace_edit(const akg_lsp_document *doc, cJSON *edits, int versioned);
/* Closes uri; AKG_ENOTFOUND when it was not open. */
int akg_lsp_doc_close(akg_lsp_documents *docs, const char *uri);
void akg_lsp_docs_free(akg_lsp_documents *docs);

/* Applies one TextDocumentContentChangeEvent ({range, text} or {text}).
 * AKG_EINVAL with a message when it is malformed; the text is unchanged then. */
int akg_lsp_doc_apply_change(akg_lsp_document *doc, akg_lsp_encoding enc, const cJSON *change,
                             char *err, size_t errlen);

/* Byte offset of an LSP position (clamped). */
size_t akg_lsp_doc_offset(const akg_lsp_document *doc, akg_lsp_encoding enc, unsigned line,
                          unsigned character);
/* LSP position of a byte offset. */
void akg_lsp_doc_position(const akg_lsp_document *doc, akg_lsp_encoding enc, size_t offset,
                          unsigned *line, unsigned *character);
/* Byte offset of a tree-sitter point (row, byte column), clamped to its line. */
size_t akg_lsp_doc_point_offset(const akg_lsp_document *doc, unsigned row, unsigned col);
/* LSP Position / Range JSON objects (the caller owns them). */
cJSON *akg_lsp_doc_position_json(const akg_lsp_document *doc, akg_lsp_encoding enc, size_t offset);
cJSON *akg_lsp_doc_range_json(const akg_lsp_document *doc, akg_lsp_encoding enc, akg_range r);
/* A range of whole line `row`'s text. */
akg_range akg_lsp_doc_line_range(const akg_lsp_document *doc, unsigned row);
/* Start and length of line row (without its line break). */
const char *akg_lsp_doc_line(const akg_lsp_document *doc, unsigned row, size_t *len);

/* Parses "utf-16" / "utf-8" / "utf-32"; -1 for anything else. */
int akg_lsp_encoding_parse(const char *name);
const char *akg_lsp_encoding_name(akg_lsp_encoding enc);

#endif
