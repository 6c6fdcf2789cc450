/*
 * cpp_backend.c: the cpu/cpp backend's registration: C++ with OpenMP, built
 * by the host compiler into a shared object that model_new.py loads with
 * ctypes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"
#include "cpp_lower.h"

static int cpp_lower_only(const akg_sketch *sk, bool safe, char **src, char *err, size_t errlen)
{
    akg_cpp_lower_options o = {.safe = safe, .source = NULL};
    return akg_cpp_lower(sk, &o, src, err, errlen);
}

int akg_cpp_backend_emit(const akg_sketch *sk, const akg_emit_request *req,
                         akg_kernel_files *out, char *err, size_t errlen);

static int cpp_build_argv(const akg_build_request *req, char ***argv_out, char *err, size_t errlen)
{
    const cJSON *config = req->config;
    const akg_kernel_files *files = req->files;
    const char *dir = req->dir;
    *argv_out = NULL;
    if (!files->library_filename)
        return AKG_OK;
    const cJSON *cxx = cJSON_GetObjectItem(cJSON_GetObjectItem(config, "compiler"), "cxx");
    const cJSON *flags = cJSON_GetObjectItem(cJSON_GetObjectItem(config, "compiler"), "flags");
    static const char *defaults[] = {"-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                                     "-std=c++17"};
    size_t nflags = cJSON_IsArray(flags) ? (size_t)cJSON_GetArraySize(flags)
                                         : sizeof defaults / sizeof defaults[0];
    char **argv = calloc(nflags + 6, sizeof *argv);
    if (!argv)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    size_t n = 0;
    argv[n++] = akg_strdup(cJSON_IsString(cxx) ? cxx->valuestring : "g++");
    if (cJSON_IsArray(flags)) {
        const cJSON *f;
        cJSON_ArrayForEach(f, flags) {
            if (cJSON_IsString(f))
                argv[n++] = akg_strdup(f->valuestring);
        }
    } else {
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            argv[n++] = akg_strdup(defaults[i]);
    }
    argv[n++] = akg_strdup("-o");
    size_t ld = strlen(dir) + strlen(files->library_filename) + 2;
    size_t sd = strlen(dir) + strlen(files->kernel_filename) + 2;
    argv[n] = malloc(ld);
    if (argv[n])
        snprintf(argv[n], ld, "%s/%s", dir, files->library_filename);
    n++;
    argv[n] = malloc(sd);
    if (argv[n])
        snprintf(argv[n], sd, "%s/%s", dir, files->kernel_filename);
    n++;
    argv[n] = NULL;
    for (size_t i = 0; i < n; i++)
        if (!argv[i]) {
            akg_argv_free(argv);
            return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
        }
    *argv_out = argv;
    return AKG_OK;
}

const akg_backend akg_backend_cpu_cpp = {
    .name = "cpu",
    .dsl = "cpp",
    .device_kind = "cpu",
    .default_arch = "x86_64",
    .config_path = "backends/cpu/cpp/config.yaml",
    .description = "C++ with OpenMP on the host CPU, built by g++ into a shared object",
    .lower = cpp_lower_only,
    .emit = akg_cpp_backend_emit,
    .build_argv = cpp_build_argv,
};
