/*
 * engine.h: the one entry point both front ends (akg_cli, akg-lsp) use.
 *
 * An akg_engine lives on one libuv loop. It owns the harness worker pools
 * (one per device kind its jobs' backends run on, started on first use), the
 * SQLite store and the settings. A front end starts jobs (one pipeline run
 * each: a workflow over one reference and one target) and consumes their
 * events; it never sees agents, workflows or harness messages.
 *
 * Threading: everything here is called from the loop's thread, and every event
 * callback runs on it. Nothing in this API blocks the loop: compilers and
 * harness workers are child processes, HTTP is curl's multi interface.
 *
 * Lifetimes:
 *  - akg_engine_new() returns an engine the caller owns; akg_engine_close()
 *    cancels running jobs, stops the workers and calls close_cb once every
 *    handle is closed; only then may the loop be closed.
 *  - akg_job_start() returns a job owned by the engine. The job's last event is
 *    AKG_EVENT_DONE; after that callback returns the job is freed, so a front
 *    end must drop its pointer inside the DONE callback.
 *  - Strings and JSON inside an akg_event are valid only during the callback.
 */
#ifndef AKG_ENGINE_H
#define AKG_ENGINE_H

#include <stdbool.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "akg/akg.h"

typedef struct akg_engine akg_engine;
typedef struct akg_job akg_job;

typedef struct {
    const char *python;     /* harness interpreter; NULL: $AKG_PYTHON, else /usr/bin/python3 */
    const char *store_path; /* SQLite file; NULL: $AKG_STORE, else ~/.akg/akg.db */
    int devices;            /* harness workers of each device kind (one per device); 0: 1 */
    const int *device_ids;  /* devices entries: worker i's device index; NULL: 0, 1, ... */
    int threads;            /* CPU threads per worker and kernel; 0: all cores / devices */
    int max_jobs;           /* jobs that may run at once; 0 means 4 */
    int max_queue;          /* jobs that may wait; 0 means 16; more gives AKG_EBUSY */
    const char *workspace;  /* project root: .akg/settings.json is read from here; may be NULL */
} akg_engine_options;

#define AKG_ENGINE_MAX_DEVICES 64

/* Parses --devices: a count N (workers on devices 0..N-1) or a list of device indices with at
 * least one comma ("0,1", "0,0": two workers sharing device 0, "3,": device 3 alone) into
 * ids[*n] (at most AKG_ENGINE_MAX_DEVICES); AKG_EINVAL with the reason otherwise. Pure. */
int akg_parse_devices(const char *text, int *ids, int *n, char *err, size_t errlen);

/* Creates an engine on loop. Owned by the caller; release with akg_engine_close. */
int akg_engine_new(uv_loop_t *loop, const akg_engine_options *opts, akg_engine **out, char *err,
                   size_t errlen);
/* Cancels every job, stops workers, closes the store; close_cb runs when the
 * last handle has closed (the engine's memory is freed just before it). */
void akg_engine_close(akg_engine *engine, void (*close_cb)(void *user), void *user);

/* Opens the engine's store read-only for front ends that show stored results
 * (hovers, lenses, `akg_cli runs`). Returns the sqlite3* as void*, owned by the
 * engine. */
struct akg_store;
struct akg_store *akg_engine_store(akg_engine *engine);

/* The most timed runs a profile may ask for (the harness's limit). */
#define AKG_PROFILE_RUNS_MAX 100000

/* The search workflows' budgets (evolve, adaptive_search); 0 takes the DSL config's evolve: and
 * adaptive_search: sections, else the original AKG's defaults (3 rounds of 4 candidates on 2
 * islands; 12 candidates in all). */
typedef struct {
    int max_rounds, parallel_num, num_islands; /* evolve */
    int max_total_tasks;                       /* adaptive_search, the default design included */
} akg_search_options;

