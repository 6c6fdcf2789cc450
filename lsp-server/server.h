/*
 * server.h: the language server's state and its message loop.
 *
 * The server reads messages (jsonrpc.h), queues them, and handles the queue
 * from an idle handle, one batch a loop iteration, so a $/cancelRequest that
 * arrives behind a request can still cancel it (-32800). Handlers are short
 * and never block: anything slow is an engine job that reports back as events
 * (jobs.h). Every request gets exactly one response; a handler that fails
 * gives an error response.
 *
 * Lifetime: akg_lsp_server_new() returns a server the caller owns. It stops
 * itself on `exit` or end of input, whether or not the client keeps its end
 * of the pipe open: it stops reading, cancels the jobs (their children are
 * killed), closes the engine with its harness workers, the timers, the
 * watchers and the transport, after which uv_run returns and
 * akg_lsp_server_free() releases the rest; akg_lsp_server_exit_code() is the
 * process's exit status. Should anything still hold the loop a few seconds
 * after the stop, the server stops the loop itself and
 * akg_lsp_server_exit_forced() says so: the process must then leave at once
 * (_exit) without freeing what those handles still use.
 */
#ifndef AKG_LSP_SERVER_H
#define AKG_LSP_SERVER_H

#include <cjson/cJSON.h>
#include <uv.h>

#include "akg/engine.h"
#include "akg/store.h"
#include "documents.h"
#include "jsonrpc.h"
#include "settings.h"

typedef struct akg_lsp_server akg_lsp_server;
typedef struct akg_lsp_job akg_lsp_job;
typedef struct akg_lsp_watch akg_lsp_watch;
typedef struct akg_lsp_result_cache akg_lsp_result_cache;

/* A handler fills *result (a request's answer; NULL means JSON null) and
 * returns 0, or returns a JSON-RPC error code with a message in err. */
typedef int (*akg_lsp_handler)(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                               size_t errlen);

/* The answer to a request the server sent; exactly one of result/error is
 * non-NULL (error is also set, code -32097, when the server stops first). */
typedef void (*akg_lsp_response_cb)(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                                    long long user_id);

typedef struct akg_lsp_message akg_lsp_message;
typedef struct akg_lsp_outgoing akg_lsp_outgoing;

typedef enum { AKG_LSP_STARTING, AKG_LSP_RUNNING, AKG_LSP_SHUTDOWN, AKG_LSP_EXITING } akg_lsp_state;

typedef struct {
    int work_done_progress;    /* window.workDoneProgress */
    int show_document;         /* window.showDocument.support */
    int configuration;         /* workspace.configuration */
    int code_lens_refresh;     /* workspace.codeLens.refreshSupport */
    int inlay_hint_refresh;    /* workspace.inlayHint.refreshSupport */
    int watched_files_dynamic; /* workspace.didChangeWatchedFiles.dynamicRegistration */
    int diagnostic_versions;   /* textDocument.publishDiagnostics.versionSupport */
    int apply_edit;            /* workspace.applyEdit */
    int document_changes;      /* workspace.workspaceEdit.documentChanges */
    int snippet_edit;          /* workspace.workspaceEdit.snippetEditSupport (LSP 3.18) */
} akg_lsp_client_caps;

struct akg_lsp_server {
    uv_loop_t *loop;
    akg_rpc_transport *rpc;
    akg_lsp_state state;
    int shutdown_received;
    int exit_code;
    size_t max_message;

    akg_lsp_client_caps caps;
    long long ask_serial; /* the last question about a construction (selection.c) */
    akg_lsp_encoding encoding;
    char **folders; /* absolute workspace folder paths */
    size_t n_folders;
    akg_lsp_settings settings;
    akg_lsp_documents docs;

    /* Incoming messages waiting for the idle pump. */
    akg_lsp_message *queue_head, *queue_tail;
    size_t queue_len;
    uv_idle_t pump;
    int pump_active;

    /* Requests we sent and whose answers we wait for. */
    akg_lsp_outgoing *outgoing;
    long long next_request_id;

