/*
 * designer_graph_stages_sketch.c: two stage sketches composed into one
 * (akg_sketch_compose_stages; the stages come from designer_graph_stages.c).
 *
 * Each stage is a complete, bound sketch: comments, `sketch NAME {`, header
 * lines (symbols, tensors, constexpr, params, bind), a blank line, the body.
 * The composition works on the text, name by name:
 *
 *  - the names a stage declares (its header's symbols, tensors, constexprs,
 *    params) and the names its body assigns (tiles, loop variables, scalars)
 *    get the stage's suffix (_1, _2) wherever they appear outside strings,
 *    comments and keyword argument names, so the two bodies run one after
 *    the other in one scope without a clash (sketch names stay visible after
 *    their loop, as in Python);
 *  - the first stage's `output(0, SHAPE)` tensor is no longer bound: it is
 *    allocated at the top of the body in the "slow" tier as a
 *    "temp_workspace" of its declared shape;
 *  - the second stage's tensor bound as `input("LEAF", SHAPE)` is dropped and
 *    renamed to that temporary; each bare symbol of its SHAPE is bound, first
 *    of the second stage's items, to the first stage's size in that place
 *    (so the weights' shapes that follow check against it);
 *  - the header sections are merged in order (the first stage's bind lines
 *    before the second's), the comments kept under a stage heading.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph_stages.h"

#define MAX_SECTIONS 32
#define MAX_NAMES 2048
#define NAME_LEN 96

typedef struct {
    char kind[12]; /* "symbols", "tensors", "constexpr", "params", "bind" */
    char *text;    /* after the colon, trimmed, without a trailing ';' (malloc'd) */
} section;

typedef struct {
    char *comments; /* the lines before `sketch` (malloc'd) */
    char name[NAME_LEN];
    section sec[MAX_SECTIONS];
    int n_sec;
    char *body; /* the statements, each line as written (malloc'd) */
} stage;

typedef struct {
    char (*from)[NAME_LEN];
    char (*to)[NAME_LEN];
    int n;
} name_map;

static void stage_free(stage *s)
{
    free(s->comments);
    for (int i = 0; i < s->n_sec; i++)
        free(s->sec[i].text);
    free(s->body);
}

static char *dup_range(const char *a, const char *b)
{
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && (isspace((unsigned char)b[-1]) || b[-1] == ';'))
        b--;
    char *s = malloc((size_t)(b - a) + 1);
    if (s) {
        memcpy(s, a, (size_t)(b - a));
        s[b - a] = 0;
    }
    return s;
}

/* Bracket depth change over a line (strings skipped). */
static int depth_of(const char *a, const char *b)
{
    int d = 0;
    char q = 0;
    for (const char *p = a; p < b; p++) {
        if (q) {
            if (*p == '\\' && p + 1 < b)
                p++;
            else if (*p == q)
                q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '#') {
            break;
        } else if (*p == '(' || *p == '[' || *p == '{') {
            d++;
        } else if (*p == ')' || *p == ']' || *p == '}') {
            d--;
        }
    }
    return d;
}

static const char *const KINDS[] = {"symbols", "tensors", "constexpr", "params", "bind"};

