/*
 * carry.c: the top-level code of a Python file that other code needs (see
 * akg/task_carry.h).
 *
 * model_new.py is written to stand alone, as the reference's file does: it
 * rebuilds Model's constructor (its defaults and body), so what they read
 * from the reference's module comes along by copy, not by importing the
 * reference. An import would tie the kernel to the reference's path and run
 * its module code (sample calls, prints) wherever ModelNew goes; a copy is
 * what the user reads and can edit, and it is what the TaskConstructor
 * already put into a constructed reference.
 *
 * The tracing is the TaskConstructor's (constructor.c): a top-level
 * statement is needed when it binds a name that needed code reads (an
 * identifier, not an attribute name or a keyword), imports and definitions
 * inside a top-level try/if included (an optional jaxtyping import), the
 * `if __name__ == "__main__":` block never; what it reads is needed in turn.
 * An nn.Module class comes without its forward: ModelNew never calls it (its
 * kernel computes Model's whole forward), and the harness refuses torch
 * compute anywhere in model_new.py but in a module's constructor; what only
 * forward reads stays behind with it. Methods the constructor may call stay.
 * A top-level assignment that builds one of the file's classes is sample
 * code (model = Block(64)), not a constant, and stays behind, as does any
 * statement that reads what ModelNew replaces (Model, get_inputs, ...).
 * Reads are collected without scopes: a local that shares a top-level name
 * brings that definition along too, which costs some lines, never a wrong
 * result.
 */
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "akg/task_carry.h"

const TSLanguage *tree_sitter_python(void);

#define CARRY_MAX_NAMES 512
#define CARRY_MAX_TOP 2048

typedef struct {
    const char *src;
    TSNode top[CARRY_MAX_TOP];
    size_t ntop;
    unsigned char included[CARRY_MAX_TOP];
    char *names[CARRY_MAX_NAMES]; /* needed names, owned */
    size_t nnames;
    const char *const *skip;
    size_t nskip;
} carry;

static int is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

