/*
 * rx_sketch.h: the writers of the complete, bound sketches of the
 * reduction, norm, scan and loss rules (internal to the built-in provider).
 *
 * The rules' analysis (rules_reduction_core.h) leaves the computation in the
 * design's params: the statistics, row values and output expression over a
 * view [O, D, I] of the inputs (D the reduced or scanned run of dims), or a
 * channel normalisation, or a row loss. The writers turn that into a sketch
 * that says everything the Coder needs: the tensors and the bind: section
 * that reads them from the task, the tiling (rows or CH-column chunks, BLK
 * element blocks, P parts of one long row), what runs in parallel and what is
 * vectorised, and f64 accumulation where sums need it. The params are only
 * the Designer's provenance: nothing downstream reads them.
 *
 * Every writer appends to s->b and returns AKG_OK, or fails with a message
 * (AKG_EUNSUPPORTED) when the design needs what the language cannot say.
 */
#ifndef AKG_RX_SKETCH_H
#define AKG_RX_SKETCH_H

#include <cjson/cJSON.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "akg/task.h"

#define RX_MAX_RANK 8
#define RX_MAX_IN 8
#define RX_MAX_P 8
#define RX_MAX_S 16
#define RX_NAME 48

typedef struct {
    akg_buf *b;
    const akg_design *d;
    const cJSON *p; /* d->params: the analysis */
    const akg_reference *ref;
    const cJSON *probe;
    int rank;   /* probed rank of the first input */
    int d0, d1; /* the reduced (scanned) run of dims [d0, d1) of the first input */
    int precise;
    int n_in, n_p, n_s;
    char in[RX_MAX_IN][RX_NAME]; /* sketch names of the kernel's inputs */
    char pt[RX_MAX_P][RX_NAME];  /* sketch names of Model's tensors the kernel reads */
    char sc[RX_MAX_S][RX_NAME];  /* sketch names of the scalars (params) */
    unsigned skip_scalar;        /* scalars the sketch reads as symbols instead (bit k) */
    int gpu;                     /* the GPU's designs (rx_sketch_gpu.c) */
    char *err;
    size_t errlen;
} rx_sk;

/* What the leaves of an expression are called where it is written: the tile
 * of each input and tensor parameter, the statistics and row values (printf
 * formats taking the index), and whether literals are f32. */
typedef struct {
    const char *in[RX_MAX_IN];
    const char *pt[RX_MAX_P];
    const char *st;
    const char *rv;
    int lit32; /* literals are f32 values: written cast(v, f32) (see rx_expr) */
} rx_names;

