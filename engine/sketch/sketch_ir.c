/*
 * Sketch IR: the arena, diagnostics lists, dtype names and the read-only
 * walk API declared in akg/sketch.h.
 */
#include "sketch_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------ */

void *sketch_arena_alloc(sketch_arena *arena, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (size == 0)
        size = sizeof(max_align_t);
    sketch_arena_block *blk = arena->head;
    if (!blk || blk->size - blk->used < size) {
        size_t want = size > SKETCH_ARENA_BLOCK ? size : SKETCH_ARENA_BLOCK;
        if (arena->total + want > SKETCH_ARENA_CAP)
            return NULL;
        blk = malloc(sizeof *blk + want);
        if (!blk)
            return NULL;
        blk->next = arena->head;
        blk->used = 0;
        blk->size = want;
        arena->head = blk;
        arena->total += want;
    }
    void *p = (char *)blk->data + blk->used;
    blk->used += size;
    memset(p, 0, size);
    return p;
}

char *sketch_arena_strndup(sketch_arena *arena, const char *s, size_t n)
{
    char *p = sketch_arena_alloc(arena, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void sketch_arena_release(sketch_arena *arena)
{
    sketch_arena_block *blk = arena->head;
    while (blk) {
        sketch_arena_block *next = blk->next;
        free(blk);
        blk = next;
    }
    arena->head = NULL;
    arena->total = 0;
}

akg_sketch_span sketch_span_join(akg_sketch_span a, akg_sketch_span b)
{
    akg_sketch_span r = a;
    r.end_line = b.end_line;
    r.end_col = b.end_col;
    return r;
}

/* ---- literals and derived fields, shared by both parsers ----------------------- */

char *sketch_unquote(sketch_arena *arena, const char *quoted, size_t n)
{
    size_t s = 1, e = n > 1 ? n - 1 : 1;
    char *out = sketch_arena_alloc(arena, e - s + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = s; i < e; i++) {
        char c = quoted[i];
        if (c == '\\' && i + 1 < e) {
            char d = quoted[++i];
            out[k++] = d == 'n' ? '\n' : d == 't' ? '\t' : d;
        } else {
            out[k++] = c;
        }
    }
    out[k] = '\0';
    return out;
}

int64_t sketch_parse_int(const char *s, bool *overflow)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    *overflow = false;
    for (; *s; s++) {
        if (*s == '_')
            continue;
        int d = (*s >= '0' && *s <= '9')   ? *s - '0'
                : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10
                                           : *s - 'A' + 10;
        if (v > (uint64_t)(INT64_MAX - d) / (uint64_t)base) {
            *overflow = true;
            return 0;
        }
        v = v * (uint64_t)base + (uint64_t)d;
    }
    return (int64_t)v;
}

double sketch_parse_float(const char *text)
{
    char buf[64];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < sizeof buf; p++)
        if (*p != '_')
            buf[k++] = *p;
    buf[k] = '\0';
    return strtod(buf, NULL);
}

