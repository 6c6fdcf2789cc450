/*
 * sketch_bind_py.c: the Python of a sketch's bind: section (see
 * akg/sketch_bind.h and the language reference's "Binding a sketch to its
 * task").
 *
 * Everything the kernel needs at run time is read from the task here, in
 * the order the bind: items are written: forward's arguments, Model's
 * parameters, buffers and attributes (ModelNew runs Model's constructor body,
 * so they exist as Model builds them; the classes, helpers, constants and
 * imports of the reference's file that body reads are copied ahead of
 * ModelNew), the constructor's arguments,
 * and symbols computed from those. Every check the binding implies (ranks,
 * sizes that must agree, dtypes, element counts, the constructor values a
 * kernel was specialised to) raises a ValueError or TypeError that names the
 * bind item, so a misuse of the kernel is a clear error, never a wrong result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/sketch_bind.h"
#include "akg/task_carry.h"

typedef enum { K_NONE, K_TENSOR, K_SYMBOL, K_PARAM, K_CONST } name_kind;

typedef struct {
    const akg_sketch *sk;
    const akg_reference *ref;
    const cJSON *probe;
    akg_buf *b;
    char *err;
    size_t errlen;
    int status;
    bool bound_sym[256];
    akg_buf late; /* checks made after the last item */
} gen;

static int gfail(gen *g, const char *fmt, const char *a, const char *c)
{
    if (!g->status) {
        char msg[600];
        snprintf(msg, sizeof msg, fmt, a ? a : "", c ? c : "");
        g->status = akg_fail(g->err, g->errlen, AKG_EUNSUPPORTED, "%s", msg);
    }
    return g->status;
}

static name_kind kind_of(const akg_sketch *sk, const char *name, size_t *index)
{
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++)
        if (!strcmp(akg_sketch_tensor_name(sk, i), name))
            return *index = i, K_TENSOR;
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
        if (!strcmp(akg_sketch_symbol_name(sk, i), name))
            return *index = i, K_SYMBOL;
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++)
        if (!strcmp(akg_sketch_param_name(sk, i), name))
            return *index = i, K_PARAM;
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++)
        if (!strcmp(akg_sketch_const_name(sk, i), name))
            return *index = i, K_CONST;
    return K_NONE;
}

static const char *torch_dtype(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_BOOL:
        return "torch.bool";
    case AKG_DTYPE_I8:
        return "torch.int8";
    case AKG_DTYPE_I16:
        return "torch.int16";
    case AKG_DTYPE_I32:
        return "torch.int32";
    case AKG_DTYPE_I64:
        return "torch.int64";
    case AKG_DTYPE_U8:
        return "torch.uint8";
    case AKG_DTYPE_F16:
        return "torch.float16";
    case AKG_DTYPE_BF16:
        return "torch.bfloat16";
    case AKG_DTYPE_F64:
        return "torch.float64";
    default:
        return "torch.float32";
    }
}

