/*
 * cu.h: the cuda/cuda backend's lowering of a checked sketch to CUDA C
 * (internal header shared by the cu_*.c files).
 *
 * A CUDA block runs one program (one iteration of the parallel loops) at a
 * time, its threads sharing the program's tiles. Tiles are not arrays the
 * threads fill in turn: a tile is a *value* (cu_node), a formula of its
 * element index that every thread can evaluate for the elements it owns:
 *   - a loaded tile reads the tensor when an element is needed (no copy), an
 *     elementwise operation is the formula of its operands' elements, so a
 *     chain load -> exp -> sub -> store is one thread-strided loop over the
 *     stored region (element f to thread f % blockDim.x), guarded by the
 *     tile's extents and the tensor's bounds;
 *   - a tile whose every extent is 1 (an accumulator of one element, a full
 *     reduction with keepdim) is a uniform register: every thread holds the
 *     same value and computes it redundantly;
 *   - a full reduction is a thread-strided partial, combined by warp shuffles
 *     and shared memory (akg_block_reduce in the prelude) into a uniform value;
 *     a partial reduction gives each output a group of threads (the block
 *     divided among the outputs at run time, akg_red_group; a warp at least
 *     along a contiguous reduced axis), combined by akg_group_reduce (argmax and
 *     argmin: (value, index) pairs, first index on ties) into a per-block
 *     buffer; such a buffer, a tile written more than once (an accumulator tile
 *     updated in a loop) or one read after the memory it was loaded from is
 *     written are materialized in a per-block global scratch buffer, sized on
 *     the host from an upper bound of the extents;
 *   - a scan (cumsum, cumprod) along an axis is materialized in a per-block
 *     buffer, each run walked by the whole block in chunks, a block scan
 *     (akg_block_scan) per chunk and a carry between chunks (cu_scan.c);
 *   - gemm/dot stage chunks of their operands in __shared__ memory and sum a
 *     register micro-tile per thread (cu_gemm.c), into a kept accumulator in
 *     place or into a new per-block buffer;
 *   - every statement that writes memory is a thread-strided loop with a
 *     __syncthreads() before and after it, so a later statement of the
 *     program may read what any thread wrote (control flow inside a program is
 *     uniform: ifs on tile values are refused).
 * The sketch splits into host code and kernels as in the Triton backend: an
 * outermost parallel loop (with the parallel loops that are its whole body)
 * is one __global__ kernel over a flattened grid (a grid-stride loop over the
 * program ids: no 65535 limit); host loops and ifs on symbols stay C in the
 * extern "C" launcher; `slow` tiles allocated on the host are device scratch
 * (cudaMallocAsync on the caller's stream); host statements that store run as
 * one-block kernels; pure host tile statements are re-issued in each kernel.
 *
 * Memory: every string and node of one lowering lives in the context's arena,
 * released at once by cu_release().
 */
#ifndef AKG_CU_H
#define AKG_CU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "akg/akg.h"
#include "akg/sketch.h"

#define CU_MAXR 8

/* A tensor-like memory: a sketch tensor or a host `slow` tile (device scratch). */
typedef struct {
    const char *name;
    const char *ptr; /* C name of the typed pointer */
    int rank;
    const char *dim[CU_MAXR]; /* C extents (host-known) */
    akg_dtype dt;
} cu_mem;

typedef enum {
    CN_LIT = 1, /* a number (c: its C text) broadcast to the node's shape */
    CN_SCAL,    /* a uniform C value: a register every thread holds, or an index scalar */
    CN_LOAD,    /* a tile read from a cu_mem region when an element is needed */
    CN_BUF,     /* a materialized tile: c is the element pointer, row-major over ext */
    CN_OP,      /* an elementwise operation of the formula table */
    CN_CAST,    /* a[0] converted to dt */
    CN_ARANGE,  /* start + index (c: start) */
    CN_GATHER,  /* a[0] at a[1]'s indices along axis */
    CN_VIEW,    /* a[0] with new unit axes (t[None, :]): vdim maps each dimension to a[0]'s */
} cu_node_kind;

typedef struct cu_op cu_op;

