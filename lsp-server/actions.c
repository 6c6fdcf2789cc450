/* actions.c: see actions.h. */
#include "actions.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jobs.h"
#include "log.h"
#include "reference_index.h"
#include "results.h"
#include "selection.h"
#include "sketch_link.h"
#include "uri.h"

cJSON *akg_lsp_command(const char *title, const char *command, cJSON *argument)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "title", title);
    cJSON_AddStringToObject(c, "command", command);
    cJSON *args = cJSON_AddArrayToObject(c, "arguments");
    if (argument)
        cJSON_AddItemToArray(args, argument);
    return c;
}

static cJSON *uri_argument(const char *uri, const cJSON *target)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "uri", uri);
    if (target) {
        const cJSON *f;
        cJSON_ArrayForEach(f, target) cJSON_AddItemToObject(a, f->string, cJSON_Duplicate(f, 1));
    }
    return a;
}

static int file_exists(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* model_new.py next to the reference, else the last run's; NULL if none. */
static char *default_kernel(akg_lsp_server *s, const char *path, const char *backend,
                            const char *dsl)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash) {
        snprintf(slash + 1, sizeof buf - (size_t)(slash + 1 - buf), "model_new.py");
        if (file_exists(buf))
            return akg_strdup(buf);
    }
    cJSON *results = akg_lsp_results_for(s, path, NULL);
    char *found = NULL;
    const cJSON *r;
    cJSON_ArrayForEach(r, results)
    {
        const char *b = akg_lsp_param_string(r, "backend"), *d = akg_lsp_param_string(r, "dsl");
        if (backend && b && strcmp(b, backend) != 0)
            continue;
        if (dsl && d && strcmp(d, dsl) != 0)
            continue;
        const char *mn = akg_lsp_param_string(r, "report.paths.model_new");
        if (!mn)
            mn = akg_lsp_param_string(r, "report.paths.modelNew");
        if (file_exists(mn)) {
            found = akg_strdup(mn);
            break;
        }
    }
    cJSON_Delete(results);
    return found;
}

int akg_lsp_kind_allowed(const cJSON *only, const char *kind)
{
    if (!cJSON_IsArray(only))
        return 1;
    const cJSON *k;
    cJSON_ArrayForEach(k, only)
    {
        if (!cJSON_IsString(k))
            continue;
        size_t n = strlen(k->valuestring);
        if (strncmp(kind, k->valuestring, n) == 0 && (kind[n] == '\0' || kind[n] == '.'))
            return 1;
    }
    return 0;
}

void akg_lsp_add_action(cJSON *list, const char *title, const char *kind, cJSON *command)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", kind);
    cJSON_AddItemToObject(a, "command", command);
    cJSON_AddItemToArray(list, a);
}

static void add_action(cJSON *list, const char *title, cJSON *command)
{
    akg_lsp_add_action(list, title, "source.akg", command);
}

/* On a sketch linked to its reference: generate from it, per target. */
static void sketch_actions(akg_lsp_server *s, akg_lsp_document *doc, cJSON *list)
{
    char ref[PATH_MAX];
    if (!doc->path ||
        !akg_lsp_sketch_reference(doc->path, doc->text.data, doc->text.len, ref, sizeof ref, NULL))
        return;
    char title[160];
    const cJSON *t;
    int n = cJSON_GetArraySize(s->settings.targets);
    cJSON_ArrayForEach(t, s->settings.targets)
    {
        const char *b = akg_lsp_param_string(t, "backend"), *d = akg_lsp_param_string(t, "dsl");
        if (n > 1)
            snprintf(title, sizeof title, "akg: Generate from this sketch (%s/%s)", b, d);
        else
            snprintf(title, sizeof title, "akg: Generate from this sketch");
        cJSON *arg = uri_argument(doc->uri, t);
        cJSON_AddStringToObject(arg, "reference", ref);
        add_action(list, title, akg_lsp_command(title, AKG_LSP_CMD_FROM_SKETCH, arg));
    }
    if (akg_lsp_jobs_running_for(s, doc->path) > 0)
        add_action(list, "akg: Cancel running jobs",
                   akg_lsp_command("akg: Cancel running jobs", AKG_LSP_CMD_CANCEL, NULL));
}

