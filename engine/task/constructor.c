/*
 * constructor.c: the TaskConstructor. A selection in any Python file becomes
 * a self-contained KernelBench-form reference (Model, get_inputs,
 * get_init_inputs and, for hinted dynamic shapes, get_inputs_dyn_list).
 *
 * What is selected decides the Model (tree-sitter-python, nothing is run):
 *   - an nn.Module subclass: the class itself, renamed Model;
 *   - a top-level function: a Model whose forward calls it;
 *   - statements inside a forward: a Model with the enclosing class's
 *     __init__ and helpers, whose forward runs those statements on the
 *     variables they read (defined before them) and returns what they define
 *     that later code reads (or their return value).
 * The code it needs comes along: every top-level import, constant, function
 * and class whose name the selection (or what it pulls in) reads.
 *
 * Shapes are never guessed. An input's shape comes from, in this order, a
 * shape comment (`# akg: x: f32[B, 4096]`, an integer tensor may add
 * `< BOUND`), an annotation (`x: "f32[B, 4096]"` or jaxtyping
 * `Float[Tensor, "B 4096"]`), or a sample call in the file (`fn(torch.randn(8,
 * 64))`, `m = Block(64); m(x)` with x assigned before). Symbols take their
 * values from `# akg: B = 32`, from top-level constants, or from hint comments
 * (`# @hint: M in range(16, 65536)`, `in [a, b]`, `in pow2(a, b)`), which also
 * give get_inputs_dyn_list: the hint's cases, capped at 2048 so that each case
 * runs in milliseconds on a CPU (the user edits the saved file to widen them).
 * How the module is constructed comes from a call `Block(...)` in the file
 * whose arguments are known (literals, constants, variables assigned before),
 * from `# akg: init = [...]`, or from __init__'s defaults. An input that is a
 * number takes `# akg: temperature = 0.5`. What stays unknown fails with the
 * variable, its line and the comment that would fix it; akg_task_construct_needs
 * also lists every unknown (shapes, symbols, the constructor's arguments) and
 * where their comments go, so that the editor and the terminal can ask for
 * them all at once (needs.c words the questions and checks the answers). A
 * shape comment that still holds a `?` (a placeholder the editor inserted)
 * is unknown, not a shape.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "akg/akg.h"
#include "akg/task_constructor.h"

const TSLanguage *tree_sitter_python(void);

#define MAX_NAMES 256
#define MAX_SPECS 64
#define MAX_HINT_VALUES 8
#define DYN_CAP 2048

typedef struct {
    char *name, *dtype, *dims, *bound; /* dims: the text inside [...] */
    unsigned row;
} shape_spec;

typedef struct {
    char *name, *value; /* value: a Python expression */
    long cases[MAX_HINT_VALUES];
    int ncases; /* > 0 for a hint */
    unsigned row;
} symbol_value;

typedef struct {
    char *name;
    char *dtype, *dims, *bound; /* from a spec or annotation; NULL when unknown */
    char *default_text;
    const char *value; /* a number given by `# akg: name = 3` (not a tensor) */
    int local;         /* a local of forward read by selected statements */
    unsigned row;
    unsigned placeholder_row; /* 1-based line of its shape comment that still holds `?` */
} input_param;

typedef struct {
    const char *src;
    size_t len;
    const char *path;
    TSNode root;
    char *err;
    size_t errlen;
    TSNode top[1024];
    size_t ntop;
    int included[1024];
    const char *needed[MAX_NAMES]; /* borrowed or owned by owned[] */
    size_t nneeded;
    char **owned; /* every string made here, freed at the end */
    size_t nowned, owned_cap;
    shape_spec specs[MAX_SPECS];
    size_t nspecs;
    symbol_value syms[MAX_SPECS];
    size_t nsyms;
    int selected_top;      /* index in top[] of the selection's definition */
    akg_task_needs *needs; /* what the user must tell, when something is unknown */
    unsigned comment_row;  /* 0-based row the `# akg:` lines answering needs go above */
} ctor;

/* Which line of the file each line of a buffer comes from (1-based; 0: written by akg), so
 * that what goes wrong when the reference runs is told at the user's line. */
typedef struct {
    unsigned *rows;
    size_t n, cap;
    size_t seen; /* bytes of the buffer already mapped */
    int failed;
} line_map;

/* Maps the lines the buffer gained since the last mark to row, row + step, ... (row 1-based;
 * 0 maps them all to nothing). */
static void map_mark(line_map *m, const akg_buf *b, unsigned row, unsigned step)
{
    for (size_t i = m->seen; i < b->len; i++) {
        if (b->data[i] != '\n')
            continue;
        if (m->n == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 128;
            unsigned *grown = realloc(m->rows, cap * sizeof *grown);
            if (!grown) {
                m->failed = 1;
                break;
            }
            m->rows = grown;
            m->cap = cap;
        }
        m->rows[m->n++] = row;
        row += row ? step : 0;
    }
    m->seen = b->len;
}

/* Appends the map of a buffer appended whole to the one dst maps (after a mark). */
static void map_append(line_map *dst, const akg_buf *b, const line_map *src)
{
    size_t start = dst->n;
    map_mark(dst, b, 0, 0);
    for (size_t i = 0; i < src->n && start + i < dst->n; i++)
        dst->rows[start + i] = src->rows[i];
}

/* ---- small helpers ---- */

static char *own(ctor *c, char *s)
{
    if (!s)
        return NULL;
    if (c->nowned == c->owned_cap) {
        size_t cap = c->owned_cap ? c->owned_cap * 2 : 256;
        char **grown = realloc(c->owned, cap * sizeof *grown);
        if (!grown) {
            free(s);
            return NULL;
        }
        c->owned = grown;
        c->owned_cap = cap;
    }
    c->owned[c->nowned++] = s;
    return s;
}

static char *text_of(ctor *c, TSNode n)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    static char empty[1];
    char *p = malloc(e - s + 1);
    if (!p)
        return empty; /* out of memory: the name matches nothing, the caller goes on */
    memcpy(p, c->src + s, e - s);
    p[e - s] = '\0';
    p = own(c, p);
    return p ? p : empty;
}

static char *dup_range(ctor *c, const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return own(c, p);
}

static int is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

static int text_is(ctor *c, TSNode n, const char *s)
{
    if (ts_node_is_null(n))
        return 0;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    return b - a == strlen(s) && memcmp(c->src + a, s, b - a) == 0;
}

