/*
 * design.h: the built-in Designer's answer for one Task.
 *
 * The rules read the task (the parsed reference and the probe) and write a
 * sketch: a complete, bound Unified Sketch, the design itself. What the rules
 * read on the way (the kind of computation, its scalar parameters and where
 * their values come from, the tunables and modes they chose, a family rule's
 * reading of the task in `params`) stays here as provenance for the report
 * and the store: no Coder reads it, every backend lowers the sketch alone.
 */
#ifndef AKG_DESIGN_H
#define AKG_DESIGN_H

#include <cjson/cJSON.h>

#include "akg/backend.h"
#include "akg/task.h"

#define AKG_DESIGN_MAX_SCALARS 4

typedef enum { AKG_SCALAR_CONST, AKG_SCALAR_INIT_PARAM } akg_scalar_source;

typedef struct {
    char name[64]; /* "negative_slope", "alpha", ... */
    double value;  /* the value seen in the probe (or the constant) */
    akg_scalar_source source;
    char init_name[64]; /* INIT_PARAM: Model's constructor argument */
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
    char op[24]; /* OP: "add", "relu", "leaky_relu", "gelu_tanh", ... */
    int args[3]; /* OP: earlier node indices (tensor or scalar nodes) */
    int n_args;
    int input;    /* INPUT: forward parameter index */
    int scalar;   /* SCALAR: index into akg_design.scalars */
    double value; /* CONST */
} akg_pw_node;

typedef enum {
    AKG_DESIGN_POINTWISE, /* a fused SSA program per element (designer_rules.c) */
    AKG_DESIGN_SOFTMAX,   /* softmax / log_softmax over one dim (designer_rules.c) */
    AKG_DESIGN_FAMILY     /* a family rule's design: see family and params */
} akg_design_kind;

typedef enum {
    AKG_MATH_FAST,   /* the sketch's default math: polynomial exp/log/erf that vectorise */
    AKG_MATH_PRECISE /* a math("precise") hint (the answer to a numerical failure) */
} akg_math_mode;

typedef struct akg_design {
    akg_design_kind kind;
    char op_name[64]; /* for file and sketch names: "relu", "softmax", "gelu_tanh" */
    char dtype[16];   /* "float32" */
    int rank;         /* rank of the input seen in the probe */
    /* pointwise */
    akg_pw_node nodes[AKG_DESIGN_MAX_NODES];
    int n_nodes;
    int result;                        /* the node stored to the output */
    int inputs[AKG_DESIGN_MAX_INPUTS]; /* forward parameter indices read, in kernel order */
    int n_inputs;
    akg_scalar scalars[AKG_DESIGN_MAX_SCALARS * 4];
    int n_scalars;
    /* softmax */
    akg_scalar dim; /* dim may come from the constructor */
    int log_softmax;
    /* tunables and lowering choices */
    long block; /* pointwise: elements per parallel block */
    long rows;  /* softmax: rows per parallel task */
    akg_math_mode math;
    int parallel;    /* 1: the sketch's outer loop carries a parallel hint */
    int vectorize;   /* 1: its inner computations carry vectorize hints */
    int nontemporal; /* pointwise: the store carries a nontemporal hint */
    int pow_reduced; /* pointwise: pow by small constants computed as multiplies, a square
                        root or a reciprocal (the answer to a slow kernel) */
    int gpu;         /* 1: the sketch is the GPU design (many programs on the grid), written
                        for a target whose backend is "cuda" (akg_designer_builtin_for) */
    /* AKG_DESIGN_FAMILY: "reduction", "norm", "scan", "loss", "matmul", "conv", "pool" */
    char family[24];
    cJSON *params;     /* owned; the family rule's reading of the task (provenance) */
    char *sketch_text; /* owned; the Unified Sketch of this design */
} akg_design;

/* Designs a kernel for ref (with the harness's probe answer). On success
 * *out is a design the caller frees with akg_design_free. On failure returns
 * AKG_EUNSUPPORTED with a message naming the torch call or construct that the
 * built-in rules do not cover, and *where (if not NULL) its range. feedback is
 * the Conductor's last failure routed to the Designer (may be NULL), attempt
 * is 1-based. */
int akg_designer_builtin(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                         int attempt, akg_design **out, akg_range *where, char *err, size_t errlen);
/* The target a design is for: the design request's backend, DSL and arch (each may be
 * NULL). */
typedef struct {
    const char *backend, *dsl, *arch;
} akg_design_target;
/* akg_designer_builtin for a target: with backend "cuda" the designs the rules have for a
 * GPU (elementwise blocks, rows and reductions spread over many programs on the grid), the
 * CPU's designs elsewhere. target NULL or another backend: exactly akg_designer_builtin. */
int akg_designer_builtin_for(const akg_design_target *target, const akg_reference *ref,
                             const cJSON *probe, const cJSON *feedback, int attempt,
                             akg_design **out, akg_range *where, char *err, size_t errlen);
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
typedef int (*akg_family_rule)(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                               int attempt, akg_design **out, akg_range *where, char *err,
                               size_t errlen);
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

#endif
