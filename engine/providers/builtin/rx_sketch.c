/*
 * rx_sketch.c: what the sketch writers of the reduction, norm, scan and loss
 * rules share (see rx_sketch.h): the names of the sketch's tensors and
 * params, the bind: items that read them from the task, the expression
 * language in sketch terms, and the entry point that picks the writer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/sketch.h"
#include "rule_util.h"
#include "rules_reduction_core.h"
#include "rx_sketch.h"

int rx_fail(rx_sk *s, const char *fmt, ...)
{
    if (s->err && s->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err, s->errlen, fmt, ap);
        va_end(ap);
    }
    return AKG_EUNSUPPORTED;
}

/* ---------- names ---------- */

/* The names the writers use for their own symbols, tiles and loop variables, the
 * language's keywords and the bind: sources: a tensor or param of the task with one of
 * these names is renamed. */
static const char *const reserved[] = {
    "O",       "D",       "I",         "N",      "C",     "S",     "G",     "CG",     "B",
    "P",       "BLK",     "CH",        "DIM",    "o",     "d",     "q",     "c",      "p",
    "n",       "g",       "r",         "k",      "m",     "lo",    "hi",    "out",    "y",
    "lv",      "part",    "partv",     "parti",  "total", "acc",   "bv",    "bi",     "better",
    "w12",     "w1",      "w2",        "dp",     "dn",    "mean",  "var",   "rstd",   "sc",
    "sh",      "se",      "t",         "range",  "alloc", "load",  "store", "sketch", "bind",
    "symbols", "tensors", "constexpr", "params", "for",   "in",    "if",    "elif",   "else",
    "pass",    "and",     "or",        "not",    "True",  "False", "None",  "min",    "max",
    "ceil",    "sum",     "exp",       "log",    "abs",   "sqrt",  "where", "cast",   "fill",
    "gather",  "arange",  "transpose", "pt",     "pv",    "pk",    "mc",    "kc",     NULL};

static int is_reserved(const char *n)
{
    if (!n[0])
        return 1;
    for (int i = 0; reserved[i]; i++)
        if (!strcmp(reserved[i], n))
            return 1;
    /* the writers' numbered names: t0, st0, rv0, A0, ... */
    static const char *const stems[] = {"t", "st", "stf", "rv", "rvf",  "acc", "A",
                                        "r", "u",  "m",   "k",  "part", NULL};
    for (int i = 0; stems[i]; i++) {
        size_t l = strlen(stems[i]);
        if (!strncmp(n, stems[i], l) && n[l] >= '0' && n[l] <= '9')
            return 1;
    }
    return 0;
}

/* A sketch name for `want` (an identifier of the task), unique among `taken`. */
static void pick_name(char *out, const char *want, char taken[][RX_NAME], int n_taken)
{
    char base[RX_NAME];
    snprintf(base, sizeof base, "%.40s", want && want[0] ? want : "v");
    for (char *q = base; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              *q == '_'))
            *q = '_';
    if (base[0] >= '0' && base[0] <= '9')
        base[0] = '_';
    snprintf(out, RX_NAME, "%s", base);
    for (int tries = 0; tries < 100; tries++) {
        int clash = is_reserved(out);
        for (int i = 0; i < n_taken && !clash; i++)
            clash = !strcmp(taken[i], out);
        if (!clash)
            return;
        snprintf(out, RX_NAME, "%.40s_%d", base, tries + 1);
    }
}

static void name_everything(rx_sk *s)
{
    char taken[RX_MAX_IN + RX_MAX_P + RX_MAX_S][RX_NAME];
    int nt = 0;
    const cJSON *ins = cJSON_GetObjectItem(s->p, "inputs");
    s->n_in = cJSON_GetArraySize(ins);
    if (s->n_in > RX_MAX_IN)
        s->n_in = RX_MAX_IN;
    for (int k = 0; k < s->n_in; k++) {
        int fi = rx_input_index(s, k);
        pick_name(s->in[k], s->ref->forward_params[fi].name, taken, nt);
        snprintf(taken[nt++], RX_NAME, "%s", s->in[k]);
    }
    const cJSON *ts = cJSON_GetObjectItem(s->p, "tensors");
    s->n_p = cJSON_GetArraySize(ts);
    if (s->n_p > RX_MAX_P)
        s->n_p = RX_MAX_P;
    for (int k = 0; k < s->n_p; k++) {
        const cJSON *t = cJSON_GetArrayItem(ts, k);
        pick_name(s->pt[k], cJSON_GetStringValue(cJSON_GetObjectItem(t, "name")), taken, nt);
        snprintf(taken[nt++], RX_NAME, "%s", s->pt[k]);
    }
    const cJSON *ss = cJSON_GetObjectItem(s->p, "scalars");
    s->n_s = cJSON_GetArraySize(ss);
    if (s->n_s > RX_MAX_S)
        s->n_s = RX_MAX_S;
    for (int k = 0; k < s->n_s; k++) {
        const cJSON *o = cJSON_GetArrayItem(ss, k);
        pick_name(s->sc[k], cJSON_GetStringValue(cJSON_GetObjectItem(o, "name")), taken, nt);
        snprintf(taken[nt++], RX_NAME, "%s", s->sc[k]);
    }
}