static TSNode field(TSNode n, const char *name)
{
    return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

static TSNode unwrap(TSNode n)
{
    if (is(n, "decorated_definition"))
        return field(n, "definition");
    return n;
}

static unsigned line_of(TSNode n)
{
    return ts_node_start_point(n).row + 1;
}

/* Records that the user must tell kind of name (named at 0-based row), once. */
static void add_need(ctor *c, akg_task_need_kind kind, const char *name, const char *owner,
                     unsigned row, int placeholder)
{
    akg_task_needs *nd = c->needs;
    for (size_t i = 0; i < nd->n; i++)
        if (nd->items[i].kind == kind && !strcmp(nd->items[i].name, name))
            return;
    if (nd->n >= AKG_TASK_NEEDS_CAP)
        return;
    akg_task_need *e = &nd->items[nd->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->owner, sizeof e->owner, "%s", owner ? owner : "");
    e->line = row + 1;
    e->placeholder = placeholder;
    /* the name's first whole-word occurrence on its line */
    const char *p = c->src, *end = c->src + c->len;
    for (unsigned r = 0; r < row && p < end; r++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
        eol = end;
    size_t n = strlen(name);
    for (const char *q = p; n && q + n <= eol; q++) {
        int before = q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_');
        int after = q + n < eol && (isalnum((unsigned char)q[n]) || q[n] == '_');
        if (!before && !after && !memcmp(q, name, n)) {
            e->col = (unsigned)(q - p);
            e->end_col = e->col + (unsigned)n;
            return;
        }
    }
}

/* ---- top-level bindings and reads ---- */

/* Calls fn on each name a top-level statement binds. */
static int binds(ctor *c, TSNode st, const char *name)
{
    TSNode d = unwrap(st);
    if (is(d, "try_statement") || is(d, "if_statement") || is(d, "block") ||
        is(d, "except_clause") || is(d, "else_clause") || is(d, "elif_clause")) {
        /* try: from jaxtyping import Float / except ImportError: Float = ... */
        TSNode cond = field(d, "condition");
        if (!ts_node_is_null(cond) && strstr(text_of(c, cond), "__name__"))
            return 0; /* the sample code under if __name__ == "__main__" */
        uint32_t k = ts_node_named_child_count(d);
        for (uint32_t i = 0; i < k; i++)
            if (binds(c, ts_node_named_child(d, i), name))
                return 1;
        return 0;
    }
    if (is(d, "function_definition") || is(d, "class_definition"))
        return text_is(c, field(d, "name"), name);
    if (is(d, "import_statement") || is(d, "import_from_statement")) {
        uint32_t k = ts_node_named_child_count(d);
        for (uint32_t i = 0; i < k; i++) {
            TSNode ch = ts_node_named_child(d, i);
            if (is(d, "import_from_statement") && i == 0)
                continue; /* the module name */
            if (is(ch, "aliased_import")) {
                if (text_is(c, field(ch, "alias"), name))
                    return 1;
            } else if (is(ch, "dotted_name")) {
                if (text_is(c, ts_node_named_child(ch, 0), name))
                    return 1;
            }
        }
        return 0;
    }
    if (is(d, "expression_statement")) {
        TSNode a = ts_node_named_child(d, 0);
        if (is(a, "assignment")) {
            TSNode l = field(a, "left");
            if (is(l, "identifier"))
                return text_is(c, l, name);
            uint32_t k = ts_node_named_child_count(l);
            for (uint32_t i = 0; i < k; i++)
                if (text_is(c, ts_node_named_child(l, i), name))
                    return 1;
        }
    }
    return 0;
}

static int top_binding(ctor *c, const char *name)
{
    for (size_t i = 0; i < c->ntop; i++)
        if (binds(c, c->top[i], name))
            return (int)i;
    return -1;
}

static int name_listed(const char **list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], name))
            return 1;
    return 0;
}

static void need(ctor *c, const char *name)
{
    if (!name_listed(c->needed, c->nneeded, name) && c->nneeded < MAX_NAMES)
        c->needed[c->nneeded++] = name;
}

/* Every identifier n reads (attribute names and keyword names are not reads). */
static void collect_reads(ctor *c, TSNode n, const char **out, size_t *nout, size_t cap)
{
    if (is(n, "identifier")) {
        char *t = text_of(c, n);
        if (!name_listed(out, *nout, t) && *nout < cap)
            out[(*nout)++] = t;
        return;
    }
    if (is(n, "attribute")) {
        collect_reads(c, field(n, "object"), out, nout, cap);
        return;
    }
    if (is(n, "keyword_argument")) {
        collect_reads(c, field(n, "value"), out, nout, cap);
        return;
    }
    if (is(n, "comment") || is(n, "string"))
        return;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        collect_reads(c, ts_node_named_child(n, i), out, nout, cap);
}

static void need_reads(ctor *c, TSNode n)
{
    const char *names[MAX_NAMES];
    size_t k = 0;
    collect_reads(c, n, names, &k, MAX_NAMES);
    for (size_t i = 0; i < k; i++)
        need(c, names[i]);
}

static int defines_local_code(ctor *c, TSNode st)
{
    /* A top-level assignment that calls a class or function of this file is sample code
     * (model = Block(64); y = model(x)); it is not a constant the selection needs. */
    TSNode d = unwrap(st);
    if (!is(d, "expression_statement") || !is(ts_node_named_child(d, 0), "assignment"))
        return 0;
    const char *names[MAX_NAMES];
    size_t k = 0;
    collect_reads(c, field(ts_node_named_child(d, 0), "right"), names, &k, MAX_NAMES);
    for (size_t i = 0; i < k; i++) {
        int t = top_binding(c, names[i]);
        if (t >= 0 && (is(unwrap(c->top[t]), "function_definition") ||
                       is(unwrap(c->top[t]), "class_definition")))
            return 1;
    }
    return 0;
}

/* Marks every top-level statement the needed names come from, transitively. */
static void close_dependencies(ctor *c)
{
    for (size_t i = 0; i < c->nneeded; i++) {
        for (size_t t = 0; t < c->ntop; t++) {
            if ((int)t == c->selected_top || c->included[t] || !binds(c, c->top[t], c->needed[i]))
                continue;
            if (defines_local_code(c, c->top[t]))
                continue;
            c->included[t] = 1;
            need_reads(c, c->top[t]);
        }
    }
}

/* ---- comments: shapes, symbol values, hints ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int parse_hint_cases(const char *e, long *cases)
{
    long a, b, s = 1;
    int n = 0;
    if (sscanf(e, "range ( %ld , %ld , %ld )", &a, &b, &s) >= 2 ||
        sscanf(e, "range(%ld,%ld,%ld)", &a, &b, &s) >= 2) {
        if (b <= a || s <= 0)
            return 0;
        long hi = b - 1 - (b - 1 - a) % s;
        long cap = hi < DYN_CAP ? hi : (a > DYN_CAP ? a : DYN_CAP - (DYN_CAP - a) % s);
        long mid = a + ((cap - a) / 2 / s) * s;
        if (s == 1 && mid % 2 == 0 && mid + 1 <= cap)
            mid++; /* an odd size exercises the tails */
        cases[n++] = a;
        if (mid > a)
            cases[n++] = mid;
        if (cap > mid && cap > a)
            cases[n++] = cap;
        return n;
    }
    if (sscanf(e, "pow2 ( %ld , %ld )", &a, &b) == 2 || sscanf(e, "pow2(%ld,%ld)", &a, &b) == 2) {
        long p = 1;
        while (p < a)
            p *= 2;
        long all[64];
        int k = 0;
        for (; p <= b && p <= DYN_CAP && k < 64; p *= 2)
            all[k++] = p;
        if (k == 0)
            return 0;
        cases[n++] = all[0];
        if (k > 2)
            cases[n++] = all[k / 2];
        if (k > 1)
            cases[n++] = all[k - 1];
        return n;
    }
    if (*e == '[') {
        const char *p = e + 1;
        while (*p && *p != ']' && n < MAX_HINT_VALUES) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p)
                return 0;
            cases[n++] = v;
            p = end;
            while (*p == ',' || isspace((unsigned char)*p))
                p++;
        }
        return n;
    }
    return 0;
}

static void add_symbol(ctor *c, char *name, char *value, unsigned row, int hint)
{
    if (c->nsyms >= MAX_SPECS || strchr(value, '?'))
        return; /* a placeholder left to fill is no value */
    symbol_value *s = &c->syms[c->nsyms];
    memset(s, 0, sizeof *s);
    s->name = own(c, akg_strdup(name));
    s->row = row;
    if (hint) {
        s->ncases = parse_hint_cases(value, s->cases);
        if (s->ncases == 0)
            return;
        char buf[32];
        snprintf(buf, sizeof buf, "%ld", s->cases[s->ncases / 2]);
        s->value = own(c, akg_strdup(buf));
    } else {
        s->value = own(c, akg_strdup(value));
    }
    c->nsyms++;
}

/* One entry of `# akg:` (or `# @hint:`): "x: f32[B, 4096] < 10", "B = 32", "M in range(..)". */
static void parse_comment_entry(ctor *c, char *e, unsigned row, int hint)
{
    e = trim(e);
    char *in = strstr(e, " in ");
    char *colon = strchr(e, ':');
    char *eq = strchr(e, '=');
    if (in && (!colon || in < colon)) {
        *in = '\0';
        add_symbol(c, trim(e), trim(in + 4), row, 1);
    } else if (colon && strchr(colon, '[') && (!eq || colon < eq)) {
        if (c->nspecs >= MAX_SPECS)
            return;
        *colon = '\0';
        char *rest = trim(colon + 1);
        char *open = strchr(rest, '['), *close = strrchr(rest, ']');
        if (!open || !close || close < open)
            return;
        *open = '\0';
        *close = '\0';
        shape_spec *s = &c->specs[c->nspecs++];
        s->name = own(c, akg_strdup(trim(e)));
        s->dtype = own(c, akg_strdup(trim(rest)));
        s->dims = own(c, akg_strdup(trim(open + 1)));
        char *lt = strchr(close + 1, '<');
        s->bound = lt ? own(c, akg_strdup(trim(lt + 1))) : NULL;
        s->row = row;
    } else if (eq) {
        *eq = '\0';
        char *v = trim(eq + 1);
        add_symbol(c, trim(e), v, row, hint || !strncmp(v, "pow2", 4));
    }
}

