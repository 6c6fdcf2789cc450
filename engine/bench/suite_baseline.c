/*
 * suite_baseline.c: when a suite's speedups may be reported (akg/suite.h).
 *
 * A speedup is only worth reporting against PyTorch at its best on the machine (DESIGN.md,
 * "Timing"). The harness's env answer says what the baseline runs on; these rules turn it into
 * a yes, or a no with a reason a person can act on. They are pure functions of that answer, so
 * unit tests cover each rule and any front end can show the same verdict.
 *
 * The rules, in order (the first that fails is the reason):
 *  1. the torch.compile baseline needs PyTorch 2;
 *  2. torch must call a BLAS we can name, and not the reference BLAS (netlib's, an order of
 *     magnitude below a tuned one);
 *  3. with OpenBLAS, OPENBLAS_CORETYPE must be set to the core type the CPU's flags call for,
 *     and OpenBLAS must report running those kernels (0.3.21 misdetects recent cores and falls
 *     back to generic kernels, about a quarter of the speed);
 *  4. torch's threads, OpenMP's threads and OMP_NUM_THREADS must equal the kernels' threads.
 * After the run, every profile must have been timed in the recorded environment (threads, core
 * type, BLAS library), or the speedups are withheld.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "akg/akg.h"
#include "akg/suite.h"

static const char *jstr(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int same_ci(const char *a, const char *b)
{
    return a && b && strcasecmp(a, b) == 0;
}

int akg_suite_judge_baseline(const cJSON *env, int threads, int compiled, const char *python,
                             char *reason, size_t n)
{
    if (!cJSON_IsObject(env))
        return akg_fail(reason, n, AKG_EINVAL, "the harness did not describe the baseline");
    const cJSON *blas = cJSON_GetObjectItem(env, "blas");
    const cJSON *cpu = cJSON_GetObjectItem(env, "cpu");
    const char *kind = jstr(blas, "kind");
    const char *lib = jstr(blas, "library");
    const char *expected = jstr(cpu, "expected_coretype");
    const char *coretype = jstr(env, "openblas_coretype");
    const char *corename = jstr(blas, "corename");
    const char *torch_version = jstr(env, "torch");
    if (compiled && (!torch_version || atoi(torch_version) < 2))
        return akg_fail(reason, n, AKG_EINVAL,
                        "--compiled needs PyTorch 2 (torch.compile) but %s has torch %s: run "
                        "scripts/setup.sh torch2 and pass --python .venv-torch2/bin/python",
                        python ? python : "the harness interpreter",
                        torch_version ? torch_version : "(unknown)");
    /* On a GPU both sides run on the device: the host's BLAS and threads time neither. */
    if (cJSON_IsString(cJSON_GetObjectItem(env, "gpu")))
        return AKG_OK;
    if (!kind || !strcmp(kind, "unknown"))
        return akg_fail(reason, n, AKG_EINVAL,
                        "cannot tell which BLAS torch calls (BLAS_INFO %s, no BLAS library mapped)",
                        jstr(blas, "info") ? jstr(blas, "info") : "unknown");
    if (!strcmp(kind, "reference"))
        return akg_fail(reason, n, AKG_EINVAL,
                        "torch calls the reference BLAS (%s), not a tuned one: install OpenBLAS "
                        "(Debian: libopenblas0-pthread) so the baseline runs its fastest kernels",
                        lib ? lib : "libblas");
    if (!strcmp(kind, "openblas") && expected) {
        if (!coretype)
            return akg_fail(reason, n, AKG_EINVAL,
                            "OPENBLAS_CORETYPE is unset: OpenBLAS may pick generic kernels; this "
                            "CPU's flags call for %s",
                            expected);
        if (!same_ci(coretype, expected))
            return akg_fail(reason, n, AKG_EINVAL,
                            "OPENBLAS_CORETYPE=%s does not match this CPU: its flags call for %s",
                            coretype, expected);
        if (corename && !same_ci(corename, expected))
            return akg_fail(reason, n, AKG_EINVAL,
                            "OpenBLAS runs its %s kernels, but this CPU's flags call for %s",
                            corename, expected);
    }
    double torch_threads = jnum(env, "threads");
    double omp = jnum(env, "omp_max_threads");
    const char *omp_env = jstr(cJSON_GetObjectItem(env, "environment"), "OMP_NUM_THREADS");
    if (!(torch_threads == threads))
        return akg_fail(reason, n, AKG_EINVAL, "torch runs %.0f threads but the kernels run %d",
                        torch_threads, threads);
    if (isfinite(omp) && omp != threads)
        return akg_fail(reason, n, AKG_EINVAL,
                        "OpenMP runs %.0f threads but torch and the kernels run %d", omp, threads);
    if (!omp_env || atoi(omp_env) != threads)
        return akg_fail(reason, n, AKG_EINVAL,
                        "OMP_NUM_THREADS=%s but torch and the kernels run %d threads",
                        omp_env ? omp_env : "(unset)", threads);
    return AKG_OK;
}

int akg_suite_check_profile_env(const cJSON *record_env, const cJSON *profile_env, char *note,
                                size_t n)
{
    if (!record_env || !profile_env)
        return AKG_OK;
    /* the CPU's threads, OpenBLAS core type and BLAS library bear on CPU timings only: a profile
     * on a GPU (its env's device "cuda:N") is timed by the device, whatever the host's pools do */
    const char *device = jstr(profile_env, "device");
    if (device && !strncmp(device, "cuda", 4))
        return AKG_OK;
    double threads = jnum(profile_env, "threads");
    double want_threads = jnum(record_env, "threads");
    const char *core = jstr(profile_env, "coretype");
    const char *lib = jstr(profile_env, "blas_library");
    const char *want_core = jstr(record_env, "openblas_coretype");
    const char *want_lib = jstr(cJSON_GetObjectItem(record_env, "blas"), "library");
    if (isfinite(threads) && threads != want_threads)
        return akg_fail(note, n, AKG_EINVAL, "timed with %.0f threads, the record says %.0f",
                        threads, want_threads);
    if ((core || want_core) && !(core && want_core && !strcmp(core, want_core)))
        return akg_fail(note, n, AKG_EINVAL, "timed with OPENBLAS_CORETYPE=%s, the record says %s",
                        core ? core : "(unset)", want_core ? want_core : "(unset)");
    if (lib && want_lib && strcmp(lib, want_lib) != 0)
        return akg_fail(note, n, AKG_EINVAL, "timed with BLAS %s, the record says %s", lib,
                        want_lib);
    return AKG_OK;
}
