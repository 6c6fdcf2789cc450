/*
 * jobs.h: engine jobs as the client sees them.
 *
 * A command starts a job and is answered at once with its id. The job then
 * reports through window/workDoneProgress/create and $/progress (begin, a
 * report per stage, attempt and trial, end), sends akg/sketchReady when the
 * Designer has a checked sketch and akg/jobFinished when it ends, opens the
 * kernel (window/showDocument) or says how it ended (window/showMessage), and
 * refreshes diagnostics, lenses and hovers. A job is cancelled by
 * window/workDoneProgress/cancel on its token or by the akg.cancel command;
 * the engine kills its children by process group.
 *
 * A job may lower a sketch the user wrote instead of asking the Designer
 * (sketch_path, from "Generate from this sketch"): its uri is still the
 * reference's, its notifications add sketchUri, and an error the job places
 * in the sketch becomes a diagnostic of the sketch file (sketch_link.h).
 *
 * Notifications (the editor clients rely on these shapes):
 *   akg/sketchReady  {id, uri, path, text}
 *   akg/jobFinished  {id, uri, status, paths: {sketch, kernel, modelNew, report},
 *                     speedup, error: {class, detail}, sketchUri?, modelUri?}
 * (modelUri: the model file of a job from a selection, selection.h).
 * status is one of pass, fail, unverified, cancelled, error.
 */
#ifndef AKG_LSP_JOBS_H
#define AKG_LSP_JOBS_H

#include "server.h"

typedef struct {
    const char *uri;  /* the reference document */
    const char *path; /* its absolute path */
    const char *backend, *dsl, *arch;
    const char *workflow;    /* NULL: the backend's default */
    const char *kernel_path; /* verifier_only */
    const char *sketch_path; /* the user's design to lower (absolute), or NULL */
    const char *sketch_uri;  /* its URI */
    int profile_runs;        /* timed runs of the profile; 0: the config's */
    double min_speedup;      /* used when min_speedup_set (0 keeps the first verified kernel) */
    int min_speedup_set;
} akg_lsp_job_request;

/* Starts a job; on success *job_id is its id and the return is 0, otherwise
 * a JSON-RPC error code with a message in err. Checks trust first. */
int akg_lsp_jobs_start(akg_lsp_server *s, const akg_lsp_job_request *req, long long *job_id,
                       char *err, size_t errlen);
/* Requests cancellation; AKG_ENOTFOUND when no such job runs. */
int akg_lsp_jobs_cancel(akg_lsp_server *s, long long job_id);
/* Cancels every running job; returns how many. */
int akg_lsp_jobs_cancel_all(akg_lsp_server *s);
/* Number of running jobs for a reference or sketch path (NULL: all). */
int akg_lsp_jobs_running_for(akg_lsp_server *s, const char *path);
/* Frees what is left of the job table (after the engine closed). */
void akg_lsp_jobs_free(akg_lsp_server *s);

int akg_lsp_handle_progress_cancel(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                   char *err, size_t errlen);

#endif