int akg_lsp_handle_code_action(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                               size_t errlen)
{
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    const cJSON *range = akg_lsp_param(params, "range");
    const cJSON *context = akg_lsp_param(params, "context");
    if (!cJSON_IsObject(range) || !cJSON_IsObject(context))
        return akg_fail(err, errlen, AKG_EINVAL, "codeAction: range and context must be objects"),
               AKG_RPC_INVALID_PARAMS;
    cJSON *list = cJSON_CreateArray();
    *result = list;
    if (doc->kind == AKG_LSP_DOC_SKETCH) {
        if (akg_lsp_kind_allowed(cJSON_GetObjectItemCaseSensitive(context, "only"), "source.akg"))
            sketch_actions(s, doc, list);
        return 0;
    }
    if (doc->kind == AKG_LSP_DOC_PYTHON)
        akg_lsp_selection_actions(s, doc, range, cJSON_GetObjectItemCaseSensitive(context, "only"),
                                  list);
    if (!akg_lsp_is_reference(s, doc) || !doc->path ||
        !akg_lsp_kind_allowed(cJSON_GetObjectItemCaseSensitive(context, "only"), "source.akg"))
        return 0;
    char title[160];
    const cJSON *t;
    cJSON_ArrayForEach(t, s->settings.targets)
    {
        const char *b = akg_lsp_param_string(t, "backend"), *d = akg_lsp_param_string(t, "dsl");
        snprintf(title, sizeof title, "akg: Generate kernel (%s/%s)", b, d);
        add_action(list, title,
                   akg_lsp_command(title, AKG_LSP_CMD_GENERATE, uri_argument(doc->uri, t)));
    }
    const cJSON *first = cJSON_GetArrayItem(s->settings.targets, 0);
    add_action(list, "akg: Design sketch only",
               akg_lsp_command("akg: Design sketch only", AKG_LSP_CMD_DESIGN_SKETCH,
                               uri_argument(doc->uri, first)));
    char *kernel = default_kernel(s, doc->path, NULL, NULL);
    if (kernel) {
        cJSON *arg = uri_argument(doc->uri, first);
        cJSON_AddStringToObject(arg, "kernel", kernel);
        snprintf(title, sizeof title, "akg: Verify %s",
                 strrchr(kernel, '/') ? strrchr(kernel, '/') + 1 : kernel);
        add_action(list, title, akg_lsp_command(title, AKG_LSP_CMD_VERIFY, arg));
        free(kernel);
    }
    cJSON *results = akg_lsp_results_for(s, doc->path, doc->hash);
    if (cJSON_GetArraySize(results) > 0)
        add_action(list, "akg: Open last report",
                   akg_lsp_command("akg: Open last report", AKG_LSP_CMD_OPEN_REPORT,
                                   uri_argument(doc->uri, NULL)));
    cJSON_Delete(results);
    if (akg_lsp_jobs_running_for(s, doc->path) > 0)
        add_action(list, "akg: Cancel running jobs",
                   akg_lsp_command("akg: Cancel running jobs", AKG_LSP_CMD_CANCEL, NULL));
    return 0;
}

/* ---- commands -------------------------------------------------------------- */

typedef struct {
    const char *uri;
    char *path;
    const char *backend, *dsl, *arch;
} command_target;

/* Reads {uri, backend?, dsl?, arch?} (or target "cpu/cpp"); missing target
 * parts come from the first configured target when use_default is set. */
