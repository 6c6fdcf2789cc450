/*
 * internal.h: the engine's private structures, shared by engine.c (jobs,
 * queue, lifetime) and workflows/pipeline.c (the state machine of one job).
 * Front ends never include this.
 */
#ifndef AKG_INTERNAL_H
#define AKG_INTERNAL_H

#include <uv.h>

#include "akg/backend.h"
#include "akg/child.h"
#include "akg/engine.h"
#include "akg/harness.h"
#include "akg/provider.h"
#include "akg/store.h"
#include "akg/task.h"

/* Device kinds one engine may run harness pools for at once. */
#define AKG_ENGINE_MAX_POOLS 8

typedef struct {
    char device_kind[32]; /* "cpu", "cuda", ... (akg_backend.device_kind) */
    akg_harness *pool;
} akg_engine_pool;

struct akg_engine {
    uv_loop_t *loop;
    akg_engine_pool pools[AKG_ENGINE_MAX_POOLS]; /* created on first use, see akg__engine_harness */
    int n_pools;
    akg_store *store;
    char *python;
    char *workspace;
    int threads, devices;
    int device_ids[AKG_ENGINE_MAX_DEVICES]; /* worker i's device index */
    int max_jobs, max_queue;
    int running, queued;
    long long next_local_id;
    akg_job *jobs; /* every live job, running or queued */
    int closing;
    int pending_closes;
    void (*close_cb)(void *);
    void *close_user;
};

typedef struct akg_search akg_search; /* workflows/search.c */

typedef enum {
    JOB_QUEUED,
    JOB_PARSE,
    JOB_PROBE,
    JOB_DESIGN,
    JOB_DESIGN_CHECK,
    JOB_CODE,
    JOB_BUILD,
    JOB_VERIFY,
    JOB_PROFILE,
    JOB_FINISHING
} job_state;

struct akg_job {
    akg_engine *engine;
    long long id;
    akg_job *next, *prev;
    akg_event_cb cb;
    void *user;
    job_state state;
    int cancelled;
    int started; /* left the queue */
    int finishing;

    /* options, deep copies */
    char *reference_path, *framework, *backend, *arch, *dsl, *workflow, *kernel_path, *provider,
        *output_dir_opt;
    char *user_sketch_path;   /* --sketch: the user's design (absolute), or NULL */
    const akg_backend *be;    /* the target's backend (static) */
    const akg_provider *prov; /* the provider (static) */
    int store_run;            /* the store has a row for this run (run_begin succeeded) */
    char fingerprint[65];     /* the task's fingerprint, "" unknown (akg/search_cache.h) */
    char judge[65];           /* the judge's version, "" unknown: nothing cached or resumed */
    int store_failures;       /* store writes that failed (each reported by an event) */
    char store_error[256];    /* the last store failure's message */
    double verify_timeout_s;
    int max_step, trials, run_times, warmup_times;
    int compiled_baseline; /* profile also times torch.compile of the reference */
    double min_speedup;    /* a verified kernel below it asks for another design */
    unsigned long long seed;

    cJSON *config;
    char *ref_source;
    akg_reference *ref;
    cJSON *probe;
    akg_provider_session *session; /* the provider's state for this job; opened at design */
    akg_provider_op *pop;          /* the provider request in flight */
    char *sketch_text;             /* the design: the sketch's text (provider's or user's) */
    char *op_name;                 /* the operator, from the design */
    cJSON *design_info;            /* how it was designed (provenance, or the user's file) */
    unsigned sketch_header_line;   /* user sketch: the line of `sketch NAME` (1-based) */
    struct akg_sketch *sketch;     /* the design's sketch, parsed and checked */
    akg_kernel_files files;
    char *out_dir, *sketch_path, *kernel_src_path, *model_new_path, *lib_path, *report_path;
    int attempt;
    int safe_mode;
    /* the design check (the reference interpreter runs the sketch against the reference):
     * "first" before any code, "on_mismatch" only to route a kernel's numerical failure,
     * "off"; its budget in seconds up front, and when a mismatch must be routed */
    char *design_check_mode;
    double design_check_s, design_check_full_s;
    cJSON *design_check; /* the last design_check answer for the current design, or NULL */
    cJSON *mismatch;     /* a kernel's mismatch waiting for the design check to route it */
    cJSON *feedback;     /* the last failure, routed by the Conductor */
    cJSON *verify;       /* last verify answer */
    cJSON *profile;      /* last profile answer */
    /* per harness op ("verify", "profile", ...): {"requests", "queued_s", "ran_s"} summed over
     * the job's requests (the pool's timings: waiting for a worker or an idle device, running) */
    cJSON *harness_times;
    cJSON *code_info; /* the last Coder answer's provenance (a model's requests, tokens), or NULL */
    cJSON *candidates; /* array of candidate summaries */
    cJSON *tried;      /* the sketch texts designed so far (strings), for the Designer */
    /* the fastest verified candidate kept while other designs are tried: its step, speedup,
     * verify and profile answers, design, sketch text, snapshot folder and file names */
    cJSON *best;
    int kept_step;          /* the candidate the job ended with (its files are the run's) */
    const char *search_end; /* why the search for a faster design ended (static), or NULL */

