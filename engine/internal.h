/*
 * internal.h: the engine's private structures, shared by engine.c (jobs,
 * queue, lifetime) and workflows/pipeline.c (the state machine of one job).
 * Front ends never include this.
 */
#ifndef AKG_INTERNAL_H
#define AKG_INTERNAL_H

#include <uv.h>

#include "akg/child.h"
#include "akg/design.h"
#include "akg/engine.h"
#include "akg/harness.h"
#include "akg/store.h"
#include "akg/task.h"

struct akg_engine {
    uv_loop_t *loop;
    akg_harness *harness;
    akg_store *store;
    char *python;
    char *workspace;
    int threads, devices;
    int max_jobs, max_queue;
    int running, queued;
    long long next_local_id;
    akg_job *jobs; /* every live job, running or queued */
    int closing;
    int pending_closes;
    void (*close_cb)(void *);
    void *close_user;
};

typedef enum {
    JOB_QUEUED,
    JOB_PARSE,
    JOB_PROBE,
    JOB_DESIGN,
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
    int started;   /* left the queue */
    int finishing;

    /* options, deep copies */
    char *reference_path, *framework, *backend, *arch, *dsl, *workflow, *kernel_path, *provider,
        *output_dir_opt;
    double verify_timeout_s;
    int max_step, trials, run_times, warmup_times;
    int compiled_baseline;   /* profile also times torch.compile of the reference */
    unsigned long long seed;

    cJSON *config;
    char *ref_source;
    akg_reference *ref;
    cJSON *probe;
    akg_design *design;
    struct akg_sketch *sketch; /* the design's sketch, parsed and checked */
    akg_kernel_files files;
    char *out_dir, *sketch_path, *kernel_src_path, *model_new_path, *lib_path, *report_path;
    int attempt;
    int safe_mode;
    cJSON *feedback;   /* the last failure, routed by the Conductor */
    cJSON *verify;     /* last verify answer */
    cJSON *profile;    /* last profile answer */
    cJSON *candidates; /* array of candidate summaries */
    akg_harness_req *hreq;
    akg_child *child;
    uv_timer_t kick;
    int kick_open;
    akg_job_status final_status;
    cJSON *final_error;
    double started_ms;
    char started_iso[32];
};

/* pipeline.c */
void akg__pipeline_start(akg_job *job);
void akg__pipeline_cancel(akg_job *job);

/* engine.c */
void akg__job_emit(akg_job *job, akg_event *ev);
void akg__job_finished(akg_job *job); /* frees the job, starts queued ones */

#endif