static void scan_comments(ctor *c)
{
    unsigned row = 0;
    const char *p = c->src, *end = c->src + c->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = dup_range(c, p, n);
        char *hash = line ? strchr(line, '#') : NULL;
        if (hash) {
            char *body = trim(hash + 1);
            int hint = !strncmp(body, "@hint:", 6);
            if (hint || !strncmp(body, "akg:", 4)) {
                char *rest = body + (hint ? 6 : 4);
                char *save = NULL;
                for (char *tok = strtok_r(rest, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
                    parse_comment_entry(c, tok, row, hint);
            }
        }
        row++;
        p = nl ? nl + 1 : end;
    }
}

static const shape_spec *spec_for(ctor *c, const char *name, unsigned lo, unsigned hi)
{
    /* The nearest spec in the selection's scope (lo..hi, 0-based rows), else any. */
    const shape_spec *any = NULL;
    for (size_t i = 0; i < c->nspecs; i++) {
        if (strcmp(c->specs[i].name, name))
            continue;
        if (c->specs[i].row + 8 >= lo && c->specs[i].row <= hi)
            return &c->specs[i];
        any = &c->specs[i];
    }
    return any;
}

static const symbol_value *symbol_for(ctor *c, const char *name)
{
    for (size_t i = 0; i < c->nsyms; i++)
        if (!strcmp(c->syms[i].name, name))
            return &c->syms[i];
    return NULL;
}

/* jaxtyping: Float[Tensor, "B 4096"]; or a string annotation "f32[B, 4096]". */
static void read_annotation(ctor *c, TSNode type, input_param *p)
{
    if (ts_node_is_null(type))
        return;
    TSNode t = ts_node_named_child(type, 0);
    if (is(t, "string")) {
        char *s = text_of(c, t);
        size_t n = strlen(s);
        if (n < 2)
            return;
        s[n - 1] = '\0';
        char *open = strchr(s + 1, '['), *close = strrchr(s + 1, ']');
        if (!open || !close)
            return;
        *open = *close = '\0';
        p->dtype = trim(s + 1);
        p->dims = trim(open + 1);
        return;
    }
    if (is(t, "subscript") || is(t, "generic_type")) {
        char *s = text_of(c, t);
        char *open = strchr(s, '['), *q1 = strchr(s, '"');
        char *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
        if (!open || !q1 || !q2)
            return;
        *open = '\0';
        *q2 = '\0';
        static const struct {
            const char *jax, *dtype;
        } kinds[] = {{"Float32", "f32"}, {"Float16", "f16"}, {"BFloat16", "bf16"},
                     {"Float64", "f64"}, {"Float", "f32"},   {"Int64", "i64"},
                     {"Int32", "i32"},   {"Int", "i64"},     {"Bool", "bool"}};
        const char *head = strrchr(s, '.') ? strrchr(s, '.') + 1 : s;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (!strcmp(head, kinds[i].jax)) {
                p->dtype = (char *)kinds[i].dtype;
                break;
            }
        if (!p->dtype)
            return;
        akg_buf dims; /* "B T 64" -> "B, T, 64" */
        akg_buf_init(&dims, 4096);
        char *save = NULL;
        for (char *w = strtok_r(q1 + 1, " ", &save); w; w = strtok_r(NULL, " ", &save))
            akg_buf_appendf(&dims, "%s%s", dims.len ? ", " : "", w);
        p->dims = own(c, akg_buf_take(&dims));
        if (!p->dims)
            p->dims = (char *)"";
    }
}

static void read_params(ctor *c, TSNode params, input_param *out, size_t *n, size_t cap)
{
    *n = 0;
    uint32_t k = ts_node_named_child_count(params);
    for (uint32_t i = 0; i < k && *n < cap; i++) {
        TSNode p = ts_node_named_child(params, i), name = p, type = {0}, value = {0};
        if (is(p, "default_parameter") || is(p, "typed_default_parameter")) {
            name = field(p, "name");
            value = field(p, "value");
            type = field(p, "type");
        } else if (is(p, "typed_parameter")) {
            name = ts_node_named_child(p, 0);
            type = field(p, "type");
        } else if (!is(p, "identifier")) {
            continue; /* *args, **kwargs */
        }
        if (text_is(c, name, "self"))
            continue;
        input_param *d = &out[(*n)++];
        memset(d, 0, sizeof *d);
        d->name = text_of(c, name);
        d->row = ts_node_start_point(p).row;
        d->default_text = ts_node_is_null(value) ? NULL : text_of(c, value);
        read_annotation(c, type, d);
    }
}

/* ---- sample calls: arguments known in the file ---- */

static TSNode assignment_before(ctor *c, TSNode at, const char *name)
{
    /* The last `name = ...` in an enclosing block before `at`. */
    uint32_t row = ts_node_start_point(at).row;
    for (TSNode up = ts_node_parent(at); !ts_node_is_null(up); up = ts_node_parent(up)) {
        if (!is(up, "block") && !is(up, "module"))
            continue;
        TSNode found = {0};
        uint32_t k = ts_node_named_child_count(up);
        for (uint32_t i = 0; i < k; i++) {
            TSNode st = ts_node_named_child(up, i);
            if (ts_node_start_point(st).row >= row)
                break;
            TSNode a = ts_node_named_child(st, 0);
            if (is(st, "expression_statement") && is(a, "assignment") &&
                text_is(c, field(a, "left"), name))
                found = field(a, "right");
        }
        if (!ts_node_is_null(found))
            return found;
    }
    TSNode none = {0};
    return none;
}

/* Appends n's text with every local variable replaced by its assigned value; 0 when a name is
 * not known in the file. */
static int resolve_into(ctor *c, TSNode n, akg_buf *b, int depth)
{
    if (depth > 4)
        return 0;
    if (is(n, "identifier")) {
        char *name = text_of(c, n);
        TSNode rhs = assignment_before(c, n, name);
        /* A top-level constant keeps its name (it comes along); other values are inlined, so
         * that every call of get_inputs draws fresh tensors. */
        int constant = !ts_node_is_null(rhs) &&
                       is(ts_node_parent(ts_node_parent(ts_node_parent(rhs))), "module") &&
                       (is(rhs, "integer") || is(rhs, "float") || is(rhs, "string") ||
                        is(rhs, "unary_operator"));
        if (!ts_node_is_null(rhs) && !constant) {
            /* Atoms go in as they are; an operator expression keeps its meaning in parentheses. */
            static const char *atoms[] = {
                "integer",   "float", "string", "identifier", "call",
                "attribute", "list",  "tuple",  "subscript",  "parenthesized_expression",
                "true",      "false", "none"};
            int atom = 0;
            for (size_t i = 0; i < sizeof atoms / sizeof atoms[0]; i++)
                atom |= is(rhs, atoms[i]);
            akg_buf_puts(b, atom ? "" : "(");
            int ok = resolve_into(c, rhs, b, depth + 1);
            akg_buf_puts(b, atom ? "" : ")");
            return ok;
        }
        if (top_binding(c, name) < 0 && strcmp(name, "True") && strcmp(name, "False") &&
            strcmp(name, "None"))
            return 0;
        need(c, name);
        akg_buf_puts(b, name);
        return 1;
    }
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n), pos = s;
    if (is(n, "attribute")) {
        TSNode obj = field(n, "object");
        if (!resolve_into(c, obj, b, depth))
            return 0;
        akg_buf_append(b, c->src + ts_node_end_byte(obj), e - ts_node_end_byte(obj));
        return 1;
    }
    if (is(n, "string") || is(n, "integer") || is(n, "float")) {
        akg_buf_append(b, c->src + s, e - s);
        return 1;
    }
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (is(n, "keyword_argument") && i == 0)
            continue;
        akg_buf_append(b, c->src + pos, ts_node_start_byte(ch) - pos);
        if (!resolve_into(c, ch, b, depth))
            return 0;
        pos = ts_node_end_byte(ch);
    }
    akg_buf_append(b, c->src + pos, e - pos);
    return 1;
}

