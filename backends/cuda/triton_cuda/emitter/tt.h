/*
 * tt.h: the cuda/triton_cuda backend's lowering of a checked sketch to Triton
 * (internal header shared by the tt_*.c files).
 *
 * Triton works a block at a time, so the lowering is tile-at-a-time, not the
 * CPU emitter's element-at-a-time:
 *   - the sketch is split into host code and kernels (tt_plan.c). An
 *     outermost `parallel` loop (any context), with the `parallel` loops
 *     directly and solely nested in it, becomes one @triton.jit kernel whose
 *     flattened program id gives the loop variables; host statements that
 *     store (serial tails) become a one-program kernel; host loops around
 *     parallel loops and `if`s on symbols stay Python in akg_kernel(); `slow`
 *     tiles allocated on the host are scratch tensors (the launch boundary is
 *     the barrier between the programs that write them and the ones that read
 *     them). Pure host tile statements (alloc, load, assign) are re-issued
 *     inside every kernel that reads what they define ("replay");
 *   - inside a kernel every tile is a Triton block value bound to a Python
 *     name `v_<name>`; each dimension has a padded power-of-two extent (a
 *     literal, or a tl.constexpr argument the host computes from an upper
 *     bound of the extent: tt_index.c) and the valid extent, an expression,
 *     that masks loads, stores and reductions (tt_stmt.c, tt_expr.c);
 *   - every computation is written to a fresh temporary `_t<N>`, so the
 *     formulas of tt_ops.c may name their operands more than once.
 *
 * Memory: every string and value of one lowering lives in the context's
 * arena and is released at once by tt_release().
 */
#ifndef AKG_TT_H
#define AKG_TT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"

#define TT_MAXR 8
#define TT_MAX_CONSTS 64
#define TT_MAX_PADS 64

/* A block value inside a kernel, or a scalar. */
typedef struct {
    int rank;                 /* 0: a scalar */
    const char *pad[TT_MAXR]; /* padded extent: an int literal or a constexpr argument's name */
    const char *ext[TT_MAXR]; /* valid extent (Python, kernel scope); NULL: the whole pad */
    akg_dtype dt;             /* AKG_DTYPE_UNKNOWN for weakly typed number literals */
    const char *py;           /* the Python expression (a name for blocks) */
    bool literal;             /* a number written in the sketch */
    bool index;               /* an integer index expression (int64 scalar) */
} tt_val;

typedef enum {
    TN_TENSOR = 1, /* a sketch tensor: T_<name> */
    TN_SCRATCH,    /* a `slow` tile allocated on the host: a torch tensor X_<name> */
    TN_SYMBOL,     /* S_<name> (or a literal for a symbol bound to a constant) */
    TN_PARAM,      /* P_<name> */
    TN_CONST,      /* a constexpr: its literal */
    TN_HOSTINT,    /* a host loop variable or host integer scalar: v_<name>, an argument */
    TN_KINT,       /* an integer scalar assigned inside a kernel */
    TN_KLOOP,      /* a loop variable inside a kernel (or a program-id variable) */
    TN_TILE,       /* a block value inside a kernel */
} tt_name_kind;

typedef struct {
    const char *name;
    tt_name_kind kind;
    const char *py;
    tt_val *val;                         /* TN_TILE (NULL: allocated, not written yet) */
    tt_val *shape;                       /* TN_TILE: the alloc's shape and dtype (py NULL) */
    const akg_sketch_stmt *alloc;        /* TN_TILE, TN_SCRATCH: the alloc statement */
    const akg_sketch_expr *def;          /* TN_KINT: the defining expression */
    const akg_sketch_expr *start, *stop; /* TN_KLOOP, TN_HOSTINT loops: the range */
    long tensor;                         /* TN_TENSOR: its index */
    akg_dtype dt;                        /* TN_TENSOR, TN_SCRATCH, TN_PARAM, TN_TILE */
} tt_name;

/* A padded extent the host computes: `name` = _akg_p2(host). */
typedef struct {
    const char *name;
    const char *host;
} tt_pad;

/* What differs between the Triton targets that share this lowering (the per-target hook):
 * cuda/triton_cuda (tt_backend.c) and ascend/triton_ascend (backends/ascend/triton_ascend/).
 * The kernels' text is the same Triton; the targets differ in the runtime around it. */