/* A Python expression for an integer expression of the sketch (symbols as s_<name>). */
static void py_expr(gen *g, akg_buf *b, const akg_sketch_expr *e)
{
    if (!e)
        return;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        akg_buf_appendf(b, "%lld", (long long)akg_sketch_expr_int(e));
        return;
    case AKG_SKETCH_EXPR_FLOAT:
        akg_buf_appendf(b, "%s", akg_sketch_expr_text(e));
        return;
    case AKG_SKETCH_EXPR_NAME: {
        const char *n = akg_sketch_expr_text(e);
        size_t i;
        name_kind k = kind_of(g->sk, n, &i);
        if (k == K_SYMBOL) {
            akg_buf_appendf(b, "s_%s", n);
        } else if (k == K_CONST) {
            int64_t v;
            if (akg_sketch_const_int(g->sk, i, &v) == 0)
                akg_buf_appendf(b, "%lld", (long long)v);
            else
                gfail(g, "bind: constexpr '%s' has no integer value", n, NULL);
        } else {
            gfail(g, "bind: '%s' cannot appear in an integer expression of the binding", n, NULL);
        }
        return;
    }
    case AKG_SKETCH_EXPR_UNARY:
        akg_buf_appendf(b, "(%s",
                        !strcmp(akg_sketch_expr_text(e), "not") ? "not " : akg_sketch_expr_text(e));
        py_expr(g, b, akg_sketch_expr_lhs(e));
        akg_buf_puts(b, ")");
        return;
    case AKG_SKETCH_EXPR_BINARY:
        akg_buf_puts(b, "(");
        py_expr(g, b, akg_sketch_expr_lhs(e));
        akg_buf_appendf(b, " %s ", akg_sketch_expr_text(e));
        py_expr(g, b, akg_sketch_expr_rhs(e));
        akg_buf_puts(b, ")");
        return;
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        size_t n = akg_sketch_expr_item_count(e);
        if (!strcmp(f, "ceil") && n == 2) {
            akg_buf_puts(b, "_akg_cdiv(");
            py_expr(g, b, akg_sketch_expr_item(e, 0));
            akg_buf_puts(b, ", ");
            py_expr(g, b, akg_sketch_expr_item(e, 1));
            akg_buf_puts(b, ")");
            return;
        }
        if (!strcmp(f, "floor_div") && n == 2) {
            akg_buf_puts(b, "(");
            py_expr(g, b, akg_sketch_expr_item(e, 0));
            akg_buf_puts(b, " // ");
            py_expr(g, b, akg_sketch_expr_item(e, 1));
            akg_buf_puts(b, ")");
            return;
        }
        if (!strcmp(f, "min") || !strcmp(f, "max")) {
            akg_buf_appendf(b, "%s(", f);
            for (size_t i = 0; i < n; i++) {
                if (i)
                    akg_buf_puts(b, ", ");
                py_expr(g, b, akg_sketch_expr_item(e, i));
            }
            akg_buf_puts(b, ")");
            return;
        }
        gfail(g, "bind: %s() is not an integer operation of the binding", f, NULL);
        return;
    }
    default:
        gfail(g, "bind: this expression is not an integer expression", NULL, NULL);
    }
}

static const char *str_arg(const akg_sketch_expr *call, size_t i)
{
    if (i >= akg_sketch_expr_item_count(call))
        return NULL;
    const akg_sketch_expr *a = akg_sketch_expr_item(call, i);
    return akg_sketch_expr_get_kind(a) == AKG_SKETCH_EXPR_STRING ? akg_sketch_expr_text(a) : NULL;
}

static bool int_arg(const akg_sketch_expr *call, size_t i, int64_t *v)
{
    if (i >= akg_sketch_expr_item_count(call))
        return false;
    const akg_sketch_expr *a = akg_sketch_expr_item(call, i);
    if (akg_sketch_expr_get_kind(a) != AKG_SKETCH_EXPR_INT)
        return false;
    *v = akg_sketch_expr_int(a);
    return true;
}

/* The Python expression that reads forward argument ARG (a name or a position). */
static void forward_arg(gen *g, akg_buf *b, const akg_sketch_expr *call)
{
    const char *name = str_arg(call, 0);
    int64_t pos;
    if (name) {
        bool found = false;
        for (size_t i = 0; i < g->ref->n_forward_params; i++)
            found |= !strcmp(g->ref->forward_params[i].name, name);
        if (!found)
            gfail(g, "bind: forward has no argument '%s'", name, NULL);
        akg_buf_appendf(b, "%s", name);
    } else if (int_arg(call, 0, &pos)) {
        if (pos < 0 || (size_t)pos >= g->ref->n_forward_params)
            gfail(g, "bind: input(%s) is past forward's arguments", "index", NULL);
        else
            akg_buf_appendf(b, "%s", g->ref->forward_params[pos].name);
    } else {
        gfail(g, "bind: input() takes forward's argument name (a string) or position", NULL, NULL);
    }
}

