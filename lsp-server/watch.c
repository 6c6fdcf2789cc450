/* watch.c: see watch.h. */
#include "watch.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "results.h"
#include "uri.h"

#define WATCH_READ_LIMIT ((size_t)4 << 20)

struct akg_lsp_watch {
    uv_fs_event_t handle;
    char *dir;
    akg_lsp_server *server;
    akg_lsp_watch *next;
};

void akg_lsp_watch_file_changed(akg_lsp_server *s, const char *path)
{
    if (!akg_lsp_ends_with(path, ".py"))
        return;
    if (akg_lsp_doc_find_path(&s->docs, path))
        return; /* open: the editor's text wins */
    cJSON *results = akg_lsp_results_for(s, path, NULL);
    int known = cJSON_GetArraySize(results) > 0;
    cJSON_Delete(results);
    if (!known)
        return;
    char hash[65] = "";
    char *text = NULL;
    size_t len = 0;
    char err[256];
    if (akg_read_file(path, WATCH_READ_LIMIT, &text, &len, err, sizeof err) == AKG_OK) {
        akg_sha256_hex(text, len, hash);
        free(text);
    } else {
        snprintf(hash, sizeof hash, "deleted"); /* gone: every stored run is stale */
    }
    akg_store *store = akg_lsp_store(s);
    if (store && akg_store_mark_stale(store, path, hash) == AKG_OK)
        akg_lsp_log_info("%s changed on disk; its stored results are stale", path);
    akg_lsp_refresh_views(s);
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
    (void)events;
    akg_lsp_watch *w = h->data;
    if (status < 0 || !filename || w->server->state != AKG_LSP_RUNNING)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", w->dir, filename);
    akg_lsp_watch_file_changed(w->server, path);
}

static void on_watch_closed(uv_handle_t *h)
{
    akg_lsp_watch *w = h->data;
    w->server->handles_open--;
    free(w->dir);
    free(w);
}

void akg_lsp_watch_folder(akg_lsp_server *s, const char *dir)
{
    if (s->state == AKG_LSP_EXITING)
        return;
    int n = 0;
    for (akg_lsp_watch *w = s->watch; w; w = w->next, n++)
        if (strcmp(w->dir, dir) == 0)
            return;
    if (n >= AKG_LSP_MAX_WATCHES)
        return;
    akg_lsp_watch *w = calloc(1, sizeof *w);
    if (!w)
        return;
    w->dir = akg_strdup(dir);
    w->server = s;
    w->handle.data = w;
    uv_fs_event_init(s->loop, &w->handle);
    s->handles_open++;
    int rc = uv_fs_event_start(&w->handle, on_fs_event, dir, 0);
    if (rc != 0) {
        akg_lsp_log_warn("cannot watch %s: %s", dir, uv_strerror(rc));
        uv_close((uv_handle_t *)&w->handle, on_watch_closed);
        return;
    }
    w->next = s->watch;
    s->watch = w;
}

void akg_lsp_unwatch_folder(akg_lsp_server *s, const char *dir)
{
    for (akg_lsp_watch **pp = &s->watch; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->dir, dir) == 0) {
            akg_lsp_watch *w = *pp;
            *pp = w->next;
            uv_close((uv_handle_t *)&w->handle, on_watch_closed);
            return;
        }
    }
}

void akg_lsp_watch_close(akg_lsp_server *s)
{
    while (s->watch) {
        akg_lsp_watch *w = s->watch;
        s->watch = w->next;
        uv_close((uv_handle_t *)&w->handle, on_watch_closed);
    }
}

int akg_lsp_handle_watched_files(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                                 size_t errlen)
{
    (void)result;
    const cJSON *changes = akg_lsp_param(params, "changes");
    if (!cJSON_IsArray(changes))
        return akg_fail(err, errlen, AKG_EINVAL, "didChangeWatchedFiles: changes must be an array"),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *c;
    cJSON_ArrayForEach(c, changes)
    {
        char *path = akg_lsp_uri_to_path(akg_lsp_param_string(c, "uri"));
        if (path)
            akg_lsp_watch_file_changed(s, path);
        free(path);
    }
    return 0;
}