typedef struct {
    const char *label;       /* "cuda/triton_cuda": named in the module's first line */
    const char *emitter;     /* "triton_cuda": named in messages */
    const char *imports;     /* lines after `import torch` ("import torch_npu\n"), or "" */
    long block_limit;        /* the largest extent _akg_p2 accepts for a block dimension */
    const char *block_owner; /* "Triton's": whose limit that is, in the error */
    long const_pad_limit;    /* 0, or the largest constant padded extent (refused above) */
    bool core_bound;         /* programs are bound to physical cores: the grid is at most the
                                core count and each program loops over the flattened
                                iterations (grid-stride) */
    bool nontemporal_store;  /* `nontemporal` stores get cache_modifier=".cs" */
    /* f32 tl.dot: "tf32x3" (three TF32 tensor-core products, the operands split in a high and a
     * low TF32 part: f32-level error, the Verifier checks it) or "ieee" (FMA products) */
    const char *f32_dot_precision;
    bool launch_warps; /* launches name num_warps (8 for a kernel with a 128 x 128 dot tile) */
    /* model_new.py: the lines that import the device's runtime and set _AKG_DEVICE */
    const char *model_device;
} tt_target;

/* The cuda/triton_cuda target (tt_backend.c). */
extern const tt_target tt_target_cuda;

typedef struct {
    const akg_sketch *sk;
    const tt_target *target;
    char *err;
    size_t errlen;
    int status;      /* sticky: the first failure wins */
    akg_arena arena; /* the lowering's strings and nodes (akg/akg.h) */
    akg_buf *out;    /* where tt_line writes */
    int indent;
    int temp;                   /* temporaries _t<N> */
    const akg_sketch_stmt *cur; /* the statement being lowered (for messages) */

    akg_sketch_binding consts[TT_MAX_CONSTS]; /* symbols bound to constants */
    size_t n_consts;

    tt_name *names; /* the scope stack: the last binding of a name wins */
    size_t n_names, cap_names;

    /* the kernel being lowered */
    bool in_kernel;
    tt_pad pads[TT_MAX_PADS];
    size_t n_pads;
    const char *stored[64]; /* tensors stored so far by this kernel (barrier before a reload) */
    size_t n_stored;
    bool uses_math_precise;
    long dot_tile; /* the largest M x N tile of a tl.dot in the kernel being lowered */
    int kernels;   /* kernels emitted so far */
} tt_ctx;