static int parse_stage(const char *text, stage *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const char *p = text, *start = NULL;
    /* comments up to the `sketch NAME {` line */
    while (*p) {
        const char *q = p;
        while (*q == ' ')
            q++;
        if (!strncmp(q, "sketch ", 7)) {
            start = q + 7;
            break;
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    if (!start) {
        snprintf(err, errlen, "a stage's sketch has no `sketch NAME {` line");
        return -1;
    }
    s->comments = dup_range(text, p);
    size_t nl = 0;
    while (start[nl] && (isalnum((unsigned char)start[nl]) || start[nl] == '_') &&
           nl + 1 < NAME_LEN)
        nl++;
    memcpy(s->name, start, nl);
    p = strchr(start, '\n');
    p = p ? p + 1 : start + strlen(start);
    /* header lines, each to its end (or on while brackets are open) */
    for (;;) {
        const char *q = p;
        while (*q == ' ')
            q++;
        const char *colon = NULL;
        int kind = -1;
        for (int k = 0; k < 5; k++) {
            size_t kl = strlen(KINDS[k]);
            const char *c = q + kl;
            while (*c == ' ')
                c++;
            if (!strncmp(q, KINDS[k], kl) && *c == ':') {
                kind = k;
                colon = c;
                break;
            }
        }
        if (kind < 0)
            break;
        const char *e = colon + 1;
        int d = 0;
        for (;;) {
            const char *eol = strchr(e, '\n');
            if (!eol)
                eol = e + strlen(e);
            d += depth_of(e, eol);
            e = eol;
            if (d <= 0 || !*e)
                break;
            e++;
        }
        if (s->n_sec >= MAX_SECTIONS) {
            snprintf(err, errlen, "a stage's sketch has more than %d header lines", MAX_SECTIONS);
            return -1;
        }
        snprintf(s->sec[s->n_sec].kind, sizeof s->sec[0].kind, "%s", KINDS[kind]);
        s->sec[s->n_sec].text = dup_range(colon + 1, e);
        s->n_sec++;
        p = *e ? e + 1 : e;
    }
    /* the body, without the closing brace */
    const char *end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    if (end == p || end[-1] != '}') {
        snprintf(err, errlen, "a stage's sketch does not end with `}`");
        return -1;
    }
    end--;
    while (p < end && (*p == '\n' || *p == '\r'))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    s->body = malloc((size_t)(end - p) + 2);
    if (!s->body)
        return -1;
    memcpy(s->body, p, (size_t)(end - p));
    s->body[end - p] = 0;
    return 0;
}

/* Calls fn on each item of s split at top-level sep (brackets and strings skipped). */
typedef int (*item_fn)(const char *a, const char *b, void *ctx);
static int each_item(const char *s, char sep, item_fn fn, void *ctx)
{
    const char *a = s;
    int d = 0;
    char q = 0;
    for (const char *p = s;; p++) {
        if (q) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == q)
                q = 0;
            else if (!*p)
                return fn(a, p, ctx);
            continue;
        }
        if (*p == '"' || *p == '\'')
            q = *p;
        else if (*p == '(' || *p == '[' || *p == '{')
            d++;
        else if (*p == ')' || *p == ']' || *p == '}')
            d--;
        if (!*p || (*p == sep && d == 0)) {
            while (a < p && isspace((unsigned char)*a))
                a++;
            if (a < p && fn(a, p, ctx))
                return -1;
            if (!*p)
                return 0;
            a = p + 1;
        }
    }
}

static int map_add(name_map *m, const char *a, size_t len, const char *suffix)
{
    if (len == 0 || len + strlen(suffix) + 1 > NAME_LEN)
        return len ? -1 : 0;
    for (int i = 0; i < m->n; i++)
        if (strlen(m->from[i]) == len && !strncmp(m->from[i], a, len))
            return 0;
    if (m->n >= MAX_NAMES)
        return -1;
    memcpy(m->from[m->n], a, len);
    m->from[m->n][len] = 0;
    snprintf(m->to[m->n], NAME_LEN, "%s%s", m->from[m->n], suffix);
    m->n++;
    return 0;
}

static size_t ident_len(const char *a)
{
    size_t n = 0;
    if (!isalpha((unsigned char)a[0]) && a[0] != '_')
        return 0;
    while (isalnum((unsigned char)a[n]) || a[n] == '_')
        n++;
    return n;
}

typedef struct {
    name_map *m;
    const char *suffix;
} decl_ctx;

static int declare_item(const char *a, const char *b, void *ctx)
{
    decl_ctx *c = ctx;
    (void)b;
    return map_add(c->m, a, ident_len(a), c->suffix);
}

