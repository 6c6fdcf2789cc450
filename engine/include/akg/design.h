/*
 * design.h: what the Designer decides and the Coder lowers.
 *
 * A design is the Designer's answer for one Task: the kind of computation
 * (a fused chain of pointwise ops, a softmax over one dim), its scalar
 * parameters and where their values come from (a constant, or an argument of
 * Model's constructor that ModelNew receives too), the tunable choices (block
 * and rows per thread), the lowering mode (fast vectorised maths or libm), and
 * the sketch text that states all of it in the Unified Sketch language. The
 * Coder lowers the design; the sketch is what the user reads and edits.
 */
#ifndef AKG_DESIGN_H
#define AKG_DESIGN_H

#include <cjson/cJSON.h>

#include "akg/backend.h"
#include "akg/task.h"

#define AKG_DESIGN_MAX_SCALARS 4

typedef enum { AKG_SCALAR_CONST, AKG_SCALAR_INIT_PARAM } akg_scalar_source;

typedef struct {
    char name[64];            /* "negative_slope", "alpha", ... */
    double value;             /* the value seen in the probe (or the constant) */
    akg_scalar_source source;
    char init_name[64];       /* INIT_PARAM: Model's constructor argument */
    int init_index;
} akg_scalar;

/* A pointwise design is a small SSA program evaluated once per element:
 * each node is an input element, a constant, a scalar parameter, or an op
 * over earlier nodes. */
#define AKG_DESIGN_MAX_NODES 64
#define AKG_DESIGN_MAX_INPUTS 8

typedef enum { AKG_PW_INPUT, AKG_PW_CONST, AKG_PW_SCALAR, AKG_PW_OP } akg_pw_kind;

typedef struct {
    akg_pw_kind kind;
    char op[24];              /* OP: "add", "relu", "leaky_relu", "gelu_tanh", ... */
    int args[3];              /* OP: earlier node indices (tensor or scalar nodes) */
    int n_args;
    int input;                /* INPUT: forward parameter index */
    int scalar;               /* SCALAR: index into akg_design.scalars */
    double value;             /* CONST */
} akg_pw_node;

typedef enum {
    AKG_DESIGN_POINTWISE, /* a fused SSA program per element (designer_rules.c) */
    AKG_DESIGN_SOFTMAX,   /* softmax / log_softmax over one dim (designer_rules.c) */
    AKG_DESIGN_FAMILY     /* a family rule's design: see family and params */
} akg_design_kind;

typedef enum {
    AKG_MATH_FAST,    /* branch-free polynomial exp/log/erf that vectorise */
    AKG_MATH_PRECISE  /* libm calls (the Designer's answer to a numerical failure) */
} akg_math_mode;

typedef struct akg_design {
    akg_design_kind kind;
    char op_name[64];         /* for file and sketch names: "relu", "softmax", "gelu_tanh" */
    char dtype[16];           /* "float32" */
    int rank;                 /* rank of the input seen in the probe */
    /* pointwise */
    akg_pw_node nodes[AKG_DESIGN_MAX_NODES];
    int n_nodes;
    int result;               /* the node stored to the output */
    int inputs[AKG_DESIGN_MAX_INPUTS]; /* forward parameter indices read, in kernel order */
    int n_inputs;
    akg_scalar scalars[AKG_DESIGN_MAX_SCALARS * 4];
    int n_scalars;
    /* softmax */
    akg_scalar dim;           /* dim may come from the constructor */
    int log_softmax;
    /* tunables and lowering choices */
    long block;               /* pointwise: elements per parallel block */
    long rows;                /* softmax: rows per parallel task */
    akg_math_mode math;
    int parallel;             /* 1: OpenMP over blocks/rows */
    int vectorize;            /* 1: simd loops */
    int nontemporal;          /* pointwise: the store bypasses the caches for large outputs */
    /* AKG_DESIGN_FAMILY: "reduction", "norm", "scan", "loss", "matmul", "conv", "pool" */
    char family[24];
    cJSON *params;            /* owned; what the family's emitter needs beyond the sketch */
    char *sketch_text;        /* owned; the Unified Sketch of this design */
} akg_design;

/* Designs a kernel for ref (with the harness's probe answer). On success
 * *out is a design the caller frees with akg_design_free. On failure returns
 * AKG_EUNSUPPORTED with a message naming the torch call or construct that the
 * built-in rules do not cover, and *where (if not NULL) its range. feedback is
 * the Conductor's last failure routed to the Designer (may be NULL), attempt
 * is 1-based. */
int akg_designer_builtin(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                         int attempt, akg_design **out, akg_range *where, char *err,
                         size_t errlen);
void akg_design_free(akg_design *d);
/* The pointwise op of a Python/sketch binary operator ("+" -> "add", "**" ->
 * "pow"), or NULL. */
const char *akg_pointwise_binop(const char *op);

/*
 * Family rules (engine/providers/builtin/rules_<family>.c). Each looks at the
 * whole forward and returns AKG_ENOTFOUND (no message) when it is not of its
 * family, AKG_OK with *out set, or another status with a message naming what
 * it cannot design (and *where). The built-in Designer tries the pointwise
 * and softmax rules first, then these in order.
 */
typedef int (*akg_family_rule)(const akg_reference *ref, const cJSON *probe,
                               const cJSON *feedback, int attempt, akg_design **out,
                               akg_range *where, char *err, size_t errlen);
int akg_rules_reduction(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                        akg_range *, char *, size_t);
int akg_rules_norm(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                   akg_range *, char *, size_t);
int akg_rules_scan(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                   akg_range *, char *, size_t);
int akg_rules_loss(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                   akg_range *, char *, size_t);
int akg_rules_matmul(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                     akg_range *, char *, size_t);
int akg_rules_conv(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                   akg_range *, char *, size_t);
int akg_rules_pool(const akg_reference *, const cJSON *, const cJSON *, int, akg_design **,
                   akg_range *, char *, size_t);
/* The design as JSON (for the report and the store); the caller deletes it. */
cJSON *akg_design_to_json(const akg_design *d);


struct akg_sketch;

/* The cpu/cpp emitter: lowers the checked sketch (sk, parsed from
 * d->sketch_text or edited by the user) to C++ and model_new.py; d supplies
 * what the sketch does not say (where scalars come from, the softmax dim,
 * a family's params). Tunables, hints and the computation are read from sk.
 * safe_mode (the Coder's answer to a build or runtime failure) drops OpenMP
 * and simd pragmas. The caller frees *out with akg_kernel_files_free. */
int akg_cpp_emit(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                 int safe_mode, akg_kernel_files *out, char *err, size_t errlen);
/* Family emitters (backends/cpu/cpp/emitter/emit_<family>.c), same contract. */
int akg_cpp_emit_reduction(const akg_design *, const struct akg_sketch *, const akg_reference *,
                           int, akg_kernel_files *, char *, size_t);
int akg_cpp_emit_norm(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                      akg_kernel_files *, char *, size_t);
int akg_cpp_emit_scan(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                      akg_kernel_files *, char *, size_t);
int akg_cpp_emit_loss(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                      akg_kernel_files *, char *, size_t);
int akg_cpp_emit_matmul(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                        akg_kernel_files *, char *, size_t);
int akg_cpp_emit_conv(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                      akg_kernel_files *, char *, size_t);
int akg_cpp_emit_pool(const akg_design *, const struct akg_sketch *, const akg_reference *, int,
                      akg_kernel_files *, char *, size_t);

#endif