int rx_input_index(const rx_sk *s, int k)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(s->p, "inputs"), k);
    int fi = v ? (int)v->valuedouble : 0;
    return fi >= 0 && (size_t)fi < s->ref->n_forward_params ? fi : 0;
}

const char *rx_input_dtype(const rx_sk *s, int k)
{
    const char *dt =
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(s->p, "input_dtypes"), k));
    return dt ? dt : "float32";
}

const char *rx_dtype(const char *dt)
{
    if (!dt || !strcmp(dt, "float32"))
        return "f32";
    if (!strcmp(dt, "int64"))
        return "i64";
    if (!strcmp(dt, "int32"))
        return "i32";
    if (!strcmp(dt, "bool"))
        return "bool";
    if (!strcmp(dt, "float64"))
        return "f64";
    return "f32";
}

/* ---------- expressions ---------- */

/* A param's default: an f32 value, to f32 precision. */
static void number(akg_buf *b, double v)
{
    char t[48];
    snprintf(t, sizeof t, "%.9g", v);
    if (!strpbrk(t, ".eEn"))
        strcat(t, ".0");
    akg_buf_puts(b, t);
}

/* A literal of the expression: in f32 computations written cast(v, f32), so that a
 * constant that meets only other scalars (`mul(0.5, delta)`) is an f32 value too, as the
 * reference computes it; a number that meets a tile takes the tile's dtype anyway. */
static void literal(akg_buf *b, const rx_names *n, const char *v)
{
    if (n->lit32)
        akg_buf_appendf(b, "cast(%s, f32)", v);
    else
        akg_buf_puts(b, v);
}

static void literal_num(akg_buf *b, const rx_names *n, double v)
{
    char t[48];
    snprintf(t, sizeof t, "%.17g", v);
    if (!strpbrk(t, ".eEn"))
        strcat(t, ".0");
    literal(b, n, t);
}

static const cJSON *arg(const cJSON *e, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(e, "a"), i);
}

