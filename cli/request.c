/*
 * request.c: requests in words become KernelBench references, by rules.
 *
 * The text is lowered to words ("log_softmax", "log-softmax" and "Log
 * Softmax" read alike; "512x4096", "512 x 4096", "(512, 4096)" and "512 by
 * 4096" are one shape). Each word must be one of: an operator phrase of the
 * table below (the families the built-in Designer covers), a dtype, a shape,
 * a dim ("dim 1", "axis -1", "the last dim", "all" for a reduction over every
 * element, "keepdim"), or a filler word ("of", "a", "tensor", "generate",
 * ...). Anything else is refused, quoted, with what would work: a request is
 * never half-understood. What the request leaves out takes a stated default
 * (shape 256x1024, float32, the last dim) that the CLI shows before running.
 * Operators that need more than shapes in words (convolutions, pooling,
 * losses, attention) are named in the refusal with the way that works for
 * them: paste a reference or a model snippet.
 */
#include "request.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 64
#define WORD_LEN 48
#define MAX_ELEMENTS                                                                               \
    (1L << 27) /* 512 MiB of float32: a request is for a kernel, not a load test                   \
                */

static const long default_shape[] = {256, 1024};
static const long default_matmul[] = {256, 256};

typedef struct {
    const char *phrase; /* words separated by one space */
    const char *op;
    cli_request_kind kind;
} op_phrase;

/* Longer phrases first: "log softmax" before "softmax", "matrix product" before "product". */
static const op_phrase op_phrases[] = {
    {"log softmax", "log_softmax", CLI_REQ_ROWWISE},
    {"logsoftmax", "log_softmax", CLI_REQ_ROWWISE},
    {"softmax", "softmax", CLI_REQ_ROWWISE},
    {"cumulative sum", "cumsum", CLI_REQ_ROWWISE},
    {"prefix sum", "cumsum", CLI_REQ_ROWWISE},
    {"cumsum", "cumsum", CLI_REQ_ROWWISE},
    {"cumulative product", "cumprod", CLI_REQ_ROWWISE},
    {"cumprod", "cumprod", CLI_REQ_ROWWISE},
    {"leaky relu", "leaky_relu", CLI_REQ_ELEMENTWISE},
    {"leakyrelu", "leaky_relu", CLI_REQ_ELEMENTWISE},
    {"relu", "relu", CLI_REQ_ELEMENTWISE},
    {"gelu tanh", "gelu_tanh", CLI_REQ_ELEMENTWISE},
    {"tanh gelu", "gelu_tanh", CLI_REQ_ELEMENTWISE},
    {"gelu", "gelu", CLI_REQ_ELEMENTWISE},
    {"hard sigmoid", "hardsigmoid", CLI_REQ_ELEMENTWISE},
    {"hardsigmoid", "hardsigmoid", CLI_REQ_ELEMENTWISE},
    {"hard tanh", "hardtanh", CLI_REQ_ELEMENTWISE},
    {"hardtanh", "hardtanh", CLI_REQ_ELEMENTWISE},
    {"sigmoid", "sigmoid", CLI_REQ_ELEMENTWISE},
    {"tanh", "tanh", CLI_REQ_ELEMENTWISE},
    {"silu", "silu", CLI_REQ_ELEMENTWISE},
    {"swish", "silu", CLI_REQ_ELEMENTWISE},
    {"selu", "selu", CLI_REQ_ELEMENTWISE},
    {"elu", "elu", CLI_REQ_ELEMENTWISE},
    {"softplus", "softplus", CLI_REQ_ELEMENTWISE},
    {"softsign", "softsign", CLI_REQ_ELEMENTWISE},
    {"layer normalization", "layer_norm", CLI_REQ_NORM},
    {"layer normalisation", "layer_norm", CLI_REQ_NORM},
    {"layer norm", "layer_norm", CLI_REQ_NORM},
    {"layernorm", "layer_norm", CLI_REQ_NORM},
    {"rms normalization", "rms_norm", CLI_REQ_NORM},
    {"rms normalisation", "rms_norm", CLI_REQ_NORM},
    {"rms norm", "rms_norm", CLI_REQ_NORM},
    {"rmsnorm", "rms_norm", CLI_REQ_NORM},
    {"matrix multiplication", "matmul", CLI_REQ_MATMUL},
    {"matrix multiply", "matmul", CLI_REQ_MATMUL},
    {"matrix product", "matmul", CLI_REQ_MATMUL},
    {"matmul", "matmul", CLI_REQ_MATMUL},
    {"gemm", "matmul", CLI_REQ_MATMUL},
    {"mm", "matmul", CLI_REQ_MATMUL},
    {"argmax", "argmax", CLI_REQ_REDUCE},
    {"argmin", "argmin", CLI_REQ_REDUCE},
    {"sum", "sum", CLI_REQ_REDUCE},
    {"mean", "mean", CLI_REQ_REDUCE},
    {"average", "mean", CLI_REQ_REDUCE},
    {"maximum", "max", CLI_REQ_REDUCE},
    {"amax", "max", CLI_REQ_REDUCE},
    {"max", "max", CLI_REQ_REDUCE},
    {"minimum", "min", CLI_REQ_REDUCE},
    {"amin", "min", CLI_REQ_REDUCE},
    {"min", "min", CLI_REQ_REDUCE},
    {"product", "prod", CLI_REQ_REDUCE},
    {"prod", "prod", CLI_REQ_REDUCE},
};

