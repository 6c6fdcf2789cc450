/*
 * suite.h: an operator suite run through the engine, its baseline judged and its result
 * recorded (bench/README.md describes what the numbers mean). `akg_cli bench` prints a run;
 * the language server can start one the same way.
 *
 * A suite is a folder of references in KernelBench form, <family>/<name>.py, searched
 * recursively. A run has three phases on one libuv loop, and none of them blocks it:
 *
 *  1. Discovery, on libuv's thread pool: every *.py below the folder is parsed with the
 *     engine's reference parser (akg_reference_parse, the parse every job starts with) and is
 *     either selected or skipped with a reason. akg_suite_discover is the same walk, synchronous.
 *  2. The baseline: a harness worker of the suite's own, started in the environment the engine
 *     gives its workers, answers {"op":"env"} (backends/harness/README.md, "env");
 *     akg_suite_judge_baseline decides whether PyTorch runs at its best there. A baseline below
 *     its best is refused and no operator runs. The worker exits before phase 3, so it takes no
 *     cores from the profiles.
 *  3. The operators: one engine job per reference (the pipeline `akg_cli op` runs), at most
 *     `jobs` at once. Every profile must have run in the recorded environment
 *     (akg_suite_check_profile_env); if one did not, the speedups are withheld.
 *
 * The suite makes an engine of its own instead of borrowing its caller's: a measurement needs
 * exactly one harness worker (profiles never overlap, each gets every thread) whose thread count
 * is the one the baseline was judged with, and a front end's engine is sized for other work.
 * Both engines may share one store file (SQLite WAL).
 *
 * Threading: every function here but akg_suite_discover and the pure helpers is called on the
 * loop's thread, and every callback runs there.
 *
 * Lifetimes:
 *  - akg_suite_start returns a suite the caller owns. Events come on later loop iterations, never
 *    inside akg_suite_start; they may come inside akg_suite_cancel. The last event is
 *    AKG_SUITE_EVENT_DONE, delivered once the suite holds no handle, worker, engine or pool job;
 *    from then on (inside that callback too) the caller reads the results and releases the suite
 *    with akg_suite_free. Freeing a suite before its DONE is not allowed: cancel it and wait.
 *  - Strings and JSON reached through an event or an accessor belong to the suite and stay valid
 *    until akg_suite_free, except akg_suite_event.job_event, valid during its callback only.
 */
#ifndef AKG_SUITE_H
#define AKG_SUITE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"

#define AKG_SUITE_MAX_REFS 4096    /* references, and skipped files, one suite may hold */
#define AKG_SUITE_MAX_DEPTH 8      /* folder levels searched below the suite */
#define AKG_SUITE_MAX_JOBS 64      /* jobs at once */
#define AKG_SUITE_MAX_THREADS 1024 /* threads of the kernels and the baseline */

/* ---------- the suite's references ---------- */

/* One reference and, once its job has ended, its result. */
typedef struct {
    char *path;   /* the suite folder as given, joined with rel */
    char *rel;    /* relative to the suite: family/name.py */
    char *family; /* the first folder under the suite; "-" for files at its top */
    char *name;   /* the file name without .py */
    char *status; /* the job's status ("pass", "fail", "error", ...), or "not_run" */
    char *error_class, *error_detail; /* the last failure; NULL when none */
    char *run_dir;                    /* the job's run folder; NULL when no job ran */
    char *env_note; /* how the profile's environment differed from the record; NULL if it did not */
    double ref_ms, kernel_ms, speedup, elapsed_s;    /* NAN when absent */
    double compiled_ms, speedup_compiled, compile_s; /* torch.compile baseline; NAN when absent */
    char *compiled_error; /* why torch.compile failed on the reference; NULL when it did not */
    char *compiled_isa;   /* the SIMD set inductor wrote code for ("none": scalar); may be NULL */
    int job_started;      /* 1 when the engine accepted a job for it */
    char *scaled_path;    /* its copy at the target's size (suite_scale.c); NULL: run as it is */
    char *scale_note;     /* what the scale did ("BATCH 2048 -> 16384"), or why not; may be NULL */
} akg_suite_op;

/* A file below the suite that is not a reference, and why. */
typedef struct {
    char *path, *reason;
} akg_suite_skip;

/* The result of a walk: references in path order, each "not_run" with no numbers yet. Owned by
 * whoever declared it; release with akg_suite_listing_free. */
typedef struct {
    akg_suite_op *ops;
    size_t n_ops;
    akg_suite_skip *skips;
    size_t n_skips;
} akg_suite_listing;

