/*
 * lw.h: the cpu/cpp backend's lowering of a checked sketch to C++ (internal).
 *
 * The Coder reads the sketch alone: its loops become C++ loops (a `parallel`
 * hint an OpenMP region, `vectorize` an `omp simd`, `unroll` a GCC unroll),
 * its tiles become storage in the tier the sketch names, its loads, stores and
 * computations are lowered by the semantics of the language reference
 * (sketch-grammar/README.md). Nothing is looked up by operator name.
 *
 * Values. Every tile the sketch computes is one of:
 *   - a TENSOR: a kernel argument (row-major, contiguous);
 *   - a BUF: storage the kernel owns (a register array for "fastest"
 *     accumulators, a stack or per-thread heap array for "fast"/"medium",
 *     a heap array for "slow"), row-major or in a packed panel layout
 *     chosen from how the sketch reads it (GEMM operands);
 *   - a VIEW: a region of a tensor or buffer that was loaded into a tile
 *     which the sketch gives no tier (or "fastest" and reads element by
 *     element): the data moves from memory to registers as it is consumed,
 *     with the bounds guard of the semantics (elements outside read `other`);
 *   - an EXPR: an elementwise computation over other values, not yet
 *     materialised (it is computed inside the loop of whatever consumes it);
 *   - a SCALAR: a C++ expression (loop variables, symbols, params, numbers).
 * Reductions, scans, GEMMs and gathers materialise their results into BUFs;
 * stores and materialisations emit loop nests over the value's domain, with
 * index-set splitting so that interior iterations carry no bounds guards.
 *
 * Memory: every value, string and name of one lowering lives in the lowering's
 * arena (lw_ctx.arena) and is released at once by lw_ctx_release().
 */
#ifndef AKG_LW_H
#define AKG_LW_H

#include <stdbool.h>
#include <stdint.h>

#include "akg/akg.h"
#include "akg/sketch.h"

#define LW_MAXR 8                  /* AKG_SKETCH_MAX_RANK */
#define LW_STACK_BYTES (48 * 1024) /* larger static buffers go to the heap */

typedef struct {
    const char *c; /* C++ text of an int64 expression */
    bool known;    /* a compile-time constant */
    int64_t k;     /* its value when known */
    bool varies;   /* depends on a loop variable */
    int64_t ub;    /* a known upper bound (> 0) when not known itself, else 0 */
} lw_dim;

typedef enum { LV_TENSOR = 1, LV_BUF, LV_VIEW, LV_EXPR, LV_SCALAR } lw_kind;

typedef enum {
    LAYOUT_ROW = 0, /* row-major */
    LAYOUT_PANEL_A, /* rank 2 [M, K]: MR-row panels, k-major inside (element (m, k) at
                       ((m / MR) * K + k) * MR + m % MR) */
    LAYOUT_PANEL_B, /* rank 2 [K, N]: NR-column panels (element (k, n) at
                       ((n / NR) * K + k) * NR + n % NR) */
} lw_layout;

typedef enum { TIER_NONE = 0, TIER_FASTEST, TIER_FAST, TIER_MEDIUM, TIER_SLOW } lw_tier;

typedef struct lw_val lw_val;

/* Elementwise operations of EXPR values (the per-element formulas are in lw_ops.c). */
typedef struct lw_op lw_op;

struct lw_val {
    lw_kind kind;
    int id;
    akg_dtype dt;
    int rank;
    lw_dim dim[LW_MAXR];

    /* TENSOR, BUF */
    const char *ptr;             /* C++ name of the data */
    const char *stride[LW_MAXR]; /* row-major strides in elements (C++ text) */
    int version;                 /* bumped by every write */
    lw_tier tier;
    lw_layout layout;
    int64_t panel;     /* MR or NR of a panel layout */
    bool reg;          /* a register array of vectors (fastest GEMM accumulator) */
    int64_t vw;        /* reg: lanes per vector */
    bool is_output;    /* TENSOR: stored to by the sketch */
    bool stable;       /* storage a loop or if writes into (see lw_scope.c) */
    const char *owner; /* stable: the name whose storage it is */
    bool identity;     /* VIEW: the whole base, element for element */