void rx_expr(rx_sk *s, const cJSON *e, const rx_names *n)
{
    akg_buf *b = s->b;
    if (cJSON_IsNumber(e)) {
        literal_num(b, n, e->valuedouble);
        return;
    }
    const cJSON *v;
    if ((v = cJSON_GetObjectItem(e, "in"))) {
        int k = (int)v->valuedouble;
        const char *t = k >= 0 && k < RX_MAX_IN && n->in[k] ? n->in[k] : "?";
        if (strcmp(rx_input_dtype(s, k), "float32") != 0)
            akg_buf_appendf(b, "cast(%s, f32)", t);
        else
            akg_buf_puts(b, t);
        return;
    }
    if ((v = cJSON_GetObjectItem(e, "p"))) {
        int k = (int)v->valuedouble;
        akg_buf_puts(b, k >= 0 && k < RX_MAX_P && n->pt[k] ? n->pt[k] : "?");
        return;
    }
    if ((v = cJSON_GetObjectItem(e, "s"))) {
        int k = (int)v->valuedouble;
        akg_buf_puts(b, k >= 0 && k < s->n_s ? s->sc[k] : "?");
        return;
    }
    if ((v = cJSON_GetObjectItem(e, "st"))) {
        akg_buf_appendf(b, n->st ? n->st : "st%d", (int)v->valuedouble);
        return;
    }
    if ((v = cJSON_GetObjectItem(e, "rv"))) {
        akg_buf_appendf(b, n->rv ? n->rv : "rv%d", (int)v->valuedouble);
        return;
    }
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(e, "op"));
    const cJSON *a0 = arg(e, 0), *a1 = arg(e, 1);
    if (!op) {
        akg_buf_puts(b, "?");
        return;
    }
    if (!strcmp(op, "square")) {
        akg_buf_puts(b, "mul(");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ", ");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ")");
        return;
    }
    if ((!strcmp(op, "smooth_l1") || !strcmp(op, "huber")) && a0 && a1) {
        /* smooth_l1(d, beta) = 0.5 d^2 / beta if |d| < beta else |d| - beta / 2;
         * huber(d, delta) = 0.5 d^2 if |d| < delta else delta (|d| - delta / 2) */
        int sm = !strcmp(op, "smooth_l1");
        akg_buf_puts(b, "where(lt(abs(");
        rx_expr(s, a0, n);
        akg_buf_puts(b, "), ");
        rx_expr(s, a1, n);
        akg_buf_puts(b, "), ");
        if (sm)
            akg_buf_puts(b, "div(");
        akg_buf_puts(b, "mul(mul(");
        literal(b, n, "0.5");
        akg_buf_puts(b, ", ");
        rx_expr(s, a0, n);
        akg_buf_puts(b, "), ");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ")");
        if (sm) {
            akg_buf_puts(b, ", ");
            rx_expr(s, a1, n);
            akg_buf_puts(b, "), sub(abs(");
        } else {
            akg_buf_puts(b, ", mul(");
            rx_expr(s, a1, n);
            akg_buf_puts(b, ", sub(abs(");
        }
        rx_expr(s, a0, n);
        akg_buf_puts(b, "), mul(");
        literal(b, n, "0.5");
        akg_buf_puts(b, ", ");
        rx_expr(s, a1, n);
        akg_buf_puts(b, sm ? ")))" : "))))");
        return;
    }
    if (!strcmp(op, "xlogx") && a0) {
        /* t log t, 0 at t = 0 (and NaN below 0, as log gives) */
        akg_buf_puts(b, "where(eq(");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ", ");
        literal(b, n, "0.0");
        akg_buf_puts(b, "), ");
        literal(b, n, "0.0");
        akg_buf_puts(b, ", mul(");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ", log(");
        rx_expr(s, a0, n);
        akg_buf_puts(b, ")))");
        return;
    }
    const char *name = !strcmp(op, "reciprocal") ? "recip" : op;
    akg_buf_appendf(b, "%s(", name);
    const cJSON *a;
    int i = 0;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(e, "a"))
    {
        if (i++)
            akg_buf_puts(b, ", ");
        rx_expr(s, a, n);
    }
    akg_buf_puts(b, ")");
}

/* ---------- header and binding ---------- */

void rx_prod(rx_sk *s, int from, int to)
{
    if (from >= to) {
        akg_buf_puts(s->b, "1");
        return;
    }
    for (int i = from; i < to; i++)
        akg_buf_appendf(s->b, "%sA%d", i > from ? " * " : "", i);
}

void rx_dims(rx_sk *s)
{
    akg_buf_puts(s->b, "[");
    for (int i = 0; i < s->rank; i++)
        akg_buf_appendf(s->b, "%sA%d", i ? ", " : "", i);
    akg_buf_puts(s->b, "]");
}

void rx_head(rx_sk *s, const char *what, const char *extra_symbols)
{
    akg_buf_appendf(s->b, "# %s: %s\n", s->d->op_name, what);
    akg_buf_appendf(s->b, "sketch %s {\n  symbols: %s", s->d->op_name, extra_symbols);
    for (int i = 0; i < s->rank; i++)
        akg_buf_appendf(s->b, ", A%d", i);
    akg_buf_puts(s->b, "\n");
}

void rx_params_line(rx_sk *s)
{
    int any = 0;
    const cJSON *ss = cJSON_GetObjectItem(s->p, "scalars");
    for (int k = 0; k < s->n_s; k++) {
        if (s->skip_scalar & (1u << k))
            continue;
        akg_buf_appendf(s->b, "%s%s: f32 = ", any++ ? ", " : "  params: ", s->sc[k]);
        number(s->b, cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ss, k), "value")));
    }
    if (any)
        akg_buf_puts(s->b, "\n");
}

void rx_bind_scalars(rx_sk *s)
{
    const cJSON *ss = cJSON_GetObjectItem(s->p, "scalars");
    for (int k = 0; k < s->n_s; k++) {
        const char *fi =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ss, k), "from_init"));
        if (fi && !(s->skip_scalar & (1u << k)))
            akg_buf_appendf(s->b, ", %s = init(\"%s\")", s->sc[k], fi);
    }
}

void rx_bind_tensors(rx_sk *s, const char *shape)
{
    const cJSON *ts = cJSON_GetObjectItem(s->p, "tensors");
    for (int k = 0; k < s->n_p; k++) {
        const char *attr =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ts, k), "attr"));
        akg_buf_appendf(s->b, "%s%s = weight(\"%s\", %s)", k ? ", " : "", s->pt[k],
                        attr ? attr : "?", shape);
    }
}

