/*
 * selection.c: see selection.h.
 *
 * Why the kernel is imported by path and not copied beside the model: the
 * generated model_new.py loads its compiled kernel (or its DSL source) from
 * its own folder, so a copy would need every file of the run folder beside
 * the model. The run folder already lies in the workspace (akg_output/), so
 * the model imports it by a path relative to itself, which survives moving
 * the workspace.
 *
 * Why statements are swapped for a view of self and not for a second module:
 * ModelNew rebuilds the enclosing class's __init__ (same layers, same random
 * draws), and a second module held by self would duplicate those weights, put
 * them into state_dict and go stale once the model's own weights are loaded
 * or trained. ModelNew's forward reads self.<attribute> by the names the
 * enclosing class uses, so running it over a shallow view of self reads the
 * model's own, current weights. A kernel that reads a constructor argument
 * (self._akg_init) cannot be run that way; selecting the class swaps the
 * whole module instead, and the message says so.
 *
 * The edits are computed against the text the document has when the command
 * runs (the open document, else the file) and sent as one WorkspaceEdit; the
 * selected lines must still hold what was constructed from.
 */
#include "selection.h"

#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "akg/task_constructor.h"
#include "ask.h"
#include "diagnostics.h"
#include "jobs.h"
#include "log.h"
#include "reference_index.h"
#include "uri.h"

#define SELECTIONS_CAP 32
#define USE_TITLE "Use the generated kernel"

typedef enum { SEL_CLASS, SEL_FUNCTION, SEL_STATEMENTS } selection_kind;

typedef enum { SEL_RUNNING, SEL_READY, SEL_FAILED } selection_state;

typedef struct akg_lsp_selection {
    selection_state state;
    long long job_id;      /* RUNNING, READY */
    char *uri, *path;      /* the model file */
    akg_range range;       /* the selection, rows and byte columns */
    char *name;            /* the task's name (RUNNING, READY) */
    selection_kind kind;   /* RUNNING, READY */
    char *task_path;       /* .akg/tasks/<name>.py */
    char *selected;        /* the selected lines' text at construction */
    char *model_new;       /* READY */
    double speedup;        /* READY; NaN when unknown */
    char *message, *code;  /* FAILED */
    char hash[65];         /* FAILED: the text the construction read */
    akg_task_needs *needs; /* FAILED: what the user must tell (NULL: nothing to ask) */
    long long ask_id;      /* FAILED: its window/showMessageRequest */
    struct akg_lsp_selection *next;
} selection;

static void selection_free(selection *e)
{
    free(e->uri);
    free(e->path);
    free(e->name);
    free(e->task_path);
    free(e->selected);
    free(e->model_new);
    free(e->message);
    free(e->code);
    free(e->needs);
    free(e);
}

static void selection_unlink(akg_lsp_server *s, selection *e)
{
    for (selection **pp = &s->selections; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            return;
        }
}

/* Adds e at the head, dropping the oldest entries past the cap. */
static void selection_add(akg_lsp_server *s, selection *e)
{
    e->next = s->selections;
    s->selections = e;
    size_t n = 0;
    for (selection **pp = &s->selections; *pp;) {
        if (++n > SELECTIONS_CAP && (*pp)->state != SEL_RUNNING) {
            selection *old = *pp;
            *pp = old->next;
            selection_free(old);
            continue;
        }
        pp = &(*pp)->next;
    }
}

static selection *selection_by_job(akg_lsp_server *s, long long job_id)
{
    for (selection *e = s->selections; e; e = e->next)
        if (e->state != SEL_FAILED && e->job_id == job_id)
            return e;
    return NULL;
}

/* Forgets the construction failure shown in path. */
static void forget_failure(akg_lsp_server *s, const char *path)
{
    for (selection *e = s->selections; e; e = e->next)
        if (e->state == SEL_FAILED && strcmp(e->path, path) == 0) {
            selection_unlink(s, e);
            selection_free(e);
            return;
        }
}

void akg_lsp_selections_free(akg_lsp_server *s)
{
    while (s->selections) {
        selection *e = s->selections;
        s->selections = e->next;
        selection_free(e);
    }
}

/* ---- text helpers ----------------------------------------------------------- */

/* The document at path as the editor has it: the open one, else a
 * temporary one read from disk into *tmp (freed by the caller with
 * akg_lsp_docs_free). NULL with a message when neither exists. */
static akg_lsp_document *document_for(akg_lsp_server *s, const char *uri, const char *path,
                                      akg_lsp_documents *tmp, char *err, size_t errlen)
{
    akg_lsp_document *doc = akg_lsp_doc_find_path(&s->docs, path);
    if (doc)
        return doc;
    char *text = NULL;
    size_t len = 0;
    if (akg_read_file(path, AKG_LSP_MAX_DOCUMENT, &text, &len, err, errlen) != AKG_OK)
        return NULL;
    int rc = akg_lsp_doc_open(tmp, uri, "python", 0, text, len, &doc, err, errlen);
    free(text);
    return rc == AKG_OK ? doc : NULL;
}

/* Lines first..last (0-based, inclusive) of doc with their line breaks; malloc'd. */
static char *lines_text(const akg_lsp_document *doc, unsigned first, unsigned last)
{
    if (first >= doc->n_lines)
        return akg_strdup("");
    if (last >= doc->n_lines)
        last = (unsigned)doc->n_lines - 1;
    size_t a = doc->line_starts[first];
    size_t b = last + 1 < doc->n_lines ? doc->line_starts[last + 1] : doc->text.len;
    char *out = malloc(b - a + 1);
    if (!out)
        return NULL;
    memcpy(out, doc->text.data + a, b - a);
    out[b - a] = '\0';
    return out;
}