int sketch_fill_alloc(sketch_arena *arena, akg_sketch_stmt *st)
{
    akg_sketch_expr *call = st->value;
    const akg_sketch_expr *shape_kw = akg_sketch_expr_kwarg(call, "shape");
    st->alloc_shape = call->n_items > 0 ? call->items[0] : (akg_sketch_expr *)shape_kw;
    const akg_sketch_expr *dt = akg_sketch_expr_kwarg(call, "dtype");
    if (!dt && call->n_items > 1)
        dt = call->items[1];
    if (dt && (dt->kind == AKG_SKETCH_EXPR_NAME || dt->kind == AKG_SKETCH_EXPR_STRING))
        st->alloc_dtype = akg_dtype_from_name(dt->text);
    const akg_sketch_expr *h = akg_sketch_expr_kwarg(call, "llm_hint");
    if (!h)
        return 0;
    if (h->kind == AKG_SKETCH_EXPR_STRING) {
        st->alloc_hints = sketch_arena_alloc(arena, sizeof *st->alloc_hints);
        st->alloc_hint_spans = sketch_arena_alloc(arena, sizeof *st->alloc_hint_spans);
        if (!st->alloc_hints || !st->alloc_hint_spans)
            return -ENOMEM;
        st->alloc_hints[0] = h->text;
        st->alloc_hint_spans[0] = h->span;
        st->n_alloc_hints = 1;
    } else if (h->kind == AKG_SKETCH_EXPR_LIST && h->n_items) {
        st->alloc_hints = sketch_arena_alloc(arena, h->n_items * sizeof *st->alloc_hints);
        st->alloc_hint_spans = sketch_arena_alloc(arena, h->n_items * sizeof *st->alloc_hint_spans);
        if (!st->alloc_hints || !st->alloc_hint_spans)
            return -ENOMEM;
        for (size_t i = 0; i < h->n_items; i++) {
            if (h->items[i]->kind != AKG_SKETCH_EXPR_STRING)
                continue; /* the checker reports it */
            st->alloc_hint_spans[st->n_alloc_hints] = h->items[i]->span;
            st->alloc_hints[st->n_alloc_hints++] = h->items[i]->text;
        }
    }
    return 0;
}

void sketch_fill_range(akg_sketch_stmt *st)
{
    akg_sketch_expr *it = st->iter;
    if (!it || it->kind != AKG_SKETCH_EXPR_CALL || strcmp(it->text, "range") != 0 || it->n_kw)
        return;
    if (it->n_items == 1) {
        st->stop = it->items[0];
    } else if (it->n_items == 2 || it->n_items == 3) {
        st->start = it->items[0];
        st->stop = it->items[1];
        st->step = it->n_items == 3 ? it->items[2] : NULL;
    }
}

/* ---- diagnostics --------------------------------------------------------------- */

struct akg_sketch_diag_list {
    akg_sketch_diag *items;
    size_t n, cap;
    size_t dropped;
};

akg_sketch_diag_list *akg_sketch_diag_list_new(void)
{
    return calloc(1, sizeof(akg_sketch_diag_list));
}

void akg_sketch_diag_list_clear(akg_sketch_diag_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        free((char *)list->items[i].message);
    list->n = 0;
    list->dropped = 0;
}

void akg_sketch_diag_list_free(akg_sketch_diag_list *list)
{
    if (!list)
        return;
    akg_sketch_diag_list_clear(list);
    free(list->items);
    free(list);
}

size_t akg_sketch_diag_count(const akg_sketch_diag_list *list)
{
    return list ? list->n : 0;
}

const akg_sketch_diag *akg_sketch_diag_at(const akg_sketch_diag_list *list, size_t i)
{
    return list && i < list->n ? &list->items[i] : NULL;
}

size_t akg_sketch_diag_error_count(const akg_sketch_diag_list *list)
{
    size_t n = 0;
    for (size_t i = 0; list && i < list->n; i++)
        if (list->items[i].severity == AKG_SKETCH_ERROR)
            n++;
    return n;
}

static int sketch_diag_vadd(akg_sketch_diag_list *list, akg_sketch_severity severity,
                            akg_sketch_span span, const char *fmt, va_list ap)
{
    if (!list)
        return 0;
    if (list->n >= AKG_SKETCH_MAX_DIAGS) {
        list->dropped++;
        return 0;
    }
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        akg_sketch_diag *items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return -ENOMEM;
        list->items = items;
        list->cap = cap;
    }
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t len = strlen(buf);
    char *msg = malloc(len + 1);
    if (msg)
        memcpy(msg, buf, len + 1);
    if (!msg)
        return -ENOMEM;
    list->items[list->n].span = span;
    list->items[list->n].severity = severity;
    list->items[list->n].message = msg;
    list->n++;
    return 0;
}

int akg_sketch_diag_add(akg_sketch_diag_list *list, akg_sketch_severity severity,
                        akg_sketch_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = sketch_diag_vadd(list, severity, span, fmt, ap);
    va_end(ap);
    return rc;
}

