/* lifecycle.c: initialize, initialized, shutdown, exit, $/setTrace,
 * configuration and workspace folders. See lifecycle.h. */
#include "lifecycle.h"

#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "dispatch.h"
#include "jobs.h"
#include "log.h"
#include "uri.h"
#include "watch.h"

static int cap_flag(const cJSON *caps, const char *dotted)
{
    return cJSON_IsTrue(akg_lsp_param(caps, dotted));
}

static void add_folder(akg_lsp_server *s, const char *uri_or_path, int is_uri)
{
    char *path = is_uri ? akg_lsp_uri_to_path(uri_or_path) : akg_abspath(uri_or_path);
    if (!path)
        return;
    for (size_t i = 0; i < s->n_folders; i++)
        if (strcmp(s->folders[i], path) == 0) {
            free(path);
            return;
        }
    char **f = realloc(s->folders, (s->n_folders + 1) * sizeof *f);
    if (!f) {
        free(path);
        return;
    }
    s->folders = f;
    s->folders[s->n_folders++] = path;
    akg_lsp_watch_folder(s, path);
}

static void remove_folder(akg_lsp_server *s, const char *uri)
{
    char *path = akg_lsp_uri_to_path(uri);
    if (!path)
        return;
    for (size_t i = 0; i < s->n_folders; i++) {
        if (strcmp(s->folders[i], path) == 0) {
            akg_lsp_unwatch_folder(s, path);
            free(s->folders[i]);
            s->folders[i] = s->folders[--s->n_folders];
            break;
        }
    }
    free(path);
}