static int line_is_blank_or_comment(const char *t, size_t n)
{
    size_t i = 0;
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r'))
        i++;
    return i == n || t[i] == '#';
}

static size_t indent_of(const char *t, size_t n)
{
    size_t i = 0;
    while (i < n && (t[i] == ' ' || t[i] == '\t'))
        i++;
    return i;
}

static int starts_with_word(const char *t, size_t n, const char *word)
{
    size_t w = strlen(word);
    return n >= w && strncmp(t, word, w) == 0 &&
           (n == w || !(isalnum((unsigned char)t[w]) || t[w] == '_'));
}

/* Bracket depth change of a line of Python (strings and comments skipped,
 * roughly: enough to find where a statement ends). */
static int bracket_delta(const char *t, size_t n)
{
    int d = 0;
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (quote) {
            if (c == '\\')
                i++;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '#')
            break;
        if (c == '"' || c == '\'')
            quote = c;
        else if (c == '(' || c == '[' || c == '{')
            d++;
        else if (c == ')' || c == ']' || c == '}')
            d--;
    }
    return d;
}

/* The row of the top-level `class NAME` / `def NAME`; -1 when none. */
static long definition_row(const akg_lsp_document *doc, const char *keyword, const char *name)
{
    char head[300];
    snprintf(head, sizeof head, "%s %s", keyword, name);
    for (unsigned r = 0; r < doc->n_lines; r++) {
        size_t n;
        const char *t = akg_lsp_doc_line(doc, r, &n);
        if (starts_with_word(t, n, head) ||
            (strcmp(keyword, "def") == 0 && n > 6 && strncmp(t, "async ", 6) == 0 &&
             starts_with_word(t + 6, n - 6, head)))
            return (long)r;
    }
    return -1;
}

/* The last row of the top-level definition starting at row: its last
 * indented, non-blank line before the next statement at column 0. */
static unsigned definition_end(const akg_lsp_document *doc, unsigned row)
{
    unsigned end = row;
    int depth = 0;
    for (unsigned r = row; r < doc->n_lines; r++) {
        size_t n;
        const char *t = akg_lsp_doc_line(doc, r, &n);
        if (r > row && depth <= 0 && n > 0 && t[0] != ' ' && t[0] != '\t' && t[0] != '#' &&
            t[0] != '\r' && t[0] != ')' && t[0] != ']')
            break;
        depth += bracket_delta(t, n);
        if (!line_is_blank_or_comment(t, n))
            end = r;
    }
    return end;
}

/* path relative to the folder dir (both absolute, symlinks resolved where they exist). */
static int relative_path(const char *dir, const char *path, char *out, size_t outlen)
{
    char d[PATH_MAX], p[PATH_MAX];
    if (!realpath(dir, d))
        snprintf(d, sizeof d, "%s", dir);
    if (!realpath(path, p))
        snprintf(p, sizeof p, "%s", path);
    size_t common = 0, i = 0;
    for (;; i++) {
        char a = d[i], b = p[i];
        if ((a == '/' || a == '\0') && b == '/')
            common = i;
        if (a != b || a == '\0')
            break;
    }
    if (d[i] == '\0' && p[i] == '/')
        common = i;
    size_t used = 0;
    out[0] = '\0';
    for (const char *q = d + common; *q; q++)
        if (*q == '/') {
            int n = snprintf(out + used, outlen - used, "../");
            if (n < 0 || (size_t)n >= outlen - used)
                return 0;
            used += (size_t)n;
        }
    int n = snprintf(out + used, outlen - used, "%s", p + common + 1);
    return n >= 0 && (size_t)n < outlen - used;
}

/* A Python string literal of s (the path of a file akg wrote: no quotes in it
 * matter, but they are escaped). */
static void py_string(akg_buf *b, const char *s)
{
    akg_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            akg_buf_puts(b, "\\");
        akg_buf_append(b, s, 1);
    }
    akg_buf_puts(b, "\"");
}

/* The selection's lines, 0-based: a selection that ends at the start of a
 * line does not take that line. */
static void range_lines(akg_range r, unsigned *first, unsigned *last)
{
    *first = r.start_row;
    *last = r.end_row;
    if (r.end_row > r.start_row && r.end_col == 0)
        (*last)--;
}

/* Where e's selected lines are in doc now: where they were, else (an edit
 * above moved them, such as another kernel's) the one place, at the start of
 * a line, that holds the same text. 0 when they are found nowhere. */
static int locate(const selection *e, const akg_lsp_document *doc, unsigned *first_out,
                  unsigned *last_out)
{
    unsigned first, last;
    range_lines(e->range, &first, &last);
    char *now = lines_text(doc, first, last);
    int same = now && e->selected && strcmp(now, e->selected) == 0;
    free(now);
    if (!same && e->selected && *e->selected) {
        const char *text = doc->text.data ? doc->text.data : "", *found = NULL;
        int count = 0;
        for (const char *p = strstr(text, e->selected); p && count < 2;
             p = strstr(p + 1, e->selected))
            if (p == text || p[-1] == '\n') {
                found = p;
                count++;
            }
        if (count == 1) {
            unsigned row, col;
            akg_lsp_doc_position(doc, AKG_LSP_UTF8, (size_t)(found - text), &row, &col);
            last = row + (last - first);
            first = row;
            same = 1;
        }
    }
    *first_out = first;
    *last_out = last;
    return same;
}

/* 1 when a class or function of e is already rebound to its kernel in doc. */
static int already_used(const selection *e, const akg_lsp_document *doc)
{
    if (e->kind == SEL_STATEMENTS || !doc->text.data)
        return 0;
    char line[300];
    snprintf(line, sizeof line, "\n%s = _akg_kernel(", e->name);
    return strstr(doc->text.data, line) != NULL;
}

