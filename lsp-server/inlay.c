/* inlay.c: see inlay.h. */
#include "inlay.h"

#include <stdio.h>
#include <string.h>

#include "reference_index.h"
#include "results.h"

static const cJSON *probe_list(const cJSON *entry, const char *what)
{
    static const char *const prefixes[] = {"report.task.probe.", "report.task.", "report.probe."};
    char key[96];
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        snprintf(key, sizeof key, "%s%s", prefixes[i], what);
        const cJSON *v = akg_lsp_param(entry, key);
        if (cJSON_IsArray(v))
            return v;
    }
    return NULL;
}

/* "[16, 16384] float32" for a tensor description; 0 for other values. */
static int describe(const cJSON *desc, char *out, size_t outlen)
{
    const cJSON *shape = akg_lsp_param(desc, "shape");
    const char *dtype = akg_lsp_param_string(desc, "dtype");
    if (!cJSON_IsArray(shape))
        return 0;
    size_t n = (size_t)snprintf(out, outlen, "[");
    const cJSON *d;
    int first = 1;
    cJSON_ArrayForEach(d, shape)
    {
        if (n >= outlen)
            break;
        n += (size_t)snprintf(out + n, outlen - n, "%s%.0f", first ? "" : ", ",
                              cJSON_IsNumber(d) ? d->valuedouble : -1.0);
        first = 0;
    }
    if (n < outlen)
        snprintf(out + n, outlen - n, "]%s%s", dtype ? " " : "", dtype ? dtype : "");
    return 1;
}

static void add_hint(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc, size_t offset,
                     const char *label)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddItemToObject(h, "position", akg_lsp_doc_position_json(doc, s->encoding, offset));
    cJSON_AddStringToObject(h, "label", label);
    cJSON_AddNumberToObject(h, "kind", 1);
    cJSON_AddBoolToObject(h, "paddingLeft", 1);
    cJSON_AddItemToArray(list, h);
}

static int is_ident(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int akg_lsp_handle_inlay_hint(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen)
{
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    if (!cJSON_IsObject(akg_lsp_param(params, "range")))
        return akg_fail(err, errlen, AKG_EINVAL, "inlayHint: range must be an object"),
               AKG_RPC_INVALID_PARAMS;
    cJSON *list = cJSON_CreateArray();
    *result = list;
    if (!akg_lsp_is_reference(s, doc) || !doc->path || !doc->ref->has_forward)
        return 0;

    cJSON *results = akg_lsp_results_for(s, doc->path, doc->hash);
    const cJSON *inputs = NULL, *outputs = NULL, *e;
    cJSON_ArrayForEach(e, results)
    {
        if (cJSON_IsTrue(akg_lsp_param(e, "stale")))
            continue;
        inputs = probe_list(e, "inputs");
        outputs = probe_list(e, "outputs");
        if (inputs)
            break;
    }
    if (inputs) {
        /* The signature: from `def forward` to the ':' that closes it. */
        const akg_reference *ref = doc->ref;
        size_t pos = akg_lsp_doc_point_offset(doc, ref->forward_range.start_row,
                                              ref->forward_range.start_col);
        const char *t = doc->text.data;
        size_t len = doc->text.len;
        while (pos < len && t[pos] != '(')
            pos++;
        size_t open = pos, close = pos;
        int depth = 0;
        for (; close < len; close++) {
            if (t[close] == '(')
                depth++;
            else if (t[close] == ')' && --depth == 0)
                break;
        }
        size_t cursor = open + 1;
        char label[256];
        for (size_t i = 0; i < ref->n_forward_params && close < len; i++) {
            const char *name = ref->forward_params[i].name;
            size_t n = strlen(name);
            for (size_t p = cursor; p + n <= close; p++) {
                if (strncmp(t + p, name, n) == 0 && !is_ident(t[p - 1]) && !is_ident(t[p + n])) {
                    const cJSON *desc = cJSON_GetArrayItem(inputs, (int)i);
                    char shape[200];
                    if (desc && describe(desc, shape, sizeof shape)) {
                        snprintf(label, sizeof label, ": %s", shape);
                        add_hint(list, s, doc, p + n, label);
                    }
                    cursor = p + n;
                    break;
                }
            }
        }
        const cJSON *out0 = cJSON_GetArrayItem(outputs, 0);
        char shape[200];
        if (close < len && out0 && describe(out0, shape, sizeof shape)) {
            snprintf(label, sizeof label, "-> %s%s", shape,
                     cJSON_GetArraySize(outputs) > 1 ? ", …" : "");
            add_hint(list, s, doc, close + 1, label);
        }
    }
    cJSON_Delete(results);
    return 0;
}