/* self.<path>, a numeric part as an index (nn.Sequential's "mlp.0.weight": self.mlp[0].weight) */
static void model_path(akg_buf *b, const char *path)
{
    akg_buf_puts(b, "self");
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ".");
        size_t digits = strspn(p, "0123456789");
        akg_buf_appendf(b, digits == n && n ? "[%.*s]" : ".%.*s", (int)n, p);
        p += n + (p[n] == '.');
    }
}

/* A number read by attr(PATH[, I]), init(NAME[, I]) or input(ARG). */
static void number_source(gen *g, akg_buf *b, const akg_sketch_expr *call)
{
    const char *f = akg_sketch_expr_text(call);
    int64_t idx;
    bool has_idx = int_arg(call, 1, &idx);
    akg_buf_puts(b, "_akg_pick(");
    if (!strcmp(f, "attr")) {
        const char *p = str_arg(call, 0);
        if (!p) {
            gfail(g, "bind: attr() takes a dotted path such as \"conv.stride\"", NULL, NULL);
            return;
        }
        model_path(b, p);
    } else if (!strcmp(f, "init")) {
        const char *n = str_arg(call, 0);
        if (!n || akg_reference_init_param(g->ref, n) < 0) {
            gfail(g, "bind: Model's constructor has no argument '%s'", n ? n : "?", NULL);
            return;
        }
        akg_buf_appendf(b, "self._akg_init[\"%s\"]", n);
    } else if (!strcmp(f, "input")) {
        forward_arg(g, b, call);
    } else {
        gfail(g, "bind: %s() does not give a number", f, NULL);
        return;
    }
    char *label = akg_sketch_expr_to_string(call);
    akg_buf_puts(b, ", ");
    const char *test = str_arg(call, 1);
    if (test) { /* a string value tested for equality: 1 or 0 */
        akg_buf_puts(b, "\"");
        for (const char *p = test; *p; p++)
            akg_buf_appendf(b, "%s%c", (*p == '"' || *p == '\\') ? "\\" : "", *p);
        akg_buf_puts(b, "\", ");
    } else {
        akg_buf_appendf(b, "%lld, ", has_idx ? (long long)idx : -1LL);
    }
    /* the source as written, as a Python string literal */
    akg_buf_puts(b, "\"bind ");
    for (const char *p = label ? label : f; *p; p++)
        akg_buf_appendf(b, "%s%c", (*p == '"' || *p == '\\') ? "\\" : "", *p);
    akg_buf_puts(b, "\")");
    free(label);
}

/* Model's constructor, statement for statement (but super().__init__()): everything the kernel
 * reads (weights, buffers, attributes, layers) exists in ModelNew as Model builds it, with the
 * same random draws, so ModelNew matches Model even before a state_dict is copied. */
static void rebuild_attrs(gen *g, akg_buf *b)
{
    const char *body = g->ref->init_body;
    for (const char *line = body; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n)
            akg_buf_appendf(b, "        %.*s\n", (int)n, line);
        else
            akg_buf_puts(b, "\n");
        line = nl ? nl + 1 : NULL;
    }
}

/* ---- the reference's code the constructor reads ------------------------------------------- */

/* What Model's constructor defaults and body read from the reference's module (a class it
 * builds, a helper, a constant, an import: `self.act = LeakyClip()`, `slope=SLOPE`), copied in
 * source order ahead of ModelNew by the TaskConstructor's tracing (akg/task_carry.h, where the
 * choice of a copy over an import is explained), so that model_new.py stands alone as Model's
 * file does. A name the reference does not define stays a NameError at import, naming it. */