static int sketch_diag_cmp(const void *pa, const void *pb)
{
    const akg_sketch_diag *a = pa, *b = pb;
    if (a->span.line != b->span.line)
        return a->span.line < b->span.line ? -1 : 1;
    if (a->span.col != b->span.col)
        return a->span.col < b->span.col ? -1 : 1;
    return 0;
}

/* Stable sort by position (insertion sort: lists are short and capped). */
void sketch_diag_sort(akg_sketch_diag_list *list);
void sketch_diag_sort(akg_sketch_diag_list *list)
{
    if (!list)
        return;
    for (size_t i = 1; i < list->n; i++) {
        akg_sketch_diag d = list->items[i];
        size_t j = i;
        while (j > 0 && sketch_diag_cmp(&list->items[j - 1], &d) > 0) {
            list->items[j] = list->items[j - 1];
            j--;
        }
        list->items[j] = d;
    }
}

char *akg_sketch_diag_format(const char *file, const akg_sketch_diag *diag)
{
    const char *sev = diag->severity == AKG_SKETCH_ERROR     ? "error"
                      : diag->severity == AKG_SKETCH_WARNING ? "warning"
                                                             : "note";
    int n = snprintf(NULL, 0, "%s:%u:%u: %s: %s", file ? file : "<sketch>", diag->span.line + 1,
                     diag->span.col + 1, sev, diag->message);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    snprintf(s, (size_t)n + 1, "%s:%u:%u: %s: %s", file ? file : "<sketch>", diag->span.line + 1,
             diag->span.col + 1, sev, diag->message);
    return s;
}

/* ---- dtypes ------------------------------------------------------------------- */

static const struct {
    const char *name;
    akg_dtype dtype;
} sketch_dtype_names[] = {
    {"bool", AKG_DTYPE_BOOL},   {"i8", AKG_DTYPE_I8},         {"i16", AKG_DTYPE_I16},
    {"i32", AKG_DTYPE_I32},     {"i64", AKG_DTYPE_I64},       {"u8", AKG_DTYPE_U8},
    {"f16", AKG_DTYPE_F16},     {"bf16", AKG_DTYPE_BF16},     {"f32", AKG_DTYPE_F32},
    {"f64", AKG_DTYPE_F64},     {"int8", AKG_DTYPE_I8},       {"int16", AKG_DTYPE_I16},
    {"int32", AKG_DTYPE_I32},   {"int64", AKG_DTYPE_I64},     {"uint8", AKG_DTYPE_U8},
    {"float16", AKG_DTYPE_F16}, {"bfloat16", AKG_DTYPE_BF16}, {"float32", AKG_DTYPE_F32},
    {"float64", AKG_DTYPE_F64}, {"fp16", AKG_DTYPE_F16},      {"fp32", AKG_DTYPE_F32},
};

const char *akg_dtype_name(akg_dtype dtype)
{
    for (size_t i = 0; i < sizeof sketch_dtype_names / sizeof sketch_dtype_names[0]; i++)
        if (sketch_dtype_names[i].dtype == dtype)
            return sketch_dtype_names[i].name;
    return "?";
}

akg_dtype akg_dtype_from_name(const char *name)
{
    if (!name)
        return AKG_DTYPE_UNKNOWN;
    for (size_t i = 0; i < sizeof sketch_dtype_names / sizeof sketch_dtype_names[0]; i++)
        if (strcmp(sketch_dtype_names[i].name, name) == 0)
            return sketch_dtype_names[i].dtype;
    return AKG_DTYPE_UNKNOWN;
}

/* ---- declarations --------------------------------------------------------------- */

void akg_sketch_free(akg_sketch *sketch)
{
    if (!sketch)
        return;
    free(sketch->values);
    sketch_arena arena = sketch->arena;
    sketch_arena_release(&arena); /* the sketch itself lives in its arena */
}