void rx_loop_hints(rx_sk *s, const char *ind, int parallel)
{
    if (parallel)
        akg_buf_appendf(s->b, "%s@llm_hint(\"parallel\", \"%s\")\n", ind,
                        s->gpu ? "grididx" : "coreidx");
    if (s->precise)
        akg_buf_appendf(s->b, "%s@llm_hint(\"math\", \"precise\")\n", ind);
}

/* ---------- entry ---------- */

/* A bound sketch fixes the rank of each tensor: refuse inputs whose rank varies
 * between the probed cases. */
static int check_ranks(rx_sk *s)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(s->probe, "dyn_cases"))
    {
        const cJSON *in;
        int i = 0;
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(c, "inputs"))
        {
            const cJSON *main_in = akg_rule_probe_input(s->probe, i);
            int r = akg_rule_rank(in), r0 = akg_rule_rank(main_in);
            if (cJSON_GetObjectItem(in, "shape") && r != r0)
                return rx_fail(s,
                               "input %d has rank %d in one case and %d in another; a bound "
                               "sketch gives each tensor one rank (bind: cannot flatten a "
                               "varying number of dims)",
                               i, r0, r);
            i++;
        }
    }
    return AKG_OK;
}

static void dims_of(rx_sk *s)
{
    const cJSON *dims = cJSON_GetObjectItem(s->p, "dims");
    s->d0 = 0;
    s->d1 = s->rank;
    if (!dims || cJSON_GetObjectItem(dims, "all"))
        return;
    const cJSON *dim = cJSON_GetObjectItem(dims, "dim");
    int v = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dim, "value"));
    int n = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dims, "n"));
    if (n < 1)
        n = 1;
    if (v < 0)
        v += s->rank;
    s->d0 = v < 0 ? 0 : v;
    s->d1 = s->d0 + n > s->rank ? s->rank : s->d0 + n;
    if (s->rank == 0)
        s->d0 = s->d1 = 0;
}

/* The writers of reduce, rowmap and scan sketches say both designs, `if I == 1:` (the
 * contiguous rows) and `else:` (strided CH columns). When the run of dims ends with the
 * input's last dim, I is bound to 1: the strided branch could never run and is dropped.
 * The `if I == 1:` stays: inside it I is the constant 1 for the Coder too (the rows'
 * strides fold, their bounds become provable), which a binding `I = 1` alone does not
 * tell it. */
static int drop_strided_branch(rx_sk *s, akg_buf *b)
{
    const char *text = b->data;
    const char *if_line = text ? strstr(text, "\n  if I == 1:\n") : NULL;
    const char *else_line = if_line ? strstr(if_line, "\n  else:\n") : NULL;
    const char *end = else_line ? strstr(else_line, "\n}\n") : NULL;
    if (!end)
        return rx_fail(s, "internal: the sketch of %s has no rows branch", s->d->op_name);
    akg_buf out;
    akg_buf_init(&out, b->len + 1);
    akg_buf_append(&out, text, (size_t)(else_line - text) + 1);
    akg_buf_puts(&out, "}\n");
    if (akg_buf_status(&out)) {
        akg_buf_free(&out);
        return AKG_ENOMEM;
    }
    akg_buf_free(b);
    *b = out;
    return AKG_OK;
}

static int word_in(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        char before = p > text ? p[-1] : ' ', after = p[n];
        int ident_b = before == '_' || (before >= 'a' && before <= 'z') ||
                      (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9');
        int ident_a = after == '_' || (after >= 'a' && after <= 'z') ||
                      (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9');
        if (!ident_b && !ident_a)
            return 1;
    }
    return 0;
}

/* Drops the tunables BLK, CH and P from the constexpr line when the body does not use
 * them (a branch that was dropped, a design that needs no blocks). */
static int drop_unused_tunables(akg_buf *b)
{
    const char *text = b->data;
    const char *line = text ? strstr(text, "\n  constexpr: ") : NULL;
    const char *body = text ? strstr(text, "\n\n") : NULL;
    if (!line || !body || body < line)
        return AKG_OK;
    const char *eol = strchr(line + 1, '\n');
    akg_buf items;
    akg_buf_init(&items, (size_t)(eol - line) + 1);
    int kept = 0;
    const char *p = line + strlen("\n  constexpr: ");
    while (p < eol) {
        /* one item: up to the next ", " outside parentheses */
        const char *q = p;
        int depth = 0;
        while (q < eol && !(depth == 0 && q[0] == ',' && q[1] == ' ')) {
            depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
            q++;
        }
        char name[16];
        size_t nl = strcspn(p, " =");
        snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), p);
        int tunable = !strcmp(name, "BLK") || !strcmp(name, "CH") || !strcmp(name, "P");
        if (!tunable || word_in(body, name)) {
            akg_buf_puts(&items, kept++ ? ", " : "");
            akg_buf_append(&items, p, (size_t)(q - p));
        }
        p = q < eol ? q + 2 : eol;
    }
    akg_buf out;
    akg_buf_init(&out, b->len + 1);
    akg_buf_append(&out, text, (size_t)(line - text) + 1);
    if (kept) {
        akg_buf_puts(&out, "  constexpr: ");
        akg_buf_append(&out, items.data, items.len);
    }
    akg_buf_puts(&out, kept ? eol : eol + 1);
    akg_buf_free(&items);
    if (akg_buf_status(&out)) {
        akg_buf_free(&out);
        return AKG_ENOMEM;
    }
    akg_buf_free(b);
    *b = out;
    return AKG_OK;
}

