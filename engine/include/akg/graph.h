/*
 * graph.h: the probe's canonical op graph (schema v1) as a C structure.
 *
 * The harness traces forward at ATen level on the get_inputs() case and
 * canonicalises it so that every spelling of one computation gives the same
 * graph (the schema is the contract between the harness's trace.py and the
 * engine; see the issue "A Designer that reads what the reference computes").
 * The probe answer carries it as `graph` (or `graph: null` and `graph_error`).
 *
 * akg_graph_parse validates the JSON and decodes it: leaves (inputs,
 * weights, buffers, constants) and ops, each op's arguments as value refs or
 * numbers, shapes, strides, dtypes, source lines and modules, the outputs,
 * and for every value who reads it. A malformed graph is refused with a
 * message that names the value and what is wrong with it. The graph keeps a
 * private copy of the JSON: attrs and constants point into it and live as
 * long as the graph.
 */
#ifndef AKG_GRAPH_H
#define AKG_GRAPH_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define AKG_GRAPH_VERSION 1
#define AKG_GRAPH_MAX_RANK 8
#define AKG_GRAPH_MAX_VALUES 4096
#define AKG_GRAPH_MAX_ARGS 16

typedef enum {
    AKG_GRAPH_INPUT,    /* an argument of forward (index: its position) */
    AKG_GRAPH_WEIGHT,   /* a parameter of the model (name: dotted, as named_parameters()) */
    AKG_GRAPH_BUFFER,   /* a buffer of the model (name: as named_buffers()) */
    AKG_GRAPH_CONSTANT, /* a tensor made inside forward from no other (constant: its values) */
    AKG_GRAPH_OP        /* an operation over earlier values */
} akg_graph_kind;

typedef enum {
    AKG_GRAPH_ARG_VALUE,  /* value: an earlier value's id */
    AKG_GRAPH_ARG_NUMBER, /* number: a Python number (is_int, is_bool tell which kind) */
    AKG_GRAPH_ARG_NONE    /* None */
} akg_graph_arg_kind;

typedef struct {
    akg_graph_arg_kind kind;
    int value;
    double number;
    int is_int, is_bool;
} akg_graph_arg;

typedef struct {
    int id;
    akg_graph_kind kind;
    char name[128]; /* INPUT: forward's parameter name; WEIGHT/BUFFER: the dotted name */
    int index;      /* INPUT: position in get_inputs() */
    char op[64];    /* OP: canonical name ("matmul", "relu") or "aten.<name>" */
    akg_graph_arg args[AKG_GRAPH_MAX_ARGS];
    int n_args;
    const cJSON *attrs;    /* OP: an object (never NULL for an op); owned by the graph */
    const cJSON *constant; /* CONSTANT: the nested list of values, or NULL */
    int rank;
    long shape[AKG_GRAPH_MAX_RANK];
    long strides[AKG_GRAPH_MAX_RANK]; /* 0s when the graph gave none */
    char dtype[8];                    /* sketch names: "f32", "bool", ... */
    int line;                         /* 1-based line in the reference, 0 when unknown */
    char module[128];                 /* the submodule running ("" the model itself) */
    int uses;                         /* how many arguments and outputs read this value */
    int *consumers; /* the ops that read it, each once, in order (points into the graph) */
    int n_consumers;
    int is_output; /* 1 when an output of forward */
} akg_graph_value;

typedef struct akg_graph {
    int version;
    akg_graph_value *values;
    int n_values;
    int *outputs;
    int n_outputs;
    cJSON *json;        /* the graph's JSON (a copy): attrs and constants point into it */
    int *consumer_pool; /* storage of every value's consumers */
} akg_graph;

/* Parses and validates a `graph` object of a probe answer. On success *out is
 * a graph the caller frees with akg_graph_free (the cJSON is copied, not
 * kept). On failure returns AKG_EINVAL (or AKG_ENOMEM) and fills err with
 * which value is wrong and why; *out is NULL. */
int akg_graph_parse(const cJSON *graph, akg_graph **out, char *err, size_t errlen);
void akg_graph_free(akg_graph *g);

/* The probe's graph: AKG_OK with *out set; AKG_ENOTFOUND when the probe has
 * no graph (the message gives graph_error when the harness sent one); or the
 * status of akg_graph_parse. */
int akg_graph_from_probe(const cJSON *probe, akg_graph **out, char *err, size_t errlen);

/* 1 for inputs, weights, buffers and constants. */
int akg_graph_is_leaf(const akg_graph_value *v);
/* "input", "weight", "buffer", "constant", "op". */
const char *akg_graph_kind_name(akg_graph_kind k);
/* Element count of a value (1 for rank 0). */
long akg_graph_numel(const akg_graph_value *v);

/* An attribute of an op as a number: AKG_OK, or AKG_ENOTFOUND when absent or
 * null (or not a number; bools read as 0/1). */
int akg_graph_attr_number(const akg_graph_value *v, const char *name, double *out);
/* An attribute as a list of integers (a single integer reads as one): the
 * count read (at most max), or -1 when absent or not integers. */
int akg_graph_attr_ints(const akg_graph_value *v, const char *name, long *out, int max);
/* An attribute as a string, or NULL. */
const char *akg_graph_attr_string(const akg_graph_value *v, const char *name);

#endif