const char *akg_sketch_name(const akg_sketch *s)
{
    return s->name;
}
size_t akg_sketch_symbol_count(const akg_sketch *s)
{
    return s->n_symbols;
}
const char *akg_sketch_symbol_name(const akg_sketch *s, size_t i)
{
    return i < s->n_symbols ? s->symbols[i].name : NULL;
}

size_t akg_sketch_tensor_count(const akg_sketch *s)
{
    return s->n_tensors;
}
const char *akg_sketch_tensor_name(const akg_sketch *s, size_t i)
{
    return i < s->n_tensors ? s->tensors[i].name : NULL;
}
akg_dtype akg_sketch_tensor_dtype(const akg_sketch *s, size_t i)
{
    return i < s->n_tensors ? s->tensors[i].dtype : AKG_DTYPE_UNKNOWN;
}
size_t akg_sketch_tensor_rank(const akg_sketch *s, size_t i)
{
    return i < s->n_tensors ? s->tensors[i].rank : 0;
}
const akg_sketch_expr *akg_sketch_tensor_dim(const akg_sketch *s, size_t i, size_t d)
{
    return i < s->n_tensors && d < s->tensors[i].rank ? s->tensors[i].dims[d] : NULL;
}
long akg_sketch_tensor_find(const akg_sketch *s, const char *name)
{
    for (size_t i = 0; i < s->n_tensors; i++)
        if (strcmp(s->tensors[i].name, name) == 0)
            return (long)i;
    return -1;
}
bool akg_sketch_tensor_is_stored(const akg_sketch *s, size_t i)
{
    return i < s->n_tensors && s->tensors[i].stored;
}
bool akg_sketch_tensor_is_loaded(const akg_sketch *s, size_t i)
{
    return i < s->n_tensors && s->tensors[i].loaded;
}

size_t akg_sketch_const_count(const akg_sketch *s)
{
    return s->n_consts;
}
const char *akg_sketch_const_name(const akg_sketch *s, size_t i)
{
    return i < s->n_consts ? s->consts[i].name : NULL;
}
const akg_sketch_expr *akg_sketch_const_value(const akg_sketch *s, size_t i)
{
    return i < s->n_consts ? s->consts[i].value : NULL;
}
bool akg_sketch_const_is_tunable(const akg_sketch *s, size_t i)
{
    return i < s->n_consts && s->consts[i].tunable;
}
size_t akg_sketch_const_candidate_count(const akg_sketch *s, size_t i)
{
    return akg_sketch_const_is_tunable(s, i) ? s->consts[i].value->n_items : 0;
}
const akg_sketch_expr *akg_sketch_const_candidate(const akg_sketch *s, size_t i, size_t c)
{
    return c < akg_sketch_const_candidate_count(s, i) ? s->consts[i].value->items[c] : NULL;
}
size_t akg_sketch_const_choice(const akg_sketch *s, size_t i)
{
    return i < s->n_consts ? s->consts[i].choice : 0;
}
int akg_sketch_const_choose(akg_sketch *s, size_t i, size_t candidate)
{
    if (candidate >= akg_sketch_const_candidate_count(s, i))
        return -EINVAL;
    s->consts[i].choice = candidate;
    return 0;
}
int akg_sketch_const_int(const akg_sketch *s, size_t i, int64_t *out)
{
    if (i >= s->n_consts)
        return -EINVAL;
    akg_sketch_expr name = {.kind = AKG_SKETCH_EXPR_NAME, .text = s->consts[i].name};
    return akg_sketch_expr_eval(s, &name, NULL, 0, out);
}

size_t akg_sketch_param_count(const akg_sketch *s)
{
    return s->n_params;
}
const char *akg_sketch_param_name(const akg_sketch *s, size_t i)
{
    return i < s->n_params ? s->params[i].name : NULL;
}
akg_dtype akg_sketch_param_dtype(const akg_sketch *s, size_t i)
{
    return i < s->n_params ? s->params[i].dtype : AKG_DTYPE_UNKNOWN;
}
const akg_sketch_expr *akg_sketch_param_default(const akg_sketch *s, size_t i)
{
    return i < s->n_params ? s->params[i].def : NULL;
}

