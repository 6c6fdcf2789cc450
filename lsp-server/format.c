/* format.c: see format.h. */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "sketch_support.h"

int akg_lsp_handle_formatting(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen)
{
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    if (!cJSON_IsObject(akg_lsp_param(params, "options")))
        return akg_fail(err, errlen, AKG_EINVAL, "formatting: options must be an object"),
               AKG_RPC_INVALID_PARAMS;
    if (doc->kind != AKG_LSP_DOC_SKETCH)
        return 0; /* null: nothing to format */
    char *text = NULL;
    if (akg_lsp_sketch_format(doc->text.data, doc->text.len, &text, err, errlen) != AKG_OK)
        return AKG_RPC_REQUEST_FAILED;
    cJSON *edits = cJSON_CreateArray();
    if (strlen(text) != doc->text.len || memcmp(text, doc->text.data, doc->text.len) != 0) {
        cJSON *edit = cJSON_CreateObject();
        cJSON *range = cJSON_AddObjectToObject(edit, "range");
        cJSON_AddItemToObject(range, "start", akg_lsp_doc_position_json(doc, s->encoding, 0));
        cJSON_AddItemToObject(range, "end",
                              akg_lsp_doc_position_json(doc, s->encoding, doc->text.len));
        cJSON_AddStringToObject(edit, "newText", text);
        cJSON_AddItemToArray(edits, edit);
    }
    free(text);
    *result = edits;
    return 0;
}