/* ---- code actions ----------------------------------------------------------- */

static int read_range(akg_lsp_server *s, const akg_lsp_document *doc, const cJSON *range,
                      akg_range *out)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(range, "start");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(range, "end");
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(st, "line");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(st, "character");
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(en, "line");
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(en, "character");
    if (!cJSON_IsNumber(sl) || !cJSON_IsNumber(sc) || !cJSON_IsNumber(el) || !cJSON_IsNumber(ec) ||
        sl->valuedouble < 0 || sc->valuedouble < 0 || el->valuedouble < sl->valuedouble ||
        ec->valuedouble < 0)
        return 0;
    size_t a =
        akg_lsp_doc_offset(doc, s->encoding, (unsigned)sl->valuedouble, (unsigned)sc->valuedouble);
    size_t b =
        akg_lsp_doc_offset(doc, s->encoding, (unsigned)el->valuedouble, (unsigned)ec->valuedouble);
    if (b < a)
        b = a;
    unsigned r0, c0, r1, c1;
    akg_lsp_doc_position(doc, AKG_LSP_UTF8, a, &r0, &c0);
    akg_lsp_doc_position(doc, AKG_LSP_UTF8, b, &r1, &c1);
    out->start_row = r0;
    out->start_col = c0;
    out->end_row = r1;
    out->end_col = c1;
    return 1;
}

static void add_action(cJSON *list, const char *title, cJSON *command)
{
    akg_lsp_add_action(list, title, "refactor.akg", command);
}

/* The construction failure shown in doc (its text unchanged since), or NULL. */
static selection *shown_failure(akg_lsp_server *s, const akg_lsp_document *doc)
{
    for (selection *e = s->selections; e; e = e->next) {
        if (e->state != SEL_FAILED || strcmp(e->path, doc->path) != 0)
            continue;
        char hash[65];
        akg_sha256_hex(doc->text.data ? doc->text.data : "", doc->text.len, hash);
        return strcmp(hash, e->hash) == 0 ? e : NULL;
    }
    return NULL;
}

/* The quick fix of a construction that stopped on what the user must tell: the `# akg:` lines
 * to fill in, offered on the selection's lines and on each unknown's. */
static void ask_action(akg_lsp_server *s, akg_lsp_document *doc, akg_range r, cJSON *list)
{
    selection *e = shown_failure(s, doc);
    if (!e || !e->needs || akg_lsp_ask_lines(e->needs) == 0)
        return;
    unsigned first, last, f0, l0;
    range_lines(r, &first, &last);
    range_lines(e->range, &f0, &l0);
    int near = !(last < f0 || first > l0);
    for (size_t i = 0; i < e->needs->n && !near; i++) {
        unsigned row = e->needs->items[i].line - 1;
        near = e->needs->items[i].line && first <= row && row <= last;
    }
    if (!near)
        return;
    cJSON *edit = akg_lsp_ask_edit(s, doc, e->needs, 1);
    if (!edit)
        return;
    char title[700];
    akg_lsp_ask_title(e->needs, title, sizeof title);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", "quickfix");
    cJSON *diags = cJSON_CreateArray();
    akg_lsp_ask_diagnostics(s, doc, e->needs, e->range, diags);
    cJSON_AddItemToObject(a, "diagnostics", diags);
    cJSON_AddBoolToObject(a, "isPreferred", 1);
    cJSON_AddItemToObject(a, "edit", edit);
    cJSON_AddItemToArray(list, a);
}

void akg_lsp_selection_actions(akg_lsp_server *s, akg_lsp_document *doc, const cJSON *range,
                               const cJSON *only, cJSON *list)
{
    akg_range r;
    if (!doc->path || !read_range(s, doc, range, &r))
        return;
    if (akg_lsp_kind_allowed(only, "quickfix"))
        ask_action(s, doc, r, list);
    if (!akg_lsp_kind_allowed(only, "refactor.akg"))
        return;
    unsigned first, last;
    range_lines(r, &first, &last);
    int empty = r.start_row == r.end_row && r.start_col == r.end_col;
    size_t n;
    const char *t = akg_lsp_doc_line(doc, first, &n);
    size_t ind = indent_of(t, n);
    /* A cursor offers it on a definition's line; a selection anywhere. */
    if (!empty || starts_with_word(t + ind, n - ind, "class") ||
        (ind == 0 && (starts_with_word(t, n, "def") || starts_with_word(t, n, "async")))) {
        const cJSON *tg;
        int ntargets = cJSON_GetArraySize(s->settings.targets);
        cJSON_ArrayForEach(tg, s->settings.targets)
        {
            const char *b = akg_lsp_param_string(tg, "backend"),
                       *d = akg_lsp_param_string(tg, "dsl");
            char title[160];
            if (ntargets > 1)
                snprintf(title, sizeof title, "akg: Generate kernel for this (%s/%s)", b, d);
            else
                snprintf(title, sizeof title, "akg: Generate kernel for this");
            cJSON *arg = cJSON_CreateObject();
            cJSON_AddStringToObject(arg, "uri", doc->uri);
            cJSON_AddItemToObject(arg, "range", cJSON_Duplicate(range, 1));
            const cJSON *f;
            cJSON_ArrayForEach(f, tg) cJSON_AddItemToObject(arg, f->string, cJSON_Duplicate(f, 1));
            add_action(list, title, akg_lsp_command(title, AKG_LSP_CMD_FOR_SELECTION, arg));
        }
    }
    for (selection *e = s->selections; e; e = e->next) {
        if (e->state != SEL_READY || strcmp(e->path, doc->path) != 0)
            continue;
        unsigned f0, l0;
        if (!locate(e, doc, &f0, &l0) || last < f0 || first > l0 || already_used(e, doc))
            continue;
        char title[300];
        if (isnan(e->speedup))
            snprintf(title, sizeof title, "akg: %s (%s)", USE_TITLE, e->name);
        else
            snprintf(title, sizeof title, "akg: %s (%s, %.2fx)", USE_TITLE, e->name, e->speedup);
        cJSON *arg = cJSON_CreateObject();
        cJSON_AddStringToObject(arg, "uri", doc->uri);
        cJSON_AddNumberToObject(arg, "jobId", (double)e->job_id);
        add_action(list, title, akg_lsp_command(title, AKG_LSP_CMD_USE_KERNEL, arg));
    }
}