size_t akg_sketch_bind_count(const akg_sketch *s)
{
    return s->n_binds;
}
const char *akg_sketch_bind_name(const akg_sketch *s, size_t i)
{
    return i < s->n_binds ? s->binds[i].name : NULL;
}
const akg_sketch_expr *akg_sketch_bind_value(const akg_sketch *s, size_t i)
{
    return i < s->n_binds ? s->binds[i].value : NULL;
}
akg_sketch_span akg_sketch_bind_span(const akg_sketch *s, size_t i)
{
    akg_sketch_span none = {0, 0, 0, 0};
    return i < s->n_binds ? s->binds[i].item_span : none;
}
bool akg_sketch_has_binding(const akg_sketch *s)
{
    return s->n_binds > 0;
}

/* ---- statements ------------------------------------------------------------------ */

size_t akg_sketch_body_count(const akg_sketch *s)
{
    return s->body.n;
}
const akg_sketch_stmt *akg_sketch_body_at(const akg_sketch *s, size_t i)
{
    return i < s->body.n ? s->body.items[i] : NULL;
}
akg_sketch_stmt_kind akg_sketch_stmt_get_kind(const akg_sketch_stmt *st)
{
    return st->kind;
}
akg_sketch_span akg_sketch_stmt_span(const akg_sketch_stmt *st)
{
    return st->span;
}
size_t akg_sketch_stmt_hint_count(const akg_sketch_stmt *st)
{
    return st->n_hints;
}
size_t akg_sketch_stmt_hint_arg_count(const akg_sketch_stmt *st, size_t h)
{
    return h < st->n_hints ? st->hints[h].n_args : 0;
}
const char *akg_sketch_stmt_hint_arg(const akg_sketch_stmt *st, size_t h, size_t a)
{
    return h < st->n_hints && a < st->hints[h].n_args ? st->hints[h].args[a] : NULL;
}
const char *akg_sketch_stmt_hint_value(const akg_sketch_stmt *st, const char *kind)
{
    for (size_t h = 0; h < st->n_hints; h++) {
        if (st->hints[h].n_args > 0 && strcmp(st->hints[h].args[0], kind) == 0)
            return st->hints[h].n_args > 1 ? st->hints[h].args[1] : "";
    }
    return NULL;
}

const char *akg_sketch_for_var(const akg_sketch_stmt *st)
{
    return st->kind == AKG_SKETCH_STMT_FOR ? st->var : NULL;
}
const akg_sketch_expr *akg_sketch_for_start(const akg_sketch_stmt *st)
{
    return st->start;
}
const akg_sketch_expr *akg_sketch_for_stop(const akg_sketch_stmt *st)
{
    return st->stop;
}
const akg_sketch_expr *akg_sketch_for_step(const akg_sketch_stmt *st)
{
    return st->step;
}
size_t akg_sketch_stmt_body_count(const akg_sketch_stmt *st, int which)
{
    return which == 0 || which == 1 ? st->body[which].n : 0;
}
const akg_sketch_stmt *akg_sketch_stmt_body_at(const akg_sketch_stmt *st, int which, size_t i)
{
    if (which != 0 && which != 1)
        return NULL;
    return i < st->body[which].n ? st->body[which].items[i] : NULL;
}
const akg_sketch_expr *akg_sketch_if_cond(const akg_sketch_stmt *st)
{
    return st->cond;
}