    /* VIEW */
    lw_val *base;                /* a TENSOR or BUF */
    const char *bstart[LW_MAXR]; /* per base dim: first index (C++ text) */
    const char *bstep[LW_MAXR];  /* per base dim: step; NULL for an integer index */
    bool bstart_nonneg[LW_MAXR]; /* per base dim: the first index is known >= 0 */
    int tile_of_bdim[LW_MAXR];   /* per base dim: the tile dim it runs along, or -1 */
    const char *other;           /* value outside the base (C++ literal) */
    lw_val *mask;                /* element mask (bool value), or NULL */
    int base_version;
    bool guard[LW_MAXR];                    /* per base dim: the index may leave the base */
    lw_val *pos[LW_MAXR];                   /* per base dim: an integer tile whose elements are the
                                               positions read along it (an index tile), or NULL */
    signed char pos_tdim[LW_MAXR][LW_MAXR]; /* per base dim with pos: the tile dim each dim
                                               of the index tile runs along, -1 for none */

    /* EXPR */
    const lw_op *op;
    lw_val *arg[3];
    int nargs;
    const char *lit[3]; /* unused operand slots (C++ text) */
    int perm[LW_MAXR];  /* transpose: result dim d reads arg dim perm[d] */
    bool precise;       /* libm maths for this computation */
    bool simd;          /* computed under a vectorize hint */
    int64_t simdlen;    /* its vector width, 0 when none is given */
    lw_val *keep;       /* a buffer of its shape its first consumer fills as it
                           computes it (the value is read again later), or NULL */
    bool keep_filled;   /* keep holds every element: reads read it */

    /* SCALAR */
    const char *c;     /* C++ expression */
    bool nonneg;       /* known >= 0 (sizes, loop variables from >= 0) */
    bool loopvar;      /* depends on a loop variable */
    const char *upper; /* a loop variable: the loop's stop (C++ text), when its
                          start is >= 0 and its step positive */
    int64_t ub;        /* an integer known to be at most ub (> 0), else 0 */
    bool literal;      /* a float number of the sketch (fval): written in the type
                          of the computation it joins (retyped, not converted) */
    double fval;
};

typedef struct lw_name {
    const char *name;
    lw_val *val;
} lw_name;

typedef struct lw_ctx {
    const akg_sketch *sk;
    akg_arena arena;     /* the lowering's strings and nodes (akg/akg.h) */
    akg_buf *out;        /* where statements go now */
    akg_buf *hoist;      /* per-thread setup of the innermost parallel region, or NULL */
    akg_buf *hoist_tail; /* its teardown */
    int hoist_indent;    /* the indentation of the region's setup */
    int indent;
    int next_id;
    lw_name *env;
    size_t n_env, cap_env;
    int status; /* first error, sticky */
    char *err;
    size_t errlen;
    bool safe;       /* no OpenMP, no simd pragmas (the Coder's answer to a crash) */
    bool precise;    /* libm maths in the statement being lowered */
    bool vectorize;  /* the statement being lowered carries a vectorize hint */
    int64_t simdlen; /* its vector width, 0 when none is given */
    int par_depth;   /* > 0 inside a parallel region */
    const akg_sketch_stmt *const *live_stmts; /* the rest of the current block (liveness) */
    size_t n_live_stmts;
    const akg_sketch_stmt *cur; /* the statement being lowered (for messages) */
    /* The loop body being emitted: element temporaries computed so far, and the
     * (view, base dim) pairs whose bounds the enclosing loops prove. */
    struct lw_memo {
        int id;
        const char *key;
        const char *name;
    } * memo;
    size_t n_memo, cap_memo;
    struct lw_proven {
        int id;
        int bdim;
    } proven[64];
    int n_proven;
    bool saw_loopvar;        /* set by lw_index when it reads a loop-dependent scalar */
    const char *simd_clause; /* extra clauses of the next innermost `omp simd` (reductions) */
    struct lw_heap {
        const char *name;
        struct lw_heap *next;
    } * heap;              /* to free, innermost first */
    lw_val *gemm_in_place; /* the accumulator a gemm statement may update in place */
    size_t n_heap;
    void *uses; /* the innermost block being lowered (lw_frame, lw_stmt.h) */
    /* A dry run of a loop or if (its code discarded) to learn the value a name it binds
     * has at the end of one of its blocks (lw_scope.c, probe) */
    bool dry;
    const char *probe_name;
    lw_val *probe_val;
    /* Streaming stores: the store being lowered asks for them ("nontemporal"); the kernel
     * uses them (it includes the intrinsics); the parallel region being emitted (an id) and
     * the last one whose teardown already has the store fence. */
    bool nontemporal;
    bool uses_stream;
    bool fence_at_end; /* a streamed store outside parallel regions: fence before returning */
    int region;
    int fenced_region;
    /* The domain that the consumer being emitted computes whole (its every element, once or
     * more): computed values with a keep buffer of that shape are written into it
     * (keep_rank < 0: none), and those written since the consumer began. */
    int keep_rank;
    const lw_dim *keep_dom;
    lw_val *keep_written[32];
    int n_keep_written;
    /* Reductions computed ahead with their siblings (lw_reduce_siblings): the call and its
     * result, taken when the call's statement is lowered. */
    struct lw_prered {
        const akg_sketch_expr *call;
        lw_val *out;
    } prered[8];
    int n_prered;
    /* The narrowest and widest vector width (bits) a vectorize hint asks for in the kernel
     * (0: none asked): the compiler's preferred width is set from them (cpp_lower.c). */
    int width_min, width_max;
} lw_ctx;