/* ---- akg.generateForSelection -------------------------------------------------- */

static const char *failure_code(int rc, const char *message)
{
    if (rc == AKG_ENOTFOUND) /* a shape, or how the module is constructed */
        return strstr(message, "shape") ? "missing-shape" : "missing-value";
    return rc == AKG_EPARSE ? "syntax" : "unsupported-construct";
}

static selection_kind kind_of(const akg_constructed_task *t, const akg_lsp_document *doc)
{
    /* The constructor names statements Class_forward_L<a>_<b>. */
    const char *f = strstr(t->name, "_forward_L");
    if (f && strchr(f + 10, '_') && definition_row(doc, "class", t->name) < 0)
        return SEL_STATEMENTS;
    return definition_row(doc, "class", t->name) >= 0 ? SEL_CLASS : SEL_FUNCTION;
}

static int number_arg(const cJSON *arg, const char *name, double lo, double hi, double *out,
                      int *given, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(arg, name);
    *given = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return akg_fail(err, errlen, AKG_EINVAL, "%s must be a number from %g to %g", name, lo, hi),
               AKG_RPC_INVALID_PARAMS;
    *out = v->valuedouble;
    *given = 1;
    return 0;
}

static void ask_answered(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                         long long ask_id)
{
    const char *title = akg_lsp_param_string(result, "title");
    if (error || !title || strcmp(title, AKG_LSP_ASK_ACTION) != 0)
        return; /* dismissed: the diagnostics and the quick fix stay */
    selection *e = NULL;
    for (selection *x = s->selections; x && !e; x = x->next)
        if (x->state == SEL_FAILED && x->ask_id == ask_id)
            e = x;
    char err[1024] = "";
    akg_lsp_documents tmp = {0};
    akg_lsp_document *doc = e ? document_for(s, e->uri, e->path, &tmp, err, sizeof err) : NULL;
    char hash[65] = "";
    if (doc)
        akg_sha256_hex(doc->text.data ? doc->text.data : "", doc->text.len, hash);
    if (!e || !doc || strcmp(hash, e->hash) != 0) {
        akg_lsp_show_message(s, 2,
                             "akg: the file changed since akg asked; run \"Generate kernel for "
                             "this\" again%s%s",
                             err[0] ? ": " : "", err);
        akg_lsp_docs_free(&tmp);
        return;
    }
    if (!s->caps.apply_edit) {
        char line[300];
        akg_task_need_placeholder(&e->needs->items[0], line, sizeof line);
        akg_lsp_show_message(s, 2,
                             "akg: the editor does not take workspace/applyEdit; add `%s` (and a "
                             "line for each other unknown) above line %u by hand",
                             line, e->needs->comment_line);
        akg_lsp_docs_free(&tmp);
        return;
    }
    cJSON *edit =
        akg_lsp_ask_edit(s, doc, e->needs, akg_lsp_doc_find_path(&s->docs, e->path) == doc);
    akg_lsp_docs_free(&tmp);
    if (!edit)
        return;
    cJSON *p = cJSON_CreateObject();
    char label[700];
    akg_lsp_ask_title(e->needs, label, sizeof label);
    cJSON_AddStringToObject(p, "label", label);
    cJSON_AddItemToObject(p, "edit", edit);
    akg_lsp_request(s, "workspace/applyEdit", p, NULL, 0);
}

/* Asks the user for what the construction e stopped on (window/showMessageRequest); its action
 * inserts the lines to fill in. */
static void ask_user(akg_lsp_server *s, const selection *e)
{
    char msg[1200];
    akg_lsp_ask_message(e->needs, msg, sizeof msg);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "type", 1);
    cJSON_AddStringToObject(p, "message", msg);
    cJSON *actions = cJSON_AddArrayToObject(p, "actions");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", AKG_LSP_ASK_ACTION);
    cJSON_AddItemToArray(actions, a);
    akg_lsp_request(s, "window/showMessageRequest", p, ask_answered, e->ask_id);
}