    struct akg_search *search;      /* evolve, adaptive_search: the search under way, or NULL */
    akg_search_options search_opts; /* their budgets from the job's options */
    akg_harness_req *hreq;
    akg_child *child;
    uv_timer_t kick;
    int kick_open;
    /* the provider's progress (a model asked, tokens as they stream), reported from a later
     * loop iteration than the provider's callback (pipeline.c, on_provider_progress) */
    uv_timer_t progress_timer;
    int progress_pending;   /* messages queued, oldest first */
    int progress_streaming; /* the last one queued is a STREAMING count (the next replaces it) */
    int progress_flushing;
    const char *progress_stage[4]; /* "design" or "code" (static) */
    char progress_msg[4][512];
    int handles_open; /* kick and progress_timer: the job is freed when both are closed */
    akg_job_status final_status;
    cJSON *final_error;
    double started_ms;
    char started_iso[32];
};

/* pipeline.c */
void akg__pipeline_start(akg_job *job);
/* Emits the provider's queued progress messages (akg__job_emit calls it before any event). */
void akg__pipeline_flush_progress(akg_job *job);
void akg__pipeline_cancel(akg_job *job);
/* The message of a failed build (how it ended, then up to 6000 bytes of the compiler's output)
 * into msg, initialised here. */
void akg__build_failure(const akg_child_result *r, akg_buf *msg);
/* Adds one harness answer's pool timings (queued_s, ran_s) to the job's harness_times under op. */
void akg__job_add_harness_time(akg_job *job, const char *op, const cJSON *ans);

/* report.c: report.json's object for a job ending with status (cls and
 * detail: its error, or NULL). The caller deletes it. */
cJSON *akg__report_build(akg_job *job, akg_job_status status, const char *cls, const char *detail);
/* Writes report.json and records the run's end in the store, once the job
 * has finished; a report that cannot be written turns a passing or
 * unverified job into an error (job->final_status changes). Failures are
 * error events. Returns the report for the DONE event (the caller deletes
 * it). */
cJSON *akg__job_record(akg_job *job);
/* Records the current candidate in the store (an error event when it
 * cannot). */
void akg__store_candidate(akg_job *job, const char *status, const char *cls, const char *detail,
                          double ref_ms, double kernel_ms);
/* One candidate's row in the store (its library too when it passed); a failure to write is
 * counted, kept in job->store_error and logged. info: the search's record (may be NULL). */
void akg__store_record(akg_job *job, int step, const char *sketch, const akg_kernel_files *files,
                       const char *lib_path, const char *status, const char *cls,
                       const char *detail, double ref_ms, double kernel_ms, cJSON *info);

/* engine.c */
void akg__job_emit(akg_job *job, akg_event *ev);
void akg__job_finished(akg_job *job); /* frees the job, starts queued ones */
/* The harness pool of device_kind, created on first use with the engine's
 * devices and threads; NULL with a message when it cannot be created. */
akg_harness *akg__engine_harness(akg_engine *engine, const char *device_kind, char *err,
                                 size_t errlen);

#endif