static const struct {
    const char *word, *dtype;
} dtype_words[] = {
    {"float32", "float32"}, {"f32", "float32"},       {"fp32", "float32"},   {"float", "float32"},
    {"single", "float32"},  {"float16", "float16"},   {"f16", "float16"},    {"fp16", "float16"},
    {"half", "float16"},    {"bfloat16", "bfloat16"}, {"bf16", "bfloat16"},  {"float64", "float64"},
    {"f64", "float64"},     {"fp64", "float64"},      {"double", "float64"},
};

static const char *const int_dtype_words[] = {
    "int8",  "int16", "int32", "int64", "i8",   "i16",     "i32",      "i64",
    "uint8", "u8",    "bool",  "int",   "long", "integer", "integers", "boolean"};

/* Operators the rules do not build, with why: they need more than shapes in words. */
static const struct {
    const char *word, *why;
} beyond_words[] = {
    {"conv", "a convolution needs channels, kernel size, stride and padding"},
    {"convolution", "a convolution needs channels, kernel size, stride and padding"},
    {"conv1d", "a convolution needs channels, kernel size, stride and padding"},
    {"conv2d", "a convolution needs channels, kernel size, stride and padding"},
    {"conv3d", "a convolution needs channels, kernel size, stride and padding"},
    {"pool", "pooling needs a window, stride and padding"},
    {"pooling", "pooling needs a window, stride and padding"},
    {"maxpool", "pooling needs a window, stride and padding"},
    {"avgpool", "pooling needs a window, stride and padding"},
    {"loss", "a loss needs its targets and reduction"},
    {"entropy", "a loss needs its targets and reduction"},
    {"mse", "a loss needs its targets and reduction"},
    {"attention", "attention needs its heads, masks and projections"},
    {"batchnorm", "a batch norm needs its statistics and mode (training or eval)"},
    {"groupnorm", "a group norm needs its groups and affine weights"},
};

static const char *const filler_words[] = {
    "a",        "an",     "the",           "of",          "over",        "along",
    "across",   "on",     "for",           "with",        "to",          "in",
    "into",     "and",    "tensor",        "tensors",     "matrix",      "matrices",
    "input",    "inputs", "array",         "vector",      "shape",       "shaped",
    "size",     "sized",  "element",       "elements",    "elementwise", "wise",
    "generate", "make",   "write",         "create",      "build",       "give",
    "me",       "please", "kernel",        "operator",    "op",          "operation",
    "compute",  "apply",  "function",      "activation",  "i",           "want",
    "need",     "dtype",  "type",          "precision",   "values",      "torch",
    "that",     "takes",  "approximation", "approximate", "entries",     "data",
    "fast",     "is",
};

typedef struct {
    char w[MAX_WORDS][WORD_LEN];
    int n;
} words;

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int in_list(const char *w, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w, list[i]) == 0)
            return 1;
    return 0;
}