int akg_lsp_selection_generate(akg_lsp_server *s, const cJSON *arg, const char *uri,
                               const char *path, const char *backend, const char *dsl,
                               const char *arch, cJSON **result, char *err, size_t errlen)
{
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(arg, "range");
    if (!cJSON_IsObject(range))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "akg.generateForSelection takes {uri, range}: range must be an LSP Range"),
               AKG_RPC_INVALID_PARAMS;
    double runs = 0, min_speedup = 0;
    int runs_given, min_given, code;
    if ((code = number_arg(arg, "profileRuns", 1, 100000, &runs, &runs_given, err, errlen)) ||
        (code = number_arg(arg, "minSpeedup", 0, 1e6, &min_speedup, &min_given, err, errlen)))
        return code;
    if (akg_lsp_check_trusted(s, path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    akg_lsp_documents tmp = {0};
    akg_lsp_document *doc = document_for(s, uri, path, &tmp, err, errlen);
    if (!doc) {
        akg_lsp_docs_free(&tmp);
        return AKG_RPC_REQUEST_FAILED;
    }
    akg_range r;
    if (!read_range(s, doc, range, &r)) {
        akg_lsp_docs_free(&tmp);
        return akg_fail(err, errlen, AKG_EINVAL,
                        "range must be {start, end} positions, start first"),
               AKG_RPC_INVALID_PARAMS;
    }
    unsigned first, last;
    range_lines(r, &first, &last);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    akg_constructed_task t;
    akg_task_needs needs;
    char cerr[2048];
    int rc = akg_task_construct_needs(doc->text.data ? doc->text.data : "", doc->text.len, base,
                                      first + 1, last + 1, &t, &needs, cerr, sizeof cerr);
    forget_failure(s, path);
    if (rc != AKG_OK) {
        selection *e = calloc(1, sizeof *e);
        if (e && needs.n > 0) {
            e->needs = malloc(sizeof *e->needs);
            if (e->needs)
                *e->needs = needs;
            e->ask_id = ++s->ask_serial;
        }
        if (e) {
            e->state = SEL_FAILED;
            e->uri = akg_strdup(doc->uri);
            e->path = akg_strdup(path);
            e->range = r;
            if (r.start_row == r.end_row && r.start_col == r.end_col)
                e->range = akg_lsp_doc_line_range(doc, r.start_row);
            e->code = akg_strdup(failure_code(rc, cerr));
            char msg[2300];
            snprintf(msg, sizeof msg, "akg cannot generate a kernel for this selection: %s", cerr);
            e->message = akg_strdup(msg);
            akg_sha256_hex(doc->text.data ? doc->text.data : "", doc->text.len, e->hash);
            selection_add(s, e);
        }
        akg_lsp_log_info("selection %s:%u-%u: %s", path, first + 1, last + 1, cerr);
        akg_lsp_document *open = akg_lsp_doc_find_path(&s->docs, path);
        if (open)
            akg_lsp_diagnostics_publish(s, open);
        if (e && e->needs && akg_lsp_ask_lines(e->needs) > 0 && s->state == AKG_LSP_RUNNING)
            ask_user(s, e);
        akg_lsp_docs_free(&tmp);
        akg_fail(err, errlen, AKG_EUNSUPPORTED, "%s", cerr);
        return AKG_RPC_REQUEST_FAILED;
    }
    akg_lsp_document *open = akg_lsp_doc_find_path(&s->docs, path);
    if (open)
        akg_lsp_diagnostics_publish(s, open); /* the earlier failure is gone */

    /* .akg/tasks/<name>.py beside the model, as `akg_cli task` saves it. */
    char task_path[PATH_MAX];
    char *dir_copy = akg_strdup(path);
    snprintf(task_path, sizeof task_path, "%s/.akg/tasks/%s.py", dir_copy ? dirname(dir_copy) : ".",
             t.name);
    free(dir_copy);
    char *task_dir = akg_strdup(task_path);
    int saved = task_dir && akg_mkdirs(dirname(task_dir), err, errlen) == AKG_OK &&
                akg_write_file(task_path, t.reference, strlen(t.reference), err, errlen) == AKG_OK;
    free(task_dir);
    if (!saved) {
        akg_constructed_task_free(&t);
        akg_lsp_docs_free(&tmp);
        return AKG_RPC_REQUEST_FAILED;
    }
    char *task_uri = akg_lsp_path_to_uri(task_path);
    akg_lsp_job_request req;
    memset(&req, 0, sizeof req);
    req.uri = task_uri;
    req.path = task_path;
    req.backend = backend;
    req.dsl = dsl;
    req.arch = arch;
    req.workflow = akg_lsp_param_string(arg, "workflow");
    req.profile_runs = runs_given ? (int)runs : 0;
    req.min_speedup = min_speedup;
    req.min_speedup_set = min_given;
    long long id = 0;
    code = akg_lsp_jobs_start(s, &req, &id, err, errlen);
    free(task_uri);
    if (code == 0) {
        selection *e = calloc(1, sizeof *e);
        if (e) {
            e->state = SEL_RUNNING;
            e->job_id = id;
            e->uri = akg_strdup(doc->uri);
            e->path = akg_strdup(path);
            e->range = r;
            e->name = akg_strdup(t.name);
            e->kind = kind_of(&t, doc);
            e->task_path = akg_strdup(task_path);
            e->selected = lines_text(doc, first, last);
            e->speedup = NAN;
            selection_add(s, e);
        }
        akg_lsp_log_info("selection %s:%u-%u: task %s, job %lld", path, first + 1, last + 1,
                         task_path, id);
        cJSON *out = cJSON_CreateObject();
        cJSON_AddNumberToObject(out, "jobId", (double)id);
        cJSON_AddStringToObject(out, "task", task_path);
        cJSON_AddStringToObject(out, "name", t.name);
        *result = out;
    }
    akg_constructed_task_free(&t);
    akg_lsp_docs_free(&tmp);
    return code;
}

/* ---- the edit ---------------------------------------------------------------- */

static const char HELPERS[] =
    "\n\n"
    "# akg: generated kernels are imported by these helpers; each line that calls them swaps\n"
    "# code for a kernel (undo the edit, or restore the line, to go back).\n"
    "def _akg_kernel(relpath, _loaded={}):\n"
    "    \"\"\"The ModelNew class of the model_new.py akg generated at relpath (from this "
    "file's folder).\"\"\"\n"
    "    import importlib.util\n"
    "    import os\n"
    "\n"
    "    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), relpath)\n"
    "    if path not in _loaded:\n"
    "        spec = importlib.util.spec_from_file_location(\"_akg_model_new_%d\" % "
    "len(_loaded), path)\n"
    "        module = importlib.util.module_from_spec(spec)\n"
    "        spec.loader.exec_module(module)\n"
    "        _loaded[path] = module.ModelNew\n"
    "    return _loaded[path]\n"
    "\n"
    "\n"
    "def _akg_on(owner, relpath):\n"
    "    \"\"\"The kernel at relpath run on owner's own weights and attributes (a view of "
    "owner, nothing copied).\"\"\"\n"
    "    kernel_class = _akg_kernel(relpath)\n"
    "    view = kernel_class.__new__(kernel_class)\n"
    "    view.__dict__.update(owner.__dict__)\n"
    "    return view\n";

/* The row after which the helpers go: the last top-level import before the
 * first top-level definition (its closing line for a parenthesised one);
 * -1 when the file imports nothing (they go first). */
static long imports_end(const akg_lsp_document *doc)
{
    long end = -1;
    int depth = 0;
    for (unsigned r = 0; r < doc->n_lines; r++) {
        size_t n;
        const char *t = akg_lsp_doc_line(doc, r, &n);
        if (depth > 0) {
            depth += bracket_delta(t, n);
            end = (long)r;
            continue;
        }
        if (starts_with_word(t, n, "class") || starts_with_word(t, n, "def") ||
            starts_with_word(t, n, "async") || (n > 0 && t[0] == '@'))
            break;
        if (starts_with_word(t, n, "import") || starts_with_word(t, n, "from")) {
            end = (long)r;
            depth = bracket_delta(t, n);
            if (n > 0 && t[n - 1] == '\\')
                depth = depth > 0 ? depth : 1;
        }
    }
    return end;
}

static int has_helpers(const akg_lsp_document *doc)
{
    const char *t = doc->text.data ? doc->text.data : "";
    return strstr(t, "\ndef _akg_kernel(") != NULL || strncmp(t, "def _akg_kernel(", 16) == 0;
}

/* A TextEdit replacing bytes a..b of doc with text. */
static void add_edit(akg_lsp_server *s, const akg_lsp_document *doc, cJSON *edits, size_t a,
                     size_t b, const char *text)
{
    cJSON *e = cJSON_CreateObject();
    cJSON *range = cJSON_AddObjectToObject(e, "range");
    cJSON_AddItemToObject(range, "start", akg_lsp_doc_position_json(doc, s->encoding, a));
    cJSON_AddItemToObject(range, "end", akg_lsp_doc_position_json(doc, s->encoding, b));
    cJSON_AddStringToObject(e, "newText", text);
    cJSON_AddItemToArray(edits, e);
}

static size_t line_start(const akg_lsp_document *doc, unsigned row)
{
    return row < doc->n_lines ? doc->line_starts[row] : doc->text.len;
}

/* The byte just past row's line break (the end of the text for the last line). */
static size_t line_after(const akg_lsp_document *doc, unsigned row)
{
    return row + 1 < doc->n_lines ? doc->line_starts[row + 1] : doc->text.len;
}

/* The edits that swap e's selection in doc for the kernel; 0 with a message
 * in err when they cannot be made. */
static int build_edits(akg_lsp_server *s, const selection *e, const akg_lsp_document *doc,
                       cJSON *edits, char *label, size_t labellen, char *err, size_t errlen)
{
    unsigned first, last;
    int same = locate(e, doc, &first, &last);
    if (already_used(e, doc))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "%s already uses the kernel for %s (the line `%s = "
                        "_akg_kernel(...)`)",
                        e->path, e->name, e->name),
               0;
    if (!same)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "lines %u-%u of %s changed since the kernel for %s was generated; select "
                        "them again and run \"Generate kernel for this\"",
                        first + 1, last + 1, e->path, e->name),
               0;
    char *dir_copy = akg_strdup(e->path);
    char rel[PATH_MAX];
    int rel_ok = dir_copy && relative_path(dirname(dir_copy), e->model_new, rel, sizeof rel);
    free(dir_copy);
    if (!rel_ok)
        return akg_fail(err, errlen, AKG_EINVAL, "%s is too far from %s to import it", e->model_new,
                        e->path),
               0;
    char speed[64] = "";
    if (!isnan(e->speedup))
        snprintf(speed, sizeof speed, ", %.2fx", e->speedup);
    akg_buf line;
    akg_buf_init(&line, 1 << 16);
    int ok = 1;
    if (e->kind == SEL_STATEMENTS) {
        char *model_new_text = NULL;
        size_t mlen;
        if (akg_read_file(e->model_new, (size_t)8 << 20, &model_new_text, &mlen, err, errlen) !=
            AKG_OK) {
            akg_buf_free(&line);
            return 0;
        }
        int reads_init = strstr(model_new_text, "self._akg_init[") != NULL;
        free(model_new_text);
        const char *cls_end = strstr(e->name, "_forward_L");
        if (reads_init) {
            akg_buf_free(&line);
            return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                            "the kernel for %s reads an argument of %.*s's constructor, which "
                            "the running module does not keep; select the class %.*s to swap "
                            "the whole module for its kernel",
                            e->name, (int)(cls_end - e->name), e->name, (int)(cls_end - e->name),
                            e->name),
                   0;
        }
        /* Inputs and outputs: the constructed Model's forward. */
        char *task_text = NULL;
        size_t tlen;
        if (akg_read_file(e->task_path, (size_t)16 << 20, &task_text, &tlen, err, errlen) !=
            AKG_OK) {
            akg_buf_free(&line);
            return 0;
        }
        akg_reference *ref = akg_reference_parse(task_text, tlen, e->task_path);
        free(task_text);
        /* The statements the selection holds: whole lines, comments kept. */
        unsigned a = first, b = last;
        size_t n;
        const char *t;
        while (a < b && (t = akg_lsp_doc_line(doc, a, &n), line_is_blank_or_comment(t, n)))
            a++;
        while (b > a && (t = akg_lsp_doc_line(doc, b, &n), line_is_blank_or_comment(t, n)))
            b--;
        int depth = 0, returns = 0;
        t = akg_lsp_doc_line(doc, a, &n);
        size_t ind = indent_of(t, n);
        for (unsigned r = a; r <= b; r++) {
            t = akg_lsp_doc_line(doc, r, &n);
            if (depth == 0 && indent_of(t, n) == ind &&
                starts_with_word(t + ind, n - ind, "return"))
                returns = 1;
            depth += bracket_delta(t, n);
        }
        while ((depth > 0 || (t = akg_lsp_doc_line(doc, b, &n), n > 0 && t[n - 1] == '\\')) &&
               b + 1 < doc->n_lines) {
            b++;
            t = akg_lsp_doc_line(doc, b, &n);
            depth += bracket_delta(t, n);
        }
        t = akg_lsp_doc_line(doc, a, &n);
        if (!ref || !ref->has_forward || (!returns && !ref->forward_return_text)) {
            akg_fail(err, errlen, AKG_EPARSE,
                     "the task %s has no forward returning the statements' values; generate "
                     "it again",
                     e->task_path);
            ok = 0;
        } else {
            akg_buf_append(&line, t, ind);
            if (returns)
                akg_buf_puts(&line, "return ");
            else
                akg_buf_appendf(&line, "%s = ", ref->forward_return_text);
            akg_buf_puts(&line, "_akg_on(self, ");
            py_string(&line, rel);
            akg_buf_puts(&line, ").forward(");
            for (size_t i = 0; i < ref->n_forward_params; i++)
                akg_buf_appendf(&line, "%s%s", i ? ", " : "", ref->forward_params[i].name);
            if (a == b)
                akg_buf_appendf(&line, ")  # akg: kernel for line %u%s\n", a + 1, speed);
            else
                akg_buf_appendf(&line, ")  # akg: kernel for lines %u-%u%s\n", a + 1, b + 1, speed);
            add_edit(s, doc, edits, line_start(doc, a), line_after(doc, b), line.data);
            snprintf(label, labellen, "akg: use the generated kernel for %s", e->name);
        }
        akg_reference_free(ref);
    } else {
        int is_class = e->kind == SEL_CLASS;
        long row = definition_row(doc, is_class ? "class" : "def", e->name);
        if (row < 0) {
            akg_buf_free(&line);
            return akg_fail(err, errlen, AKG_ENOTFOUND,
                            "%s no longer defines %s %s at the top level; generate it again",
                            e->path, is_class ? "class" : "function", e->name),
                   0;
        }
        unsigned end = definition_end(doc, (unsigned)row);
        size_t at = line_after(doc, end);
        int needs_break = at == doc->text.len && at > 0 && doc->text.data[at - 1] != '\n';
        akg_buf_appendf(&line, "%s\n\n%s = _akg_kernel(", needs_break ? "\n" : "", e->name);
        py_string(&line, rel);
        akg_buf_appendf(&line, ")%s  # akg: kernel for %s%s\n", is_class ? "" : "()", e->name,
                        speed);
        add_edit(s, doc, edits, at, at, line.data);
        snprintf(label, labellen, "akg: use the generated kernel for %s", e->name);
    }
    akg_buf_free(&line);
    if (!ok)
        return 0;
    if (!has_helpers(doc)) {
        long after = imports_end(doc);
        size_t at = after < 0 ? 0 : line_after(doc, (unsigned)after);
        int needs_break = at == doc->text.len && at > 0 && doc->text.data[at - 1] != '\n';
        akg_buf h;
        akg_buf_init(&h, 1 << 16);
        if (needs_break)
            akg_buf_puts(&h, "\n");
        akg_buf_puts(&h, after < 0 ? HELPERS + 2 : HELPERS);
        /* two blank lines before what follows, as after any top-level def */
        unsigned blanks = 0;
        for (unsigned r = after < 0 ? 0 : (unsigned)after + 1; r < doc->n_lines && blanks < 2;
             r++) {
            size_t n;
            const char *t = akg_lsp_doc_line(doc, r, &n);
            if (indent_of(t, n) != n)
                break;
            blanks++;
        }
        if (at < doc->text.len)
            for (; blanks < 2; blanks++)
                akg_buf_puts(&h, "\n");
        add_edit(s, doc, edits, at, at, h.data ? h.data : "");
        akg_buf_free(&h);
    }
    return 1;
}

