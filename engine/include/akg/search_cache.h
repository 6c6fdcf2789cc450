/*
 * search_cache.h: results cached and searches resumed by task (engine/workflows/search_cache.c).
 *
 * A task fingerprint names what a kernel must compute and where it runs: the reference file's
 * content hash (report.json's reference_hash) with the backend, arch and DSL. A judge version
 * names the rules that verified it: the harness's sources and the DSL config's
 * verify_settings. Both are stored with every run and candidate; a cached answer and a resumed
 * candidate are only ever taken from rows with the same two.
 */
#ifndef AKG_SEARCH_CACHE_H
#define AKG_SEARCH_CACHE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* The task fingerprint (64 hex digits and a NUL into out) of a reference's content hash (hex
 * SHA-256 of its source) on backend/arch/dsl. */
void akg_task_fingerprint(const char *content_hash, const char *backend, const char *arch,
                          const char *dsl, char out[65]);
/* The judge version (64 hex digits) of the harness under akg_data_dir() and the DSL config's
 * verify_settings (config may be NULL). Returns 0, or -1 with err filled when the harness's
 * sources cannot be read (then nothing may be cached). */
int akg_judge_version(const cJSON *config, char out[65], char *err, size_t errlen);

typedef struct {
    const char *store_path; /* NULL: $AKG_STORE, else ~/.akg/akg.db */
    const char *reference_path;
    const char *backend, *arch, *dsl; /* arch NULL: the backend's default */
    const char *output_dir;           /* NULL: akg_output/<stem>_<dsl>_cached_<time> */
} akg_cache_request;

/* Answers a task from the store, without starting a harness worker: the fastest verified
 * kernel of a passing run with the same task fingerprint and judge version is written to the
 * output folder (its sketch, kernel source, model_new.py, built library and report.json with
 * "cached": true and the run it came from). Returns 1 with *report (the caller deletes it), 0
 * when the store holds no such kernel (with why in err: a person's words, for a log line), or
 * a negative AKG_E* status with err filled. */
int akg_cache_answer(const akg_cache_request *req, cJSON **report, char *err, size_t errlen);

#endif