static void reference_code(gen *g, akg_buf *out)
{
    const akg_reference *ref = g->ref;
    const char *roots[65];
    size_t nroots = 0;
    for (size_t i = 0; i < ref->n_init_params && nroots < 64; i++)
        if (ref->init_params[i].default_text)
            roots[nroots++] = ref->init_params[i].default_text;
    if (ref->init_body)
        roots[nroots++] = ref->init_body;
    if (nroots == 0 || !ref->path)
        return;
    char *src = NULL;
    size_t len = 0;
    char err[256];
    if (akg_read_file(ref->path, 16u << 20, &src, &len, err, sizeof err) != AKG_OK)
        return;
    static const char *const replaced[] = {
        "Model", "ModelNew", "get_inputs", "get_init_inputs", "get_inputs_dyn_list", "_akg_inputs"};
    akg_buf code;
    akg_buf_init(&code, 4u << 20);
    int n = akg_python_carry(src, len, roots, nroots, replaced,
                             sizeof replaced / sizeof replaced[0], &code);
    if (n > 0) {
        akg_buf_puts(out, "# from the reference: the code its constructor reads\n");
        akg_buf_append(out, code.data, code.len);
        akg_buf_puts(out, "\n\n");
    }
    akg_buf_free(&code);
    free(src);
}

static const char helpers[] =
    "def _akg_cdiv(a, b):\n"
    "    return -(-a // b)\n"
    "\n"
    "\n"
    "def _akg_pick(value, index, what):\n"
    "    \"\"\"A number from an attribute, constructor argument or forward argument; index\n"
    "    picks an element of a tuple or list (a plain number serves every index); a string\n"
    "    index asks whether the value is that string (1 or 0).\"\"\"\n"
    "    if isinstance(index, str):\n"
    "        return int(isinstance(value, str) and value == index)\n"
    "    if isinstance(value, torch.Tensor) and value.dim() == 0:\n"
    "        value = value.item()\n"
    "    if isinstance(value, (tuple, list)):\n"
    "        if index < 0 or index >= len(value):\n"
    "            raise ValueError(\"%s: element %d of %r does not exist\" % (what, index, value))\n"
    "        value = value[index]\n"
    "    if isinstance(value, bool):\n"
    "        value = int(value)\n"
    "    if not isinstance(value, (int, float)):\n"
    "        raise TypeError(\"%s: expected a number, got %r\" % (what, value))\n"
    "    return value\n"
    "\n"
    "\n"
    "def _akg_tensor(value, what, dtype, ndim, device):\n"
    "    \"\"\"A contiguous tensor of the dtype the kernel was built for.\"\"\"\n"
    "    if not isinstance(value, torch.Tensor):\n"
    "        raise TypeError(\"%s: expected a tensor, got %s\" % (what, type(value).__name__))\n"
    "    if value.dtype != dtype:\n"
    "        raise TypeError(\"%s: this kernel takes %s, got %s\" % (what, dtype, value.dtype))\n"
    "    if device is not None and value.device.type != device:\n"
    "        raise TypeError(\"%s: this kernel runs on %s tensors, got one on %s\" % (what, "
    "device, value.device))\n"
    "    if value.dim() != ndim:\n"
    "        raise ValueError(\"%s: expected %d dimensions, got shape %s\" % (what, ndim, "
    "tuple(value.shape)))\n"
    "    return value.detach().contiguous()\n"
    "\n"
    "\n"
    "def _akg_check(got, want, what):\n"
    "    if got != want:\n"
    "        raise ValueError(\"%s: size %d where the kernel needs %d\" % (what, got, want))\n"
    "\n"
    "\n";