/*
 * Walks suite_dir (at most AKG_SUITE_MAX_DEPTH levels, names in byte order, hidden entries and
 * __pycache__ left out) for *.py files whose path relative to the suite contains filter (NULL:
 * every file). check_suite.py and __init__.py are never references. Every other file is parsed
 * with akg_reference_parse: one that defines class Model(nn.Module), get_inputs() and
 * get_init_inputs() at module level is a reference (a syntax error or a missing forward() makes
 * it a broken one, which its job reports), anything else is skipped with the reason
 * akg_reference_form_gap gives. Blocks on the file system: call it off the loop's thread.
 * Returns AKG_EIO when suite_dir cannot be read, AKG_ENOMEM past AKG_SUITE_MAX_REFS.
 */
int akg_suite_discover(const char *suite_dir, const char *filter, akg_suite_listing *out, char *err,
                       size_t errlen);
void akg_suite_listing_free(akg_suite_listing *listing);

/* ---------- the baseline ---------- */

/*
 * Judges the harness's env answer: AKG_OK when PyTorch runs at its best there for kernels that
 * run `threads` threads (and, with compiled, when it has torch.compile); otherwise AKG_EINVAL and
 * the reason in reason[n]. Refused: a torch without torch.compile when compiled is set; a BLAS
 * that cannot be told or is the reference BLAS; OpenBLAS with OPENBLAS_CORETYPE unset, naming
 * another core type than the CPU's flags call for, or running other kernels; torch's threads,
 * OpenMP's threads or OMP_NUM_THREADS other than `threads`. python names the interpreter in the
 * reason. Pure.
 */
int akg_suite_judge_baseline(const cJSON *env, int threads, int compiled, const char *python,
                             char *reason, size_t n);

/* AKG_OK when a profile's "env" (threads, coretype, blas_library) matches the recorded env
 * answer, or either is NULL; otherwise AKG_EINVAL and what differed in note[n]. Pure. */
int akg_suite_check_profile_env(const cJSON *record_env, const cJSON *profile_env, char *note,
                                size_t n);

/* ---------- totals ---------- */

/* Which baseline a speedup is against: eager PyTorch, or the reference under torch.compile. */
typedef enum { AKG_SUITE_VS_EAGER, AKG_SUITE_VS_COMPILED } akg_suite_baseline;

/* Totals over operators. Failures and operators not run stay in `ops` (so count as not fast);
 * only passing operators with a speedup are in the geomean. */
typedef struct {
    size_t ops, passed, failed, not_run;
    size_t fast_1_count, fast_15_count; /* passing with speedup > 1 (> 1.5) */
    size_t geomean_over;                /* passing operators with a speedup */
    double pass_rate, fast_1, fast_15;  /* shares of ops; NAN when ops is 0 */
    double geomean_speedup;             /* exp(mean(log(speedup))); NAN when geomean_over is 0 */
} akg_suite_totals;

/* Totals of ops[0..n) in family (NULL: all) against vs. Pure. */
akg_suite_totals akg_suite_totals_of(const akg_suite_op *ops, size_t n, const char *family,
                                     akg_suite_baseline vs);
/* The families of ops[0..n) in order of first appearance, at most max, into out (pointers into
 * ops); returns how many. */
size_t akg_suite_families(const akg_suite_op *ops, size_t n, const char **out, size_t max);
/* 1 when the operator did not pass (failed, errored, cancelled or not run). */
int akg_suite_op_failed(const akg_suite_op *op);
/* text on one line (line breaks and runs of blanks become one space), cut to max chars with
 * "..." at the end, into out[n]; "-" for NULL. Returns out. */
const char *akg_suite_one_line(const char *text, char *out, size_t n, size_t max);

/* ---------- a run ---------- */

typedef struct {
    const char *suite_dir;            /* the folder (required) */
    const char *filter;               /* only references whose family/name.py contains it */
    const char *backend, *dsl, *arch; /* NULL: the first registered backend, its arch */
    const char *workflow;             /* every job's; NULL: the DSL config's default_workflow */
    int jobs;                         /* jobs at once, 1..AKG_SUITE_MAX_JOBS; 0 means 1 */
    int threads;                      /* threads of the kernels and the baseline; 0: all cores */
    const char *runs_dir;   /* run folders as runs_dir/<family>_<name>; NULL: config's log_dir */
    const char *python;     /* harness interpreter; NULL: $AKG_PYTHON, else the build's default */
    const char *store_path; /* NULL: $AKG_STORE, else ~/.akg/akg.db */
    const char *workspace;  /* the engine's workspace (.akg/settings.json); may be NULL */
    int compiled;           /* 1: also time every reference under torch.compile */
    int scale;   /* size factor: 0 the suite's suite.yaml for the backend, 1 none, N > 1 that one */
    int devices; /* harness workers; 0: 1 */
    const int *device_ids;    /* devices entries (akg_parse_devices); NULL: 0, 1, ... */
    const char *design_check; /* every job's design check (first, on_mismatch, off); NULL: the
                               * DSL config's verify_settings.design_check */
    unsigned long long seed;  /* every job's seed; 0: each job draws one from the clock */
    int trials;               /* every job's verify trials; 0: the config's */
    int profile_runs;         /* every job's timed runs; 0: the config's */
    double min_speedup;       /* every job's --min-speedup when min_speedup_set */
    int min_speedup_set;
} akg_suite_options;

