/*
 * graph.c: parsing and validating the probe's op graph (see akg/graph.h).
 *
 * Everything the Designer later relies on is checked here once, so that a
 * rule can index shapes and arguments without re-checking: ids equal
 * positions, arguments refer to earlier values only (topological order),
 * shapes are non-negative and of rank at most AKG_GRAPH_MAX_RANK, dtypes are
 * sketch dtypes, outputs exist. A failure names the value (id, kind, op) and
 * what is wrong, because a malformed graph is a harness bug that someone has
 * to find.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/graph.h"

static const char *const graph_dtypes[] = {"f16", "bf16", "f32", "f64", "i8",
                                           "i16", "i32",  "i64", "u8",  "bool"};

const char *akg_graph_kind_name(akg_graph_kind k)
{
    switch (k) {
    case AKG_GRAPH_INPUT:
        return "input";
    case AKG_GRAPH_WEIGHT:
        return "weight";
    case AKG_GRAPH_BUFFER:
        return "buffer";
    case AKG_GRAPH_CONSTANT:
        return "constant";
    default:
        return "op";
    }
}

int akg_graph_is_leaf(const akg_graph_value *v)
{
    return v->kind != AKG_GRAPH_OP;
}

long akg_graph_numel(const akg_graph_value *v)
{
    long n = 1;
    for (int i = 0; i < v->rank; i++)
        n *= v->shape[i];
    return n;
}

static int is_integer(const cJSON *j)
{
    return cJSON_IsNumber(j) && isfinite(j->valuedouble) && j->valuedouble == floor(j->valuedouble);
}

/* "value 5 (op add)" for messages */
static void value_label(const akg_graph_value *v, char *buf, size_t len)
{
    if (v->kind == AKG_GRAPH_OP && v->op[0])
        snprintf(buf, len, "value %d (op %s)", v->id, v->op);
    else if (v->name[0])
        snprintf(buf, len, "value %d (%s %s)", v->id, akg_graph_kind_name(v->kind), v->name);
    else
        snprintf(buf, len, "value %d (%s)", v->id, akg_graph_kind_name(v->kind));
}

static int bad_value(char *err, size_t errlen, const akg_graph_value *v, const char *what)
{
    char label[256];
    value_label(v, label, sizeof label);
    return akg_fail(err, errlen, AKG_EINVAL, "malformed op graph: %s: %s", label, what);
}

static int read_int_list(const cJSON *arr, long *out, int max, int *n)
{
    if (!cJSON_IsArray(arr))
        return -1;
    int count = cJSON_GetArraySize(arr);
    if (count > max)
        return -1;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (!is_integer(it))
            return -1;
        out[i++] = (long)it->valuedouble;
    }
    *n = count;
    return 0;
}

static int parse_arg(const cJSON *j, akg_graph_arg *a)
{
    memset(a, 0, sizeof *a);
    if (cJSON_IsNumber(j)) {
        if (!is_integer(j))
            return -1;
        a->kind = AKG_GRAPH_ARG_VALUE;
        a->value = (int)j->valuedouble;
        return 0;
    }
    if (!cJSON_IsObject(j))
        return -1;
    const cJSON *none = cJSON_GetObjectItem(j, "none");
    if (cJSON_IsTrue(none)) {
        a->kind = AKG_GRAPH_ARG_NONE;
        return 0;
    }
    const cJSON *val = cJSON_GetObjectItem(j, "value");
    a->kind = AKG_GRAPH_ARG_NUMBER;
    if (cJSON_IsBool(val)) {
        a->is_bool = 1;
        a->number = cJSON_IsTrue(val) ? 1.0 : 0.0;
        return 0;
    }
    if (!cJSON_IsNumber(val))
        return -1;
    a->number = val->valuedouble;
    a->is_int = is_integer(val);
    return 0;
}