/* Lowercase words; separators become spaces, "×" and "*" become "x", '_' and a '-' that is not a
 * sign become spaces. Returns -1 when the text has too many or too long words. */
static int split_words(const char *text, words *out, char *err, size_t errlen)
{
    char norm[1024];
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 2 < sizeof norm; p++) {
        unsigned char ch = *p;
        if (ch == 0xc3 && p[1] == 0x97) { /* U+00D7 MULTIPLICATION SIGN */
            norm[n++] = 'x';
            p++;
            continue;
        }
        if (ch == '-') {
            int sign = isdigit(p[1]) && (n == 0 || norm[n - 1] == ' ');
            norm[n++] = sign ? '-' : ' ';
            continue;
        }
        if (ch == '*') {
            norm[n++] = 'x';
            continue;
        }
        if (isalnum(ch))
            norm[n++] = (char)tolower(ch);
        else
            norm[n++] = ' ';
    }
    norm[n] = '\0';
    out->n = 0;
    for (char *tok = strtok(norm, " "); tok; tok = strtok(NULL, " ")) {
        if (out->n == MAX_WORDS || strlen(tok) >= WORD_LEN)
            return fail(err, errlen,
                        "the request is too long for the rules (at most %d words of %d letters); "
                        "say the operator, the shape, the dtype and the dim, no more",
                        MAX_WORDS, WORD_LEN - 1);
        snprintf(out->w[out->n++], WORD_LEN, "%s", tok);
    }
    return 0;
}

static int is_int(const char *w)
{
    if (*w == '-')
        w++;
    if (!*w)
        return 0;
    for (; *w; w++)
        if (!isdigit((unsigned char)*w))
            return 0;
    return 1;
}

/* "512x4096" or "512x4096x3": appends the sizes to shape; 0 when w is not one. */
static int joined_shape(const char *w, long *shape, int *rank)
{
    if (!isdigit((unsigned char)*w) || !strchr(w, 'x'))
        return 0;
    for (const char *p = w; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != 'x')
            return 0;
    if (w[strlen(w) - 1] == 'x' || strstr(w, "xx"))
        return 0;
    const char *p = w;
    while (*p) {
        if (*rank == CLI_REQUEST_MAX_RANK)
            return -1;
        shape[(*rank)++] = strtol(p, (char **)&p, 10);
        if (*p == 'x')
            p++;
    }
    return 1;
}

static int is_dim_word(const char *w)
{
    return !strcmp(w, "dim") || !strcmp(w, "axis") || !strcmp(w, "dimension");
}

static int ordinal(const char *w)
{
    static const char *const ord[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
    if (!strcmp(w, "last"))
        return -1;
    for (int i = 0; i < 6; i++)
        if (!strcmp(w, ord[i]))
            return i + 1; /* 1-based; 0 means "not an ordinal" */
    return 0;
}

static void format_shape(const long *shape, int rank, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%ld", i ? "x" : "", shape[i]);
}

/* Matches an operator phrase at word i; returns its length in words (0: none). */
static int match_op(const words *ws, int i, const op_phrase **out)
{
    for (size_t k = 0; k < sizeof op_phrases / sizeof op_phrases[0]; k++) {
        char phrase[64];
        snprintf(phrase, sizeof phrase, "%s", op_phrases[k].phrase);
        int len = 0, ok = 1;
        for (char *tok = strtok(phrase, " "); tok && ok; tok = strtok(NULL, " ")) {
            if (i + len >= ws->n || strcmp(ws->w[i + len], tok) != 0)
                ok = 0;
            len++;
        }
        if (ok) {
            *out = &op_phrases[k];
            return len;
        }
    }
    return 0;
}

static int set_dim(cli_request *r, int dim, int *dim_said, char *err, size_t errlen)
{
    if (*dim_said && r->dim != dim)
        return fail(err, errlen, "two dims named (%d and %d): name one", r->dim, dim);
    r->dim = dim;
    *dim_said = 1;
    return 0;
}

static int check_shape(const char *op, const long *shape, int rank, char *err, size_t errlen)
{
    long total = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 1)
            return fail(err, errlen,
                        "%s: a size of %ld in the shape; every size must be at "
                        "least 1",
                        op, shape[i]);
        if (shape[i] > MAX_ELEMENTS || total > MAX_ELEMENTS / shape[i])
            return fail(err, errlen,
                        "%s: the shape has more than %ld elements, more than a request builds; "
                        "write the reference by hand for that size",
                        op, MAX_ELEMENTS);
        total *= shape[i];
    }
    return 0;
}

