/*
 * lw_stmt.h: what the statement lowering's files share (internal to the cpu/cpp Coder).
 *
 *   lw_names.c    what statements read, write and bind; blocks and liveness; what the rest
 *                 of a scope does with a name (the syntactic analyses)
 *   lw_scope.c    Python scoping in C++: dependences of lazy values, storage a construct
 *                 keeps for a name, dry runs
 *   lw_control.c  loops and ifs
 *   lw_stmt.c     the other statements, values computed once for several readers, sibling
 *                 reductions, blocks
 *
 * Everything here allocates from the lowering's arena (lw_ctx.arena).
 */
#ifndef AKG_LW_STMT_H
#define AKG_LW_STMT_H

#include "lw.h"

/* ---- lw_names.c ---- */

/* A set of names (arena storage, grown as needed). */
typedef struct {
    const char **v;
    size_t n, cap;
} lw_nameset;

void lw_ns_add(lw_ctx *L, lw_nameset *s, const char *name);
bool lw_ns_has(const lw_nameset *s, const char *name);
/* Every name a statement reads (a load into part of a tile reads that tile too). */
void lw_stmt_reads(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s);
/* The names a statement binds to new values (assignments, allocations, loop variables). */
void lw_stmt_rebinds(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s);
/* Every tile name statement st writes in place (loads, stores, destinations), anywhere inside. */
void lw_stmt_writes(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s);
/* The tile a call statement writes: `op(..., dst=t)` or the extra positional argument. */
const akg_sketch_expr *lw_call_dst(const akg_sketch_expr *call);
/* The name a load or store target writes (*whole: the target is the name alone), or NULL. */
const char *lw_target_name(const akg_sketch_expr *t, bool *whole);

/* The statements of a body: the sketch's (owner NULL), a loop's, an if's then (which 0) or else
 * (which 1) block. */
typedef struct {
    const akg_sketch_stmt *owner;
    int which;
    size_t n;
} lw_block;

const akg_sketch_stmt *lw_blk_at(lw_ctx *L, const lw_block *b, size_t i);

/* A block being lowered, innermost first (lw_ctx.uses): where liveness looks from. */
typedef struct lw_frame {
    lw_block blk;
    size_t pos;      /* the statement being lowered */
    bool loop;       /* the whole block runs again after its end */
    lw_nameset lazy; /* names this block bound to computations (kept by their first consumer) */
    struct lw_frame *up;
} lw_frame;

lw_frame *lw_cur_frame(lw_ctx *L);
/* 1: statements [from, to) of b read `name` first; -1: one binds it anew first; 0: neither. */
int lw_first_touch(lw_ctx *L, const lw_block *b, size_t from, size_t to, const char *name);
/* Whether a statement of b from `from` on writes tile `name` before one rebinds it. */
bool lw_writes_before_rebind(lw_ctx *L, const lw_block *b, size_t from, const char *name);
/* Whether the tile allocated at the current statement can be a view (one whole load fills it). */
bool lw_view_eligible(lw_ctx *L, const char *name);
/* The gemm statement of b from `from` on that accumulates into `name`, or NULL. */
const akg_sketch_stmt *lw_find_gemm_acc(lw_ctx *L, const lw_block *b, size_t from, const char *name,
                                        int depth);
/* The first statement of b from `from` on that assigns `name` a value computed from it. */
const akg_sketch_stmt *lw_find_update(lw_ctx *L, const lw_block *b, size_t from, const char *name,
                                      int depth);
/* How the rest of the scope reads rank-2 tile `name`: 1 only through row slices of constant
 * extent *P, 2 only through column slices, 0 otherwise (-1: not at all). */
int lw_slice_pattern(lw_ctx *L, const lw_block *b, size_t from, const char *name, int64_t *P,
                     int depth);
/* Whether a for loop inside statement st (or st itself) runs over `name`. */
bool lw_binds_loop_var(const akg_sketch_stmt *st, const char *name);
/* Whether for loop `inner`'s bounds do not read `var` (it can be collapsed with var's loop). */
bool lw_bounds_free_of(lw_ctx *L, const akg_sketch_stmt *inner, const char *var);
/* Whether expression e computes something whole when evaluated (a reduction, scan, gemm...). */
bool lw_materialises(const akg_sketch_expr *e, int depth);
/* The reduction of statement st when it is `NAME = <expression with one reduction>`. */
const akg_sketch_expr *lw_stmt_reduction(const akg_sketch_stmt *st);
/* The end of the run of sibling reductions starting at statement i of b (i + 1: none). */
size_t lw_sibling_run(lw_ctx *L, const lw_block *b, size_t i);

/* ---- lw_scope.c ---- */

/* Whether lazy value v reads storage s. */
bool lw_depends(const lw_val *v, const lw_val *s, int depth);
/* Materialises every live lazy value that reads storage s (about to be written through the
 * name `writer`), and copies s for the other live names bound to it. */
void lw_force_dependents(lw_ctx *L, lw_val *s, lw_val *except, const char *writer);
/* Whether every read of storage s inside v is at the element a loop writing v into s (or into
 * region dst of it) writes. */
bool lw_same_access(const lw_val *v, const lw_val *s, const lw_val *dst, int depth);
/* The storage of tile `name` (now v) about to be written in place. */
lw_val *lw_writable(lw_ctx *L, const char *name, lw_val *v);
lw_name *lw_env_snapshot(lw_ctx *L, size_t *n);
void lw_env_restore(lw_ctx *L, lw_name *snap, size_t n);
/* Storage before construct st for the names it assigns that are read after it (or in a loop's
 * next iteration); *lastpriv (may be NULL) collects the scalars a parallel loop hands back. */
void lw_stabilise(lw_ctx *L, const akg_sketch_stmt *st, bool loop, lw_nameset *lastpriv);

/* ---- lw_control.c ---- */

/* outer_set: with collapsed_inner (the inner loop of a collapse(2)), the statement that sets
 * the outer loop's variable, or NULL. */
void lw_do_for(lw_ctx *L, const akg_sketch_stmt *st, bool collapsed_inner, const char *outer_set);
void lw_do_if(lw_ctx *L, const akg_sketch_stmt *st);

/* ---- lw_stmt.c ---- */

/* Sets the statement's hints (vectorize, its width, math) in L. */
void lw_set_hints(lw_ctx *L, const akg_sketch_stmt *st);
/* Lowers block b (loop: it runs again after its end, for liveness). */
void lw_lower_block(lw_ctx *L, const lw_block *b, bool loop);

#endif