/* Fills v from the JSON object j (the id-th value); graph-wide checks are the caller's. */
static int parse_value(const cJSON *j, int id, akg_graph_value *v, char *err, size_t errlen)
{
    v->id = id;
    if (!cJSON_IsObject(j))
        return bad_value(err, errlen, v, "not an object");
    const cJSON *jid = cJSON_GetObjectItem(j, "id");
    if (!is_integer(jid) || (int)jid->valuedouble != id)
        return bad_value(err, errlen, v, "its \"id\" is not its position in \"values\"");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(j, "kind"));
    static const char *const kinds[] = {"input", "weight", "buffer", "constant", "op"};
    int k = -1;
    for (int i = 0; kind && i < 5; i++)
        if (!strcmp(kind, kinds[i]))
            k = i;
    if (k < 0)
        return bad_value(err, errlen, v,
                         "\"kind\" must be one of input, weight, buffer, constant, op");
    v->kind = (akg_graph_kind)k;
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(j, "name"));
    if (name && strlen(name) >= sizeof v->name)
        return bad_value(err, errlen, v, "its name is longer than 127 characters");
    if (name)
        snprintf(v->name, sizeof v->name, "%s", name);
    if (v->kind == AKG_GRAPH_OP) {
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(j, "op"));
        if (!op || !op[0] || strlen(op) >= sizeof v->op)
            return bad_value(err, errlen, v, "an op without an \"op\" name (or one too long)");
        snprintf(v->op, sizeof v->op, "%s", op);
    } else if ((v->kind == AKG_GRAPH_INPUT || v->kind == AKG_GRAPH_WEIGHT ||
                v->kind == AKG_GRAPH_BUFFER) &&
               !name) {
        return bad_value(err, errlen, v, "a leaf without a \"name\"");
    }
    if (v->kind == AKG_GRAPH_INPUT) {
        const cJSON *idx = cJSON_GetObjectItem(j, "index");
        if (!is_integer(idx) || idx->valuedouble < 0)
            return bad_value(err, errlen, v, "an input without a non-negative \"index\"");
        v->index = (int)idx->valuedouble;
    }
    if (v->kind == AKG_GRAPH_CONSTANT)
        v->constant = cJSON_GetObjectItem(j, "value");
    int rank = 0;
    if (read_int_list(cJSON_GetObjectItem(j, "shape"), v->shape, AKG_GRAPH_MAX_RANK, &rank))
        return bad_value(err, errlen, v,
                         "\"shape\" must be a list of at most 8 integers (0-d tensors: [])");
    for (int i = 0; i < rank; i++)
        if (v->shape[i] < 0)
            return bad_value(err, errlen, v, "a negative extent in \"shape\"");
    v->rank = rank;
    const cJSON *strides = cJSON_GetObjectItem(j, "strides");
    if (strides && !cJSON_IsNull(strides)) {
        int ns = 0;
        if (read_int_list(strides, v->strides, AKG_GRAPH_MAX_RANK, &ns) || ns != rank)
            return bad_value(err, errlen, v, "\"strides\" must be integers, one per dimension");
    }
    const char *dtype = cJSON_GetStringValue(cJSON_GetObjectItem(j, "dtype"));
    int dt_ok = 0;
    for (size_t i = 0; dtype && i < sizeof graph_dtypes / sizeof graph_dtypes[0]; i++)
        if (!strcmp(dtype, graph_dtypes[i]))
            dt_ok = 1;
    if (!dt_ok)
        return bad_value(err, errlen, v,
                         "\"dtype\" must be one of f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool");
    snprintf(v->dtype, sizeof v->dtype, "%s", dtype);
    const cJSON *line = cJSON_GetObjectItem(j, "line");
    if (line && !cJSON_IsNull(line)) {
        if (!is_integer(line) || line->valuedouble < 0)
            return bad_value(err, errlen, v, "\"line\" must be a line number or null");
        v->line = (int)line->valuedouble;
    }
    const char *module = cJSON_GetStringValue(cJSON_GetObjectItem(j, "module"));
    if (module)
        snprintf(v->module, sizeof v->module, "%s", module);
    if (v->kind != AKG_GRAPH_OP)
        return AKG_OK;
    const cJSON *attrs = cJSON_GetObjectItem(j, "attrs");
    if (attrs && !cJSON_IsObject(attrs))
        return bad_value(err, errlen, v, "\"attrs\" must be an object");
    v->attrs = attrs;
    const cJSON *args = cJSON_GetObjectItem(j, "args");
    if (!cJSON_IsArray(args))
        return bad_value(err, errlen, v, "an op without an \"args\" list");
    if (cJSON_GetArraySize(args) > AKG_GRAPH_MAX_ARGS)
        return bad_value(err, errlen, v, "more than 16 arguments");
    const cJSON *it;
    cJSON_ArrayForEach(it, args)
    {
        akg_graph_arg *a = &v->args[v->n_args];
        char what[160];
        if (parse_arg(it, a)) {
            snprintf(what, sizeof what,
                     "argument %d is neither a value id, {\"value\": number}, nor {\"none\": "
                     "true}",
                     v->n_args);
            return bad_value(err, errlen, v, what);
        }
        if (a->kind == AKG_GRAPH_ARG_VALUE && (a->value < 0 || a->value >= id)) {
            snprintf(what, sizeof what,
                     "argument %d refers to value %d, which is not an earlier value (values must "
                     "be in topological order)",
                     v->n_args, a->value);
            return bad_value(err, errlen, v, what);
        }
        v->n_args++;
    }
    return AKG_OK;
}