/* The checks that need the whole request: shapes per kind, dims in range. */
static int finish(cli_request *r, int dim_said, char *err, size_t errlen)
{
    if (r->kind == CLI_REQ_MATMUL) {
        if (r->nshapes == 1)
            return fail(err, errlen,
                        "matmul: one shape given; give both operands, e.g. \"matmul of 256x512 "
                        "and 512x128\"");
        if (r->nshapes == 0) {
            for (int o = 0; o < 2; o++) {
                memcpy(r->shape[o], default_matmul, sizeof default_matmul);
                r->rank[o] = 2;
            }
            r->nshapes = 2;
            r->shape_default = 1;
        }
        if (dim_said || r->dim_all || r->keepdim)
            return fail(err, errlen, "matmul takes no dim; say the two shapes");
        int ra = r->rank[0], rb = r->rank[1];
        char a[96], b[96];
        format_shape(r->shape[0], ra, a, sizeof a);
        format_shape(r->shape[1], rb, b, sizeof b);
        if (ra != rb || ra < 2 || ra > 3)
            return fail(err, errlen,
                        "matmul of %s and %s: the rules build two 2-D operands (MxK and KxN) or "
                        "two 3-D batches (BxMxK and BxKxN)",
                        a, b);
        if (r->shape[0][ra - 1] != r->shape[1][rb - 2] ||
            (ra == 3 && r->shape[0][0] != r->shape[1][0]))
            return fail(err, errlen,
                        "matmul of %s and %s: the shapes do not fit (the first's last size must "
                        "be the second's first%s)",
                        a, b, ra == 3 ? ", and the batches equal" : "");
        for (int o = 0; o < 2; o++)
            if (check_shape(r->op, r->shape[o], r->rank[o], err, errlen))
                return -1;
        return 0;
    }
    if (r->nshapes > 1)
        return fail(err, errlen, "%s takes one tensor, but %d shapes were given; give one", r->op,
                    r->nshapes);
    if (r->nshapes == 0) {
        memcpy(r->shape[0], default_shape, sizeof default_shape);
        r->rank[0] = 2;
        r->nshapes = 1;
        r->shape_default = 1;
    }
    if (check_shape(r->op, r->shape[0], r->rank[0], err, errlen))
        return -1;
    int rank = r->rank[0];
    if (r->kind == CLI_REQ_ELEMENTWISE) {
        if (dim_said || r->dim_all || r->keepdim)
            return fail(err, errlen,
                        "%s is elementwise: it takes no dim (a dim applies to softmax, "
                        "log_softmax, cumsum, cumprod and reductions)",
                        r->op);
        return 0;
    }
    if (r->dim_all && r->kind != CLI_REQ_REDUCE)
        return fail(err, errlen,
                    "%s: \"all\" applies to reductions (sum, mean, max, ...); name a "
                    "dim instead",
                    r->op);
    if (r->keepdim && r->kind != CLI_REQ_REDUCE)
        return fail(err, errlen, "%s: keepdim applies to reductions", r->op);
    if (r->dim_all && dim_said)
        return fail(err, errlen, "%s: both \"all\" and a dim were named; name one", r->op);
    if (!dim_said && !r->dim_all) {
        r->dim = -1;
        r->dim_default = 1;
    }
    if (!r->dim_all && (r->dim < -rank || r->dim >= rank))
        return fail(err, errlen, "%s: dim %d is out of range for a %d-D tensor (dims are %d to %d)",
                    r->op, r->dim, rank, -rank, rank - 1);
    if (r->kind == CLI_REQ_NORM && r->dim != -1 && r->dim != rank - 1)
        return fail(err, errlen,
                    "%s: the rules normalise over the last dim only, not dim %d; paste a "
                    "reference for another layout",
                    r->op, r->dim);
    return 0;
}

