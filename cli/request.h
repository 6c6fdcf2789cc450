/*
 * request.h: a request in words ("softmax over the last dim of a 512x4096
 * float32 tensor", "relu", "gelu of a 16x1024 f16 tensor") read by small,
 * fixed rules into an operator, shapes, a dtype and a dim, and written out as
 * a KernelBench-form reference. Only the operator families the built-in
 * Designer covers are known; every word the rules do not know is refused
 * with the word and what would work, never skipped. Pure: no I/O.
 */
#ifndef AKG_CLI_REQUEST_H
#define AKG_CLI_REQUEST_H

#include <stddef.h>

#define CLI_REQUEST_MAX_RANK 6

typedef enum {
    CLI_REQ_ELEMENTWISE, /* relu, gelu, sigmoid, ...: y = f(x), same shape */
    CLI_REQ_ROWWISE,     /* softmax, log_softmax, cumsum, cumprod: along one dim, same shape */
    CLI_REQ_REDUCE,      /* sum, mean, max, min, prod, argmax, argmin: along a dim or all */
    CLI_REQ_NORM,        /* layer_norm, rms_norm: over the last dim */
    CLI_REQ_MATMUL       /* two operands */
} cli_request_kind;

typedef struct {
    const char *op; /* canonical name, static: "softmax", "gelu_tanh", "matmul" */
    cli_request_kind kind;
    long shape[2][CLI_REQUEST_MAX_RANK];
    int rank[2];
    int nshapes;       /* operands whose shape is known (defaults included) */
    const char *dtype; /* "float32", "float16", "bfloat16", "float64" (static) */
    int dim;           /* as written (may be negative); for ROWWISE, REDUCE and NORM */
    int dim_all;       /* REDUCE over every element */
    int keepdim;
    int shape_default, dtype_default, dim_default; /* what the request did not say */
} cli_request;

/* Reads text into *r. Returns 0, or -1 with a message in err that names what was not
 * understood and what would work. */
int cli_request_parse(const char *text, cli_request *r, char *err, size_t errlen);

/* One line for the user: the request as understood, then the defaults taken, each with how to
 * say otherwise. */
void cli_request_describe(const cli_request *r, char *buf, size_t n);

/* A file name for the task: "softmax_512x4096_float32_lastdim". */
void cli_request_name(const cli_request *r, char *buf, size_t n);

/* The KernelBench-form reference (Model, get_inputs, get_init_inputs); text is the request as
 * typed, quoted in the docstring. Returns 0, or -1 when buf is too small. */
int cli_request_reference(const cli_request *r, const char *text, char *buf, size_t n);

/* The operators the rules know and how to ask, for the help and for refusals. */
const char *cli_request_help(void);

/* Whether a first line starts Python code (a paste) rather than a request in words. */
int cli_request_looks_like_code(const char *line);

#endif
