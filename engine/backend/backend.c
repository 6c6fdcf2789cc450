/*
 * backend.c: lookups in the backend registry (backends/registry.c), and the
 * kernel files every backend's emitter fills.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/backend.h"

extern const akg_backend *const akg_backend_registry[];
extern const char *const akg_backend_known_devices[];
extern const char *const akg_backend_known_dsls[];

const akg_backend *const *akg_backend_list(void)
{
    return akg_backend_registry;
}

const akg_backend *akg_backend_find(const char *name, const char *dsl)
{
    for (const akg_backend *const *b = akg_backend_registry; *b; b++)
        if (name && dsl && !strcmp((*b)->name, name) && !strcmp((*b)->dsl, dsl))
            return *b;
    return NULL;
}

void akg_backend_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (const akg_backend *const *b = akg_backend_registry; *b && at < len; b++) {
        int n = snprintf(buf + at, len - at, "%s%s/%s", at ? ", " : "", (*b)->name, (*b)->dsl);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

static int known(const char *const *names, const char *name)
{
    for (const char *const *n = names; name && *n; n++)
        if (strcmp(*n, name) == 0)
            return 1;
    return 0;
}

static void join_names(const char *const *names, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (const char *const *n = names; *n && at < len; n++) {
        int w = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", *n);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

int akg_backend_check(const char *name, const char *dsl, char *err, size_t errlen)
{
    char list[256];
    if (!known(akg_backend_known_devices, name)) {
        join_names(akg_backend_known_devices, list, sizeof list);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "unknown backend '%s' (known: %s)",
                        name ? name : "", list);
    }
    if (!known(akg_backend_known_dsls, dsl)) {
        join_names(akg_backend_known_dsls, list, sizeof list);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "unknown DSL '%s' (known: %s)",
                        dsl ? dsl : "", list);
    }
    if (akg_backend_find(name, dsl))
        return AKG_OK;
    akg_backend_names(list, sizeof list);
    return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                    "backend %s with DSL %s is not supported by this build (supported: %s)", name,
                    dsl, list);
}

void akg_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

void akg_kernel_files_free(akg_kernel_files *k)
{
    free(k->kernel_source);
    free(k->kernel_filename);
    free(k->library_filename);
    free(k->model_new_source);
    memset(k, 0, sizeof *k);
}