/* One tensor item: input/weight/output with an optional SHAPE. */
static void tensor_item(gen *g, akg_buf *b, const char *name, size_t ti,
                        const akg_sketch_expr *call, const char *device)
{
    const char *f = akg_sketch_expr_text(call);
    akg_dtype dt = akg_sketch_tensor_dtype(g->sk, ti);
    const akg_sketch_expr *shape = NULL;
    size_t nitems = akg_sketch_expr_item_count(call);
    if (nitems >= 2 &&
        akg_sketch_expr_get_kind(akg_sketch_expr_item(call, 1)) == AKG_SKETCH_EXPR_LIST)
        shape = akg_sketch_expr_item(call, 1);
    size_t rank = shape ? akg_sketch_expr_item_count(shape) : akg_sketch_tensor_rank(g->sk, ti);
    char what[256];
    if (!strcmp(f, "output")) {
        int64_t idx = 0;
        int_arg(call, 0, &idx);
        akg_buf_appendf(b, "        t_%s = torch.empty((", name);
        for (size_t d = 0; d < rank; d++) {
            py_expr(g, b,
                    shape ? akg_sketch_expr_item(shape, d) : akg_sketch_tensor_dim(g->sk, ti, d));
            akg_buf_puts(b, rank == 1 ? "," : (d + 1 < rank ? ", " : ""));
        }
        akg_buf_appendf(b, "), dtype=%s, device=_dev)\n", torch_dtype(dt));
        return;
    }
    if (!strcmp(f, "input")) {
        snprintf(what, sizeof what, "input %s", name);
        akg_buf_appendf(b, "        t_%s = _akg_tensor(", name);
        forward_arg(g, b, call);
    } else {
        const char *p = str_arg(call, 0);
        if (!p) {
            gfail(g, "bind: weight() takes a dotted path such as \"ln.weight\"", NULL, NULL);
            return;
        }
        snprintf(what, sizeof what, "weight %s", p);
        akg_buf_appendf(b, "        t_%s = _akg_tensor(", name);
        model_path(b, p);
    }
    akg_buf_appendf(b, ", \"%s\", %s, %zu, %s)\n", what, torch_dtype(dt), rank, device);
    akg_buf_appendf(b, "        if _dev is None:\n            _dev = t_%s.device\n", name);
    for (size_t d = 0; d < rank; d++) {
        const akg_sketch_expr *e =
            shape ? akg_sketch_expr_item(shape, d) : akg_sketch_tensor_dim(g->sk, ti, d);
        size_t si;
        if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME &&
            kind_of(g->sk, akg_sketch_expr_text(e), &si) == K_SYMBOL && si < 256 &&
            !g->bound_sym[si]) {
            akg_buf_appendf(b, "        s_%s = t_%s.shape[%zu]\n", akg_sketch_expr_text(e), name,
                            d);
            g->bound_sym[si] = true;
            continue;
        }
        akg_buf_appendf(b, "        _akg_check(t_%s.shape[%zu], ", name, d);
        py_expr(g, b, e);
        akg_buf_appendf(b, ", \"%s: dimension %zu\")\n", what, d);
    }
    /* the sketch's tensor is the row-major reshape: the same number of elements (checked once
     * every symbol is bound) */
    akg_buf_appendf(&g->late, "        _akg_check(t_%s.numel(), 1", name);
    for (size_t d = 0; d < akg_sketch_tensor_rank(g->sk, ti); d++) {
        akg_buf_puts(&g->late, " * ");
        py_expr(g, &g->late, akg_sketch_tensor_dim(g->sk, ti, d));
    }
    akg_buf_appendf(&g->late, ", \"%s: number of elements\")\n", what);
}

static int bind_items(gen *g, const akg_sketch *sk, const akg_reference *ref, akg_buf *out,
                      char *err, size_t errlen);

int akg_sketch_bind_python(const akg_sketch *sk, const akg_reference *ref, const cJSON *probe,
                           akg_buf *out, char *err, size_t errlen)
{
    gen g = {.sk = sk, .ref = ref, .probe = probe, .b = out, .err = err, .errlen = errlen};
    akg_buf_init(&g.late, 1u << 20);
    int rc = bind_items(&g, sk, ref, out, err, errlen);
    akg_buf_free(&g.late);
    return rc;
}