static int handle_initialize(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                             size_t errlen)
{
    if (s->state != AKG_LSP_STARTING)
        return akg_fail(err, errlen, AKG_EINVAL, "initialize was already called"),
               AKG_RPC_INVALID_REQUEST;
    if (!cJSON_IsObject(params))
        return akg_fail(err, errlen, AKG_EINVAL, "initialize: params must be an object"),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(params, "processId");
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
    const cJSON *folders = cJSON_GetObjectItemCaseSensitive(params, "workspaceFolders");
    const cJSON *root_uri = cJSON_GetObjectItemCaseSensitive(params, "rootUri");
    if ((pid && !cJSON_IsNumber(pid) && !cJSON_IsNull(pid)) || (caps && !cJSON_IsObject(caps)) ||
        (folders && !cJSON_IsArray(folders) && !cJSON_IsNull(folders)) ||
        (root_uri && !cJSON_IsString(root_uri) && !cJSON_IsNull(root_uri)))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "initialize: processId, capabilities, rootUri or workspaceFolders has the "
                        "wrong type"),
               AKG_RPC_INVALID_PARAMS;

    s->caps.work_done_progress = cap_flag(caps, "window.workDoneProgress");
    s->caps.show_document = cap_flag(caps, "window.showDocument.support");
    s->caps.configuration = cap_flag(caps, "workspace.configuration");
    s->caps.code_lens_refresh = cap_flag(caps, "workspace.codeLens.refreshSupport");
    s->caps.inlay_hint_refresh = cap_flag(caps, "workspace.inlayHint.refreshSupport");
    s->caps.watched_files_dynamic =
        cap_flag(caps, "workspace.didChangeWatchedFiles.dynamicRegistration");
    s->caps.diagnostic_versions = cap_flag(caps, "textDocument.publishDiagnostics.versionSupport");
    s->caps.apply_edit = cap_flag(caps, "workspace.applyEdit");
    s->caps.document_changes = cap_flag(caps, "workspace.workspaceEdit.documentChanges");
    s->caps.snippet_edit = cap_flag(caps, "workspace.workspaceEdit.snippetEditSupport");

    /* Position encoding: UTF-8 is our native form; UTF-16 is the default. */
    s->encoding = AKG_LSP_UTF16;
    const cJSON *encs = akg_lsp_param(caps, "general.positionEncodings");
    int offered[3] = {0, 0, 0};
    const cJSON *e;
    if (cJSON_IsArray(encs))
        cJSON_ArrayForEach(e, encs)
        {
            int k = cJSON_IsString(e) ? akg_lsp_encoding_parse(e->valuestring) : -1;
            if (k >= 0)
                offered[k] = 1;
        }
    if (offered[AKG_LSP_UTF8])
        s->encoding = AKG_LSP_UTF8;
    else if (offered[AKG_LSP_UTF32])
        s->encoding = AKG_LSP_UTF32;

    if (cJSON_IsArray(folders)) {
        const cJSON *f;
        cJSON_ArrayForEach(f, folders)
        {
            const char *u = akg_lsp_param_string(f, "uri");
            if (u)
                add_folder(s, u, 1);
        }
    } else if (cJSON_IsString(root_uri)) {
        add_folder(s, root_uri->valuestring, 1);
    } else {
        const char *root_path = akg_lsp_param_string(params, "rootPath");
        if (root_path)
            add_folder(s, root_path, 0);
    }

    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(params, "initializationOptions");
    if (opts)
        akg_lsp_settings_apply(&s->settings, opts);
    const char *trace = akg_lsp_param_string(params, "trace");
    if (trace) {
        free(s->settings.trace);
        s->settings.trace = akg_strdup(trace);
    }
    akg_lsp_apply_trace(s->settings.trace);

    cJSON *r = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(r, "capabilities");
    cJSON_AddStringToObject(c, "positionEncoding", akg_lsp_encoding_name(s->encoding));
    cJSON *sync = cJSON_AddObjectToObject(c, "textDocumentSync");
    cJSON_AddBoolToObject(sync, "openClose", 1);
    cJSON_AddNumberToObject(sync, "change", 2);
    cJSON_AddObjectToObject(sync, "save");
    cJSON_AddBoolToObject(c, "hoverProvider", 1);
    cJSON *ca = cJSON_AddObjectToObject(c, "codeActionProvider");
    cJSON *kinds = cJSON_AddArrayToObject(ca, "codeActionKinds");
    cJSON_AddItemToArray(kinds, cJSON_CreateString("source.akg"));
    cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
    cJSON_AddItemToArray(kinds, cJSON_CreateString("refactor.akg"));
    cJSON_AddObjectToObject(c, "codeLensProvider");
    cJSON_AddBoolToObject(c, "inlayHintProvider", 1);
    cJSON_AddBoolToObject(c, "documentFormattingProvider", 1);
    cJSON *ex = cJSON_AddObjectToObject(c, "executeCommandProvider");
    cJSON_AddItemToObject(ex, "commands", akg_lsp_command_names());
    cJSON *ws = cJSON_AddObjectToObject(c, "workspace");
    cJSON *wf = cJSON_AddObjectToObject(ws, "workspaceFolders");
    cJSON_AddBoolToObject(wf, "supported", 1);
    cJSON_AddBoolToObject(wf, "changeNotifications", 1);
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "akg-lsp");
    cJSON_AddStringToObject(info, "version", AKG_VERSION);
    *result = r;
    s->state = AKG_LSP_RUNNING;
    akg_lsp_log_info("initialized: %zu workspace folder(s), %s positions", s->n_folders,
                     akg_lsp_encoding_name(s->encoding));
    return 0;
}

static void configuration_answer(akg_lsp_server *s, const cJSON *result, const cJSON *error,
                                 long long user_id)
{
    (void)user_id;
    if (error || !cJSON_IsArray(result))
        return;
    const cJSON *first = cJSON_GetArrayItem(result, 0);
    if (cJSON_IsObject(first))
        akg_lsp_settings_changed(s, akg_lsp_settings_apply(&s->settings, first));
}

static void pull_configuration(akg_lsp_server *s)
{
    if (!s->caps.configuration)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON *items = cJSON_AddArrayToObject(p, "items");
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "section", "akg");
    cJSON_AddItemToArray(items, item);
    akg_lsp_request(s, "workspace/configuration", p, configuration_answer, 0);
}