/* The names the body assigns: `for NAME in`, `NAME[, NAME] = ` (and `op=` forms). */
static int declare_body(const char *body, name_map *m, const char *suffix)
{
    const char *p = body;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!strncmp(p, "for ", 4)) {
            const char *v = p + 4;
            while (*v == ' ')
                v++;
            if (map_add(m, v, ident_len(v), suffix))
                return -1;
        } else {
            const char *q = p;
            const char *names[8];
            size_t lens[8];
            int n = 0;
            while (n < 8) {
                size_t l = ident_len(q);
                if (!l)
                    break;
                names[n] = q;
                lens[n++] = l;
                q += l;
                while (*q == ' ')
                    q++;
                if (*q != ',')
                    break;
                q++;
                while (*q == ' ')
                    q++;
            }
            if (n && strchr("+-*/", *q) && q[1] == '=')
                q++;
            if (n && *q == '=' && q[1] != '=')
                for (int i = 0; i < n; i++)
                    if (map_add(m, names[i], lens[i], suffix))
                        return -1;
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    return 0;
}

/* s with every name of m renamed (not in strings, comments or keyword argument names). */
static char *rename_text(const char *s, const name_map *m)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    int paren = 0;
    const char *p = s;
    while (*p) {
        if (*p == '"' || *p == '\'') {
            const char *q = p + 1;
            while (*q && *q != *p)
                q += (*q == '\\' && q[1]) ? 2 : 1;
            if (*q)
                q++;
            akg_buf_append(&b, p, (size_t)(q - p));
            p = q;
        } else if (*p == '#') {
            const char *q = strchr(p, '\n');
            if (!q)
                q = p + strlen(p);
            akg_buf_append(&b, p, (size_t)(q - p));
            p = q;
        } else if (isdigit((unsigned char)*p)) {
            const char *q = p;
            while (isalnum((unsigned char)*q) || *q == '_' || *q == '.' ||
                   ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E') &&
                    !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))))
                q++;
            akg_buf_append(&b, p, (size_t)(q - p));
            p = q;
        } else if (ident_len(p)) {
            size_t l = ident_len(p);
            const char *after = p + l;
            while (*after == ' ')
                after++;
            int keyword = paren > 0 && *after == '=' && after[1] != '=';
            const char *to = NULL;
            for (int i = 0; !keyword && i < m->n && !to; i++)
                if (strlen(m->from[i]) == l && !strncmp(m->from[i], p, l))
                    to = m->to[i];
            if (to)
                akg_buf_puts(&b, to);
            else
                akg_buf_append(&b, p, l);
            p += l;
        } else {
            if (*p == '(')
                paren++;
            else if (*p == ')' && paren > 0)
                paren--;
            akg_buf_append(&b, p, 1);
            p++;
        }
    }
    return akg_buf_take(&b);
}

/* Renames each name of m in s's header and body. */
static int rename_all(stage *s, const name_map *m)
{
    for (int i = 0; i < s->n_sec; i++) {
        char *t = rename_text(s->sec[i].text, m);
        if (!t)
            return -1;
        free(s->sec[i].text);
        s->sec[i].text = t;
    }
    char *t = rename_text(s->body, m);
    if (!t)
        return -1;
    free(s->body);
    s->body = t;
    return 0;
}

/* Renames every name stage s declares or assigns, adding suffix. */
static int rename_stage(stage *s, const char *suffix)
{
    name_map m = {calloc(MAX_NAMES, NAME_LEN), calloc(MAX_NAMES, NAME_LEN), 0};
    int rc = m.from && m.to ? 0 : -1;
    decl_ctx c = {&m, suffix};
    for (int i = 0; !rc && i < s->n_sec; i++) {
        const char *k = s->sec[i].kind;
        if (!strcmp(k, "symbols") || !strcmp(k, "constexpr") || !strcmp(k, "params"))
            rc = each_item(s->sec[i].text, ',', declare_item, &c);
        else if (!strcmp(k, "tensors"))
            rc = each_item(s->sec[i].text, ';', declare_item, &c);
    }
    if (!rc)
        rc = declare_body(s->body, &m, suffix);
    if (!rc)
        rc = rename_all(s, &m);
    free(m.from);
    free(m.to);
    return rc;
}