static TSNode field(TSNode n, const char *name)
{
    return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

static int text_is(const char *src, TSNode n, const char *s, size_t len)
{
    if (ts_node_is_null(n))
        return 0;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    return b - a == len && memcmp(src + a, s, len) == 0;
}

static int listed(char *const *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
            return 1;
    return 0;
}

static int skipped(const carry *c, const char *s, size_t len)
{
    return listed((char *const *)c->skip, c->nskip, s, len);
}

/* Adds the name src[a..b) to the needed names; AKG_ENOMEM when out of memory. */
static int need(carry *c, const char *s, size_t len)
{
    if (listed(c->names, c->nnames, s, len) || c->nnames >= CARRY_MAX_NAMES)
        return AKG_OK;
    char *copy = malloc(len + 1);
    if (!copy)
        return AKG_ENOMEM;
    memcpy(copy, s, len);
    copy[len] = '\0';
    c->names[c->nnames++] = copy;
    return AKG_OK;
}

/* Every identifier n reads, in src (attribute and keyword names are not reads). */
static int need_reads(carry *c, const char *src, TSNode n)
{
    if (is(n, "identifier"))
        return need(c, src + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
    if (is(n, "attribute"))
        return need_reads(c, src, field(n, "object"));
    if (is(n, "keyword_argument"))
        return need_reads(c, src, field(n, "value"));
    if (is(n, "comment"))
        return AKG_OK;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        if (need_reads(c, src, ts_node_named_child(n, i)) != AKG_OK)
            return AKG_ENOMEM;
    return AKG_OK;
}

/* Whether the top-level statement st binds name (as the TaskConstructor's binds()). */
static int binds(const carry *c, TSNode st, const char *name, size_t len)
{
    TSNode d = is(st, "decorated_definition") ? field(st, "definition") : st;
    if (is(d, "try_statement") || is(d, "if_statement") || is(d, "block") ||
        is(d, "except_clause") || is(d, "else_clause") || is(d, "elif_clause") ||
        is(d, "finally_clause")) {
        TSNode cond = field(d, "condition");
        if (!ts_node_is_null(cond)) {
            uint32_t a = ts_node_start_byte(cond), b = ts_node_end_byte(cond);
            for (uint32_t i = a; i + 8 <= b; i++)
                if (memcmp(c->src + i, "__name__", 8) == 0)
                    return 0; /* the sample code under if __name__ == "__main__" */
        }
        uint32_t k = ts_node_named_child_count(d);
        for (uint32_t i = 0; i < k; i++)
            if (binds(c, ts_node_named_child(d, i), name, len))
                return 1;
        return 0;
    }
    if (is(d, "function_definition") || is(d, "class_definition"))
        return text_is(c->src, field(d, "name"), name, len);
    if (is(d, "import_statement") || is(d, "import_from_statement")) {
        uint32_t k = ts_node_named_child_count(d);
        for (uint32_t i = is(d, "import_from_statement") ? 1 : 0; i < k; i++) {
            TSNode ch = ts_node_named_child(d, i);
            if (is(ch, "aliased_import") && text_is(c->src, field(ch, "alias"), name, len))
                return 1;
            if (is(ch, "dotted_name") && text_is(c->src, ts_node_named_child(ch, 0), name, len))
                return 1;
        }
        return 0;
    }
    if (is(d, "expression_statement")) {
        TSNode a = ts_node_named_child(d, 0);
        if (is(a, "assignment")) {
            TSNode l = field(a, "left");
            if (is(l, "identifier"))
                return text_is(c->src, l, name, len);
            uint32_t k = ts_node_named_child_count(l);
            for (uint32_t i = 0; i < k; i++)
                if (text_is(c->src, ts_node_named_child(l, i), name, len))
                    return 1;
        }
    }
    return 0;
}

/* The name a definition's top-level statement defines, for the skip list; 1 when skipped. */
static int defines_skipped(const carry *c, TSNode st)
{
    for (size_t i = 0; i < c->nskip; i++)
        if (binds(c, st, c->skip[i], strlen(c->skip[i])))
            return 1;
    return 0;
}

/* Whether n reads a skipped name or builds one of the file's classes (sample code). */
static int reads_left_behind(const carry *c, TSNode n, int in_call)
{
    if (is(n, "identifier")) {
        const char *s = c->src + ts_node_start_byte(n);
        size_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
        if (skipped(c, s, len))
            return 1;
        if (!in_call)
            return 0;
        for (size_t t = 0; t < c->ntop; t++) {
            TSNode d = c->top[t];
            d = is(d, "decorated_definition") ? field(d, "definition") : d;
            if (is(d, "class_definition") && text_is(c->src, field(d, "name"), s, len))
                return 1;
        }
        return 0;
    }
    if (is(n, "attribute"))
        return reads_left_behind(c, field(n, "object"), 0);
    if (is(n, "call") && reads_left_behind(c, field(n, "function"), 1))
        return 1;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (is(n, "call") && ts_node_eq(ch, field(n, "function")))
            continue;
        if (reads_left_behind(c, ch, 0))
            return 1;
    }
    return 0;
}

/* Whether cls is an nn.Module subclass: a base spelt ...Module, or a class of the file that is. */
static int is_module_class(const carry *c, TSNode cls, int depth)
{
    TSNode bases = field(cls, "superclasses");
    uint32_t k = ts_node_is_null(bases) || depth > 6 ? 0 : ts_node_named_child_count(bases);
    for (uint32_t i = 0; i < k; i++) {
        TSNode b = ts_node_named_child(bases, i);
        uint32_t s = ts_node_start_byte(b), e = ts_node_end_byte(b);
        if (e - s >= 6 && memcmp(c->src + e - 6, "Module", 6) == 0)
            return 1;
        for (size_t t = 0; t < c->ntop; t++) {
            TSNode d = c->top[t];
            d = is(d, "decorated_definition") ? field(d, "definition") : d;
            if (is(d, "class_definition") && text_is(c->src, field(d, "name"), c->src + s, e - s) &&
                is_module_class(c, d, depth + 1))
                return 1;
        }
    }
    return 0;
}

/* The forward method of a top-level nn.Module class st, or a null node. ModelNew never calls a
 * carried module's forward (its kernel computes Model's whole forward), and the harness refuses
 * torch compute anywhere in model_new.py but a module's constructor, so forward stays behind,
 * with what only it reads. */
static TSNode module_forward(const carry *c, TSNode st)
{
    TSNode none = {0};
    TSNode d = is(st, "decorated_definition") ? field(st, "definition") : st;
    if (!is(d, "class_definition") || !is_module_class(c, d, 0))
        return none;
    TSNode body = field(d, "body");
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode m = ts_node_named_child(body, i);
        TSNode f = is(m, "decorated_definition") ? field(m, "definition") : m;
        if (is(f, "function_definition") && text_is(c->src, field(f, "name"), "forward", 7))
            return m;
    }
    return none;
}

/* need_reads of a top-level statement, but its module's forward. */
static int statement_reads(carry *c, TSNode st)
{
    TSNode fwd = module_forward(c, st);
    if (ts_node_is_null(fwd))
        return need_reads(c, c->src, st);
    TSNode d = is(st, "decorated_definition") ? field(st, "definition") : st;
    uint32_t k = ts_node_eq(st, d) ? 0 : ts_node_named_child_count(st); /* decorators */
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(st, i);
        if (!ts_node_eq(ch, d) && need_reads(c, c->src, ch) != AKG_OK)
            return AKG_ENOMEM;
    }
    if (need_reads(c, c->src, field(d, "superclasses")) != AKG_OK)
        return AKG_ENOMEM;
    TSNode body = field(d, "body");
    k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode m = ts_node_named_child(body, i);
        if (!ts_node_eq(m, fwd) && need_reads(c, c->src, m) != AKG_OK)
            return AKG_ENOMEM;
    }
    return AKG_OK;
}

