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

/* sm_<digits>, optionally with the architecture-specific suffix a (sm_90a). */
static int cuda_arch(const char *arch)
{
    if (strncmp(arch, "sm_", 3) != 0 || !arch[3])
        return 0;
    const char *c = arch + 3;
    while (*c >= '0' && *c <= '9')
        c++;
    return c > arch + 3 && (!*c || (c[0] == 'a' && !c[1]));
}

int akg_backend_arch_check(const akg_backend *be, const char *arch, char *err, size_t errlen)
{
    if (!arch || !*arch)
        return akg_fail(err, errlen, AKG_EINVAL, "an empty arch names no architecture");
    if (!strcmp(be->device_kind, "cpu")) {
        if (!strcmp(arch, "x86_64") || !strcmp(arch, "aarch64"))
            return AKG_OK;
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "arch '%s' does not run the %s backend (x86_64, aarch64)", arch, be->name);
    }
    if (!strcmp(be->device_kind, "cuda")) {
        if (cuda_arch(arch))
            return AKG_OK;
        return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                        "arch '%s' is not an NVIDIA architecture for the %s backend (a compute "
                        "capability such as sm_90a for H100/H200, sm_80 for A100; default %s)",
                        arch, be->name, be->default_arch);
    }
    return AKG_OK;
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
