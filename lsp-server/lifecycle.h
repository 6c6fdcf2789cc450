/*
 * lifecycle.h: the LSP lifecycle (initialize with capabilities and
 * initializationOptions, initialized, shutdown, exit with the spec's exit
 * code), $/setTrace, settings (workspace/configuration,
 * didChangeConfiguration) and workspace folders (which are also the trusted
 * roots and the watched folders).
 */
#ifndef AKG_LSP_LIFECYCLE_H
#define AKG_LSP_LIFECYCLE_H

#include "dispatch.h"

/* The lifecycle methods, ending with a {NULL} entry. Static storage. */
const akg_lsp_method *akg_lsp_lifecycle_methods(void);

#endif