/* ---- tt_core.c ---- */
void *tt_alloc(tt_ctx *C, size_t n);
const char *tt_strf(tt_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records the first failure: AKG_EUNSUPPORTED with "line N: <message>" (the sketch line of at,
 * 1-based, when at is given). Returns the status. */
int tt_fail(tt_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tt_fail_expr(tt_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tt_line(tt_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tt_release(tt_ctx *C);
const char *tt_temp(tt_ctx *C);
const char *tt_expr_text(tt_ctx *C, const akg_sketch_expr *e); /* canonical text, in the arena */

tt_name *tt_bind(tt_ctx *C, const char *name, tt_name_kind kind, const char *py);
tt_name *tt_lookup(tt_ctx *C, const char *name);
size_t tt_scope_mark(tt_ctx *C);
void tt_scope_pop(tt_ctx *C, size_t mark);

const char *tt_dtype_tl(akg_dtype dt);    /* "tl.float32" */
const char *tt_dtype_torch(akg_dtype dt); /* "torch.float32" */
bool tt_dtype_is_float(akg_dtype dt);
bool tt_dtype_is_int(akg_dtype dt); /* signed/unsigned integers, not bool */

/* Names an expression or statement reads / defines (syntactic; into a growable list). */
typedef struct {
    const char **v;
    size_t n, cap;
} tt_names;
void tt_names_add(tt_ctx *C, tt_names *s, const char *name);
bool tt_names_has(const tt_names *s, const char *name);
void tt_names_remove(tt_names *s, const char *name);
void tt_expr_reads(tt_ctx *C, const akg_sketch_expr *e, tt_names *out);
/* Upward-exposed reads of a statement (names read before the statement defines them) and the
 * names it defines, bodies included. */
void tt_stmt_reads(tt_ctx *C, const akg_sketch_stmt *st, tt_names *reads);
void tt_stmt_defs(tt_ctx *C, const akg_sketch_stmt *st, tt_names *defs);
bool tt_stmt_has_parallel(const akg_sketch_stmt *st); /* a parallel FOR at or below st */
bool tt_is_parallel(const akg_sketch_stmt *st);

/* ---- tt_index.c: integer index expressions ---- */
/* Whether e is an integer expression of symbols, constexprs, integer scalars and loop
 * variables in scope (no tile, param or float). */
bool tt_is_index(tt_ctx *C, const akg_sketch_expr *e);
/* Python text of an index expression: host (plain ints, Python semantics) or kernel (Triton
 * scalars, floor division through helpers where signs are unknown). */
const char *tt_index(tt_ctx *C, const akg_sketch_expr *e, bool host);
/* Whether every name in e is known on the host (symbols, constexprs, host integers). */
bool tt_host_known(tt_ctx *C, const akg_sketch_expr *e);
bool tt_nonneg(tt_ctx *C, const akg_sketch_expr *e);
/* The value of e when it is a compile-time constant. */
bool tt_const_value(tt_ctx *C, const akg_sketch_expr *e, int64_t *out);
/* A tile dimension of extent e (kernel scope): its padded extent and its valid extent
 * (NULL when it is the whole pad). Registers a constexpr pad argument when the extent is not
 * constant. Fails (NULL pad) when no upper bound is known on the host. */
bool tt_dim(tt_ctx *C, const akg_sketch_expr *e, const char **pad, const char **ext);
/* The same for the extent stop - start (an arange, a region). */
bool tt_dim_range(tt_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                  const char **pad, const char **ext);
/* Whether stop - start is the constant *k. */
bool tt_range_const(tt_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                    int64_t *k);
/* A pad for an extent given as host text (interned: the same text gives the same name). */
const char *tt_pad_for_host(tt_ctx *C, const char *host);

/* ---- tt_expr.c: values ---- */
tt_val *tt_value(tt_ctx *C, const akg_sketch_expr *e);
/* A call's value from its first n_items positional operands (destination-form statements). */
tt_val *tt_call_value(tt_ctx *C, const akg_sketch_expr *call, size_t n_items);
tt_val *tt_new_val(tt_ctx *C, int rank, akg_dtype dt, const char *py);
/* Python of a scalar or literal converted to dt, for meeting a block of that dtype. */
const char *tt_as_dtype(tt_ctx *C, const tt_val *v, akg_dtype dt);
/* `tl.arange(0, pad)` broadcast to dimension d of a rank-r block. */
const char *tt_arange(tt_ctx *C, const char *pad, int d, int r);
/* Casts a value to dt (the language's cast: round to nearest even, saturating for integers). */
tt_val *tt_cast(tt_ctx *C, tt_val *v, akg_dtype dt, const akg_sketch_expr *at);

/* ---- tt_ops.c: the elementwise formula table ---- */
typedef struct tt_op tt_op;
const tt_op *tt_op_find(const char *name);
int tt_op_nargs(const tt_op *op);
const char *tt_op_default(const tt_op *op, int i);
int tt_op_kind(const tt_op *op); /* 0 arithmetic, 1 comparison, 2 logical, 3 where */
/* The formula with operands args[0..nargs) (Python names or literals). */
const char *tt_op_apply(tt_ctx *C, const tt_op *op, const char *const *args);

/* ---- tt_stmt.c: statements inside a kernel ---- */
void tt_kernel_stmts(tt_ctx *C, const akg_sketch_stmt *const *stmts, size_t n);
void tt_kernel_stmt(tt_ctx *C, const akg_sketch_stmt *st);
/* A `slow` tile allocated on the host (a scratch tensor) read whole as a block. */
tt_val *tt_scratch_value(tt_ctx *C, tt_name *n);

/* ---- tt_backend.c: shared by the Triton targets ---- */
/* Lowers sk for target: *out malloc'd, or AKG_EUNSUPPORTED with the sketch line. */
int tt_lower_target(const tt_target *target, const akg_sketch *sk, const char *source, char **out,
                    char *err, size_t errlen);
/* kernel_<hash12>.py and model_new.py for target (akg_backend.emit). */
int tt_emit_target(const tt_target *target, const akg_sketch *sk, const akg_emit_request *req,
                   akg_kernel_files *out, char *err, size_t errlen);

/* ---- tt_plan.c ---- */
/* The whole module (kernels and akg_kernel) into out. */
void tt_lower_module(tt_ctx *C, akg_buf *out, const char *source);

#endif