static void apply_answered(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                           long long job_id)
{
    const cJSON *applied = cJSON_GetObjectItemCaseSensitive(result, "applied");
    if (error || !cJSON_IsTrue(applied)) {
        const char *why = akg_lsp_param_string(result, "failureReason");
        if (!why)
            why = akg_lsp_param_string(error, "message");
        akg_lsp_show_message(s, 2, "akg: the editor did not apply the kernel of job %lld%s%s",
                             job_id, why ? ": " : "", why ? why : "");
    }
}

/* Sends the workspace/applyEdit for e; 0 with a message when it cannot. */
static int send_edit(akg_lsp_server *s, selection *e, char *label, size_t labellen, char *err,
                     size_t errlen)
{
    if (!s->caps.apply_edit)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "the editor does not take workspace/applyEdit; import %s by hand",
                        e->model_new),
               0;
    akg_lsp_documents tmp = {0};
    akg_lsp_document *doc = document_for(s, e->uri, e->path, &tmp, err, errlen);
    if (!doc) {
        akg_lsp_docs_free(&tmp);
        return 0;
    }
    cJSON *edits = cJSON_CreateArray();
    if (!build_edits(s, e, doc, edits, label, labellen, err, errlen)) {
        cJSON_Delete(edits);
        akg_lsp_docs_free(&tmp);
        return 0;
    }
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "label", label);
    int open = akg_lsp_doc_find_path(&s->docs, e->path) == doc;
    /* versioned where the editor takes it: it refuses the edit if the document moved on */
    cJSON_AddItemToObject(p, "edit",
                          akg_lsp_doc_workspace_edit(doc, edits, s->caps.document_changes && open));
    akg_lsp_docs_free(&tmp);
    akg_lsp_log_info("job %lld: %s (%s)", e->job_id, label, e->model_new);
    akg_lsp_request(s, "workspace/applyEdit", p, apply_answered, e->job_id);
    return 1;
}