const char *akg_sketch_alloc_name(const akg_sketch_stmt *st)
{
    return st->kind == AKG_SKETCH_STMT_ALLOC && st->n_targets ? st->targets[0] : NULL;
}
size_t akg_sketch_alloc_rank(const akg_sketch_stmt *st)
{
    return st->alloc_shape && st->alloc_shape->kind == AKG_SKETCH_EXPR_LIST
               ? st->alloc_shape->n_items
               : 0;
}
const akg_sketch_expr *akg_sketch_alloc_dim(const akg_sketch_stmt *st, size_t d)
{
    return d < akg_sketch_alloc_rank(st) ? st->alloc_shape->items[d] : NULL;
}
akg_dtype akg_sketch_alloc_dtype(const akg_sketch_stmt *st)
{
    return st->alloc_dtype;
}
size_t akg_sketch_alloc_hint_count(const akg_sketch_stmt *st)
{
    return st->n_alloc_hints;
}
const char *akg_sketch_alloc_hint(const akg_sketch_stmt *st, size_t i)
{
    return i < st->n_alloc_hints ? st->alloc_hints[i] : NULL;
}
bool akg_sketch_alloc_has_hint(const akg_sketch_stmt *st, const char *hint)
{
    for (size_t i = 0; i < st->n_alloc_hints; i++)
        if (strcmp(st->alloc_hints[i], hint) == 0)
            return true;
    return false;
}
akg_sketch_tier akg_sketch_alloc_tier(const akg_sketch_stmt *st)
{
    static const char *names[] = {"fastest", "fast", "medium", "slow"};
    for (size_t i = 0; i < st->n_alloc_hints; i++)
        for (size_t t = 0; t < 4; t++)
            if (strcmp(st->alloc_hints[i], names[t]) == 0)
                return (akg_sketch_tier)(AKG_SKETCH_TIER_FASTEST + t);
    return AKG_SKETCH_TIER_DEFAULT;
}

const akg_sketch_expr *akg_sketch_move_source(const akg_sketch_stmt *st)
{
    return st->src;
}
const akg_sketch_expr *akg_sketch_move_target(const akg_sketch_stmt *st)
{
    return st->dst;
}
const akg_sketch_expr *akg_sketch_move_option(const akg_sketch_stmt *st, const char *name)
{
    for (size_t i = 0; i < st->n_opts; i++)
        if (strcmp(st->opt_names[i], name) == 0)
            return st->opt_values[i];
    return NULL;
}

size_t akg_sketch_assign_target_count(const akg_sketch_stmt *st)
{
    return st->n_targets;
}
const char *akg_sketch_assign_target(const akg_sketch_stmt *st, size_t i)
{
    return i < st->n_targets ? st->targets[i] : NULL;
}
const char *akg_sketch_assign_op(const akg_sketch_stmt *st)
{
    return st->op ? st->op : "=";
}
const akg_sketch_expr *akg_sketch_assign_value(const akg_sketch_stmt *st)
{
    return st->value;
}
const akg_sketch_expr *akg_sketch_call_expr(const akg_sketch_stmt *st)
{
    return st->kind == AKG_SKETCH_STMT_CALL ? st->value : NULL;
}

/* ---- expressions ---------------------------------------------------------------------- */

akg_sketch_expr_kind akg_sketch_expr_get_kind(const akg_sketch_expr *e)
{
    return e->kind;
}
akg_sketch_span akg_sketch_expr_span(const akg_sketch_expr *e)
{
    return e->span;
}
int64_t akg_sketch_expr_int(const akg_sketch_expr *e)
{
    return e->ival;
}
double akg_sketch_expr_float(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_INT ? (double)e->ival : e->fval;
}
const char *akg_sketch_expr_text(const akg_sketch_expr *e)
{
    return e->text;
}
const akg_sketch_expr *akg_sketch_expr_lhs(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_BINARY || e->kind == AKG_SKETCH_EXPR_UNARY ? e->a : NULL;
}
const akg_sketch_expr *akg_sketch_expr_rhs(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_BINARY ? e->b : NULL;
}
const akg_sketch_expr *akg_sketch_expr_base(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_SUBSCRIPT ? e->a : NULL;
}
const akg_sketch_expr *akg_sketch_slice_start(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_SLICE ? e->a : NULL;
}
const akg_sketch_expr *akg_sketch_slice_stop(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_SLICE ? e->b : NULL;
}
const akg_sketch_expr *akg_sketch_slice_step(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_SLICE ? e->c : NULL;
}
size_t akg_sketch_expr_item_count(const akg_sketch_expr *e)
{
    return e->n_items;
}
const akg_sketch_expr *akg_sketch_expr_item(const akg_sketch_expr *e, size_t i)
{
    return i < e->n_items ? e->items[i] : NULL;
}
size_t akg_sketch_expr_kwarg_count(const akg_sketch_expr *e)
{
    return e->n_kw;
}
const char *akg_sketch_expr_kwarg_name(const akg_sketch_expr *e, size_t i)
{
    return i < e->n_kw ? e->kw_names[i] : NULL;
}
const akg_sketch_expr *akg_sketch_expr_kwarg_value(const akg_sketch_expr *e, size_t i)
{
    return i < e->n_kw ? e->kw_values[i] : NULL;
}
const akg_sketch_expr *akg_sketch_expr_kwarg(const akg_sketch_expr *e, const char *name)
{
    for (size_t i = 0; i < e->n_kw; i++)
        if (strcmp(e->kw_names[i], name) == 0)
            return e->kw_values[i];
    return NULL;
}

