/*
 * results.h: the latest result per target for a reference, as hovers,
 * lenses and diagnostics show them.
 *
 * They come from the store (akg_store_latest_by_target, keyed by reference
 * path and content hash, so they survive restarts), overlaid with the reports
 * of jobs that ended since the server started (so a store that could not be
 * opened still shows their work). Each entry is an object with the store's
 * run columns: backend, dsl, arch, workflow, status, speedup, report (the
 * report.json object, or absent), stale (bool), finished_at, output_dir, id.
 */
#ifndef AKG_LSP_RESULTS_H
#define AKG_LSP_RESULTS_H

#include "server.h"

/* A new array the caller deletes; hash may be NULL (nothing is stale then). */
cJSON *akg_lsp_results_for(akg_lsp_server *s, const char *path, const char *hash);
/* Remembers a finished job's result. report may be NULL. */
void akg_lsp_results_remember(akg_lsp_server *s, long long job_id, const char *path,
                              const char *hash, const char *backend, const char *dsl,
                              const char *arch, const char *workflow, const char *status,
                              const cJSON *report);
void akg_lsp_results_free(akg_lsp_server *s);
/* Results remembered since the server started (borrowed; may be NULL). */
const cJSON *akg_lsp_results_all(akg_lsp_server *s);

/* Readers for one entry. */
const char *akg_lsp_result_status(const cJSON *entry);
double akg_lsp_result_number(const cJSON *entry, const char *dotted); /* NaN when absent */
const char *akg_lsp_result_string(const cJSON *entry, const char *dotted);
/* "cpu/cpp" into out. */
void akg_lsp_result_target(const cJSON *entry, char *out, size_t outlen);
/* The report.json path of a result into out; 0 when it has none. */
int akg_lsp_result_report_path(const cJSON *entry, char *out, size_t outlen);

#endif