int cli_request_parse(const char *text, cli_request *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    words ws;
    if (split_words(text, &ws, err, errlen))
        return -1;
    int dim_said = 0;
    char unknown[256] = "";
    size_t unk = 0;
    for (int i = 0; i < ws.n; i++) {
        const char *w = ws.w[i];
        const op_phrase *ph = NULL;
        int len = match_op(&ws, i, &ph);
        if (len) {
            if (r->op && strcmp(r->op, ph->op) != 0) {
                /* "gelu with tanh approximation" names gelu_tanh in two places */
                int gelu_tanh = (!strcmp(r->op, "gelu") && !strcmp(ph->op, "tanh")) ||
                                (!strcmp(r->op, "tanh") && !strcmp(ph->op, "gelu"));
                if (!gelu_tanh)
                    return fail(err, errlen,
                                "two operators named, %s and %s; ask for one at a time (a "
                                "composition of operators: paste a reference)",
                                r->op, ph->op);
                r->op = "gelu_tanh";
                r->kind = CLI_REQ_ELEMENTWISE;
            } else {
                r->op = ph->op;
                r->kind = ph->kind;
            }
            i += len - 1;
            continue;
        }
        int matched = 0;
        for (size_t k = 0; k < sizeof dtype_words / sizeof dtype_words[0] && !matched; k++)
            if (!strcmp(w, dtype_words[k].word)) {
                if (r->dtype && strcmp(r->dtype, dtype_words[k].dtype) != 0)
                    return fail(err, errlen, "two dtypes named, %s and %s; name one", r->dtype,
                                dtype_words[k].dtype);
                r->dtype = dtype_words[k].dtype;
                matched = 1;
            }
        if (matched)
            continue;
        if (in_list(w, int_dtype_words, sizeof int_dtype_words / sizeof int_dtype_words[0]))
            return fail(err, errlen,
                        "dtype \"%s\": requests build floating-point tensors (float32, float16, "
                        "bfloat16, float64); for integer inputs paste a reference",
                        w);
        for (size_t k = 0; k < sizeof beyond_words / sizeof beyond_words[0]; k++)
            if (!strcmp(w, beyond_words[k].word))
                return fail(err, errlen,
                            "\"%s\": %s, more than the rules read from words; paste a "
                            "KernelBench reference or a model snippet with its shapes instead",
                            w, beyond_words[k].why);
        if (is_dim_word(w) || !strcmp(w, "dims") || !strcmp(w, "axes")) {
            if (i + 1 < ws.n && is_int(ws.w[i + 1])) {
                long d = strtol(ws.w[i + 1], NULL, 10);
                if (d < -CLI_REQUEST_MAX_RANK || d >= CLI_REQUEST_MAX_RANK)
                    return fail(err, errlen, "dim %ld: tensors here have at most %d dims", d,
                                CLI_REQUEST_MAX_RANK);
                if (set_dim(r, (int)d, &dim_said, err, errlen))
                    return -1;
                i++;
                continue;
            }
            if (i > 0 && ordinal(ws.w[i - 1]))
                continue; /* "the last dim": taken at the ordinal */
            return fail(err, errlen,
                        "\"%s\" without a number; write \"dim 1\", \"dim -1\" or \"the last dim\"",
                        w);
        }
        int ord = ordinal(w);
        if (ord) {
            if (i + 1 < ws.n && is_dim_word(ws.w[i + 1])) {
                if (set_dim(r, ord == -1 ? -1 : ord - 1, &dim_said, err, errlen))
                    return -1;
                continue;
            }
            return fail(err, errlen,
                        "\"%s\" is read only before \"dim\" or \"axis\" (\"the %s "
                        "dim\")",
                        w, w);
        }
        if (!strcmp(w, "all") || !strcmp(w, "every")) {
            r->dim_all = 1;
            continue;
        }
        if (!strcmp(w, "keepdim") ||
            (!strcmp(w, "keep") && i + 1 < ws.n &&
             (!strcmp(ws.w[i + 1], "dim") || !strcmp(ws.w[i + 1], "dims")))) {
            r->keepdim = 1;
            i += strcmp(w, "keep") == 0;
            continue;
        }
        long tmp[CLI_REQUEST_MAX_RANK];
        int trank = 0, js = joined_shape(w, tmp, &trank);
        if (js < 0)
            return fail(err, errlen, "the shape %s has more than %d dims", w, CLI_REQUEST_MAX_RANK);
        if (js || (is_int(w) && w[0] != '-')) {
            /* a shape: sizes joined by x, "x", "by", or side by side ("(512, 4096)") */
            if (r->nshapes == 2)
                return fail(err, errlen,
                            "more than two shapes given (\"%s\"); a request takes "
                            "one tensor, or two for matmul",
                            w);
            long *shape = r->shape[r->nshapes];
            int rank = 0;
            if (js) {
                memcpy(shape, tmp, (size_t)trank * sizeof *tmp);
                rank = trank;
            } else {
                shape[rank++] = strtol(w, NULL, 10);
            }
            while (i + 1 < ws.n) {
                const char *nx = ws.w[i + 1];
                int joiner = !strcmp(nx, "x") || !strcmp(nx, "by");
                const char *size = joiner ? (i + 2 < ws.n ? ws.w[i + 2] : "") : nx;
                long more[CLI_REQUEST_MAX_RANK];
                int mrank = 0, mj = joined_shape(size, more, &mrank);
                /* "256x512 512x128" side by side are two shapes; "512 4096" is one */
                if (mj < 0 || (!mj && !(is_int(size) && size[0] != '-')) || (mj && !joiner))
                    break;
                if (!mj) {
                    more[0] = strtol(size, NULL, 10);
                    mrank = 1;
                }
                if (rank + mrank > CLI_REQUEST_MAX_RANK)
                    return fail(err, errlen, "a shape has more than %d dims", CLI_REQUEST_MAX_RANK);
                memcpy(shape + rank, more, (size_t)mrank * sizeof *more);
                rank += mrank;
                i += joiner ? 2 : 1;
            }
            r->rank[r->nshapes++] = rank;
            continue;
        }
        if (is_int(w))
            return fail(err, errlen,
                        "\"%s\": a negative number outside \"dim %s\"; sizes are "
                        "positive",
                        w, w);
        if (in_list(w, filler_words, sizeof filler_words / sizeof filler_words[0]) ||
            !strcmp(w, "x") || !strcmp(w, "by"))
            continue;
        if (unk < sizeof unknown - 2)
            unk += (size_t)snprintf(unknown + unk, sizeof unknown - unk, "%s\"%s\"",
                                    unk ? ", " : "", w);
    }
    if (unk)
        return fail(err, errlen, "not understood: %s in \"%s\"; %s", unknown, text,
                    cli_request_help());
    if (!r->op)
        return fail(err, errlen, "no operator named in \"%s\"; %s", text, cli_request_help());
    if (!r->dtype) {
        r->dtype = "float32";
        r->dtype_default = 1;
    }
    return finish(r, dim_said, err, errlen);
}