static char *resolve(ctor *c, TSNode n)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    size_t saved = c->nneeded;
    if (!resolve_into(c, n, &b, 0)) {
        c->nneeded = saved;
        akg_buf_free(&b);
        return NULL;
    }
    return own(c, akg_buf_take(&b));
}

/* The resolved arguments of a call, in params' order (omitted trailing defaults). Returns a
 * Python list's inside ("a, b") or NULL when one is unknown. */
static char *call_arguments(ctor *c, TSNode call, const input_param *params, size_t np, int *count)
{
    TSNode args = field(call, "arguments");
    const char *vals[64] = {0};
    size_t npos = 0, last = 0;
    uint32_t k = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < k; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, "comment"))
            continue;
        const char *v = resolve(c, a);
        if (!v)
            return NULL;
        if (is(a, "keyword_argument")) {
            TSNode kn = field(a, "name");
            size_t j = 0;
            while (j < np && !text_is(c, kn, params[j].name))
                j++;
            if (j == np)
                return NULL;
            vals[j] = resolve(c, field(a, "value"));
            if (j + 1 > last)
                last = j + 1;
        } else if (npos < 64) {
            vals[npos++] = v;
            if (npos > last)
                last = npos;
        }
    }
    if (np == 0 && npos) /* *args: keep them as they are */
        last = npos;
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    for (size_t j = 0; j < last; j++) {
        const char *v = vals[j];
        if (!v && j < np && params[j].default_text)
            v = params[j].default_text;
        if (!v) {
            akg_buf_free(&b);
            return NULL;
        }
        akg_buf_appendf(&b, "%s%s", j ? ", " : "", v);
    }
    *count = (int)last;
    return own(c, akg_buf_take(&b));
}

typedef struct {
    const char *target; /* the function or class name */
    int is_class;
    TSNode skip;          /* the selected definition */
    const char *vars[16]; /* names bound to target(...) */
    size_t nvars;
    TSNode ctor_calls[16];
    size_t nctor;
    TSNode sample_calls[16];
    size_t nsample;
} call_search;

static int inside(TSNode n, TSNode outer)
{
    return !ts_node_is_null(outer) && ts_node_start_byte(n) >= ts_node_start_byte(outer) &&
           ts_node_end_byte(n) <= ts_node_end_byte(outer);
}

static void find_calls(ctor *c, TSNode n, call_search *s, int pass)
{
    if (inside(n, s->skip))
        return;
    if (is(n, "call")) {
        TSNode fn = field(n, "function");
        if (pass == 0 && text_is(c, fn, s->target)) {
            if (!s->is_class) {
                if (s->nsample < 16)
                    s->sample_calls[s->nsample++] = n;
            } else {
                if (s->nctor < 16)
                    s->ctor_calls[s->nctor++] = n;
                TSNode up = ts_node_parent(n);
                if (is(up, "call") && s->nsample < 16)
                    s->sample_calls[s->nsample++] = up; /* Block(64)(x) */
                if (is(up, "assignment") && s->nvars < 16)
                    s->vars[s->nvars++] = text_of(c, field(up, "left"));
            }
        }
        if (pass == 1 && name_listed(s->vars, s->nvars, "") == 0) {
            char *t = text_of(c, fn);
            if (name_listed(s->vars, s->nvars, t) && s->nsample < 16)
                s->sample_calls[s->nsample++] = n;
        }
    }
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        find_calls(c, ts_node_named_child(n, i), s, pass);
}

/* ---- emission ---- */

static const char *torch_dtype(const char *d)
{
    static const struct {
        const char *short_name, *torch_name;
    } m[] = {{"f32", "torch.float32"},     {"float32", "torch.float32"}, {"f16", "torch.float16"},
             {"float16", "torch.float16"}, {"bf16", "torch.bfloat16"},   {"f64", "torch.float64"},
             {"float64", "torch.float64"}, {"i64", "torch.int64"},       {"int64", "torch.int64"},
             {"i32", "torch.int32"},       {"int32", "torch.int32"},     {"i8", "torch.int8"},
             {"u8", "torch.uint8"},        {"bool", "torch.bool"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(d, m[i].short_name))
            return m[i].torch_name;
    return NULL;
}

/* Copies the lines of n (from its line's start) re-indented to `indent` spaces. */
static void copy_reindented(ctor *c, akg_buf *b, uint32_t start, uint32_t end, int indent)
{
    while (start > 0 && c->src[start - 1] != '\n')
        start--;
    int base = 0;
    while (start + base < end && c->src[start + base] == ' ')
        base++;
    const char *p = c->src + start, *e = c->src + end;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
        int lead = 0;
        while (lead < base && lead < (int)n && p[lead] == ' ')
            lead++;
        if (n > (size_t)lead)
            akg_buf_appendf(b, "%*s%.*s\n", indent, "", (int)(n - lead), p + lead);
        else
            akg_buf_puts(b, "\n");
        p = nl ? nl + 1 : e;
    }
}

static int is_module_class(ctor *c, TSNode cls, int depth)
{
    TSNode bases = field(cls, "superclasses");
    if (ts_node_is_null(bases) || depth > 6)
        return 0;
    uint32_t k = ts_node_named_child_count(bases);
    for (uint32_t i = 0; i < k; i++) {
        TSNode base = ts_node_named_child(bases, i);
        char *t = text_of(c, base);
        const char *last = strrchr(t, '.') ? strrchr(t, '.') + 1 : t;
        if (!strcmp(last, "Module"))
            return 1;
        int j = top_binding(c, t);
        if (j >= 0 && is(unwrap(c->top[j]), "class_definition") &&
            is_module_class(c, unwrap(c->top[j]), depth + 1))
            return 1;
    }
    return 0;
}

static TSNode class_method(ctor *c, TSNode cls, const char *name)
{
    TSNode body = field(cls, "body");
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode m = unwrap(ts_node_named_child(body, i));
        if (is(m, "function_definition") && text_is(c, field(m, "name"), name))
            return m;
    }
    TSNode none = {0};
    return none;
}

static const char *BUILTINS[] = {
    "self",      "len",        "range",   "int",     "float",      "min",         "max",
    "sum",       "tuple",      "list",    "dict",    "print",      "abs",         "zip",
    "enumerate", "isinstance", "True",    "False",   "None",       "super",       "bool",
    "str",       "round",      "getattr", "hasattr", "ValueError", "RuntimeError"};

static int is_builtin(const char *n)
{
    return name_listed(BUILTINS, sizeof BUILTINS / sizeof BUILTINS[0], n);
}

/* Names written by a statement (assignment targets, for targets). */
static void collect_writes(ctor *c, TSNode st, const char **out, size_t *n, size_t cap)
{
    if (is(st, "assignment") || is(st, "augmented_assignment") || is(st, "for_statement")) {
        TSNode l = field(st, "left");
        if (is(l, "identifier"))
            collect_reads(c, l, out, n, cap);
        else if (is(l, "pattern_list") || is(l, "tuple_pattern") || is(l, "tuple")) {
            uint32_t k = ts_node_named_child_count(l);
            for (uint32_t i = 0; i < k; i++)
                if (is(ts_node_named_child(l, i), "identifier"))
                    collect_reads(c, ts_node_named_child(l, i), out, n, cap);
        }
    }
    uint32_t k = ts_node_named_child_count(st);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(st, i);
        if (!is(ch, "function_definition") && !is(ch, "lambda"))
            collect_writes(c, ch, out, n, cap);
    }
}

typedef struct {
    akg_buf model;      /* the Model class */
    input_param in[32]; /* forward's inputs */
    size_t nin;
    const char *init_args; /* get_init_inputs' list inside, or NULL when unknown */
    const char *sample_args;
    int sample_count;    /* how many of the inputs the sample call passes */
    const char *subject; /* named in messages: "class MLPBlock (line 12)" */
    unsigned scope_lo, scope_hi;
    TSNode init_params_owner;       /* a class whose __init__ gives the init parameters */
    line_map model_map, inputs_map; /* the file's lines of model's and the inputs' lines */
    unsigned sample_row;            /* 1-based line of the sample call get_inputs copies */
    unsigned shapes_row;            /* 1-based line of the first input's shape */
} plan;

static int fail(ctor *c, int st, const char *fmt, const char *a, unsigned l, const char *b)
{
    return akg_fail(c->err, c->errlen, st, fmt, c->path, l, a, b);
}