static int write_sketch(akg_design *d, const akg_reference *ref, const cJSON *probe, int precise,
                        int gpu, const char *what, char *err, size_t errlen)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 18);
    rx_sk s;
    memset(&s, 0, sizeof s);
    s.b = &b;
    s.d = d;
    s.p = d->params;
    s.ref = ref;
    s.probe = probe;
    s.precise = precise;
    s.gpu = gpu;
    s.err = err;
    s.errlen = errlen;
    s.rank = akg_rule_rank(akg_rule_probe_input(probe, rx_input_index(&s, 0)));
    if (s.rank < 0 || s.rank > RX_MAX_RANK) {
        akg_buf_free(&b);
        return rx_fail(&s, "an input of rank %d (the limit is %d)", s.rank, RX_MAX_RANK);
    }
    name_everything(&s);
    dims_of(&s);
    int rc = check_ranks(&s);
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "design"));
    if (!rc) {
        if (kind && !strcmp(kind, "reduce"))
            rc = gpu ? rx_reduce_sketch_gpu(&s, what) : rx_reduce_sketch(&s, what);
        else if (kind && !strcmp(kind, "rowmap"))
            rc = gpu ? rx_rowmap_sketch_gpu(&s, what) : rx_rowmap_sketch(&s, what);
        else if (kind && !strcmp(kind, "scan"))
            rc = gpu ? rx_scan_sketch_gpu(&s, what) : rx_scan_sketch(&s, what);
        else if (kind && !strcmp(kind, "chnorm"))
            rc = rx_chnorm_sketch(&s);
        else if (kind && !strcmp(kind, "rowloss"))
            rc = rx_rowloss_sketch(&s);
        else
            rc = rx_fail(&s, "no sketch for a %s design '%s'", d->family, kind ? kind : "?");
    }
    if (!rc && akg_buf_status(&b))
        rc = rx_fail(&s, "the sketch of %s exceeds its size limit", d->op_name);
    if (!rc && s.d1 == s.rank && kind && strcmp(kind, "chnorm") && strcmp(kind, "rowloss"))
        rc = drop_strided_branch(&s, &b);
    if (!rc)
        rc = drop_unused_tunables(&b);

    if (rc) {
        akg_buf_free(&b);
        return rc;
    }
    /* the sketch as the language prints it (what `akg_cli sketch fmt` shows); a text the
     * parser refuses is the writers' bug, said as such */
    akg_sketch *sk = NULL;
    char *text = NULL;
    int prc = akg_sketch_parse(b.data, b.len, &sk, NULL);
    if (prc == 0)
        prc = akg_sketch_print(sk, &text);
    akg_sketch_free(sk);
    akg_buf_free(&b);
    if (prc == -ENOMEM || (prc == 0 && !text))
        return AKG_ENOMEM;
    if (prc)
        return rx_fail(&s, "internal: the sketch written for %s does not parse", d->op_name);
    free(d->sketch_text);
    d->sketch_text = text;
    return AKG_OK;
}

int akg_rx_write_sketch(akg_design *d, const akg_reference *ref, const cJSON *probe, int precise,
                        const char *what, char *err, size_t errlen)
{
    return write_sketch(d, ref, probe, precise, 0, what, err, errlen);
}

int akg_rx_write_sketch_gpu(akg_design *d, const akg_reference *ref, const cJSON *probe,
                            int precise, const char *what, char *err, size_t errlen)
{
    return write_sketch(d, ref, probe, precise, 1, what, err, errlen);
}