static int read_target(akg_lsp_server *s, const cJSON *arg, int use_default, command_target *t,
                       cJSON **owned, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    *owned = NULL;
    if (!cJSON_IsObject(arg))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "the command's argument must be an object {uri, ...}"),
               AKG_RPC_INVALID_PARAMS;
    t->uri = akg_lsp_param_string(arg, "uri");
    if (!t->uri)
        return akg_fail(err, errlen, AKG_EINVAL, "argument.uri must be a string"),
               AKG_RPC_INVALID_PARAMS;
    t->path = akg_lsp_uri_to_path(t->uri);
    if (!t->path)
        return akg_fail(err, errlen, AKG_EINVAL, "%s is not a file:// URI", t->uri),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(arg, "backend");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(arg, "dsl");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(arg, "arch");
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(arg, "target");
    if ((b && !cJSON_IsString(b)) || (d && !cJSON_IsString(d)) ||
        (a && !cJSON_IsString(a) && !cJSON_IsNull(a)))
        return akg_fail(err, errlen, AKG_EINVAL, "backend, dsl and arch must be strings"),
               AKG_RPC_INVALID_PARAMS;
    if (target) {
        *owned = akg_lsp_target_parse(target);
        if (!*owned)
            return akg_fail(err, errlen, AKG_EINVAL, "target must be \"backend/dsl\""),
                   AKG_RPC_INVALID_PARAMS;
        t->backend = akg_lsp_param_string(*owned, "backend");
        t->dsl = akg_lsp_param_string(*owned, "dsl");
        t->arch = akg_lsp_param_string(*owned, "arch");
    }
    if (cJSON_IsString(b))
        t->backend = b->valuestring;
    if (cJSON_IsString(d))
        t->dsl = d->valuestring;
    if (cJSON_IsString(a))
        t->arch = a->valuestring;
    if (use_default && (!t->backend || !t->dsl)) {
        const cJSON *first = cJSON_GetArrayItem(s->settings.targets, 0);
        if (!t->backend)
            t->backend = akg_lsp_param_string(first, "backend");
        if (!t->dsl)
            t->dsl = akg_lsp_param_string(first, "dsl");
        if (!t->arch)
            t->arch = akg_lsp_param_string(first, "arch");
    }
    return 0;
}

static int answer_job(akg_lsp_server *s, const command_target *t, const char *workflow,
                      const char *kernel, const char *sketch_path, const char *sketch_uri,
                      cJSON **result, char *err, size_t errlen)
{
    akg_lsp_job_request req;
    memset(&req, 0, sizeof req);
    req.uri = t->uri;
    req.path = t->path;
    req.backend = t->backend;
    req.dsl = t->dsl;
    req.arch = t->arch;
    req.workflow = workflow;
    req.kernel_path = kernel;
    req.sketch_path = sketch_path;
    req.sketch_uri = sketch_uri;
    long long id;
    int code = akg_lsp_jobs_start(s, &req, &id, err, errlen);
    if (code != 0)
        return code;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "jobId", (double)id);
    *result = r;
    return 0;
}