/* Writes the top-level statement st, from its line's start, its module's forward replaced by a
 * comment that says why (and `pass` when nothing else is left in the class). */
static void write_statement(const carry *c, TSNode st, akg_buf *out)
{
    uint32_t a = ts_node_start_byte(st), b = ts_node_end_byte(st);
    while (a > 0 && c->src[a - 1] != '\n')
        a--;
    TSNode fwd = module_forward(c, st);
    if (ts_node_is_null(fwd)) {
        akg_buf_append(out, c->src + a, b - a);
        akg_buf_puts(out, "\n");
        return;
    }
    uint32_t fa = ts_node_start_byte(fwd), fb = ts_node_end_byte(fwd);
    uint32_t col = ts_node_start_point(fwd).column;
    while (fa > a && c->src[fa - 1] != '\n')
        fa--;
    while (fb < b && c->src[fb] != '\n')
        fb++;
    TSNode d = is(st, "decorated_definition") ? field(st, "definition") : st;
    int alone = 1;
    TSNode body = field(d, "body");
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode m = ts_node_named_child(body, i);
        alone &= ts_node_eq(m, fwd) || is(m, "comment");
    }
    akg_buf_append(out, c->src + a, fa - a);
    akg_buf_appendf(out,
                    "%*s# forward() is not carried: ModelNew's kernel computes the whole "
                    "forward\n",
                    (int)col, "");
    if (alone)
        akg_buf_appendf(out, "%*spass\n", (int)col, "");
    if (fb < b) {
        akg_buf_append(out, c->src + fb + 1, b - fb - 1);
        akg_buf_puts(out, "\n");
    }
}

static int is_definition(TSNode st)
{
    TSNode d = is(st, "decorated_definition") ? field(st, "definition") : st;
    return is(d, "function_definition") || is(d, "class_definition");
}

int akg_python_carry(const char *source, size_t len, const char *const *roots, size_t nroots,
                     const char *const *skip, size_t nskip, akg_buf *out)
{
    carry *c = calloc(1, sizeof *c);
    TSParser *parser = ts_parser_new();
    if (!c || !parser) {
        free(c);
        if (parser)
            ts_parser_delete(parser);
        return AKG_ENOMEM;
    }
    ts_parser_set_language(parser, tree_sitter_python());
    c->src = source;
    c->skip = skip;
    c->nskip = nskip;
    int rc = AKG_OK;
    /* The roots' reads, each text parsed on its own. */
    for (size_t r = 0; r < nroots && rc == AKG_OK; r++) {
        if (!roots[r])
            continue;
        TSTree *t = ts_parser_parse_string(parser, NULL, roots[r], (uint32_t)strlen(roots[r]));
        if (!t)
            continue;
        rc = need_reads(c, roots[r], ts_tree_root_node(t));
        ts_tree_delete(t);
    }
    TSTree *tree =
        rc == AKG_OK ? ts_parser_parse_string(parser, NULL, source, (uint32_t)len) : NULL;
    int written = 0;
    if (tree) {
        TSNode root = ts_tree_root_node(tree);
        uint32_t k = ts_node_named_child_count(root);
        for (uint32_t i = 0; i < k && c->ntop < CARRY_MAX_TOP; i++)
            c->top[c->ntop++] = ts_node_named_child(root, i);
        /* The closure: each needed name's statements, whose reads are needed in turn. */
        for (size_t n = 0; n < c->nnames && rc == AKG_OK; n++) {
            const char *name = c->names[n];
            size_t nl = strlen(name);
            if (skipped(c, name, nl))
                continue;
            for (size_t t = 0; t < c->ntop && rc == AKG_OK; t++) {
                if (c->included[t] || !binds(c, c->top[t], name, nl) ||
                    defines_skipped(c, c->top[t]) || reads_left_behind(c, c->top[t], 0))
                    continue;
                c->included[t] = 1;
                rc = statement_reads(c, c->top[t]);
            }
        }
        for (size_t t = 0; t < c->ntop && rc == AKG_OK; t++) {
            if (!c->included[t])
                continue;
            if (written && is_definition(c->top[t]))
                akg_buf_puts(out, "\n\n");
            write_statement(c, c->top[t], out);
            written++;
        }
        ts_tree_delete(tree);
    }
    ts_parser_delete(parser);
    for (size_t i = 0; i < c->nnames; i++)
        free(c->names[i]);
    free(c);
    if (rc == AKG_OK && akg_buf_status(out))
        rc = AKG_ENOMEM;
    return rc == AKG_OK ? written : rc;
}