static int handle_initialized(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen)
{
    (void)params, (void)result, (void)err, (void)errlen;
    pull_configuration(s);
    if (s->caps.watched_files_dynamic) {
        cJSON *p = cJSON_CreateObject();
        cJSON *regs = cJSON_AddArrayToObject(p, "registrations");
        cJSON *reg = cJSON_CreateObject();
        cJSON_AddStringToObject(reg, "id", "akg-watch-references");
        cJSON_AddStringToObject(reg, "method", "workspace/didChangeWatchedFiles");
        cJSON *opts = cJSON_AddObjectToObject(reg, "registerOptions");
        cJSON *watchers = cJSON_AddArrayToObject(opts, "watchers");
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "globPattern", "**/*.py");
        cJSON_AddItemToArray(watchers, w);
        cJSON_AddItemToArray(regs, reg);
        akg_lsp_request(s, "client/registerCapability", p, NULL, 0);
    }
    return 0;
}

static int handle_shutdown(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                           size_t errlen)
{
    (void)params, (void)result, (void)err, (void)errlen;
    s->state = AKG_LSP_SHUTDOWN;
    s->shutdown_received = 1;
    akg_lsp_jobs_cancel_all(s);
    return 0;
}

static int handle_exit(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                       size_t errlen)
{
    (void)params, (void)result, (void)err, (void)errlen;
    s->exit_code = s->shutdown_received ? 0 : 1;
    akg_lsp_server_stop(s);
    return 0;
}

static int handle_set_trace(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                            size_t errlen)
{
    (void)result;
    const char *v = akg_lsp_param_string(params, "value");
    if (!v || (strcmp(v, "off") && strcmp(v, "messages") && strcmp(v, "verbose")))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "$/setTrace: value must be off, messages or verbose"),
               AKG_RPC_INVALID_PARAMS;
    free(s->settings.trace);
    s->settings.trace = akg_strdup(v);
    akg_lsp_apply_trace(v);
    return 0;
}

static int handle_did_change_configuration(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                           char *err, size_t errlen)
{
    (void)result, (void)err, (void)errlen;
    const cJSON *settings = akg_lsp_param(params, "settings");
    if (cJSON_IsObject(settings) && cJSON_GetObjectItemCaseSensitive(settings, "akg"))
        akg_lsp_settings_changed(s, akg_lsp_settings_apply(&s->settings, settings));
    else
        pull_configuration(s); /* the pull model: the notification only says "changed" */
    return 0;
}

static int handle_did_change_folders(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                     char *err, size_t errlen)
{
    (void)result;
    const cJSON *added = akg_lsp_param(params, "event.added");
    const cJSON *removed = akg_lsp_param(params, "event.removed");
    if (!cJSON_IsArray(added) || !cJSON_IsArray(removed))
        return akg_fail(err, errlen, AKG_EINVAL, "event.added and event.removed must be arrays"),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *f;
    cJSON_ArrayForEach(f, removed)
    {
        const char *u = akg_lsp_param_string(f, "uri");
        if (u)
            remove_folder(s, u);
    }
    cJSON_ArrayForEach(f, added)
    {
        const char *u = akg_lsp_param_string(f, "uri");
        if (u)
            add_folder(s, u, 1);
    }
    return 0;
}

static const akg_lsp_method lifecycle_methods[] = {
    {"initialize", handle_initialize, 1},
    {"initialized", handle_initialized, 0},
    {"shutdown", handle_shutdown, 1},
    {"exit", handle_exit, 0},
    {"$/setTrace", handle_set_trace, 0},
    {"workspace/didChangeConfiguration", handle_did_change_configuration, 0},
    {"workspace/didChangeWorkspaceFolders", handle_did_change_folders, 0},
    {NULL, NULL, 0},
};

const akg_lsp_method *akg_lsp_lifecycle_methods(void)
{
    return lifecycle_methods;
}
