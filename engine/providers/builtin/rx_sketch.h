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
int rx_rowmap_sketch(rx_sk *s, const char *what);
/* rx_sketch_scan.c */
int rx_scan_sketch(rx_sk *s, const char *what);
/* rx_sketch_chnorm.c */
int rx_chnorm_sketch(rx_sk *s);
/* rx_sketch_loss.c */
int rx_rowloss_sketch(rx_sk *s);

#endif