/* get_init_inputs for class cls: a call cls(...) with known arguments, `# akg: init = [...]`, or
 * __init__'s defaults. */
static int plan_init(ctor *c, plan *p, TSNode cls, const call_search *s)
{
    const symbol_value *sv = symbol_for(c, "init");
    if (sv) {
        size_t n = strlen(sv->value);
        p->init_args =
            (sv->value[0] == '[' && n > 1) ? dup_range(c, sv->value + 1, n - 2) : sv->value;
        return 0;
    }
    TSNode init = class_method(c, cls, "__init__");
    input_param params[32];
    size_t np = 0;
    if (!ts_node_is_null(init))
        read_params(c, field(init, "parameters"), params, &np, 32);
    for (size_t i = 0; i < s->nctor; i++) {
        int count = 0;
        char *args = call_arguments(c, s->ctor_calls[i], params, np, &count);
        if (args) {
            p->init_args = args;
            return 0;
        }
    }
    for (size_t i = 0; i < np; i++)
        if (!params[i].default_text) {
            char *name = text_of(c, field(cls, "name"));
            akg_buf m;
            akg_buf_init(&m, 4096);
            akg_buf_appendf(&m,
                            "%%s:%%u: cannot know how to construct class %s: its __init__ "
                            "parameter `%s` (line %u) has no default and no call %s(...) in the "
                            "file has values known there; add one (for instance in an "
                            "`if __name__ == \"__main__\":` block) or a comment "
                            "`# akg: init = [...]`%%s%%s",
                            name, params[i].name, params[i].row + 1, name);
            char *fmt = akg_buf_take(&m);
            int r = akg_fail(c->err, c->errlen, AKG_ENOTFOUND, fmt ? fmt : "%s:%u%s%s", c->path,
                             line_of(cls), "", "");
            free(fmt);
            add_need(c, AKG_TASK_NEED_INIT, params[i].name, name, params[i].row, 0);
            return r;
        }
    p->init_args = "";
    return 0;
}

/* Fills p->sample_args from the first sample call whose arguments are all known. */
static void plan_sample(ctor *c, plan *p, call_search *s)
{
    for (size_t i = 0; i < s->nsample; i++) {
        int count = 0;
        char *args = call_arguments(c, s->sample_calls[i], p->in, p->nin, &count);
        if (args) {
            p->sample_args = args;
            p->sample_count = count;
            p->sample_row = line_of(s->sample_calls[i]);
            return;
        }
    }
}

static int emit_inputs(ctor *c, plan *p, akg_buf *out)
{
    /* Every input up to the last one without a default needs a shape, unless a sample call
     * gives them all. */
    size_t used = 0;
    for (size_t i = 0; i < p->nin; i++) {
        const shape_spec *sp = spec_for(c, p->in[i].name, p->scope_lo, p->scope_hi);
        if (sp && (strchr(sp->dims, '?') || strchr(sp->dtype, '?'))) {
            /* a shape comment inserted for the user to fill, not filled yet */
            p->in[i].placeholder_row = sp->row + 1;
            sp = NULL;
        }
        if (sp) {
            p->in[i].dtype = sp->dtype;
            p->in[i].dims = sp->dims;
            p->in[i].bound = sp->bound;
            p->in[i].row = sp->row;
        }
        const symbol_value *sv = symbol_for(c, p->in[i].name);
        if (!p->in[i].dims && sv && !sv->ncases)
            p->in[i].value = sv->value;
        if (p->in[i].dims || p->in[i].value || !p->in[i].default_text)
            used = i + 1;
    }
    int all_known = 1;
    size_t unknown = 0;
    for (size_t i = 0; i < used; i++)
        if (!p->in[i].dims && !p->in[i].value) {
            if (all_known)
                unknown = i;
            all_known = 0;
        }
    if ((!all_known || p->sample_count > (int)used) && p->sample_args) {
        akg_buf_appendf(out, "\n\ndef get_inputs():\n    return [%s]\n", p->sample_args);
        map_mark(&p->inputs_map, out, p->sample_row, 0);
        p->shapes_row = p->sample_row;
        return 0;
    }
    if (!all_known) {
        input_param *u = &p->in[unknown];
        akg_buf m;
        akg_buf_init(&m, 4096);
        for (size_t i = unknown; i < used; i++)
            if (!p->in[i].dims && !p->in[i].value)
                add_need(c, AKG_TASK_NEED_SHAPE, p->in[i].name, p->subject,
                         p->in[i].placeholder_row ? p->in[i].placeholder_row - 1 : p->in[i].row,
                         p->in[i].placeholder_row != 0);
        if (u->placeholder_row)
            akg_buf_appendf(&m,
                            "%%s:%%u: the shape comment for `%s` (an input of %s) still holds "
                            "the placeholder `?`: write its dtype and sizes there, such as "
                            "`# akg: %s: f32[8, 64]`%%s%%s",
                            u->name, p->subject, u->name);
        else if (u->local)
            akg_buf_appendf(&m,
                            "%%s:%%u: cannot know the shape of `%s` (assigned there), which %s "
                            "read: add a shape comment such as `# akg: %s: f32[B, 4096]` (with "
                            "`# akg: B = 32`) above the selection, or `# akg: %s = 3` when it is "
                            "a number%%s%%s",
                            u->name, p->subject, u->name, u->name);
        else
            akg_buf_appendf(
                &m,
                "%%s:%%u: cannot know the shape of `%s`, an input of %s: add a shape "
                "comment such as `# akg: %s: f32[B, 4096]` (with `# akg: B = 32`) above "
                "line %u, an annotation `%s: \"f32[B, 4096]\"`, or a sample call in the "
                "file%%s%%s",
                u->name, p->subject, u->name, u->row + 1, u->name);
        size_t more = 0;
        for (size_t i = unknown + 1; i < used; i++)
            more += !p->in[i].dims && !p->in[i].value;
        if (more) {
            akg_buf_appendf(&m, "; the shape%s of", more > 1 ? "s" : "");
            for (size_t i = unknown + 1, k = 0; i < used; i++)
                if (!p->in[i].dims && !p->in[i].value)
                    akg_buf_appendf(&m, "%s `%s`", k++ ? (k == more ? " and" : ",") : "",
                                    p->in[i].name);
            akg_buf_appendf(&m, " %s unknown too", more > 1 ? "are" : "is");
        }
        char *fmt = akg_buf_take(&m);
        int r = akg_fail(c->err, c->errlen, AKG_ENOTFOUND, fmt ? fmt : "%s:%u%s%s", c->path,
                         u->placeholder_row ? u->placeholder_row : u->row + 1, "", "");
        free(fmt);
        return r;
    }
    /* Symbols: those with values become parameters of _akg_inputs; top-level ones come along. */
    const char *params[MAX_SPECS];
    size_t nparams = 0;
    int missing_symbol = 0;
    for (size_t i = 0; i < used; i++) {
        input_param *in = &p->in[i];
        if (in->value)
            continue;
        if (!torch_dtype(in->dtype)) {
            return akg_fail(c->err, c->errlen, AKG_EUNSUPPORTED,
                            "%s:%u: the dtype `%s` of `%s` is not known; write one of f32, f16, "
                            "bf16, f64, i64, i32, i8, u8, bool",
                            c->path, in->row + 1, in->dtype, in->name);
        }
        char exprs[2][512];
        snprintf(exprs[0], sizeof exprs[0], "%s", in->dims);
        snprintf(exprs[1], sizeof exprs[1], "%s", in->bound ? in->bound : "");
        for (int e = 0; e < 2; e++) {
            for (char *q = exprs[e]; *q;) {
                if (!(isalpha((unsigned char)*q) || *q == '_')) {
                    q++;
                    continue;
                }
                char *w = q;
                while (isalnum((unsigned char)*q) || *q == '_')
                    q++;
                char word[128];
                snprintf(word, sizeof word, "%.*s", (int)(q - w), w);
                if (symbol_for(c, word)) {
                    if (!name_listed(params, nparams, word) && nparams < MAX_SPECS)
                        params[nparams++] = symbol_for(c, word)->name;
                } else if (top_binding(c, word) >= 0) {
                    need(c, own(c, akg_strdup(word)));
                } else {
                    add_need(c, AKG_TASK_NEED_VALUE, word, in->name, in->row, 0);
                    if (!missing_symbol)
                        akg_fail(c->err, c->errlen, AKG_ENOTFOUND,
                                 "%s:%u: cannot know the shape of `%s` (%s[%s]): the symbol "
                                 "`%s` has no value; add `# akg: %s = 32` (its real value), a "
                                 "hint `# @hint: %s in range(1, 4096)`, or define %s in the "
                                 "file",
                                 c->path, in->row + 1, in->name, in->dtype, in->dims, word, word,
                                 word, word);
                    missing_symbol = 1; /* the others are listed in needs */
                }
            }
        }
    }
    if (missing_symbol)
        return AKG_ENOTFOUND;
    akg_buf_puts(out, "\n\ndef _akg_inputs(");
    for (size_t i = 0; i < nparams; i++)
        akg_buf_appendf(out, "%s%s", i ? ", " : "", params[i]);
    akg_buf_puts(out, "):\n    return [\n");
    map_mark(&p->inputs_map, out, 0, 0);
    for (size_t i = 0; i < used; i++) {
        input_param *in = &p->in[i];
        if (!p->shapes_row && !in->local)
            p->shapes_row = in->row + 1;
        if (in->value) {
            akg_buf_appendf(out, "        %s,\n", in->value);
            map_mark(&p->inputs_map, out, in->row + 1, 0);
            continue;
        }
        const char *dt = torch_dtype(in->dtype);
        const char *dims = *trim(in->dims) ? in->dims : "";
        if (!strcmp(dt, "torch.bool"))
            akg_buf_appendf(out, "        torch.rand((%s%s)) > 0.5,\n", dims,
                            strchr(dims, ',') || !*dims ? "" : ",");
        else if (strstr(dt, "int"))
            akg_buf_appendf(out, "        torch.randint(0, %s, (%s%s), dtype=%s),\n",
                            in->bound ? in->bound : "16", dims,
                            strchr(dims, ',') || !*dims ? "" : ",", dt);
        else
            akg_buf_appendf(out, "        torch.randn((%s%s), dtype=%s),\n", dims,
                            strchr(dims, ',') || !*dims ? "" : ",", dt);
        map_mark(&p->inputs_map, out, in->row + 1, 0);
    }
    akg_buf_puts(out, "    ]\n\n\ndef get_inputs():\n    return _akg_inputs(");
    int dynamic = 0;
    for (size_t i = 0; i < nparams; i++) {
        const symbol_value *sv = symbol_for(c, params[i]);
        akg_buf_appendf(out, "%s%s=%s", i ? ", " : "", sv->name, sv->value);
        dynamic |= sv->ncases > 0;
    }
    akg_buf_puts(out, ")\n");
    if (dynamic) {
        int ncases = 0;
        for (size_t i = 0; i < nparams; i++) {
            const symbol_value *sv = symbol_for(c, params[i]);
            if (sv->ncases > ncases)
                ncases = sv->ncases;
        }
        akg_buf_puts(out, "\n\ndef get_inputs_dyn_list():\n    return [\n");
        for (int k = 0; k < ncases; k++) {
            akg_buf_puts(out, "        _akg_inputs(");
            for (size_t i = 0; i < nparams; i++) {
                const symbol_value *sv = symbol_for(c, params[i]);
                if (sv->ncases)
                    akg_buf_appendf(out, "%s%s=%ld", i ? ", " : "", sv->name,
                                    sv->cases[k % sv->ncases]);
                else
                    akg_buf_appendf(out, "%s%s=%s", i ? ", " : "", sv->name, sv->value);
            }
            akg_buf_puts(out, "),\n");
        }
        akg_buf_puts(out, "    ]\n");
    }
    map_mark(&p->inputs_map, out, 0, 0);
    return 0;
}