/* ---- evaluation -------------------------------------------------------------------------- */

#define SKETCH_EVAL_DEPTH 64

static int sketch_eval(const akg_sketch *s, const akg_sketch_expr *e, const akg_sketch_binding *b,
                       size_t nb, int64_t *out, int depth);

static int sketch_eval_name(const akg_sketch *s, const char *name, const akg_sketch_binding *b,
                            size_t nb, int64_t *out, int depth)
{
    for (size_t i = 0; i < nb; i++)
        if (b[i].name && strcmp(b[i].name, name) == 0) {
            *out = b[i].value;
            return 0;
        }
    for (size_t i = 0; i < s->n_consts; i++) {
        const sketch_const *c = &s->consts[i];
        if (strcmp(c->name, name) != 0 || !c->value)
            continue;
        if (c->tunable) {
            if (c->choice >= c->value->n_items)
                return -EINVAL;
            return sketch_eval(s, c->value->items[c->choice], b, nb, out, depth + 1);
        }
        return sketch_eval(s, c->value, b, nb, out, depth + 1);
    }
    return -EINVAL;
}

static int64_t sketch_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int sketch_eval(const akg_sketch *s, const akg_sketch_expr *e, const akg_sketch_binding *b,
                       size_t nb, int64_t *out, int depth)
{
    if (!e || depth > SKETCH_EVAL_DEPTH)
        return -EINVAL;
    int64_t x, y;
    switch (e->kind) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        *out = e->ival;
        return 0;
    case AKG_SKETCH_EXPR_NAME:
        return sketch_eval_name(s, e->text, b, nb, out, depth);
    case AKG_SKETCH_EXPR_UNARY:
        if (sketch_eval(s, e->a, b, nb, &x, depth + 1))
            return -EINVAL;
        if (strcmp(e->text, "-") == 0) {
            if (x == INT64_MIN)
                return -EINVAL;
            *out = -x;
        } else if (strcmp(e->text, "+") == 0) {
            *out = x;
        } else if (strcmp(e->text, "~") == 0) {
            *out = ~x;
        } else {
            *out = !x;
        }
        return 0;
    case AKG_SKETCH_EXPR_BINARY: {
        if (sketch_eval(s, e->a, b, nb, &x, depth + 1) ||
            sketch_eval(s, e->b, b, nb, &y, depth + 1))
            return -EINVAL;
        const char *op = e->text;
        int64_t r;
        if (strcmp(op, "+") == 0) {
            if (__builtin_add_overflow(x, y, &r))
                return -EINVAL;
        } else if (strcmp(op, "-") == 0) {
            if (__builtin_sub_overflow(x, y, &r))
                return -EINVAL;
        } else if (strcmp(op, "*") == 0) {
            if (__builtin_mul_overflow(x, y, &r))
                return -EINVAL;
        } else if (strcmp(op, "//") == 0 || strcmp(op, "%") == 0) {
            if (y == 0 || (x == INT64_MIN && y == -1))
                return -EINVAL;
            int64_t q = sketch_floor_div(x, y);
            r = op[0] == '%' ? x - q * y : q;
        } else if (strcmp(op, "**") == 0) {
            if (y < 0 || y > 62)
                return -EINVAL;
            r = 1;
            for (int64_t k = 0; k < y; k++)
                if (__builtin_mul_overflow(r, x, &r))
                    return -EINVAL;
        } else if (strcmp(op, "<") == 0) {
            r = x < y;
        } else if (strcmp(op, "<=") == 0) {
            r = x <= y;
        } else if (strcmp(op, ">") == 0) {
            r = x > y;
        } else if (strcmp(op, ">=") == 0) {
            r = x >= y;
        } else if (strcmp(op, "==") == 0) {
            r = x == y;
        } else if (strcmp(op, "!=") == 0) {
            r = x != y;
        } else if (strcmp(op, "and") == 0) {
            r = x && y;
        } else if (strcmp(op, "or") == 0) {
            r = x || y;
        } else if (strcmp(op, "&") == 0) {
            r = x & y;
        } else if (strcmp(op, "|") == 0) {
            r = x | y;
        } else if (strcmp(op, "^") == 0) {
            r = x ^ y;
        } else {
            return -EINVAL; /* "/" is true division, shifts are not index arithmetic */
        }
        *out = r;
        return 0;
    }
    case AKG_SKETCH_EXPR_CALL: {
        if (e->n_kw)
            return -EINVAL;
        const char *f = e->text;
        if ((strcmp(f, "min") == 0 || strcmp(f, "max") == 0) && e->n_items >= 1) {
            int64_t acc;
            if (sketch_eval(s, e->items[0], b, nb, &acc, depth + 1))
                return -EINVAL;
            for (size_t i = 1; i < e->n_items; i++) {
                if (sketch_eval(s, e->items[i], b, nb, &x, depth + 1))
                    return -EINVAL;
                acc = f[1] == 'i' ? (x < acc ? x : acc) : (x > acc ? x : acc);
            }
            *out = acc;
            return 0;
        }
        if (strcmp(f, "ceil") == 0 && e->n_items == 2) {
            if (sketch_eval(s, e->items[0], b, nb, &x, depth + 1) ||
                sketch_eval(s, e->items[1], b, nb, &y, depth + 1))
                return -EINVAL;
            if (y == 0 || (x == INT64_MIN && y == -1))
                return -EINVAL;
            *out = -sketch_floor_div(-x, y);
            return 0;
        }
        if (strcmp(f, "ceil") == 0 && e->n_items == 1)
            return sketch_eval(s, e->items[0], b, nb, out, depth + 1);
        return -EINVAL;
    }
    default:
        return -EINVAL;
    }
}

int akg_sketch_expr_eval(const akg_sketch *sketch, const akg_sketch_expr *e,
                         const akg_sketch_binding *bindings, size_t binding_count, int64_t *out)
{
    int64_t v;
    if (sketch_eval(sketch, e, bindings, binding_count, &v, 0))
        return -EINVAL;
    *out = v;
    return 0;
}

/* ---- values inferred by the checker ---------------------------------------------------------- */

long akg_sketch_value_find(const akg_sketch *s, const char *name)
{
    for (size_t i = 0; i < s->n_values; i++)
        if (strcmp(s->values[i].name, name) == 0)
            return (long)i;
    return -1;
}
akg_dtype akg_sketch_value_dtype(const akg_sketch *s, long v)
{
    return v >= 0 && (size_t)v < s->n_values ? s->values[v].dtype : AKG_DTYPE_UNKNOWN;
}
size_t akg_sketch_value_rank(const akg_sketch *s, long v)
{
    return v >= 0 && (size_t)v < s->n_values ? s->values[v].rank : 0;
}
bool akg_sketch_value_is_tile(const akg_sketch *s, long v)
{
    return v >= 0 && (size_t)v < s->n_values && s->values[v].tile;
}