/* Renames the one name `from` to `to` in s. */
static int rename_one(stage *s, const char *from, const char *to)
{
    char f[1][NAME_LEN], t[1][NAME_LEN];
    snprintf(f[0], NAME_LEN, "%s", from);
    snprintf(t[0], NAME_LEN, "%s", to);
    name_map m = {f, t, 1};
    return rename_all(s, &m);
}

/* ---------- finding and dropping the bound items ---------- */

typedef struct {
    const char *want;       /* "output(0" or `input("LEAF"` */
    char name[NAME_LEN];    /* the tensor bound so */
    char dims[8][NAME_LEN]; /* its SHAPE's entries */
    int n_dims;
    akg_buf kept; /* the other items */
    int found;
} bind_scan;

static int dim_item(const char *a, const char *b, void *ctx)
{
    bind_scan *s = ctx;
    if (s->n_dims >= 8 || (size_t)(b - a) + 1 > NAME_LEN)
        return -1;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    memcpy(s->dims[s->n_dims], a, (size_t)(b - a));
    s->dims[s->n_dims][b - a] = 0;
    s->n_dims++;
    return 0;
}

static int bind_item(const char *a, const char *b, void *ctx)
{
    bind_scan *s = ctx;
    size_t l = ident_len(a);
    const char *r = a + l;
    while (*r == ' ' || *r == '=')
        r++;
    size_t wl = strlen(s->want);
    if (!s->found && l && l < NAME_LEN && (size_t)(b - r) > wl && !strncmp(r, s->want, wl)) {
        s->found = 1;
        memcpy(s->name, a, l);
        s->name[l] = 0;
        const char *lb = strchr(r, '[');
        const char *rb = lb ? lb + 1 : NULL;
        int d = 1;
        while (rb && rb < b && d > 0) {
            d += *rb == '[' ? 1 : *rb == ']' ? -1 : 0;
            rb++;
        }
        if (!lb || d != 0)
            return -1;
        char *inner = dup_range(lb + 1, rb - 1);
        int rc = inner ? each_item(inner, ',', dim_item, s) : -1;
        free(inner);
        return rc;
    }
    akg_buf_appendf(&s->kept, "%s%.*s", s->kept.len ? ", " : "", (int)(b - a), a);
    return 0;
}

/* Drops from s's bind lines the item whose source begins with want (into sc). */
static int drop_bind(stage *s, bind_scan *sc)
{
    for (int i = 0; i < s->n_sec && !sc->found; i++) {
        if (strcmp(s->sec[i].kind, "bind"))
            continue;
        akg_buf_init(&sc->kept, 0);
        if (each_item(s->sec[i].text, ',', bind_item, sc)) {
            akg_buf_free(&sc->kept);
            return -1;
        }
        if (sc->found) {
            free(s->sec[i].text);
            s->sec[i].text = akg_buf_take(&sc->kept);
            if (!s->sec[i].text)
                return -1;
        } else {
            akg_buf_free(&sc->kept);
        }
    }
    return sc->found ? 0 : -1;
}

typedef struct {
    const char *name;
    char *decl; /* the dropped tensor's "[SHAPE]: DTYPE" */
    akg_buf kept;
} tensor_scan;

static int tensor_item(const char *a, const char *b, void *ctx)
{
    tensor_scan *t = ctx;
    size_t l = ident_len(a);
    if (!t->decl && l == strlen(t->name) && !strncmp(a, t->name, l)) {
        t->decl = dup_range(a + l, b);
        return t->decl ? 0 : -1;
    }
    akg_buf_appendf(&t->kept, "%s%.*s", t->kept.len ? "; " : "", (int)(b - a), a);
    return 0;
}

