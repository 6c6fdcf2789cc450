/*
 * watch.h: references that change on disk while they are closed.
 *
 * The server watches its workspace folders and the folders of references
 * opened since the server started (uv_fs_event; on Linux each watch covers one folder)
 * and also takes workspace/didChangeWatchedFiles from clients that watch for
 * it. A changed reference with stored results gets its runs marked stale in
 * the store, and lenses and hovers are refreshed.
 */
#ifndef AKG_LSP_WATCH_H
#define AKG_LSP_WATCH_H

#include "server.h"

#define AKG_LSP_MAX_WATCHES 64

void akg_lsp_watch_folder(akg_lsp_server *s, const char *dir);
void akg_lsp_unwatch_folder(akg_lsp_server *s, const char *dir);
/* Closes every watch (handles close through the loop). */
void akg_lsp_watch_close(akg_lsp_server *s);
/* A file on disk changed (or was created/deleted). */
void akg_lsp_watch_file_changed(akg_lsp_server *s, const char *path);

int akg_lsp_handle_watched_files(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                                 size_t errlen);

#endif