/* ---- lw_core.c: arena, errors, emission, names, C++ types ---- */
void *lw_alloc(lw_ctx *L, size_t n);
const char *lw_strf(lw_ctx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lw_fail(lw_ctx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool lw_ok(const lw_ctx *L);
void lw_line(lw_ctx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lw_ctx_release(lw_ctx *L);
lw_val *lw_new(lw_ctx *L, lw_kind kind);
const char *lw_ctype(akg_dtype dt);    /* storage type: "float", "double", "int32_t", ... */
const char *lw_comptype(akg_dtype dt); /* computation type: float for f16/bf16 */
bool lw_is_float(akg_dtype dt);
/* Bits of one element of dt's computation type. */
int lw_comp_bits(akg_dtype dt);
/* Records that a vectorize hint asks for `lanes` lanes of `bits`-bit elements. */
void lw_note_width(lw_ctx *L, int64_t lanes, int bits);
lw_dim lw_dim_const(lw_ctx *L, int64_t k);
lw_dim lw_dim_text(lw_ctx *L, const char *c);
bool lw_dim_equal(lw_dim a, lw_dim b);
/* Binds name to v in the environment (replacing an older binding). */
void lw_bind(lw_ctx *L, const char *name, lw_val *v);
lw_val *lw_lookup(lw_ctx *L, const char *name);
/* A C++ float literal of type ct ("float"/"double") for v. */
const char *lw_float_lit(lw_ctx *L, double v, const char *ct);

/* ---- lw_index.c: integer index expressions ---- */
/* C++ text of an integer expression of the sketch (symbols, constexprs, loop
 * variables, scalars): floor division and modulo as the language defines
 * them. Sets *known and *k when it folds to a constant. Fails on tiles. */
const char *lw_index(lw_ctx *L, const akg_sketch_expr *e, bool *known, int64_t *k);
/* Whether a - b is a constant whatever the symbols and loop variables are (both sides the
 * same linear form up to a constant); *k is its value. */
bool lw_index_difference(lw_ctx *L, const akg_sketch_expr *a, const akg_sketch_expr *b, int64_t *k);
/* An integer expression of the sketch as a dimension. */
lw_dim lw_index_dim(lw_ctx *L, const akg_sketch_expr *e);
/* Whether an integer expression is known non-negative (sizes, loop variables
 * of ranges starting at >= 0, constants >= 0, and sums/products of those). */
bool lw_index_nonneg(lw_ctx *L, const akg_sketch_expr *e);
/* An upper bound of an integer expression (`min(BM, M - i)` is at most BM), or 0 (none known:
 * bounds are positive). */
int64_t lw_index_upper(lw_ctx *L, const akg_sketch_expr *e);

/* ---- lw_value.c: element access, views ---- */
/* Forgets the element temporaries (a new loop body starts). */
void lw_memo_reset(lw_ctx *L);
/* A VIEW of base (a TENSOR or BUF) through the subscript region `sub` (a
 * SUBSCRIPT expression, or the base's name for the whole of it), shaped as
 * `shape` (the tile: same extents as the region up to unit dimensions). */
lw_val *lw_view(lw_ctx *L, lw_val *base, const akg_sketch_expr *sub, akg_dtype dt, int rank,
                const lw_dim *shape);
/* Whether view v reads some base dim through an index tile (positions are data, not an
 * affine function of the tile index). */
bool lw_view_has_pos(const lw_val *v);
/* The region's shape (extents of the kept dimensions). */
int lw_region_shape(lw_ctx *L, lw_val *base, const akg_sketch_expr *sub, lw_dim *shape);
/* The element of v at the index tuple idx (C++ texts, one per dim of v), as a
 * C++ expression of v's computation type. Emits temporaries with lw_line when
 * needed. guards: check view bounds (false on the proven interior). */
const char *lw_elem(lw_ctx *L, lw_val *v, const char *const *idx, bool guards);
/* The position along base dim d of a view with an index tile on d, at tile index idx. */
const char *lw_view_pos(lw_ctx *L, lw_val *v, int d, const char *const *idx, bool guards);
/* The address expression of element idx of a TENSOR or BUF. */
const char *lw_addr(lw_ctx *L, lw_val *v, const char *const *idx);
/* The valid index range [*lo, *hi) of tile dim d of a VIEW of v's base
 * (guarded base dims only); false when the dim is never out of bounds. */
bool lw_view_range(lw_ctx *L, lw_val *v, int d, const char **lo, const char **hi);
/* Broadcasts idx (the index of a value of rank R, shape out) onto arg a. */
void lw_broadcast_idx(lw_ctx *L, const lw_val *out_shape_owner, const lw_val *a,
                      const char *const *idx, const char **aidx);

/* Consumers that compute every element of their domain (stores without clipping,
 * materialisations, reductions) bracket their loops with these: a computed value read again
 * later (lw_val.keep) is written into its buffer on the way, and read from it afterwards. */
typedef struct {
    int rank;
    const lw_dim *dom;
    int mark;
} lw_keep_scope;
void lw_keep_begin(lw_ctx *L, lw_keep_scope *save, int rank, const lw_dim *dom);
/* complete: the loops ran over the whole domain (else what they wrote is not relied on). */
void lw_keep_end(lw_ctx *L, const lw_keep_scope *save, bool complete);

/* ---- lw_loops.c: loop nests ---- */
typedef struct lw_nest lw_nest;
/* Emits a loop nest over dims [0, ext[d]) of a domain of rank R, with index
 * names idx[d] given, calling body(L, user, idx, guarded) for the innermost
 * statements. Views reachable from the values in `reads` contribute index-set
 * splits: the interior runs with guarded=false. clip_lo/clip_hi (may be NULL
 * or hold NULL entries) restrict the iteration (stores). simd marks the
 * innermost loop `omp simd` (unless safe mode). */
typedef void (*lw_body_fn)(lw_ctx *L, void *user, const char *const *idx, bool guarded);
/* Emits code before the innermost loop of a nest over [lo, hi) of index idx[rank - 1] (the
 * outer indices are set) that runs some first part of it (streaming stores, lw_store.c);
 * returns the C++ variable where the nest's own loop starts then, or NULL (nothing done). */
typedef const char *(*lw_inner_fn)(lw_ctx *L, void *user, const char *const *idx, const char *lo,
                                   const char *hi);
void lw_emit_nest(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                  const char *const *clip_hi, lw_val *const *reads, int n_reads, bool simd,
                  lw_body_fn body, void *user);
/* The same where the clip of some dims came from a view range [raw_lo, raw_hi) (a store's
 * target): views of the very same range need no split along those dims. inner (may be NULL)
 * starts the innermost loops but the guarded edges of the innermost dim's split. */
void lw_emit_nest_raw(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                      const char *const *clip_hi, const char *const *raw_lo,
                      const char *const *raw_hi, lw_val *const *reads, int n_reads, bool simd,
                      lw_body_fn body, lw_inner_fn inner, void *user);
/* A nest over the leading `rank` dims of every value in `reads` (the outer loops of a
 * reduction or scan, whose body runs an inner nest over the remaining dims). */
void lw_emit_nest_outer(lw_ctx *L, int rank, const lw_dim *ext, lw_val *const *reads, int n_reads,
                        lw_body_fn body, void *user);
/* Fresh loop-index names. */
const char *lw_fresh(lw_ctx *L, const char *stem);

/* ---- lw_ops.c: computations ---- */
const lw_op *lw_op_find(const char *name);
const char *lw_op_name(const lw_op *op);
int lw_op_nargs(const lw_op *op);
const char *lw_op_default(const lw_op *op, int i); /* default literal of operand i, or NULL */
bool lw_op_is_where(const lw_op *op);
/* C++ text of op applied to operand texts (computation type ct). */
const char *lw_op_apply(lw_ctx *L, lw_val *v, const char *const *args);
akg_dtype lw_op_result_dtype(const lw_op *op, akg_dtype in);
bool lw_op_is_compare(const lw_op *op);

/* ---- lw_store.c: materialisation and stores ---- */
/* A new BUF of v's shape and dtype (storage picked from the tier and size). */
lw_val *lw_buffer(lw_ctx *L, akg_dtype dt, int rank, const lw_dim *dim, lw_tier tier,
                  const char *stem);
/* The same in a panel layout (LAYOUT_PANEL_A/B with panel height/width P). */
lw_val *lw_buffer_layout(lw_ctx *L, akg_dtype dt, int rank, const lw_dim *dim, lw_tier tier,
                         const char *stem, lw_layout layout, int64_t P);
/* Writes every element of v into buffer b (same shape; b may be v's own source:
 * only identity-indexed reads of b are allowed then). */
void lw_assign_into(lw_ctx *L, lw_val *b, lw_val *v);
/* Materialises v into a new buffer (or returns v if it is one). */
lw_val *lw_force(lw_ctx *L, lw_val *v, lw_tier tier);
/* Stores v into the region view `dst` (a VIEW whose base is the target), with
 * an optional mask value; elements outside the base are not written. */
void lw_store(lw_ctx *L, lw_val *dst, lw_val *v, lw_val *mask);
/* v with every costly subcomputation that broadcasts over v's domain (a [1, N] row of
 * reciprocals read for every row) computed once into a buffer first. */
lw_val *lw_hoist(lw_ctx *L, lw_val *v);
/* Frees the heap buffers allocated since mark (the end of a scope). */
void lw_free_scope(lw_ctx *L, size_t mark);
/* The number of elements of a shape (C++ text; *known and *k when constant). */
const char *lw_count(lw_ctx *L, int rank, const lw_dim *dim, bool *known, int64_t *k);
/* Row-major strides of a TENSOR or BUF from its dims. */
void lw_set_strides(lw_ctx *L, lw_val *b);

/* ---- lw_expr.c: values of expressions ---- */
lw_val *lw_value_of(lw_ctx *L, const akg_sketch_expr *e);
/* Whether e is an integer expression of scalars only (indices, symbols, loop variables). */
bool lw_is_index_expr(lw_ctx *L, const akg_sketch_expr *e);
/* Computes the reduction calls (reduce_sum(x, axis=...) ...), each from a later statement of a
 * run whose operands the run does not change, in one loop nest when their operands have one
 * shape and they reduce the same trailing axes; each call's statement then takes its result.
 * false, with nothing emitted, when they do not fit one nest. */
bool lw_reduce_siblings(lw_ctx *L, const akg_sketch_expr *const *calls, int n);
lw_val *lw_scalar(lw_ctx *L, akg_dtype dt, const char *c);
/* A float number of the sketch (f32 until it joins a computation of another type). */
lw_val *lw_float_scalar(lw_ctx *L, double v);
lw_val *lw_elementwise(lw_ctx *L, const char *name, lw_val *const *args, int n);
lw_val *lw_cast(lw_ctx *L, lw_val *x, akg_dtype dt);
/* A new buffer holding v's elements. */
lw_val *lw_copy_to_buffer(lw_ctx *L, lw_val *v);

/* ---- lw_stmt.c (and lw_names.c, lw_scope.c, lw_control.c: lw_stmt.h) ---- */
void lw_lower_body(lw_ctx *L);
/* Whether `name` may be read after the statement being lowered. */
bool lw_is_live(lw_ctx *L, const char *name);

/* ---- lw_tile.c: reductions, scans, gemm, gather, softmax, transpose ---- */
lw_val *lw_reduce(lw_ctx *L, const char *op, lw_val *x, const int *axes, int n_axes, bool keepdim);
/* Sibling reductions: outs[i] = ops[i](xs[i]) over the same axes of values of one shape, in one
 * loop nest (each element of a tile both read is loaded once). Only where the reduced axes are
 * the trailing ones and no op is an argmax/argmin; false, with nothing emitted, otherwise. */
bool lw_reduce_group(lw_ctx *L, const char *const *ops, lw_val *const *xs, int n, const int *axes,
                     int n_axes, bool keepdim, lw_val **outs);
lw_val *lw_scan(lw_ctx *L, const char *op, lw_val *x, int axis, bool reverse, bool exclusive);
lw_val *lw_gather(lw_ctx *L, lw_val *x, lw_val *index, int axis);
/* The C++ condition under which the whole tile of view v lies inside its base (NULL: always;
 * "false" when a mask makes it irrelevant). */
const char *lw_interior(lw_ctx *L, lw_val *v);
/* acc (a BUF, or NULL for a new zero one) += op(a) @ op(b); returns acc. */
lw_val *lw_gemm(lw_ctx *L, lw_val *a, lw_val *b, lw_val *acc, bool trans_a, bool trans_b);

#endif