const char *cli_request_help(void)
{
    return "a request names one operator, and optionally a shape (512x4096), a dtype (float32, "
           "float16, bfloat16, float64) and a dim (\"dim 1\", \"the last dim\", \"all\" for a "
           "whole reduction). Operators: relu, leaky_relu, gelu, gelu tanh, sigmoid, tanh, silu, "
           "elu, selu, softplus, softsign, hardsigmoid, hardtanh; softmax, log_softmax, cumsum, "
           "cumprod; sum, mean, max, min, prod, argmax, argmin; layer_norm, rms_norm; matmul of "
           "MxK and KxN. Example: \"softmax over the last dim of a 512x4096 float32 tensor\". "
           "Anything else: paste a KernelBench reference or a model snippet";
}

static void dim_text(const cli_request *r, char *buf, size_t n)
{
    if (r->dim_all)
        snprintf(buf, n, "all elements");
    else if (r->dim == -1 || r->dim == r->rank[0] - 1)
        snprintf(buf, n, "dim %d (the last)", r->dim);
    else
        snprintf(buf, n, "dim %d", r->dim);
}

void cli_request_describe(const cli_request *r, char *buf, size_t n)
{
    char a[96], b[96], d[64];
    format_shape(r->shape[0], r->rank[0], a, sizeof a);
    format_shape(r->shape[1], r->rank[1], b, sizeof b);
    dim_text(r, d, sizeof d);
    size_t k;
    if (r->kind == CLI_REQ_MATMUL)
        k = (size_t)snprintf(buf, n, "%s of a %s and a %s %s tensor", r->op, a, b, r->dtype);
    else if (r->kind == CLI_REQ_ELEMENTWISE)
        k = (size_t)snprintf(buf, n, "%s of a %s %s tensor", r->op, a, r->dtype);
    else
        k = (size_t)snprintf(buf, n, "%s over %s%s of a %s %s tensor", r->op, d,
                             r->keepdim ? " (keepdim)" : "", a, r->dtype);
    if (k >= n || !(r->shape_default || r->dtype_default || r->dim_default))
        return;
    k += (size_t)snprintf(buf + k, n - k, "; defaults taken:");
    const char *sep = " ";
    if (r->shape_default && k < n) {
        k += (size_t)snprintf(buf + k, n - k, "%sshape %s%s (say e.g. \"%s\")", sep, a,
                              r->kind == CLI_REQ_MATMUL ? " by the same" : "",
                              r->kind == CLI_REQ_MATMUL ? "of 512x256 and 256x128"
                                                        : "of a 512x4096 tensor");
        sep = ", ";
    }
    if (r->dtype_default && k < n) {
        k += (size_t)snprintf(buf + k, n - k,
                              "%sdtype float32 (say \"float16\", \"bfloat16\" or "
                              "\"float64\")",
                              sep);
        sep = ", ";
    }
    if (r->dim_default && k < n)
        snprintf(buf + k, n - k, "%sdim -1, the last (say \"over dim 0\")", sep);
}

