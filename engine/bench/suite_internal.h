/*
 * suite_internal.h: the state of one suite run (akg/suite.h), shared by suite.c (the run on
 * the loop) and suite_record.c (totals and the JSON record). Nothing else includes it.
 */
#ifndef AKG_SUITE_INTERNAL_H
#define AKG_SUITE_INTERNAL_H

#include <stdatomic.h>
#include <uv.h>

#include "akg/engine.h"
#include "akg/harness.h"
#include "akg/suite.h"

/* Run-time state of one operator, next to its public akg_suite_op. */
typedef struct {
    akg_suite *suite;
    akg_job *job; /* while its job runs; the engine owns it */
    double started_ms;
} akg__suite_slot;

struct akg_suite {
    uv_loop_t *loop;
    akg_suite_cb cb; /* NULL once akg_suite_free was called before DONE */
    void *user;

    /* options, deep copies */
    char *suite_dir, *filter, *backend, *dsl, *arch, *workflow, *runs_dir, *python, *store_path,
        *workspace, *design_check;
    unsigned long long seed;
    int trials, profile_runs, min_speedup_set;
    double min_speedup;
    int jobs, threads, compiled;
    int scale_option; /* akg_suite_options.scale */
    int devices, device_ids[AKG_ENGINE_MAX_DEVICES];
    int scale; /* the factor applied (1: none) */

    /* phase 1: the walk on the thread pool. Only the pool thread writes listing, walk_rc and
     * walk_err until the after-work callback runs on the loop. */
    uv_work_t work;
    int work_pending;
    atomic_int stop_walk;
    akg_suite_listing listing;
    int walk_rc;
    char walk_err[1024];
    int discovered; /* DISCOVERED was delivered: listing and slots are the suite's */
    akg__suite_slot *slots;

    /* phase 2: the baseline's env request */
    akg_harness *env_pool;
    int env_closing; /* akg_harness_close was called on env_pool */
    cJSON *env;      /* the env answer; owned */
    char env_error[1024];

    /* phase 3: the operators */
    akg_engine *engine;
    int engine_closing;
    size_t next, running, finished;

    /* the end */
    char refusal[2048]; /* why speedups are refused or withheld; empty when they are not */
    int cancelled;
    int finishing;    /* finish() ran: DONE is on its way */
    int done;         /* DONE was delivered (or would have been, after an early free) */
    int free_on_done; /* akg_suite_free came before DONE */
    akg_suite_status status;
    int code;
    char message[2048];
    uv_timer_t finish_timer;
    char started_at[32];
    double t0_ms, elapsed_s;
};

/* suite_discover.c: akg_suite_discover, ended early (AKG_ECANCELED) once *stop is set. */
int akg__suite_discover(const char *suite_dir, const char *filter, akg_suite_listing *out,
                        const atomic_int *stop, char *err, size_t errlen);

/* suite_scale.c: writes the references of l scaled for backend (suite_dir/suite.yaml's
 * size_scale, or override > 0 as the factor) into dir and points each op at its copy; *factor is
 * the factor applied (1: nothing was written). Blocks on the file system. */
int akg__suite_scale(akg_suite_listing *l, const char *suite_dir, const char *backend, int override,
                     const char *dir, int *factor, char *err, size_t errlen);

#endif