    akg_engine *engine; /* created on the first job: opening files runs nothing */
    int engine_closing;
    akg_store *store;      /* read side for hovers and lenses; opened at initialize */
    char *store_path_open; /* the path store was opened from */
    akg_lsp_job *jobs;
    long long jobs_started;
    akg_lsp_result_cache *results;
    cJSON *sketch_runs; /* sketch path -> the error of its last run (sketch_link.h) */
    struct akg_lsp_selection *selections; /* jobs and failures from selections (selection.h) */

    uv_timer_t debounce; /* re-parses dirty documents after typing pauses */
    akg_lsp_watch *watch;

    int handles_open; /* pump + debounce + transport + watch */

    /* Armed by akg_lsp_server_stop, unreferenced (it never keeps the loop
     * alive); closed by akg_lsp_server_free. */
    uv_timer_t exit_deadline;
    int exit_deadline_open;
    int exit_forced;
};

/* Creates a server reading in_fd and writing out_fd. The caller owns it. */
int akg_lsp_server_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_message,
                       akg_lsp_server **out, char *err, size_t errlen);
/* Releases what is left after uv_run has returned. */
void akg_lsp_server_free(akg_lsp_server *s);
int akg_lsp_server_exit_code(const akg_lsp_server *s);
/* 1 when the stop did not finish in time and uv_run returned with handles
 * still open; the caller must not free the server or close the loop. */
int akg_lsp_server_exit_forced(const akg_lsp_server *s);

/* Outgoing messages. params is taken (deleted by the call). */
void akg_lsp_notify(akg_lsp_server *s, const char *method, cJSON *params);
void akg_lsp_request(akg_lsp_server *s, const char *method, cJSON *params, akg_lsp_response_cb cb,
                     long long user_id);
/* window/showMessage; type 1 error, 2 warning, 3 info. */
void akg_lsp_show_message(akg_lsp_server *s, int type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Trust: AKG_OK when path (absolute) lies inside a workspace folder (symlinks
 * resolved); otherwise AKG_EINVAL with a message naming it. */
int akg_lsp_check_trusted(akg_lsp_server *s, const char *path, char *err, size_t errlen);
/* The workspace folder holding path (symlinks resolved), or NULL. Borrowed. */
const char *akg_lsp_folder_of(akg_lsp_server *s, const char *path);
/* The engine, created on first use with the current settings; NULL with a
 * message when it cannot start. */
akg_engine *akg_lsp_engine(akg_lsp_server *s, char *err, size_t errlen);
/* The store for reads; NULL when it cannot be opened (results then come only
 * from jobs since the server started). */
akg_store *akg_lsp_store(akg_lsp_server *s);

/* Stops the server: stops reading, cancels jobs (killing their children),
 * closes the engine, timers, watches and transport, and arms the deadline
 * after which the loop is stopped regardless. Safe to call more than once. */
void akg_lsp_server_stop(akg_lsp_server *s);
/* Applies a $/setTrace value ("off", "messages", "verbose") to the logs. */
void akg_lsp_apply_trace(const char *value);
/* Reacts to changed settings (a bitmask of AKG_LSP_SETTINGS_*). */
void akg_lsp_settings_changed(akg_lsp_server *s, int changed);

/* Asks the client to refresh code lenses and inlay hints where it can. */
void akg_lsp_refresh_views(akg_lsp_server *s);

/* Parameter helpers: each returns NULL when the member is absent or of
 * another type. Paths are dotted: "textDocument.uri". */
const cJSON *akg_lsp_param(const cJSON *params, const char *dotted);
const char *akg_lsp_param_string(const cJSON *params, const char *dotted);
/* The open document named by params.textDocument.uri; on failure NULL with
 * an error code (-32602) in *code and a message in err. */
akg_lsp_document *akg_lsp_param_document(akg_lsp_server *s, const cJSON *params, int *code,
                                         char *err, size_t errlen);
/* Reads params.position into a byte offset of doc; 0 when malformed. */
int akg_lsp_param_offset(akg_lsp_server *s, akg_lsp_document *doc, const cJSON *params,
                         size_t *offset);

#endif