void cli_request_name(const cli_request *r, char *buf, size_t n)
{
    char a[96], b[96];
    format_shape(r->shape[0], r->rank[0], a, sizeof a);
    format_shape(r->shape[1], r->rank[1], b, sizeof b);
    if (r->kind == CLI_REQ_MATMUL) {
        snprintf(buf, n, "%s_%s_by_%s_%s", r->op, a, b, r->dtype);
    } else if (r->kind == CLI_REQ_ELEMENTWISE) {
        snprintf(buf, n, "%s_%s_%s", r->op, a, r->dtype);
    } else {
        char d[32];
        if (r->dim_all)
            snprintf(d, sizeof d, "all");
        else if (r->dim == -1)
            snprintf(d, sizeof d, "lastdim");
        else if (r->dim < 0)
            snprintf(d, sizeof d, "dimm%d", -r->dim);
        else
            snprintf(d, sizeof d, "dim%d", r->dim);
        snprintf(buf, n, "%s_%s_%s_%s%s", r->op, a, r->dtype, d, r->keepdim ? "_keepdim" : "");
    }
}

/* The forward's expression on x (and b for matmul). */
static void expression(const cli_request *r, char *buf, size_t n)
{
    static const struct {
        const char *op, *expr;
    } ew[] = {
        {"relu", "torch.relu(x)"},       {"leaky_relu", "F.leaky_relu(x, negative_slope=0.01)"},
        {"gelu", "F.gelu(x)"},           {"gelu_tanh", "F.gelu(x, approximate=\"tanh\")"},
        {"sigmoid", "torch.sigmoid(x)"}, {"tanh", "torch.tanh(x)"},
        {"silu", "F.silu(x)"},           {"elu", "F.elu(x)"},
        {"selu", "torch.selu(x)"},       {"softplus", "F.softplus(x)"},
        {"softsign", "F.softsign(x)"},   {"hardsigmoid", "F.hardsigmoid(x)"},
        {"hardtanh", "F.hardtanh(x)"},
    };
    for (size_t i = 0; i < sizeof ew / sizeof ew[0]; i++)
        if (!strcmp(r->op, ew[i].op)) {
            snprintf(buf, n, "%s", ew[i].expr);
            return;
        }
    const char *keep = r->keepdim ? ", keepdim=True" : "";
    if (!strcmp(r->op, "matmul"))
        snprintf(buf, n, "torch.matmul(x, b)");
    else if (!strcmp(r->op, "layer_norm"))
        snprintf(buf, n, "F.layer_norm(x, (x.shape[-1],))");
    else if (!strcmp(r->op, "rms_norm"))
        snprintf(buf, n, "x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6)");
    else if (r->kind == CLI_REQ_ROWWISE)
        snprintf(buf, n, "torch.%s(x, dim=%d)", r->op, r->dim);
    else if (r->dim_all)
        snprintf(buf, n, "torch.%s(x)",
                 !strcmp(r->op, "max")   ? "max"
                 : !strcmp(r->op, "min") ? "min"
                                         : r->op);
    else
        snprintf(buf, n, "torch.%s(x, dim=%d%s)",
                 !strcmp(r->op, "max")   ? "amax"
                 : !strcmp(r->op, "min") ? "amin"
                                         : r->op,
                 r->dim, keep);
}

