/*
 * dispatch.h: the method table. Lifecycle methods live in server.c; every
 * feature module adds its handlers to the table in dispatch.c.
 */
#ifndef AKG_LSP_DISPATCH_H
#define AKG_LSP_DISPATCH_H

#include "server.h"

typedef struct {
    const char *name;
    akg_lsp_handler handler;
    int is_request; /* 0: a notification (no response) */
} akg_lsp_method;

/* The feature methods, ending with a {NULL} entry. Static storage. */
const akg_lsp_method *akg_lsp_feature_methods(void);
/* The command ids of workspace/executeCommand, as a new cJSON array. */
cJSON *akg_lsp_command_names(void);

#endif
