/* sync.c: see sync.h. */
#include "sync.h"

#include <stdlib.h>
#include <string.h>

#include "diagnostics.h"
#include "jobs.h"
#include "log.h"
#include "reference_index.h"
#include "results.h"
#include "watch.h"

/* autoProbe: a reference with no stored result gets a design-only job, the
 * cheapest run that probes it. Off unless the user turned it on. */
static void maybe_auto_probe(akg_lsp_server *s, akg_lsp_document *doc)
{
    if (!s->settings.auto_probe || !akg_lsp_is_reference(s, doc) || !doc->path)
        return;
    char err[512];
    if (akg_lsp_check_trusted(s, doc->path, err, sizeof err) != AKG_OK)
        return;
    cJSON *results = akg_lsp_results_for(s, doc->path, doc->hash);
    int have = cJSON_GetArraySize(results) > 0;
    cJSON_Delete(results);
    if (have || akg_lsp_jobs_running_for(s, doc->path))
        return;
    const cJSON *target = cJSON_GetArrayItem(s->settings.targets, 0);
    if (!target)
        return;
    akg_lsp_job_request req;
    memset(&req, 0, sizeof req);
    req.uri = doc->uri;
    req.path = doc->path;
    req.backend = akg_lsp_param_string(target, "backend");
    req.dsl = akg_lsp_param_string(target, "dsl");
    req.arch = akg_lsp_param_string(target, "arch");
    req.workflow = "design_only";
    long long id;
    if (akg_lsp_jobs_start(s, &req, &id, err, sizeof err) != 0)
        akg_lsp_log_warn("autoProbe %s: %s", doc->path, err);
}

int akg_lsp_handle_did_open(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                            size_t errlen)
{
    (void)result;
    const char *uri = akg_lsp_param_string(params, "textDocument.uri");
    const char *lang = akg_lsp_param_string(params, "textDocument.languageId");
    const char *text = akg_lsp_param_string(params, "textDocument.text");
    const cJSON *version = akg_lsp_param(params, "textDocument.version");
    if (!uri || !lang || !text || !cJSON_IsNumber(version))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "didOpen: textDocument needs uri, languageId, text (strings) and version "
                        "(number)"),
               AKG_RPC_INVALID_PARAMS;
    akg_lsp_document *doc;
    if (akg_lsp_doc_open(&s->docs, uri, lang, (int)version->valuedouble, text, strlen(text), &doc,
                         err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    akg_lsp_refindex_ensure(s, doc);
    akg_lsp_diagnostics_publish(s, doc);
    if (doc->path && akg_lsp_is_reference(s, doc)) {
        /* Keep noticing changes to it on disk after it closes. */
        char *dir = akg_strdup(doc->path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash && slash != dir) {
            *slash = '\0';
            if (akg_lsp_check_trusted(s, dir, err, errlen) == AKG_OK)
                akg_lsp_watch_folder(s, dir);
            err[0] = '\0';
        }
        free(dir);
    }
    maybe_auto_probe(s, doc);
    return 0;
}

int akg_lsp_handle_did_change(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen)
{
    (void)result;
    const char *uri = akg_lsp_param_string(params, "textDocument.uri");
    const cJSON *version = akg_lsp_param(params, "textDocument.version");
    const cJSON *changes = akg_lsp_param(params, "contentChanges");
    if (!uri || !cJSON_IsArray(changes))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "didChange: needs textDocument.uri (string) and contentChanges (array)"),
               AKG_RPC_INVALID_PARAMS;
    akg_lsp_document *doc = akg_lsp_doc_find(&s->docs, uri);
    if (!doc)
        return akg_fail(err, errlen, AKG_ENOTFOUND, "didChange for %s, which is not open; ignored",
                        uri),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *change;
    cJSON_ArrayForEach(change, changes)
    {
        if (akg_lsp_doc_apply_change(doc, s->encoding, change, err, errlen) != AKG_OK) {
            /* The client and we now disagree about the text: say so loudly. */
            akg_lsp_show_message(s, 1, "akg: %s; reopen the document", err);
            return AKG_RPC_INVALID_PARAMS;
        }
    }
    if (cJSON_IsNumber(version))
        doc->version = (int)version->valuedouble;
    akg_lsp_refindex_changed(s, doc);
    return 0;
}

int akg_lsp_handle_did_save(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                            size_t errlen)
{
    (void)result;
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    akg_lsp_refindex_ensure(s, doc);
    akg_lsp_diagnostics_publish(s, doc);
    akg_lsp_refresh_views(s);
    maybe_auto_probe(s, doc);
    return 0;
}

int akg_lsp_handle_did_close(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                             size_t errlen)
{
    (void)result;
    const char *uri = akg_lsp_param_string(params, "textDocument.uri");
    if (!uri)
        return akg_fail(err, errlen, AKG_EINVAL, "didClose: textDocument.uri must be a string"),
               AKG_RPC_INVALID_PARAMS;
    if (akg_lsp_doc_close(&s->docs, uri) != AKG_OK)
        return akg_fail(err, errlen, AKG_ENOTFOUND, "didClose for %s, which is not open", uri),
               AKG_RPC_INVALID_PARAMS;
    akg_lsp_diagnostics_clear(s, uri);
    return 0;
}