typedef struct akg_suite akg_suite;

typedef enum {
    AKG_SUITE_EVENT_DISCOVERED,  /* the suite was read: akg_suite_ops/akg_suite_skips; count */
    AKG_SUITE_EVENT_ENVIRONMENT, /* the baseline's env answer arrived: environment, refusal */
    AKG_SUITE_EVENT_OP_STARTED,  /* an operator's job is being started: op, index, count */
    AKG_SUITE_EVENT_OP_PROGRESS, /* its job emitted an event other than DONE: job_event */
    AKG_SUITE_EVENT_OP_DONE,     /* its job ended, or could not start (job_started 0) */
    AKG_SUITE_EVENT_DONE         /* the last event: status, code, message, refusal */
} akg_suite_event_kind;

typedef enum {
    AKG_SUITE_COMPLETED,   /* every selected operator ran (failures included) */
    AKG_SUITE_WITHHELD,    /* they ran, but a profile left the recorded environment */
    AKG_SUITE_REFUSED,     /* the baseline is below its best: no operator ran */
    AKG_SUITE_NO_BASELINE, /* the harness could not describe the baseline: no operator ran */
    AKG_SUITE_CANCELLED,   /* akg_suite_cancel: operators not yet run stay "not_run" */
    AKG_SUITE_UNREAD,      /* the folder could not be read or selected no reference */
    AKG_SUITE_ERROR        /* the baseline was accepted but the engine could not start */
} akg_suite_status;

typedef struct {
    akg_suite_event_kind kind;
    akg_suite *suite;
    size_t index;               /* OP_*: the operator's position in akg_suite_ops, 0-based */
    size_t count;               /* every event: how many operators the suite selected */
    const akg_suite_op *op;     /* OP_*: the operator (results filled at OP_DONE) */
    const akg_event *job_event; /* OP_PROGRESS: the job's event, valid during the callback */
    const cJSON *environment;   /* ENVIRONMENT: the env answer */
    const char *refusal;        /* ENVIRONMENT, DONE: why speedups are refused; NULL if not */
    akg_suite_status status;    /* DONE */
    int code;                   /* DONE: AKG_OK, or the akg_status behind a failure */
    const char *message;        /* DONE: a line for a person unless COMPLETED; else NULL */
} akg_suite_event;

typedef void (*akg_suite_cb)(const akg_suite_event *event, void *user);

/*
 * Starts a run. Checks the options first and fails at once, with nothing started, with
 * AKG_EINVAL (jobs or threads out of range; the verifier_only workflow, which needs a kernel
 * per operator), AKG_EUNSUPPORTED (an unknown backend/DSL pair) or AKG_ENOTFOUND (suite_dir is
 * not a folder). On success *out is the suite (owned by the caller, see above).
 */
int akg_suite_start(uv_loop_t *loop, const akg_suite_options *opts, akg_suite_cb cb, void *user,
                    akg_suite **out, char *err, size_t errlen);
/* Stops the run: discovery stops, the baseline request is dropped, running jobs are cancelled
 * (children killed), operators not started stay "not_run"; DONE follows with
 * AKG_SUITE_CANCELLED (or REFUSED/NO_BASELINE when the baseline had already decided). */
void akg_suite_cancel(akg_suite *suite);
/* Releases a suite after its DONE event (see above). NULL is ignored. */
void akg_suite_free(akg_suite *suite);

/* The references in path order (filled once DISCOVERED has been delivered). */
const akg_suite_op *akg_suite_ops(const akg_suite *suite, size_t *n);
const akg_suite_skip *akg_suite_skips(const akg_suite *suite, size_t *n);
/* The harness's env answer, or NULL before ENVIRONMENT (or when it never came). */
const cJSON *akg_suite_environment(const akg_suite *suite);
/* Why the speedups are refused or withheld, or NULL. */
const char *akg_suite_refusal(const akg_suite *suite);
/* The status DONE carried; AKG_SUITE_CANCELLED before DONE. */
akg_suite_status akg_suite_status_get(const akg_suite *suite);
const char *akg_suite_status_name(akg_suite_status status);

/*
 * The result record (bench/README.md, "The JSON record"; the format of bench/results-*.json):
 * options, started_at and elapsed_s, the environment, refused, ops, failures, skipped, totals
 * and per_family (with compiled: totals_compiled and per_family_compiled). Speedups are null
 * while refused or withheld. A new cJSON object the caller deletes; NULL when out of memory.
 */
cJSON *akg_suite_record(const akg_suite *suite);

#endif