int akg_lsp_selection_use(akg_lsp_server *s, const cJSON *arg, cJSON **result, char *err,
                          size_t errlen)
{
    if (!cJSON_IsObject(arg))
        return akg_fail(err, errlen, AKG_EINVAL, "akg.useGeneratedKernel takes {uri, jobId?}"),
               AKG_RPC_INVALID_PARAMS;
    const char *uri = akg_lsp_param_string(arg, "uri");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(arg, "jobId");
    if (!uri || (id && !cJSON_IsNumber(id) && !cJSON_IsNull(id)))
        return akg_fail(err, errlen, AKG_EINVAL, "uri must be a string and jobId a number"),
               AKG_RPC_INVALID_PARAMS;
    char *path = akg_lsp_uri_to_path(uri);
    if (!path)
        return akg_fail(err, errlen, AKG_EINVAL, "%s is not a file:// URI", uri),
               AKG_RPC_INVALID_PARAMS;
    selection *found = NULL;
    for (selection *e = s->selections; e && !found; e = e->next)
        if (e->state == SEL_READY && strcmp(e->path, path) == 0 &&
            (!cJSON_IsNumber(id) || e->job_id == (long long)id->valuedouble))
            found = e; /* the newest first */
    if (!found) {
        akg_fail(err, errlen, AKG_ENOTFOUND,
                 "no verified kernel from a selection of %s%s; run \"Generate kernel for this\" "
                 "first",
                 path, cJSON_IsNumber(id) ? " with that job id" : "");
        free(path);
        return AKG_RPC_REQUEST_FAILED;
    }
    free(path);
    if (akg_lsp_check_trusted(s, found->path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    char label[400];
    if (!send_edit(s, found, label, sizeof label, err, errlen))
        return AKG_RPC_REQUEST_FAILED;
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "label", label);
    *result = out;
    return 0;
}

/* ---- a job from a selection ended -------------------------------------------------- */

static void use_answered(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                         long long job_id)
{
    const char *title = akg_lsp_param_string(result, "title");
    if (error || !title || strcmp(title, USE_TITLE) != 0)
        return;
    selection *e = selection_by_job(s, job_id);
    char err[1024] = "", label[400];
    if (!e || e->state != SEL_READY)
        akg_lsp_show_message(s, 2, "akg: the kernel of job %lld is no longer known", job_id);
    else if (!send_edit(s, e, label, sizeof label, err, sizeof err))
        akg_lsp_show_message(s, 2, "akg: %s", err);
}

void akg_lsp_selection_job_done(akg_lsp_server *s, long long job_id, const char *model_new,
                                double speedup)
{
    selection *e = selection_by_job(s, job_id);
    if (!e)
        return;
    if (!model_new) {
        selection_unlink(s, e);
        selection_free(e);
        return;
    }
    e->state = SEL_READY;
    e->model_new = akg_strdup(model_new);
    e->speedup = speedup;
    if (s->state != AKG_LSP_RUNNING)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "type", 3);
    char msg[600];
    if (isnan(speedup))
        snprintf(msg, sizeof msg, "akg: the kernel for %s is verified.", e->name);
    else
        snprintf(msg, sizeof msg, "akg: the kernel for %s is verified (%.2fx%s).", e->name, speedup,
                 speedup < 1.0 ? ", slower than PyTorch" : "");
    cJSON_AddStringToObject(p, "message", msg);
    cJSON *actions = cJSON_AddArrayToObject(p, "actions");
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", USE_TITLE);
    cJSON_AddItemToArray(actions, a);
    akg_lsp_request(s, "window/showMessageRequest", p, use_answered, job_id);
}