/* uses, consumers and is_output of every value */
static int link_consumers(akg_graph *g)
{
    size_t total = 0;
    for (int i = 0; i < g->n_values; i++)
        total += (size_t)g->values[i].n_args;
    g->consumer_pool = calloc(total ? total : 1, sizeof *g->consumer_pool);
    if (!g->consumer_pool)
        return AKG_ENOMEM;
    /* count distinct consumers first, then carve the pool */
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        for (int a = 0; a < v->n_args; a++) {
            if (v->args[a].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            akg_graph_value *src = &g->values[v->args[a].value];
            src->uses++;
            int seen = 0;
            for (int b = 0; b < a; b++)
                if (v->args[b].kind == AKG_GRAPH_ARG_VALUE && v->args[b].value == src->id)
                    seen = 1;
            if (!seen)
                src->n_consumers++;
        }
    }
    size_t off = 0;
    for (int i = 0; i < g->n_values; i++) {
        g->values[i].consumers = g->consumer_pool + off;
        off += (size_t)g->values[i].n_consumers;
        g->values[i].n_consumers = 0;
    }
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        for (int a = 0; a < v->n_args; a++) {
            if (v->args[a].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            akg_graph_value *src = &g->values[v->args[a].value];
            if (src->n_consumers == 0 || src->consumers[src->n_consumers - 1] != v->id)
                src->consumers[src->n_consumers++] = v->id;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        g->values[g->outputs[i]].uses++;
        g->values[g->outputs[i]].is_output = 1;
    }
    return AKG_OK;
}

void akg_graph_free(akg_graph *g)
{
    if (!g)
        return;
    free(g->values);
    free(g->outputs);
    free(g->consumer_pool);
    cJSON_Delete(g->json);
    free(g);
}

int akg_graph_parse(const cJSON *graph, akg_graph **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cJSON_IsObject(graph))
        return akg_fail(err, errlen, AKG_EINVAL, "malformed op graph: not an object");
    const cJSON *version = cJSON_GetObjectItem(graph, "version");
    if (!is_integer(version) || (int)version->valuedouble != AKG_GRAPH_VERSION)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "op graph of an unknown version (this engine reads version %d)",
                        AKG_GRAPH_VERSION);
    const cJSON *values = cJSON_GetObjectItem(graph, "values");
    const cJSON *outputs = cJSON_GetObjectItem(graph, "outputs");
    if (!cJSON_IsArray(values) || !cJSON_IsArray(outputs))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "malformed op graph: \"values\" and \"outputs\" must be lists");
    int n = cJSON_GetArraySize(values);
    if (n > AKG_GRAPH_MAX_VALUES)
        return akg_fail(err, errlen, AKG_EINVAL, "op graph of %d values (at most %d are read)", n,
                        AKG_GRAPH_MAX_VALUES);
    akg_graph *g = calloc(1, sizeof *g);
    if (!g)
        return AKG_ENOMEM;
    g->version = AKG_GRAPH_VERSION;
    g->json = cJSON_Duplicate(graph, 1);
    g->values = calloc(n ? (size_t)n : 1, sizeof *g->values);
    int no = cJSON_GetArraySize(outputs);
    g->outputs = calloc(no ? (size_t)no : 1, sizeof *g->outputs);
    if (!g->json || !g->values || !g->outputs) {
        akg_graph_free(g);
        return AKG_ENOMEM;
    }
    /* attrs and constants must point into our copy */
    const cJSON *copy = cJSON_GetObjectItem(g->json, "values");
    for (int i = 0; i < n; i++) {
        int rc = parse_value(cJSON_GetArrayItem(copy, i), i, &g->values[i], err, errlen);
        if (rc) {
            akg_graph_free(g);
            return rc;
        }
        g->n_values++;
    }
    if (no == 0) {
        akg_graph_free(g);
        return akg_fail(err, errlen, AKG_EINVAL, "malformed op graph: no outputs");
    }
    for (int i = 0; i < no; i++) {
        const cJSON *o = cJSON_GetArrayItem(outputs, i);
        if (!is_integer(o) || o->valuedouble < 0 || o->valuedouble >= n) {
            akg_graph_free(g);
            return akg_fail(err, errlen, AKG_EINVAL,
                            "malformed op graph: output %d is not the id of a value", i);
        }
        g->outputs[g->n_outputs++] = (int)o->valuedouble;
    }
    int rc = link_consumers(g);
    if (rc) {
        akg_graph_free(g);
        return rc;
    }
    *out = g;
    return AKG_OK;
}