/* Drops tensor `name` from s's tensors; its "[SHAPE]: DTYPE" (malloc'd), or NULL. */
static char *drop_tensor(stage *s, const char *name)
{
    tensor_scan t = {name, NULL, {0}};
    for (int i = 0; i < s->n_sec && !t.decl; i++) {
        if (strcmp(s->sec[i].kind, "tensors"))
            continue;
        akg_buf_init(&t.kept, 0);
        if (each_item(s->sec[i].text, ';', tensor_item, &t) || !t.decl) {
            akg_buf_free(&t.kept);
            continue;
        }
        free(s->sec[i].text);
        s->sec[i].text = akg_buf_take(&t.kept);
    }
    return t.decl;
}

/* ---------- the composition ---------- */

static void section_merged(akg_buf *b, const stage *s1, const stage *s2, const char *kind,
                           const char *sep)
{
    int n = 0;
    const stage *st[2] = {s1, s2};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < st[k]->n_sec; i++)
            if (!strcmp(st[k]->sec[i].kind, kind) && st[k]->sec[i].text[0]) {
                akg_buf_appendf(b, "%s%s", n++ ? sep : "", st[k]->sec[i].text);
            }
    if (n)
        akg_buf_puts(b, "\n");
}

static void comment_block(akg_buf *b, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l)
            akg_buf_appendf(b, "%.*s\n", (int)l, p);
        p += l + (nl ? 1 : 0);
    }
}

/* The rank of a declaration "[SHAPE]: DTYPE" (its commas before the colon, plus one). */
static int decl_rank(const char *decl)
{
    int r = 1;
    for (const char *q = decl; *q && *q != ':'; q++)
        r += *q == ',';
    return r;
}

static int is_ident(const char *s)
{
    return ident_len(s) == strlen(s) && s[0];
}