const char *akg_lsp_selection_model_uri(akg_lsp_server *s, long long job_id)
{
    selection *e = selection_by_job(s, job_id);
    return e ? e->uri : NULL;
}

void akg_lsp_selection_diagnostics(akg_lsp_server *s, akg_lsp_document *doc, cJSON *list)
{
    if (!doc->path)
        return;
    for (selection *e = s->selections; e; e = e->next) {
        if (e->state != SEL_FAILED || strcmp(e->path, doc->path) != 0)
            continue;
        char hash[65];
        akg_sha256_hex(doc->text.data ? doc->text.data : "", doc->text.len, hash);
        if (strcmp(hash, e->hash) != 0)
            return;     /* the text changed: the failure may be fixed */
        if (e->needs) { /* at each unknown's name */
            akg_lsp_ask_diagnostics(s, doc, e->needs, e->range, list);
            return;
        }
        cJSON *d = cJSON_CreateObject();
        cJSON_AddItemToObject(d, "range", akg_lsp_doc_range_json(doc, s->encoding, e->range));
        cJSON_AddNumberToObject(d, "severity", 1);
        cJSON_AddStringToObject(d, "code", e->code);
        cJSON_AddStringToObject(d, "source", "akg");
        cJSON_AddStringToObject(d, "message", e->message);
        cJSON_AddItemToArray(list, d);
        return;
    }
}