typedef struct cu_node {
    cu_node_kind kind;
    int rank;
    const char *ext[CU_MAXR]; /* C extents in kernel scope */
    const char *bnd[CU_MAXR]; /* host-known upper bounds (NULL: none known) */
    bool unit[CU_MAXR];       /* the extent is the literal 1 (broadcasts) */
    akg_dtype dt;
    bool weak; /* a number or index scalar: takes the dtype of the tile it meets */
    const char *c;
    /* CN_LOAD */
    const cu_mem *mem;
    const char *fix[CU_MAXR];   /* per memory dimension: a fixed index, or NULL for a slice */
    const char *start[CU_MAXR]; /* slice start and step */
    const char *step[CU_MAXR];
    int tdim[CU_MAXR]; /* the tile dimension a slice runs along (-1: a unit slice) */
    const char *other;
    int epoch; /* the store count of the kernel when it was loaded */
    /* CN_OP, CN_CAST, CN_GATHER */
    const cu_op *op;
    struct cu_node *a[3];
    int nargs;
    int axis;
    int vdim[CU_MAXR]; /* CN_VIEW: the dimension of a[0] each dimension is, -1 for a new axis */
} cu_node;

typedef enum {
    CB_MEM = 1, /* a tensor or host scratch */
    CB_INT,     /* an index scalar: symbol, constexpr, loop variable, integer assign (c) */
    CB_PARAM,   /* a runtime param (c), weakly typed */
    CB_VALUE,   /* a tile or uniform value: node */
    CB_ALLOC,   /* an allocated tile not written yet (shape in node, dt may be unknown) */
} cu_bind_kind;

typedef struct {
    const char *name;
    cu_bind_kind kind;
    const char *c;
    cu_node *node;
    cu_mem *mem;
    bool host;       /* known on the host (symbols, constexprs, host ints, host scratch) */
    bool mat;        /* CB_VALUE/CB_ALLOC: a materialized buffer or uniform register, written in
                        place by later assignments */
    int loop_depth;  /* the kernel loop depth of the binding */
    akg_dtype dt;    /* CB_PARAM: declared dtype */
    const char *bnd; /* CB_INT in a kernel: a host-known upper bound of its value, or NULL */
} cu_bind;

/* A per-block global scratch buffer a kernel needs (its pointer is a kernel argument). */
typedef struct {
    const char *c;     /* the kernel argument's name */
    const char *ctype; /* element type */
    const char *elems; /* host-known elements per block */
} cu_scratch;

typedef struct {
    const akg_sketch *sk;
    char *err;
    size_t errlen;
    int status;
    const char *source; /* the sketch file's name, for messages */
    akg_arena arena;    /* the lowering's strings and nodes (akg/akg.h) */
    akg_buf *out;       /* where cu_line writes */
    int indent;
    int temp;
    const akg_sketch_stmt *cur;

    cu_bind *binds;
    size_t n_binds, cap_binds;

    akg_sketch_binding consts[64]; /* symbols bound to integer constants (folding host ifs) */
    size_t n_consts;

    /* the kernel being lowered */
    bool in_kernel;
    int loop_depth;
    int epoch;   /* stores so far */
    bool synced; /* the last statement emitted was a __syncthreads() */
    cu_scratch scratch[64];
    size_t n_scratch;
    const char *gemm_ct[8]; /* element types of the kernel's gemm staging arrays (one pair each) */
    size_t n_gemm_ct;
    int kernels;
} cu_ctx;

