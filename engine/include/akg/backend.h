/*
 * backend.h: the seam every target plugs into.
 *
 * A backend is one (device, DSL) pair and registers an
 * akg_backend: its names, the harness pool it runs on (the device kind), its
 * Coder (a checked, bound sketch to kernel source and the drop-in
 * model_new.py), and its build step. The pipeline dispatches through this
 * table only; nothing in engine/ names a DSL. Backends live under
 * backends/<device>/<dsl>/ and are listed in backends/registry.c, one line
 * each.
 *
 * Ownership: akg_backend values are static and live for the whole process.
 * akg_kernel_files hold malloc'd strings released with akg_kernel_files_free.
 */
#ifndef AKG_BACKEND_H
#define AKG_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "akg/task.h"

struct akg_sketch;

/* What the Coder produced for one candidate. */
typedef struct {
    char *kernel_source;    /* the DSL source */
    char *kernel_filename;  /* the source file's name, as the backend names it ("kernel.py") */
    char *library_filename; /* the build's output ("kernel_<hash>.so"), unique per source so a
                               warm worker never reuses a stale build; NULL when nothing is built */
    char *model_new_source; /* model_new.py */
} akg_kernel_files;

void akg_kernel_files_free(akg_kernel_files *k);

/* A lowering request: the sketch is the design; the task supplies Model's signature (so
 * ModelNew mirrors it) and, when known, the probed shapes. */
typedef struct {
    const akg_reference *ref; /* may be NULL (no model_new.py then) */
    const cJSON *probe;       /* may be NULL */
    bool safe;                /* conservative lowering: the Conductor's answer to a crash */
    const char *sketch_file;  /* for comments in the generated files */
} akg_emit_request;

/* A build request: the candidate's files as written in dir, the DSL's settings (config.yaml:
 * compiler.cxx, compiler.flags, ...) and the task's architecture (--arch, else the backend's
 * default_arch; NULL when there is no task, as in tests and tools: the settings' then). A
 * backend that builds for a target (nvcc's -arch) takes it from here. All borrowed. */
typedef struct {
    const cJSON *config;
    const akg_kernel_files *files;
    const char *dir;
    const char *arch;
} akg_build_request;

typedef struct akg_backend {
    const char *name;         /* the device: "cpu", "cuda" */
    const char *dsl;          /* the DSL: "triton", "cuda_c" */
    const char *device_kind;  /* the harness pool it runs in: "cpu", "cuda" */
    const char *default_arch; /* "x86_64" */
    const char *config_path;  /* the DSL's config.yaml, relative to akg_data_dir() */
    const char *description;  /* one line for --help */
    /* The kernel source alone (tests, `akg_cli sketch emit`). *src is malloc'd. */
    int (*lower)(const struct akg_sketch *sk, bool safe, char **src, char *err, size_t errlen);
    /* Kernel source, model_new.py and file names for a bound sketch. */
    int (*emit)(const struct akg_sketch *sk, const akg_emit_request *req, akg_kernel_files *out,
                char *err, size_t errlen);
    /* The build command for req->files written in req->dir: a NULL-terminated argv (malloc'd
     * array of malloc'd strings, freed with akg_argv_free), or *argv = NULL when there is
     * nothing to build. */
    int (*build_argv)(const akg_build_request *req, char ***argv, char *err, size_t errlen);
    /* Optional. NULL when this machine can run the target's kernels, else why it cannot, for a
     * person ("no ... runtime on this machine"): a cheap check of the machine (a file or two, no
     * process), so the loop may call it. A job that runs no candidate (kernelgen_only,
     * design_only) then probes on the CPU and its report says why it is unverified. A NULL
     * hook: the runtime is taken as present (the harness answers otherwise). */
    const char *(*runtime_missing)(void);
} akg_backend;

/* The backend registered for (name, dsl), or NULL. */
const akg_backend *akg_backend_find(const char *name, const char *dsl);
/* The registry, NULL-terminated, in registration order. */
const akg_backend *const *akg_backend_list(void);
/* "device/dsl, ..." of every backend, for messages and --help, into buf. */
void akg_backend_names(char *buf, size_t len);
/* AKG_OK when (name, dsl) has a backend; otherwise AKG_EUNSUPPORTED with a
 * message saying whether the device or DSL is unknown or only not in this
 * build, and what is. */
int akg_backend_check(const char *name, const char *dsl, char *err, size_t errlen);
/* AKG_OK when arch is an architecture be runs on (x86_64 or aarch64 for the CPU, sm_NN or
 * sm_NNa for CUDA); otherwise AKG_EUNSUPPORTED with a message that names what would work. */
int akg_backend_arch_check(const akg_backend *be, const char *arch, char *err, size_t errlen);
void akg_argv_free(char **argv);

#endif