static int bind_items(gen *g, const akg_sketch *sk, const akg_reference *ref, akg_buf *out,
                      char *err, size_t errlen)
{
    if (!akg_sketch_has_binding(sk))
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "sketch %s has no bind: section, so it cannot be run for a task; add "
                        "bind: items for its tensors, symbols and params",
                        akg_sketch_name(sk));
    akg_buf_puts(out, helpers);
    reference_code(g, out);
    /* __init__: Model's signature, its arguments kept, the attributes read rebuilt */
    akg_buf_puts(out, "class ModelNew(nn.Module):\n    def __init__(self");
    for (size_t i = 0; i < ref->n_init_params; i++) {
        const akg_ref_param *p = &ref->init_params[i];
        akg_buf_appendf(out, ", %s", p->name);
        if (p->default_text)
            akg_buf_appendf(out, "=%s", p->default_text);
    }
    akg_buf_puts(out, "):\n        super().__init__()\n        self._akg_init = {");
    for (size_t i = 0, n = 0; i < ref->n_init_params; i++) {
        const char *nm = ref->init_params[i].name;
        if (nm[0] == '*')
            continue;
        akg_buf_appendf(out, "%s\"%s\": %s", n++ ? ", " : "", nm, nm);
    }
    akg_buf_puts(out, "}\n");
    rebuild_attrs(g, out);
    size_t nb = akg_sketch_bind_count(sk);
    /* constexpr specialisations */
    for (size_t i = 0; i < nb && !g->status; i++) {
        size_t k;
        const char *name = akg_sketch_bind_name(sk, i);
        if (kind_of(sk, name, &k) != K_CONST)
            continue;
        int64_t v;
        if (akg_sketch_const_int(sk, k, &v) != 0) {
            gfail(g, "bind: constexpr '%s' has no integer value", name, NULL);
            break;
        }
        akg_buf_appendf(out, "        _v = ");
        number_source(g, out, akg_sketch_bind_value(sk, i));
        char *src = akg_sketch_expr_to_string(akg_sketch_bind_value(sk, i));
        akg_buf_appendf(out,
                        "\n        if _v != %lld:\n            raise ValueError(\"this kernel was "
                        "designed for %s = %lld (its constexpr, bound to ",
                        (long long)v, name, (long long)v);
        for (const char *p = src ? src : "?"; *p; p++)
            akg_buf_appendf(out, "%s%c", (*p == '"' || *p == '\\') ? "\\" : "", *p);
        akg_buf_appendf(out,
                        "); the model gives %%r: design a kernel for this model\" %% (_v,))\n");
        free(src);
    }
    /* _akg_bind */
    akg_buf_puts(out, "\n    def _akg_bind(self");
    for (size_t i = 0; i < ref->n_forward_params; i++)
        akg_buf_appendf(out, ", %s", ref->forward_params[i].name);
    akg_buf_puts(out, "):\n        _dev = None\n");
    for (size_t i = 0; i < nb && !g->status; i++) {
        const char *name = akg_sketch_bind_name(sk, i);
        const akg_sketch_expr *v = akg_sketch_bind_value(sk, i);
        size_t k;
        name_kind kind = kind_of(sk, name, &k);
        bool call = akg_sketch_expr_get_kind(v) == AKG_SKETCH_EXPR_CALL;
        const char *f = call ? akg_sketch_expr_text(v) : "";
        switch (kind) {
        case K_TENSOR:
            if (!call || (strcmp(f, "input") && strcmp(f, "weight") && strcmp(f, "output")))
                gfail(g, "bind: tensor '%s' comes from input(), weight() or output()", name, NULL);
            else
                tensor_item(g, out, name, k, v, "_AKG_DEVICE");
            break;
        case K_SYMBOL:
            akg_buf_appendf(out, "        s_%s = ", name);
            if (call && (!strcmp(f, "input") || !strcmp(f, "attr") || !strcmp(f, "init"))) {
                akg_buf_puts(out, "int(");
                number_source(g, out, v);
                akg_buf_puts(out, ")\n");
            } else {
                py_expr(g, out, v);
                akg_buf_puts(out, "\n");
            }
            if (k < 256)
                g->bound_sym[k] = true;
            break;
        case K_PARAM:
            akg_buf_appendf(out, "        p_%s = float(", name);
            number_source(g, out, v);
            akg_buf_puts(out, ")\n");
            break;
        case K_CONST:
            break; /* checked once, in __init__ */
        default:
            gfail(g, "bind: '%s' is not a tensor, symbol, param or constexpr of the sketch", name,
                  NULL);
        }
    }
    if (g->status)
        return g->status;
    /* unbound params take their defaults */
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
        const char *name = akg_sketch_param_name(sk, i);
        bool bound = false;
        for (size_t j = 0; j < nb; j++)
            bound |= !strcmp(akg_sketch_bind_name(sk, j), name);
        if (bound)
            continue;
        const akg_sketch_expr *d = akg_sketch_param_default(sk, i);
        if (!d) {
            gfail(g, "bind: param '%s' has neither a binding nor a default", name, NULL);
            return g->status;
        }
        char *t = akg_sketch_expr_to_string(d);
        akg_buf_appendf(out, "        p_%s = float(%s)\n", name, t ? t : "0");
        free(t);
    }
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
        if (i < 256 && !g->bound_sym[i]) {
            gfail(g, "bind: symbol '%s' is never bound", akg_sketch_symbol_name(sk, i), NULL);
            return g->status;
        }
    if (g->late.len)
        akg_buf_append(out, g->late.data, g->late.len);
    akg_buf_puts(out, "        tensors = [");
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++)
        akg_buf_appendf(out, "%st_%s", i ? ", " : "", akg_sketch_tensor_name(sk, i));
    akg_buf_puts(out, "]\n        symbols = [");
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
        akg_buf_appendf(out, "%sint(s_%s)", i ? ", " : "", akg_sketch_symbol_name(sk, i));
    akg_buf_puts(out, "]\n        params = [");
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++)
        akg_buf_appendf(out, "%sp_%s", i ? ", " : "", akg_sketch_param_name(sk, i));
    akg_buf_puts(out, "]\n");
    /* the forward result: output(0), output(1), ... */
    int64_t max_out = -1;
    const char *outs[64] = {0};
    for (size_t i = 0; i < nb; i++) {
        const akg_sketch_expr *v = akg_sketch_bind_value(sk, i);
        int64_t idx;
        if (akg_sketch_expr_get_kind(v) == AKG_SKETCH_EXPR_CALL &&
            !strcmp(akg_sketch_expr_text(v), "output") && int_arg(v, 0, &idx) && idx >= 0 &&
            idx < 64) {
            outs[idx] = akg_sketch_bind_name(sk, i);
            if (idx > max_out)
                max_out = idx;
        }
    }
    if (max_out < 0)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "bind: no tensor is bound to output(0); the kernel would return nothing");
    for (int64_t i = 0; i <= max_out; i++)
        if (!outs[i])
            return akg_fail(err, errlen, AKG_EUNSUPPORTED, "bind: output(%lld) is not bound",
                            (long long)i);
    if (max_out == 0) {
        akg_buf_appendf(out, "        return tensors, symbols, params, t_%s\n", outs[0]);
    } else {
        akg_buf_puts(out, "        return tensors, symbols, params, (");
        for (int64_t i = 0; i <= max_out; i++)
            akg_buf_appendf(out, "%st_%s", i ? ", " : "", outs[i]);
        akg_buf_puts(out, ")\n");
    }
    if (akg_buf_status(out))
        return akg_fail(err, errlen, AKG_ENOMEM, "model_new.py exceeds its size limit");
    return AKG_OK;
}