static int near_one(const cli_request *r)
{
    return !strcmp(r->op, "prod") || !strcmp(r->op, "cumprod");
}

int cli_request_reference(const cli_request *r, const char *text, char *buf, size_t n)
{
    char said[256], expr[160], desc[768], a[160], b[160];
    size_t k = 0;
    /* the request as typed, safe inside a docstring */
    for (const char *p = text; *p && k + 1 < sizeof said; p++)
        said[k++] = (*p == '"' || *p == '\\') ? '\'' : (*p < ' ' ? ' ' : *p);
    said[k] = '\0';
    expression(r, expr, sizeof expr);
    cli_request_describe(r, desc, sizeof desc);
    char *semi = strchr(desc, ';');
    if (semi)
        *semi = '\0';
    const char *scale = near_one(r) ? "1 + 0.01 * " : "";
    for (int o = 0; o < r->nshapes; o++) {
        char *dst = o ? b : a;
        size_t m = 0;
        m += (size_t)snprintf(dst + m, sizeof a - m, "%storch.randn(", scale);
        for (int i = 0; i < r->rank[o] && m < sizeof a; i++)
            m += (size_t)snprintf(dst + m, sizeof a - m, "%s%ld", i ? ", " : "", r->shape[o][i]);
        if (m < sizeof a)
            snprintf(dst + m, sizeof a - m, ", dtype=torch.%s)", r->dtype);
    }
    int w = snprintf(buf, n,
                     "\"\"\"%s, built by akg_cli from the request \"%s\".\n"
                     "\n"
                     "Edit it and run `akg_cli op THIS_FILE` to generate a kernel again.\"\"\"\n"
                     "import torch\n"
                     "import torch.nn as nn\n"
                     "import torch.nn.functional as F\n"
                     "\n"
                     "\n"
                     "class Model(nn.Module):\n"
                     "    def __init__(self):\n"
                     "        super().__init__()\n"
                     "\n"
                     "    def forward(self, x: torch.Tensor%s) -> torch.Tensor:\n"
                     "        return %s\n"
                     "\n"
                     "\n"
                     "def get_inputs():\n"
                     "    return [%s%s%s]\n"
                     "\n"
                     "\n"
                     "def get_init_inputs():\n"
                     "    return []\n",
                     desc, said, r->kind == CLI_REQ_MATMUL ? ", b: torch.Tensor" : "", expr, a,
                     r->nshapes == 2 ? ", " : "", r->nshapes == 2 ? b : "");
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int cli_request_looks_like_code(const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    static const char *const starts[] = {"import ", "from ",  "class ", "def ",      "@",
                                         "#",       "\"\"\"", "'''",    "async def "};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (strncmp(line, starts[i], strlen(starts[i])) == 0)
            return 1;
    /* an assignment: NAME = ..., NAME: T = ..., self.x = ... */
    const char *p = line;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if (p != line) {
        const char *q = p;
        while (*q == ' ')
            q++;
        if ((q[0] == '=' && q[1] != '=') || q[0] == ':')
            return 1;
    }
    size_t len = strlen(line);
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
        len--;
    return len && line[len - 1] == ':';
}