/* rx_sketch.c */
int rx_fail(rx_sk *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The expression language of rules_reduction_core.h in sketch terms. */
void rx_expr(rx_sk *s, const cJSON *e, const rx_names *n);
/* The forward parameter index and probe description of kernel input k. */
int rx_input_index(const rx_sk *s, int k);
const char *rx_input_dtype(const rx_sk *s, int k);
/* "A<from> * ... * A<to-1>", or "1" for an empty run. */
void rx_prod(rx_sk *s, int from, int to);
/* "[A0, A1, ...]" (the first input's probed dims as symbols). */
void rx_dims(rx_sk *s);
/* The sketch header: comment, name, symbols A0..A<rank-1> after `extra_symbols`. */
void rx_head(rx_sk *s, const char *what, const char *extra_symbols);
/* "  params: ..." for the scalars (nothing when there are none). */
void rx_params_line(rx_sk *s);
/* ", NAME = init(...)" for every scalar read from the constructor. */
void rx_bind_scalars(rx_sk *s);
/* `NAME = weight("attr", [dims])` items for Model's tensors, comma-separated. */
void rx_bind_tensors(rx_sk *s, const char *shape);
/* The loop hints: parallel when asked, and precise maths on a numerical retry. */
void rx_loop_hints(rx_sk *s, const char *ind, int parallel);
/* The sketch dtype of a probe dtype ("float32" -> "f32"). */
const char *rx_dtype(const char *probe_dtype);

/* rx_sketch_stats.c: statistics of rows and columns */
int rx_reduce_sketch(rx_sk *s, const char *what);
/* rx_sketch_rowmap.c: a map of each row by its statistics */
int rx_rowmap_sketch(rx_sk *s, const char *what);

/* What the reduce and rowmap writers share (rx_sketch_stats.c). */
#define RX_MAX_STATS 8
/* a row at least this long is split across cores when rows are few */
#define RX_SPLIT_ROWS "65536"

typedef struct {
    int n;
    const char *mode[RX_MAX_STATS];
    const cJSON *expr[RX_MAX_STATS];
} rx_stat_list;
/* Reads params "stats" (1 to RX_MAX_STATS known modes). */
int rx_read_stats(rx_sk *s, rx_stat_list *st);
int rx_m_is(const char *m, const char *a);
int rx_sumlike(const char *m); /* sum, mean, norm2 */
int rx_extreme(const char *m); /* max, min */
int rx_argx(const char *m);    /* argmax, argmin */
/* The value statistic k accumulates: its expression, squared for a 2-norm. */
void rx_stat_value(rx_sk *s, const rx_stat_list *st, int k, const rx_names *n);
/* t<k> = alloc([ext]); load(IN_k[region] -> t<k>) for every input. */
void rx_load_inputs(rx_sk *s, const char *ind, const char *ext, const char *region);
/* The inputs as tiles t0..t7, f32 literals. */
rx_names rx_tile_names(void);
/* The f64 accumulators acc<k> of the statistics over the run [lo, hi) of row o (whole: the
 * row), in one pass of BLK blocks (arg-extremes: m<k> and k<k>). */
void rx_row_accumulate(rx_sk *s, const rx_stat_list *st, const char *ind, const char *lo,
                       const char *hi, int whole);
/* A statistic's value from its f64 accumulator (a mean divides by D, a 2-norm is a root). */
void rx_finish_stat(rx_sk *s, const char *m, const char *acc);
/* The reduction that combines partials of statistic m along axis 0. */
const char *rx_combine_op(const char *m);
/* The constexpr line (BLK, CH, P when with_parts, DIM from the constructor). */
void rx_constexprs(rx_sk *s, int with_parts);
/* bind: the inputs (each of the first's shape) and O, D, I. */
void rx_bind_inputs(rx_sk *s);
/* ", DIM = init(...)" when the dim comes from the constructor. */
void rx_bind_dim(rx_sk *s);
/* "IN[O, D, I]: dtype; " for every input. */
void rx_input_tensors(rx_sk *s);
/* "all dims", "dims 1..2" or "dim 1", for comments. */
void rx_dims_comment(rx_sk *s, char *out, size_t n);
/* The output value of reduce statistic m from its accumulator (f32, or i64 for an index). */
void rx_reduce_result(rx_sk *s, const char *m, const char *acc);
/* rx_sketch_rowmap.c: st<k>, the row values rv<k> and their f32 forms from acc<k>; the
 * store of the output expression over the tiles t<k> and Model's tensors' tiles. */
void rx_row_values(rx_sk *s, const rx_stat_list *st, const char *ind);
void rx_map_store(rx_sk *s, const char *ind, const char **ptiles, const char *region);
/* rx_sketch_gpu.c: the GPU's reduce and rowmap designs */
int rx_reduce_sketch_gpu(rx_sk *s, const char *what);
int rx_rowmap_sketch_gpu(rx_sk *s, const char *what);
/* rx_sketch_scan.c */
int rx_scan_sketch(rx_sk *s, const char *what);
/* rx_sketch_gpu_scan.c: the GPU's scan design */
int rx_scan_sketch_gpu(rx_sk *s, const char *what);
/* rx_sketch_chnorm.c */
int rx_chnorm_sketch(rx_sk *s);
/* rx_sketch_loss.c */
int rx_rowloss_sketch(rx_sk *s);

#endif
