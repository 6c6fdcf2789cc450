/*
 * store.h: the SQLite store (one file, WAL, schema versioned by user_version).
 *
 * Tables: runs (one per job: reference path and content hash, target, workflow,
 * provider, status, speedup, report JSON, timestamps, and the process that owns
 * it: owner_pid, owner_boot, owner_start), candidates (every kernel tried:
 * sketch, code, error class and detail, timings) and knowledge (entries used for
 * retrieval). Writes are single short statements; readers (LSP hovers,
 * `akg_cli runs`) use the same file from other processes safely under WAL, and
 * the file survives a process killed at any moment (store.c says why).
 *
 * A run's status: "running" while its owner works on it; then "pass", "fail",
 * "unverified", "cancelled" (the user stopped it) or "error" when it ends; or
 * "interrupted" when its owner died without ending it (SIGKILL, a crash, a
 * reboot), as found by the next process that opens the store.
 */
#ifndef AKG_STORE_H
#define AKG_STORE_H

#include <cjson/cJSON.h>

typedef struct akg_store akg_store;

/* Opens (creating and migrating) the store at path, then recovers it
 * (akg_store_recover; a recovery that cannot write now is left to a later
 * open). The caller owns the result; close with akg_store_close. */
int akg_store_open(const char *path, akg_store **out, char *err, size_t errlen);
void akg_store_close(akg_store *store);

/* Inserts a run in state "running", owned by the calling process (its pid,
 * the boot id and its start time); returns its id in *run_id. */
int akg_store_run_begin(akg_store *store, const char *reference_path, const char *content_hash,
                        const char *op, const char *backend, const char *dsl, const char *arch,
                        const char *workflow, const char *provider, const char *output_dir,
                        long long *run_id);
/* Finishes a run: status is "pass", "fail", "unverified", "cancelled" or "error";
 * report may be NULL. */
int akg_store_run_end(akg_store *store, long long run_id, const char *status, double speedup,
                      const cJSON *report);
/* Records one candidate of a run. Any string may be NULL. */
int akg_store_candidate_add(akg_store *store, long long run_id, int step, const char *sketch,
                            const char *code, const char *status, const char *error_class,
                            const char *error_detail, double ref_ms, double kernel_ms);
/* One candidate as a search records it (akg_store_candidate_record): its task fingerprint and
 * judge version (akg/search_cache.h), model_new.py and the built library (for a verified one,
 * so that a cached answer or a resumed best needs no build), and info: the search's record
 * (genome, island, round, speedup, the verify and profile answers). Any pointer may be NULL. */
typedef struct {
    int step;
    const char *sketch, *code, *model_new, *status, *error_class, *error_detail;
    double ref_ms, kernel_ms;
    const char *fingerprint, *judge;
    const void *library;
    size_t library_len;
    const cJSON *info;
} akg_store_cand;
/* Records one candidate of a run in one INSERT (one short transaction: a process killed after
 * it returns loses nothing of it). */
int akg_store_candidate_record(akg_store *store, long long run_id, const akg_store_cand *cand);
/* Sets a run's task fingerprint and judge version. */
int akg_store_run_set_key(akg_store *store, long long run_id, const char *fingerprint,
                          const char *judge);
/* The finished candidates (pass, fail) of a task judged by judge, outside run exclude_run,
 * oldest first, as an array of objects (id, run_id, step, sketch, status, error_class,
 * error_detail, ref_ms, kernel_ms, info parsed). The caller deletes it; NULL on error. */
cJSON *akg_store_task_candidates(akg_store *store, const char *fingerprint, const char *judge,
                                 long long exclude_run, int limit);
/* The verified candidate `step` of run run_id with its code, model_new and info, and its
 * library's bytes in *library (malloc'd, the caller frees; NULL when none). NULL when there is
 * no such row. The caller deletes the object. */
cJSON *akg_store_candidate_get(akg_store *store, long long run_id, int step, void **library,
                               size_t *library_len);
/* The passing runs of a task judged by judge that verified a kernel (not verifier_only,
 * kernelgen_only, design_only), fastest first, with their reports. The caller deletes it. */
cJSON *akg_store_cached_runs(akg_store *store, const char *fingerprint, const char *judge,
                             int limit);
/* Marks the runs of reference_path whose hash differs from content_hash stale. */
int akg_store_mark_stale(akg_store *store, const char *reference_path, const char *content_hash);

/* The most recent runs, newest first, as a cJSON array of objects with the
 * columns of runs (report parsed). reference_path may be NULL for all. The
 * caller deletes the result. */
cJSON *akg_store_recent_runs(akg_store *store, const char *reference_path, int limit);
/* The latest finished run per (backend, dsl) for a reference, as an array;
 * each object has "stale": true when its content hash differs from
 * content_hash (content_hash may be NULL). The caller deletes the result. */
cJSON *akg_store_latest_by_target(akg_store *store, const char *reference_path,
                                  const char *content_hash);
/* Marks the runs still "running" whose owner is gone (another boot, no such
 * process, a zombie, or its pid now held by a process started at another
 * time; a run without a recorded owner counts as gone) "interrupted", with
 * finished_at the last sign of life (its last candidate, else its start). The
 * runs of a live owner are left alone. */
int akg_store_recover(akg_store *store);
/* SQLite's message for the store's last failed call (a static or store-owned
 * string, valid until the next call on the store). */
const char *akg_store_errmsg(akg_store *store);

#endif