int akg_graph_from_probe(const cJSON *probe, akg_graph **out, char *err, size_t errlen)
{
    *out = NULL;
    const cJSON *graph = cJSON_GetObjectItem(probe, "graph");
    if (!graph || cJSON_IsNull(graph)) {
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(probe, "graph_error"));
        return akg_fail(err, errlen, AKG_ENOTFOUND, "the probe traced no op graph%s%s",
                        why ? ": " : "", why ? why : "");
    }
    return akg_graph_parse(graph, out, err, errlen);
}

static const cJSON *attr(const akg_graph_value *v, const char *name)
{
    const cJSON *a = v->attrs ? cJSON_GetObjectItem(v->attrs, name) : NULL;
    return a && !cJSON_IsNull(a) ? a : NULL;
}

int akg_graph_attr_number(const akg_graph_value *v, const char *name, double *out)
{
    const cJSON *a = attr(v, name);
    if (cJSON_IsBool(a)) {
        *out = cJSON_IsTrue(a) ? 1.0 : 0.0;
        return AKG_OK;
    }
    if (!cJSON_IsNumber(a))
        return AKG_ENOTFOUND;
    *out = a->valuedouble;
    return AKG_OK;
}

int akg_graph_attr_ints(const akg_graph_value *v, const char *name, long *out, int max)
{
    const cJSON *a = attr(v, name);
    if (is_integer(a)) {
        if (max < 1)
            return -1;
        out[0] = (long)a->valuedouble;
        return 1;
    }
    int n = 0;
    if (!a || read_int_list(a, out, max, &n))
        return -1;
    return n;
}

const char *akg_graph_attr_string(const akg_graph_value *v, const char *name)
{
    return cJSON_GetStringValue(attr(v, name));
}