/* ---- the three kinds of selection ---- */

static int plan_class(ctor *c, plan *p, TSNode cls, TSNode outer)
{
    char *name = text_of(c, field(cls, "name"));
    TSNode name_node = field(cls, "name");
    if (!is_module_class(c, cls, 0))
        return fail(c, AKG_EUNSUPPORTED,
                    "%s:%u: class %s is not an nn.Module subclass, so it is not code of a "
                    "model; select an nn.Module subclass, a function, or statements inside a "
                    "forward%s",
                    name, line_of(cls), "");
    TSNode fwd = class_method(c, cls, "forward");
    if (ts_node_is_null(fwd))
        return fail(c, AKG_EUNSUPPORTED,
                    "%s:%u: class %s has no forward(); select a module that defines forward, or "
                    "a function%s",
                    name, line_of(cls), "");
    p->subject = own(c, akg_strdup(name));
    read_params(c, field(fwd, "parameters"), p->in, &p->nin, 32);
    /* The class as written, renamed Model (super(Name, self) too). */
    uint32_t s = ts_node_start_byte(outer);
    while (s > 0 && c->src[s - 1] != '\n')
        s--;
    akg_buf_append(&p->model, c->src + s, ts_node_start_byte(name_node) - s);
    akg_buf_puts(&p->model, "Model");
    char *rest = dup_range(c, c->src + ts_node_end_byte(name_node),
                           ts_node_end_byte(outer) - ts_node_end_byte(name_node));
    char pat[160];
    snprintf(pat, sizeof pat, "super(%s,", name);
    for (char *q = rest; q && *q;) {
        char *hit = strstr(q, pat);
        if (!hit) {
            akg_buf_puts(&p->model, q);
            break;
        }
        akg_buf_append(&p->model, q, (size_t)(hit - q));
        akg_buf_puts(&p->model, "super(Model,");
        q = hit + strlen(pat);
    }
    akg_buf_puts(&p->model, "\n");
    map_mark(&p->model_map, &p->model, ts_node_start_point(outer).row + 1, 1);
    need_reads(c, outer);
    call_search cs = {.target = name, .is_class = 1, .skip = outer};
    find_calls(c, c->root, &cs, 0);
    find_calls(c, c->root, &cs, 1);
    plan_sample(c, p, &cs);
    return plan_init(c, p, cls, &cs);
}

static int plan_function(ctor *c, plan *p, TSNode fn)
{
    char *name = text_of(c, field(fn, "name"));
    p->subject = own(c, akg_strdup(name));
    read_params(c, field(fn, "parameters"), p->in, &p->nin, 32);
    c->included[c->selected_top] = 1;
    need_reads(c, c->top[c->selected_top]);
    call_search cs = {.target = name, .is_class = 0, .skip = fn};
    find_calls(c, c->root, &cs, 0);
    plan_sample(c, p, &cs);
    p->init_args = "";
    if (p->nin == 0 && p->sample_count == 0)
        return fail(c, AKG_EUNSUPPORTED,
                    "%s:%u: function %s takes no inputs, so it is not an operator on tensors; "
                    "select a function of tensors, an nn.Module subclass, or statements inside a "
                    "forward%s",
                    name, line_of(fn), "");
    return 0; /* the Model is written once the inputs used are known */
}