static int command_open_report(akg_lsp_server *s, const command_target *t, cJSON **result,
                               char *err, size_t errlen)
{
    if (akg_lsp_check_trusted(s, t->path, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    akg_lsp_document *doc = akg_lsp_doc_find_path(&s->docs, t->path);
    cJSON *results = akg_lsp_results_for(s, t->path, doc ? doc->hash : NULL);
    char path[PATH_MAX] = "";
    const cJSON *r;
    cJSON_ArrayForEach(r, results)
    {
        const char *b = akg_lsp_param_string(r, "backend"), *d = akg_lsp_param_string(r, "dsl");
        if (t->backend && b && strcmp(t->backend, b) != 0)
            continue;
        if (t->dsl && d && strcmp(t->dsl, d) != 0)
            continue;
        if (akg_lsp_result_report_path(r, path, sizeof path) && file_exists(path))
            break;
        path[0] = '\0';
    }
    cJSON_Delete(results);
    if (!path[0])
        return akg_fail(err, errlen, AKG_ENOTFOUND, "no report yet for %s%s%s%s", t->path,
                        t->backend ? " on " : "", t->backend ? t->backend : "", t->dsl ? "/" : ""),
               AKG_RPC_REQUEST_FAILED;
    if (s->caps.show_document) {
        char *uri = akg_lsp_path_to_uri(path);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "uri", uri);
        cJSON_AddBoolToObject(p, "takeFocus", 1);
        free(uri);
        akg_lsp_request(s, "window/showDocument", p, NULL, 0);
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "path", path);
    *result = out;
    return 0;
}

static int command_cancel(akg_lsp_server *s, const cJSON *arg, cJSON **result, char *err,
                          size_t errlen)
{
    const cJSON *id = cJSON_IsObject(arg) ? cJSON_GetObjectItemCaseSensitive(arg, "jobId") : NULL;
    if (arg && !cJSON_IsObject(arg) && !cJSON_IsNull(arg))
        return akg_fail(err, errlen, AKG_EINVAL, "akg.cancel takes {jobId?}"),
               AKG_RPC_INVALID_PARAMS;
    if (id && !cJSON_IsNumber(id) && !cJSON_IsNull(id))
        return akg_fail(err, errlen, AKG_EINVAL, "jobId must be a number"), AKG_RPC_INVALID_PARAMS;
    int n;
    if (cJSON_IsNumber(id)) {
        if (akg_lsp_jobs_cancel(s, (long long)id->valuedouble) != AKG_OK)
            return akg_fail(err, errlen, AKG_ENOTFOUND, "no running job %.0f", id->valuedouble),
                   AKG_RPC_REQUEST_FAILED;
        n = 1;
    } else {
        n = akg_lsp_jobs_cancel_all(s);
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "cancelled", n);
    *result = r;
    return 0;
}

/* akg.generateFromSketch: uri is the sketch; the job's reference is the
 * argument's, else the sketch's link. */
static int command_from_sketch(akg_lsp_server *s, const cJSON *arg, cJSON **result, char *err,
                               size_t errlen)
{
    command_target t;
    cJSON *owned = NULL;
    int code = read_target(s, arg, 1, &t, &owned, err, errlen);
    if (code != 0) {
        free(t.path);
        cJSON_Delete(owned);
        return code;
    }
    char *sketch_path = t.path; /* read_target read the sketch's uri */
    const char *sketch_uri = t.uri;
    const cJSON *ref_arg = cJSON_GetObjectItemCaseSensitive(arg, "reference");
    char *ref = NULL;
    if (ref_arg && !cJSON_IsString(ref_arg) && !cJSON_IsNull(ref_arg)) {
        code = AKG_RPC_INVALID_PARAMS;
        akg_fail(err, errlen, AKG_EINVAL, "reference must be a file:// URI or a path");
    } else if (akg_lsp_check_trusted(s, sketch_path, err, errlen) != AKG_OK) {
        code = AKG_RPC_REQUEST_FAILED;
    } else if (cJSON_IsString(ref_arg)) {
        ref = strncmp(ref_arg->valuestring, "file://", 7) == 0
                  ? akg_lsp_uri_to_path(ref_arg->valuestring)
                  : akg_abspath(ref_arg->valuestring);
        if (!ref) {
            code = AKG_RPC_INVALID_PARAMS;
            akg_fail(err, errlen, AKG_EINVAL, "reference %.200s is not a file:// URI or a path",
                     ref_arg->valuestring);
        }
    } else {
        char linked[PATH_MAX];
        const char *how = NULL;
        akg_lsp_document *doc = akg_lsp_doc_find_path(&s->docs, sketch_path);
        char *text = NULL;
        size_t len = 0;
        if (!doc)
            akg_read_file(sketch_path, AKG_LSP_MAX_DOCUMENT, &text, &len, NULL, 0);
        if (akg_lsp_sketch_reference(sketch_path, doc ? doc->text.data : text,
                                     doc ? doc->text.len : len, linked, sizeof linked, &how)) {
            ref = akg_strdup(linked);
        } else {
            code = AKG_RPC_REQUEST_FAILED;
            if (how)
                akg_fail(err, errlen, AKG_ENOTFOUND,
                         "%s links to the reference %s (by its %s), which does not exist",
                         sketch_path, linked, how);
            else
                akg_fail(err, errlen, AKG_ENOTFOUND,
                         "%s names no reference: add a first line `# akg: reference "
                         "path/to/ref.py`, or pass {reference}",
                         sketch_path);
        }
        free(text);
    }
    if (code == 0) {
        char *ref_uri = akg_lsp_path_to_uri(ref);
        command_target job = t;
        job.uri = ref_uri ? ref_uri : "";
        job.path = ref;
        const char *workflow = akg_lsp_param_string(arg, "workflow");
        code = answer_job(s, &job, workflow, NULL, sketch_path, sketch_uri, result, err, errlen);
        free(ref_uri);
    }
    free(ref);
    free(sketch_path);
    cJSON_Delete(owned);
    return code;
}

int akg_lsp_handle_execute_command(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                   char *err, size_t errlen)
{
    const char *command = akg_lsp_param_string(params, "command");
    const cJSON *args = akg_lsp_param(params, "arguments");
    if (!command || (args && !cJSON_IsArray(args)))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "executeCommand: command must be a string, arguments an array"),
               AKG_RPC_INVALID_PARAMS;
    const cJSON *arg = cJSON_GetArrayItem(args, 0);
    if (strcmp(command, AKG_LSP_CMD_CANCEL) == 0)
        return command_cancel(s, arg, result, err, errlen);

    int is_generate = strcmp(command, AKG_LSP_CMD_GENERATE) == 0;
    int is_design = strcmp(command, AKG_LSP_CMD_DESIGN_SKETCH) == 0;
    int is_verify = strcmp(command, AKG_LSP_CMD_VERIFY) == 0;
    int is_report = strcmp(command, AKG_LSP_CMD_OPEN_REPORT) == 0;
    if (strcmp(command, AKG_LSP_CMD_FROM_SKETCH) == 0)
        return command_from_sketch(s, arg, result, err, errlen);
    if (strcmp(command, AKG_LSP_CMD_USE_KERNEL) == 0)
        return akg_lsp_selection_use(s, arg, result, err, errlen);
    if (strcmp(command, AKG_LSP_CMD_FOR_SELECTION) == 0) {
        command_target t;
        cJSON *owned = NULL;
        int code = read_target(s, arg, 1, &t, &owned, err, errlen);
        if (code == 0)
            code = akg_lsp_selection_generate(s, arg, t.uri, t.path, t.backend, t.dsl, t.arch,
                                              result, err, errlen);
        free(t.path);
        cJSON_Delete(owned);
        return code;
    }
    if (!is_generate && !is_design && !is_verify && !is_report)
        return akg_fail(err, errlen, AKG_EINVAL, "unknown command %.100s", command),
               AKG_RPC_INVALID_PARAMS;

    command_target t;
    cJSON *owned = NULL;
    int code = read_target(s, arg, !is_report, &t, &owned, err, errlen);
    if (code == 0) {
        if (is_report) {
            code = command_open_report(s, &t, result, err, errlen);
        } else if (is_generate) {
            const char *workflow = akg_lsp_param_string(arg, "workflow");
            code = answer_job(s, &t, workflow, NULL, NULL, NULL, result, err, errlen);
        } else if (is_design) {
            code = answer_job(s, &t, "design_only", NULL, NULL, NULL, result, err, errlen);
        } else {
            const char *k = akg_lsp_param_string(arg, "kernel");
            char *kernel = NULL;
            if (k) {
                kernel = strncmp(k, "file://", 7) == 0 ? akg_lsp_uri_to_path(k) : akg_abspath(k);
            } else if (akg_lsp_check_trusted(s, t.path, err, errlen) == AKG_OK) {
                kernel = default_kernel(s, t.path, t.backend, t.dsl);
            }
            if (!kernel) {
                if (!err[0])
                    akg_fail(err, errlen, AKG_ENOTFOUND,
                             "no model_new.py next to %s and no earlier run to verify", t.path);
                code = AKG_RPC_REQUEST_FAILED;
            } else {
                code = answer_job(s, &t, "verifier_only", kernel, NULL, NULL, result, err, errlen);
            }
            free(kernel);
        }
    }
    free(t.path);
    cJSON_Delete(owned);
    return code;
}