char *akg_sketch_compose_stages(const char *first, const char *second, const char *leaf,
                                const char *name, char *err, size_t errlen)
{
    stage s1, s2;
    char *out = NULL, *decl = NULL, *decl2 = NULL;
    bind_scan *o1 = calloc(1, sizeof *o1), *i2 = calloc(1, sizeof *i2);
    char want[NAME_LEN + 16];
    snprintf(want, sizeof want, "input(\"%s\"", leaf);
    int p1 = parse_stage(first, &s1, err, errlen);
    int p2 = parse_stage(second, &s2, err, errlen);
    if (p1 || p2 || !o1 || !i2)
        goto done;
    if (rename_stage(&s1, "_1")) {
        snprintf(err, errlen, "the first stage's names could not be renamed");
        goto done;
    }
    o1->want = "output(0";
    if (drop_bind(&s1, o1) || !(decl = drop_tensor(&s1, o1->name))) {
        snprintf(err, errlen, "the first stage binds no output 0 tensor");
        goto done;
    }
    /* the second stage's input, renamed with the stage, becomes the first one's temporary */
    if (rename_stage(&s2, "_2")) {
        snprintf(err, errlen, "the second stage's names could not be renamed");
        goto done;
    }
    i2->want = want;
    if (drop_bind(&s2, i2) || !(decl2 = drop_tensor(&s2, i2->name))) {
        snprintf(err, errlen, "the second stage does not read the first one's result");
        goto done;
    }
    if (rename_one(&s2, i2->name, o1->name)) {
        snprintf(err, errlen, "out of memory composing stages");
        goto done;
    }
    /* a second tensor bound to it (the GEMM's operand and its epilogue's residual): the
     * temporary too, read in the shape it declares */
    for (int more = 0; more < 4; more++) {
        bind_scan extra = {.want = want};
        char *decl3 = NULL;
        if (drop_bind(&s2, &extra) || !(decl3 = drop_tensor(&s2, extra.name)))
            break;
        int same_dtype = !strcmp(strchr(decl3, ':') ? strchr(decl3, ':') : "", strchr(decl2, ':'));
        int r3 = decl_rank(decl3), r2b = decl_rank(decl2);
        free(decl3);
        if (!same_dtype || r3 != r2b) {
            snprintf(err, errlen, "the second stage reads the intermediate in two shapes");
            goto done;
        }
        if (rename_one(&s2, extra.name, o1->name)) {
            snprintf(err, errlen, "out of memory composing stages");
            goto done;
        }
    }
    int n2 = i2->n_dims;
    char(*dims2)[NAME_LEN] = i2->dims;
    /* the temporary must be read in the shape it is written */
    const char *sh1 = strchr(decl, ':'), *sh2 = strchr(decl2 ? decl2 : "", ':');
    int r1 = decl_rank(decl), r2 = decl_rank(decl2);
    if (!sh1 || !sh2 || r1 != r2 || n2 != o1->n_dims) {
        snprintf(err, errlen,
                 "the stage after it reads the intermediate as %s, the stage before writes it as "
                 "%s (an intermediate is read in the shape it is written)",
                 decl2 ? decl2 : "?", decl);
        goto done;
    }
    akg_buf b;
    akg_buf_init(&b, 0);
    akg_buf_appendf(&b,
                    "# %s: two stages in one kernel; the first writes its result into a slow\n"
                    "# temporary (%s) that the second reads in place of a tensor.\n"
                    "# stage 1: %s\n",
                    name, o1->name, s1.name);
    comment_block(&b, s1.comments);
    akg_buf_appendf(&b, "# stage 2: %s\n", s2.name);
    comment_block(&b, s2.comments);
    akg_buf_appendf(&b, "sketch %s {\n", name);
    akg_buf_puts(&b, "  symbols: ");
    section_merged(&b, &s1, &s2, "symbols", ", ");
    akg_buf_puts(&b, "  tensors: ");
    section_merged(&b, &s1, &s2, "tensors", "; ");
    const stage *st[2] = {&s1, &s2};
    /* each stage's constexprs, then each stage's params, a line each */
    for (int kind = 0; kind < 4; kind++)
        for (int i = 0; i < st[kind % 2]->n_sec; i++) {
            const section *sec = &st[kind % 2]->sec[i];
            if (!strcmp(sec->kind, kind < 2 ? "constexpr" : "params") && sec->text[0])
                akg_buf_appendf(&b, "  %s: %s\n", sec->kind, sec->text);
        }
    for (int i = 0; i < s1.n_sec; i++)
        if (!strcmp(s1.sec[i].kind, "bind") && s1.sec[i].text[0])
            akg_buf_appendf(&b, "  bind: %s\n", s1.sec[i].text);
    /* the second stage's sizes of the temporary, bound to the first stage's */
    int eq = 0;
    for (int i = 0; i < n2; i++)
        if (is_ident(dims2[i]))
            akg_buf_appendf(&b, "%s%s = %s", eq++ ? ", " : "  bind: ", dims2[i], o1->dims[i]);
    if (eq)
        akg_buf_puts(&b, "\n");
    for (int i = 0; i < s2.n_sec; i++)
        if (!strcmp(s2.sec[i].kind, "bind") && s2.sec[i].text[0])
            akg_buf_appendf(&b, "  bind: %s\n", s2.sec[i].text);
    const char *lb = strchr(decl, '['), *rb = strrchr(decl, ']');
    const char *dt = sh1 + 1;
    while (*dt == ' ')
        dt++;
    akg_buf_appendf(&b,
                    "\n  # stage 1 (%s) writes %s\n  %s = alloc(%.*s, dtype=%s, "
                    "llm_hint=[\"slow\", \"temp_workspace\"])\n",
                    s1.name, o1->name, o1->name, lb && rb ? (int)(rb - lb + 1) : 0, lb ? lb : "",
                    dt);
    akg_buf_appendf(&b, "%s\n\n  # stage 2 (%s) reads %s\n%s\n}\n", s1.body, s2.name, o1->name,
                    s2.body);
    out = akg_buf_take(&b);
    if (!out)
        snprintf(err, errlen, "out of memory composing stages");
done:
    stage_free(&s1);
    stage_free(&s2);
    free(o1);
    free(i2);
    free(decl);
    free(decl2);
    return out;
}