static int plan_statements(ctor *c, plan *p, TSNode cls, TSNode fwd, unsigned r0, unsigned r1,
                           TSNode outer)
{
    char *cname = text_of(c, field(cls, "name"));
    TSNode body = field(fwd, "body");
    uint32_t k = ts_node_named_child_count(body);
    int first = -1, last = -1;
    for (uint32_t i = 0; i < k; i++) {
        TSNode st = ts_node_named_child(body, i);
        if (is(st, "comment"))
            continue;
        if (ts_node_end_point(st).row >= r0 && ts_node_start_point(st).row <= r1) {
            if (first < 0)
                first = (int)i;
            last = (int)i;
        }
    }
    if (first < 0)
        return fail(c, AKG_EUNSUPPORTED,
                    "%s:%u: the selection holds no statement of %s.forward; select the "
                    "statements to turn into a kernel%s",
                    cname, r0 + 1, "");
    /* Reads before writes, statement by statement. */
    const char *written[MAX_NAMES], *inputs[32];
    size_t nw = 0, ni = 0;
    int has_return = 0;
    for (int i = first; i <= last; i++) {
        TSNode st = ts_node_named_child(body, (uint32_t)i);
        const char *reads[MAX_NAMES];
        size_t nr = 0;
        TSNode inner = ts_node_named_child(st, 0);
        if (is(st, "expression_statement") && is(inner, "assignment"))
            collect_reads(c, field(inner, "right"), reads, &nr, MAX_NAMES);
        else
            collect_reads(c, st, reads, &nr, MAX_NAMES);
        if (is(st, "expression_statement") && is(inner, "augmented_assignment"))
            collect_reads(c, field(inner, "left"), reads, &nr, MAX_NAMES);
        has_return |= is(st, "return_statement");
        for (size_t j = 0; j < nr; j++) {
            if (name_listed(written, nw, reads[j]) || name_listed(inputs, ni, reads[j]) ||
                is_builtin(reads[j]))
                continue;
            if (top_binding(c, reads[j]) >= 0) {
                need(c, reads[j]);
                continue;
            }
            if (ni < 32)
                inputs[ni++] = reads[j];
        }
        collect_writes(c, st, written, &nw, MAX_NAMES);
    }
    /* What later statements read of what the selection wrote. */
    const char *later[MAX_NAMES], *outputs[32];
    size_t nl = 0, no = 0;
    for (uint32_t i = (uint32_t)last + 1; i < k; i++)
        collect_reads(c, ts_node_named_child(body, i), later, &nl, MAX_NAMES);
    for (size_t j = 0; j < nw; j++)
        if (name_listed(later, nl, written[j]) && no < 32)
            outputs[no++] = written[j];
    if (!has_return && no == 0 && nw > 0)
        outputs[no++] = written[nw - 1];
    if (!has_return && no == 0)
        return fail(c, AKG_EUNSUPPORTED,
                    "%s:%u: the selected statements of %s.forward compute no value (no "
                    "assignment, no return); select statements that assign a tensor%s",
                    cname, r0 + 1, "");
    /* Inputs: forward's parameters keep their annotations; locals need a shape comment. */
    input_param fparams[32];
    size_t nf = 0;
    read_params(c, field(fwd, "parameters"), fparams, &nf, 32);
    for (size_t j = 0; j < ni; j++) {
        input_param *d = &p->in[p->nin++];
        memset(d, 0, sizeof *d);
        d->name = (char *)inputs[j];
        d->row = r0;
        for (size_t f = 0; f < nf; f++)
            if (!strcmp(fparams[f].name, inputs[j])) {
                *d = fparams[f];
                d->default_text = NULL;
            }
        if (d->row == r0) {
            /* A local of forward: name the line that defines it. */
            d->local = 1;
            TSNode st0 = ts_node_named_child(body, (uint32_t)first);
            TSNode idn = {0};
            for (uint32_t i = 0; i < (uint32_t)first; i++) {
                TSNode st = ts_node_named_child(body, i);
                const char *w[MAX_NAMES];
                size_t n = 0;
                collect_writes(c, st, w, &n, MAX_NAMES);
                if (name_listed(w, n, inputs[j]))
                    idn = st;
            }
            d->row =
                ts_node_is_null(idn) ? ts_node_start_point(st0).row : ts_node_start_point(idn).row;
        }
    }
    char subject[256];
    snprintf(subject, sizeof subject, "the statements at lines %u-%u of %s.forward", r0 + 1, r1 + 1,
             cname);
    p->subject = own(c, akg_strdup(subject));
    /* The Model: the class's bases, body but forward, and the statements as forward. */
    TSNode bases = field(cls, "superclasses");
    akg_buf_appendf(&p->model, "class Model%s:\n",
                    ts_node_is_null(bases) ? "(nn.Module)" : text_of(c, bases));
    map_mark(&p->model_map, &p->model, line_of(cls), 0);
    TSNode cbody = field(cls, "body");
    uint32_t kc = ts_node_named_child_count(cbody);
    for (uint32_t i = 0; i < kc; i++) {
        TSNode m = ts_node_named_child(cbody, i);
        if (ts_node_eq(unwrap(m), fwd))
            continue;
        copy_reindented(c, &p->model, ts_node_start_byte(m), ts_node_end_byte(m), 4);
        map_mark(&p->model_map, &p->model, line_of(m), 1);
        akg_buf_puts(&p->model, "\n");
        map_mark(&p->model_map, &p->model, 0, 0);
        need_reads(c, m);
    }
    akg_buf_puts(&p->model, "    def forward(self");
    for (size_t j = 0; j < ni; j++)
        akg_buf_appendf(&p->model, ", %s", inputs[j]);
    akg_buf_puts(&p->model, "):\n");
    map_mark(&p->model_map, &p->model, line_of(fwd), 0);
    TSNode a = ts_node_named_child(body, (uint32_t)first),
           b = ts_node_named_child(body, (uint32_t)last);
    c->comment_row = ts_node_start_point(a).row;
    copy_reindented(c, &p->model, ts_node_start_byte(a), ts_node_end_byte(b), 8);
    map_mark(&p->model_map, &p->model, line_of(a), 1);
    if (!has_return) {
        akg_buf_puts(&p->model, "        return ");
        for (size_t j = 0; j < no; j++)
            akg_buf_appendf(&p->model, "%s%s", j ? ", " : "", outputs[j]);
        akg_buf_puts(&p->model, "\n");
        map_mark(&p->model_map, &p->model, ts_node_end_point(b).row + 1, 0);
    }
    for (int i = first; i <= last; i++)
        need_reads(c, ts_node_named_child(body, (uint32_t)i));
    call_search cs = {.target = cname, .is_class = 1, .skip = outer};
    find_calls(c, c->root, &cs, 0);
    return plan_init(c, p, cls, &cs);
}