/* ---- cu_core.c ---- */
void *cu_alloc(cu_ctx *C, size_t n);
const char *cu_strf(cu_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cu_fail(cu_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cu_fail_expr(cu_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cu_line(cu_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cu_release(cu_ctx *C);
const char *cu_temp(cu_ctx *C, const char *prefix);
/* The index of each dim d with take[d] (the last dim the fastest; ext the extents) from the
 * flat index `flat`, fastest first, by % and /; with slowest_rest the slowest taken dim is what
 * is left of flat (flat is below the taken extents' product). Lines in C's kernel. */
void cu_unflatten(cu_ctx *C, int rank, const char *const *ext, const bool *take, const char *flat,
                  bool slowest_rest, const char **idx);
const char *cu_text(cu_ctx *C, const akg_sketch_expr *e);
cu_bind *cu_bind_new(cu_ctx *C, const char *name, cu_bind_kind kind);
cu_bind *cu_lookup(cu_ctx *C, const char *name);
const char *cu_ctype(akg_dtype dt);    /* storage type: float, __half, ... */
const char *cu_comptype(akg_dtype dt); /* arithmetic type: f16/bf16 compute in float */
bool cu_is_float(akg_dtype dt);
bool cu_is_int(akg_dtype dt);
void cu_sync(cu_ctx *C);

/* ---- cu_expr.c: index expressions, values, element formulas ---- */
bool cu_is_index(cu_ctx *C, const akg_sketch_expr *e);
bool cu_host_known(cu_ctx *C, const akg_sketch_expr *e);
const char *cu_index(cu_ctx *C, const akg_sketch_expr *e);
/* A host-known upper bound of the extent e, or NULL. */
const char *cu_bound(cu_ctx *C, const akg_sketch_expr *e);
bool cu_range_const(cu_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                    int64_t *k);
bool cu_all_unit(const cu_node *n);
cu_node *cu_new_node(cu_ctx *C, cu_node_kind kind, int rank, akg_dtype dt);
/* The value of e; emits what must run before its elements are read (reductions). */
cu_node *cu_value(cu_ctx *C, const akg_sketch_expr *e);
cu_node *cu_call_value(cu_ctx *C, const akg_sketch_expr *call, size_t n_items);
/* The element of n at the multi-index idx (n->rank C index texts): emits the lines that
 * compute it and returns a C name or literal of n's arithmetic type. */
const char *cu_elem(cu_ctx *C, const cu_node *n, const char *const *idx);
/* Opens a thread-strided loop over the extents (rank 0: thread 0 alone); idx gets the index
 * names. Close with cu_loop_end. */
void cu_loop_begin(cu_ctx *C, int rank, const char *const *ext, const char **idx);
void cu_loop_end(cu_ctx *C);
/* Per-block scratch of elems (host-known) elements of type ctype: the kernel's pointer. */
const char *cu_scratch_new(cu_ctx *C, const char *ctype, const char *elems);
/* A materialized copy of n (a per-block buffer), or n itself when uniform. */
cu_node *cu_materialize(cu_ctx *C, cu_node *n, akg_dtype dt);
/* The node's value as a uniform register (all extents 1). */
cu_node *cu_uniform(cu_ctx *C, cu_node *n, akg_dtype dt);
/* Writes n's elements into the buffer node dst (same shape; converts to dst's dtype). */
void cu_write_buf(cu_ctx *C, const cu_node *dst, const cu_node *n);
/* A per-block buffer of like's shape, dtype dt; fails when an extent has no host bound. */
cu_node *cu_new_buffer(cu_ctx *C, const cu_node *like, akg_dtype dt);
/* The element of a at idx converted to dtype dt's arithmetic type (emits its lines). */
const char *cu_elem_as(cu_ctx *C, const cu_node *a, const char *const *idx, akg_dtype dt);

/* ---- cu_gemm.c: gemm and dot of rank-2 tiles ---- */
/* The value of gemm(...) / dot(...) (n_items positional arguments; `dst=` is the accumulator
 * of the statement form): a per-block buffer [M, N] computed at the current point. */
cu_node *cu_gemm_value(cu_ctx *C, const akg_sketch_expr *call, size_t n_items);
/* `name = gemm(a, b, name)` (or the statement gemm(a, b, name)) into the kept buffer of name,
 * in place; false when that is not possible (the caller then takes cu_gemm_value). */
bool cu_gemm_in_place(cu_ctx *C, const char *name, const akg_sketch_expr *call, size_t n_items);

/* ---- cu_scan.c: cumsum / cumprod of a tile ---- */
/* The scan call's value (n_items positional arguments; prod: cumprod): a per-block buffer of
 * the tile's shape and dtype, computed at the current point by the whole block. */
cu_node *cu_scan_value(cu_ctx *C, const akg_sketch_expr *call, size_t n_items, bool prod);

/* ---- cu_ops.c ---- */
const cu_op *cu_op_find(const char *name);
int cu_op_nargs(const cu_op *op);
const char *cu_op_default(const cu_op *op, int i);
int cu_op_kind(const cu_op *op); /* 0 arithmetic, 1 comparison, 2 logical, 3 where */
/* The formula with operands args (C names or literals of type ctype). */
const char *cu_op_apply(cu_ctx *C, const cu_op *op, const char *ctype, const char *const *args);
extern const char cu_prelude[];

/* ---- cu_stmt.c: statements inside a kernel ---- */
void cu_kernel_stmts(cu_ctx *C, const akg_sketch_stmt *const *stmts, size_t n);

/* ---- cu_lower.c: the host walk, kernels and the launcher ---- */
void cu_lower_module(cu_ctx *C, akg_buf *out);

#endif
