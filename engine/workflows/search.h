/*
 * search.h: the search workflows `evolve` and `adaptive_search` inside a job (search.c), and the
 * few pipeline steps they drive (pipeline.c). Engine-private, like internal.h.
 *
 * The job's default path designs, lowers, verifies and profiles candidate 0 (the default
 * design). From its profile on, the search owns the job: each next candidate is the design's
 * sketch with other tune() values, checked, then lowered, built, verified and profiled in its
 * own folder by search.c, several at once on the engine's harness workers; each end (a profile,
 * or any failure) is recorded (the report's candidates, the store) and the next ones start,
 * until the budget is spent or the search has converged. The job ends with the fastest verified
 * candidate, candidate 0 included, so it never returns a kernel slower than the default
 * design's.
 */
#ifndef AKG_SEARCH_H
#define AKG_SEARCH_H

#include <cjson/cJSON.h>

#include "../internal.h"

/* Whether the job's workflow is a search (evolve, adaptive_search). */
int akg__search_workflow(const akg_job *job);
/* The pipeline's candidate passed its profile (cand: its entry in job->candidates): candidate
 * 0, from which the search starts. */
void akg__search_candidate_passed(akg_job *job, cJSON *cand, double speedup);
/* A candidate the pipeline ran failed (its class and a person's detail) once the search has
 * begun (job->search set): recorded, and the search goes on. */
void akg__search_candidate_failed(akg_job *job, const char *cls, const char *detail);
/* report.json's "search" object (the caller owns it), or NULL for other workflows. */
cJSON *akg__search_report(const akg_job *job);
/* What the store keeps of the pipeline's current candidate beside its row (its info column):
 * the workflow, the design's key (the SHA-256 of the default design's sketch), the file names,
 * and for a verified one its speedup and the verify and profile answers (a search's own
 * candidates add their genome, island, round and parent). The caller deletes it. */
cJSON *akg__search_store_info(const akg_job *job, int passed);
/* Frees the search state (the job is over). */
void akg__search_free(akg_job *job);

/* ---- pipeline.c's steps, for the search ---- */

/* Copies the current candidate's files to candidates/<attempt>/; returns its record (the
 * caller owns it) or NULL with err filled. */
cJSON *akg__pipeline_snapshot(akg_job *job, double speedup, char *err, size_t errlen);
/* Ends the job with job->best, its files restored into the run folder. */
void akg__pipeline_finish_best(akg_job *job, const char *why);
/* Ends the job (a failure of the job itself, not of a candidate). */
void akg__pipeline_finish(akg_job *job, akg_job_status status, const char *cls, const char *detail);
/* The candidate in job->sketch / job->sketch_text (checked) is written and lowered: the Coder,
 * build, Verifier and profile follow as for any design. */
void akg__pipeline_run_candidate(akg_job *job);
void akg__pipeline_log(akg_job *job, akg_log_level level, const char *msg);
/* Profiles the kernel model_new_path (a kept candidate's copy) against the reference again, with
 * the job's warm-up and runs; fn gets the harness's answer (a cancelled job never calls it). */
void akg__pipeline_profile(akg_job *job, const char *model_new_path,
                           void (*fn)(akg_job *job, const cJSON *ans));

#endif
