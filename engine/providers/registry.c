/*
 * registry.c: the providers this build knows, one line each. Adding one
 * means its akg_provider (engine/providers/<name>/) and a line here;
 * `--provider` and the server's `provider` setting take these names.
 */
#include <stddef.h>

#include "akg/provider.h"

extern const akg_provider akg_provider_builtin;
extern const akg_provider akg_provider_openai;

const akg_provider *const akg_provider_registry[] = {
    &akg_provider_builtin,
    &akg_provider_openai,
    NULL,
};