typedef struct {
    const char *reference_path; /* the KernelBench-form reference .py (required) */
    const char *framework;      /* "torch" */
    const char *backend;        /* a backend of the registry (akg/backend.h); NULL: the first */
    const char *arch;           /* "x86_64", "aarch64", "h100", ... */
    const char *dsl;            /* its DSL; NULL: the first backend's */
    const char *workflow;       /* "default", "coder_only", "kernelgen_only", "verifier_only",
                                   "design_only", "evolve", "adaptive_search";
                                   NULL: config's default_workflow */
    const char *kernel_path;    /* verifier_only: the model_new.py to check */
    const char *provider;       /* a name of the provider registry (akg/provider.h);
                                   NULL: "builtin" */
    const char *sketch_path;    /* the user's design: this sketch is lowered and verified and
                                   the Designer is skipped. It must check and be bound
                                   (akg/sketch_file.h); a design the reference interpreter
                                   finds wrong is a design_error of this file, not retried
                                   with another design. Not with verifier_only. */
    const char *design_check;   /* "first" (the design runs in the reference interpreter
                                   before any code), "on_mismatch" (only to route a kernel's
                                   mismatch), "off"; NULL: config's verify_settings.design_check */
    const char *output_dir;     /* run folder; NULL: <log_dir>/<op>_<timestamp> */
    double verify_timeout_s;    /* 0: config's verify_timeout */
    int max_step;               /* 0: config's max_step */
    int trials;                 /* 0: 5 */
    unsigned long long seed;    /* 0: drawn from the clock and recorded */
    int compiled_baseline;      /* 1: the profile also times the reference under torch.compile
                                   (needs PyTorch 2 in the harness interpreter); 0: eager only */
    double min_speedup;         /* a verified kernel below this speedup sends the Conductor's
                                   remaining attempts to other designs (feedback class "slow");
                                   used when min_speedup_set, else the config's
                                   profile_settings.min_speedup, else 1.0 */
    bool min_speedup_set;       /* min_speedup was given (0 keeps the first verified kernel) */
    int profile_runs;           /* timed runs of the profile (1 to AKG_PROFILE_RUNS_MAX); 0: the
                                   config's profile_settings.run_times. Given, the warm-up is
                                   the config's warmup_times but at most profile_runs */
    akg_search_options search;  /* evolve and adaptive_search */
} akg_job_options;

typedef enum {
    AKG_EVENT_STAGE,     /* a stage begins: stage, attempt, message */
    AKG_EVENT_SKETCH,    /* the Designer has a checked sketch: path, text */
    AKG_EVENT_KERNEL,    /* the Coder wrote a kernel: path (kernel source), text */
    AKG_EVENT_VERIFY,    /* a verification ended: ok, data = harness answer */
    AKG_EVENT_PROFILE,   /* a profile ended: ok, data = harness answer */
    AKG_EVENT_CANDIDATE, /* a candidate ended (search workflows): data */
    AKG_EVENT_LOG,       /* a line for logs: message, level */
    AKG_EVENT_DONE       /* last event: status, data = report.json contents */
} akg_event_kind;

typedef enum {
    AKG_JOB_PASS,       /* a kernel passed verification */
    AKG_JOB_FAIL,       /* no kernel passed */
    AKG_JOB_UNVERIFIED, /* kernelgen_only / design_only: written, not verified */
    AKG_JOB_CANCELLED,
    AKG_JOB_ERROR /* the job could not run (bad reference, probe failure, ...) */
} akg_job_status;

typedef enum {
    AKG_LOG_ERROR = 1,
    AKG_LOG_WARN = 2,
    AKG_LOG_INFO = 3,
    AKG_LOG_DEBUG = 4
} akg_log_level;

typedef struct {
    akg_event_kind kind;
    akg_job *job;
    long long job_id;  /* unique per engine, also the store's run id */
    const char *stage; /* "parse", "probe", "design", "code", "build", "verify", "profile" */
    int attempt;       /* 1-based step of the Conductor loop */
    int max_attempts;
    int trial, trials;     /* STAGE "verify": trials passed so far, of trials (0 otherwise) */
    int ok;                /* VERIFY/PROFILE: 1 when it passed */
    akg_job_status status; /* DONE */
    akg_log_level level;   /* LOG */
    const char *message;   /* one line for a person */
    const char *path;      /* SKETCH/KERNEL: the file written; DONE: the report.json */
    const char *text;      /* SKETCH/KERNEL: the file's text */
    const cJSON *data;     /* structured payload, see each kind */
} akg_event;

typedef void (*akg_event_cb)(const akg_event *event, void *user);

/* Starts a job. On success *out is the job (owned by the engine, see above)
 * and events begin on a later loop iteration, never inside this call. Fails
 * with AKG_EUNSUPPORTED for a backend/DSL pair without a backend or an
 * unknown provider, AKG_EBUSY when the queue is full, AKG_ENOTFOUND for a
 * missing reference or sketch. A sketch that does not check is not refused
 * here: the job ends with error class design_error naming its file and line. */
int akg_job_start(akg_engine *engine, const akg_job_options *opts, akg_event_cb cb, void *user,
                  akg_job **out, char *err, size_t errlen);
/* Requests cancellation: pending work is aborted, children are killed by
 * process group, and DONE arrives with AKG_JOB_CANCELLED within a second. */
void akg_job_cancel(akg_job *job);
long long akg_job_id(const akg_job *job);
/* Looks a running job up by id; NULL when it has ended. */
akg_job *akg_engine_find_job(akg_engine *engine, long long job_id);

const char *akg_job_status_name(akg_job_status status);

/* Targets (backend/dsl pairs) this build supports, for code actions and
 * `--help`: a cJSON array of {"backend","dsl","arch"}; the caller deletes it. */
cJSON *akg_engine_targets(void);
/* AKG_OK when the pair has a backend, AKG_EUNSUPPORTED otherwise (with a message). */
int akg_target_check(const char *backend, const char *dsl, char *err, size_t errlen);

#endif