static int construct(ctor *c, unsigned r0, unsigned r1, akg_constructed_task *out)
{
    uint32_t k = ts_node_named_child_count(c->root);
    for (uint32_t i = 0; i < k && c->ntop < 1024; i++)
        c->top[c->ntop++] = ts_node_named_child(c->root, i);
    scan_comments(c);
    /* The top-level statement the selection starts in (or the first one inside it). */
    int sel = -1;
    for (size_t i = 0; i < c->ntop && sel < 0; i++) {
        TSNode t = c->top[i];
        if (is(t, "comment"))
            continue;
        unsigned a = ts_node_start_point(t).row, b = ts_node_end_point(t).row;
        if ((a <= r0 && r0 <= b) || (a >= r0 && a <= r1))
            sel = (int)i;
    }
    if (sel < 0)
        return akg_fail(c->err, c->errlen, AKG_EUNSUPPORTED,
                        "%s:%u: lines %u-%u hold no code; select an nn.Module subclass, a "
                        "function, or statements inside a forward",
                        c->path, r0 + 1, r0 + 1, r1 + 1);
    c->selected_top = sel;
    TSNode outer = c->top[sel], def = unwrap(outer);
    plan p;
    memset(&p, 0, sizeof p);
    akg_buf_init(&p.model, 1 << 20);
    p.scope_lo = ts_node_start_point(outer).row;
    p.scope_hi = ts_node_end_point(outer).row;
    c->comment_row = p.scope_lo;
    int rc;
    char name[256];
    if (is(def, "class_definition")) {
        TSNode body = field(def, "body");
        TSNode inner = {0};
        uint32_t kb = ts_node_named_child_count(body);
        for (uint32_t i = 0; i < kb; i++) {
            TSNode m = unwrap(ts_node_named_child(body, i));
            if (is(m, "function_definition") && ts_node_start_point(m).row < r0 &&
                ts_node_end_point(m).row >= r1)
                inner = m;
        }
        char *cname = text_of(c, field(def, "name"));
        if (!ts_node_is_null(inner) && text_is(c, field(inner, "name"), "forward")) {
            if (!is_module_class(c, def, 0))
                return fail(c, AKG_EUNSUPPORTED,
                            "%s:%u: class %s is not an nn.Module subclass, so its forward is "
                            "not code of a model%s",
                            cname, r0 + 1, "");
            rc = plan_statements(c, &p, def, inner, r0, r1, outer);
            snprintf(name, sizeof name, "%s_forward_L%u_%u", cname, r0 + 1, r1 + 1);
        } else if (!ts_node_is_null(inner)) {
            char *mname = text_of(c, field(inner, "name"));
            akg_buf_free(&p.model);
            return akg_fail(c->err, c->errlen, AKG_EUNSUPPORTED,
                            "%s:%u: lines %u-%u are inside %s.%s, not forward: select the class "
                            "(line %u), a function, or statements inside %s.forward",
                            c->path, r0 + 1, r0 + 1, r1 + 1, cname, mname, line_of(def), cname);
        } else {
            rc = plan_class(c, &p, def, outer);
            snprintf(name, sizeof name, "%s", cname);
        }
    } else if (is(def, "function_definition")) {
        rc = plan_function(c, &p, def);
        snprintf(name, sizeof name, "%s", text_of(c, field(def, "name")));
    } else {
        akg_buf_free(&p.model);
        const char *what = is(def, "import_statement") || is(def, "import_from_statement")
                               ? "an import"
                           : is(def, "expression_statement") ? "a module-level statement"
                                                             : ts_node_type(def);
        return akg_fail(c->err, c->errlen, AKG_EUNSUPPORTED,
                        "%s:%u: the selection starts in %s, which is not code of a model; select "
                        "an nn.Module subclass, a function, or statements inside a forward",
                        c->path, line_of(def), what);
    }
    akg_buf inputs;
    akg_buf_init(&inputs, 1 << 20);
    if (rc == 0) {
        rc = emit_inputs(c, &p, &inputs);
    } else if (rc == AKG_ENOTFOUND && c->needs->n > 0) {
        /* the constructor's arguments are unknown: the inputs' needs are asked at once */
        char *first_err = akg_strdup(c->err);
        emit_inputs(c, &p, &inputs);
        if (first_err)
            snprintf(c->err, c->errlen, "%s", first_err);
        free(first_err);
    }
    if (rc == 0 && is(def, "function_definition")) {
        /* forward takes the inputs get_inputs gives. */
        akg_buf_puts(&p.model, "class Model(nn.Module):\n    def __init__(self):\n"
                               "        super().__init__()\n\n    def forward(self");
        size_t used = 0;
        for (size_t i = 0; i < p.nin; i++)
            if (p.in[i].dims || !p.in[i].default_text)
                used = i + 1;
        int sampled = p.sample_args && !strstr(inputs.data ? inputs.data : "", "_akg_inputs");
        if (sampled && (size_t)p.sample_count <= p.nin)
            used = (size_t)p.sample_count; /* the inputs the sample call passes */
        if (sampled && (size_t)p.sample_count > p.nin) {
            /* *args: forward passes on what the sample call passes */
            akg_buf_puts(&p.model, ", *args):\n");
            akg_buf_appendf(&p.model, "        return %s(*args)\n", name);
        } else {
            for (size_t i = 0; i < used; i++)
                akg_buf_appendf(&p.model, ", %s", p.in[i].name);
            akg_buf_appendf(&p.model, "):\n        return %s(", name);
            for (size_t i = 0; i < used; i++)
                akg_buf_appendf(&p.model, "%s%s", i ? ", " : "", p.in[i].name);
            akg_buf_puts(&p.model, ")\n");
        }
        map_mark(&p.model_map, &p.model, line_of(def), 0);
    }
    if (rc != 0) {
        akg_buf_free(&p.model);
        akg_buf_free(&inputs);
        free(p.model_map.rows);
        free(p.inputs_map.rows);
        return rc;
    }
    need(c, "torch");
    close_dependencies(c);
    akg_buf ref;
    akg_buf_init(&ref, 1 << 22);
    const char *base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
    akg_buf_appendf(&ref, "# Constructed by akg from %s, lines %u-%u (%s).\n", base, r0 + 1, r1 + 1,
                    p.subject);
    line_map map = {0};
    map_mark(&map, &ref, 0, 0);
    int has_torch = 0, has_nn = 0;
    for (size_t i = 0; i < c->ntop; i++) {
        TSNode d = c->top[i];
        if (!c->included[i] || !(is(d, "import_statement") || is(d, "import_from_statement") ||
                                 is(d, "future_import_statement")))
            continue;
        has_torch |= binds(c, d, "torch");
        has_nn |= binds(c, d, "nn");
        akg_buf_appendf(&ref, "%s\n", text_of(c, d));
        map_mark(&map, &ref, line_of(d), 1);
    }
    if (!has_torch)
        akg_buf_puts(&ref, "import torch\n");
    if (!has_nn)
        akg_buf_puts(&ref, "import torch.nn as nn\n");
    map_mark(&map, &ref, 0, 0);
    for (size_t i = 0; i < c->ntop; i++) {
        TSNode d = c->top[i];
        if (!c->included[i] || is(d, "import_statement") || is(d, "import_from_statement") ||
            is(d, "future_import_statement"))
            continue;
        int block = is(unwrap(d), "function_definition") || is(unwrap(d), "class_definition");
        akg_buf_puts(&ref, block ? "\n\n" : "\n");
        map_mark(&map, &ref, 0, 0);
        akg_buf_appendf(&ref, "%s\n", text_of(c, d));
        map_mark(&map, &ref, line_of(d), 1);
    }
    akg_buf_puts(&ref, "\n\n");
    map_mark(&map, &ref, 0, 0);
    akg_buf_puts(&ref, p.model.data ? p.model.data : "");
    map_append(&map, &ref, &p.model_map);
    akg_buf_puts(&ref, inputs.data ? inputs.data : "");
    map_append(&map, &ref, &p.inputs_map);
    akg_buf_appendf(&ref, "\n\ndef get_init_inputs():\n    return [%s]\n", p.init_args);
    map_mark(&map, &ref, 0, 0);
    akg_buf_free(&p.model);
    akg_buf_free(&inputs);
    free(p.model_map.rows);
    free(p.inputs_map.rows);
    out->reference = akg_buf_take(&ref);
    out->name = akg_strdup(name);
    out->source_lines = map.rows;
    out->n_lines = map.n;
    out->shapes_line = p.shapes_row;
    if (!out->reference || !out->name || map.failed || p.model_map.failed || p.inputs_map.failed) {
        akg_constructed_task_free(out);
        return akg_fail(c->err, c->errlen, AKG_ENOMEM, "%s: the reference is too large", c->path);
    }
    return AKG_OK;
}

int akg_task_construct(const char *source, size_t len, const char *path, unsigned first_line,
                       unsigned last_line, akg_constructed_task *out, char *err, size_t errlen)
{
    akg_task_needs needs;
    return akg_task_construct_needs(source, len, path, first_line, last_line, out, &needs, err,
                                    errlen);
}

/* The needs' comment line and its indentation; none unless the construction stopped on them. */
static void finish_needs(ctor *c, int rc)
{
    akg_task_needs *nd = c->needs;
    if (rc != AKG_ENOTFOUND || nd->n == 0) {
        memset(nd, 0, sizeof *nd);
        return;
    }
    nd->comment_line = c->comment_row + 1;
    const char *p = c->src, *end = c->src + c->len;
    for (unsigned r = 0; r < c->comment_row && p < end; r++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    size_t n = 0;
    while (p + n < end && (p[n] == ' ' || p[n] == '\t') && n + 1 < sizeof nd->indent)
        n++;
    memcpy(nd->indent, p, n);
    nd->indent[n] = '\0';
}

int akg_task_construct_needs(const char *source, size_t len, const char *path, unsigned first_line,
                             unsigned last_line, akg_constructed_task *out, akg_task_needs *needs,
                             char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    memset(needs, 0, sizeof *needs);
    if (first_line == 0 || last_line < first_line)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "%s: the selection %u:%u is not a range of lines (1-based, first <= last)",
                        path, first_line, last_line);
    ctor *c = calloc(1, sizeof *c);
    if (!c)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    c->src = source;
    c->len = len;
    c->path = path;
    c->err = err;
    c->errlen = errlen;
    c->needs = needs;
    TSParser *parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    TSTree *tree = ts_parser_parse_string(parser, NULL, source, (uint32_t)len);
    c->root = ts_tree_root_node(tree);
    int rc;
    if (ts_node_has_error(c->root))
        rc = akg_fail(err, errlen, AKG_EPARSE,
                      "%s: the file does not parse as Python; fix its syntax errors first", path);
    else
        rc = construct(c, first_line - 1, last_line - 1, out);
    finish_needs(c, rc);
    ts_tree_delete(tree);
    ts_parser_delete(parser);
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c);
    return rc;
}

void akg_constructed_task_free(akg_constructed_task *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->reference);
    free(t->source_lines);
    t->name = t->reference = NULL;
    t->source_lines = NULL;
    t->n_lines = 0;
}
