/*
 * bench.c: `akg_cli bench`, every reference of an operator suite through the
 * engine, with a table and a JSON record of pass rate and speedups (see
 * bench/README.md).
 *
 * The run has two phases on one loop. First a harness worker of its own, in
 * the environment the engine gives its workers, answers {"op":"env"}: torch,
 * threads, the BLAS torch really calls and the kernels it chose, the GEMM rate.
 * bench refuses (exit 1) to report speedups against a baseline below its best
 * (reference BLAS, wrong OpenBLAS core type, threads unlike the kernel's), and
 * closes that worker before the suite starts so it takes no cores. Then the
 * engine runs the operators, at most --jobs at once; every job's profile must
 * carry the same environment as the record, or the speedups are withheld.
 */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"
#include "akg/harness.h"
#include "cli.h"

#ifdef AKG_PYTHON_DEFAULT
#define BENCH_PYTHON_DEFAULT AKG_PYTHON_DEFAULT
#else
#define BENCH_PYTHON_DEFAULT "/usr/bin/python3"
#endif

#define BENCH_MAX_OPS 4096 /* references one suite may hold */
#define BENCH_MAX_DEPTH 8  /* folder levels searched below the suite */
#define BENCH_MAX_REF_BYTES (1 << 20)
#define BENCH_ENV_TIMEOUT_S 600.0 /* importing torch and timing a GEMM on the reference BLAS */
#define BENCH_LINE_CHARS 160      /* a failure's detail in the table */

typedef struct {
    char *path;   /* suite/relative path, as found */
    char *rel;    /* relative to the suite: family/name.py */
    char *family; /* first folder under the suite; "-" for files at its top */
    char *name;   /* file name without .py */
    char *status; /* job status name, or "not_run" */
    char *error_class, *error_detail, *run_dir, *env_note;
    double ref_ms, kernel_ms, speedup, elapsed_s; /* NAN when absent */
    double compiled_ms, speedup_compiled, compile_s; /* --compiled: torch.compile; NAN when absent */
    char *compiled_error;                            /* --compiled: why the reference did not compile */
    char *compiled_isa; /* --compiled: the SIMD set inductor generated code for ("none": scalar) */
    akg_job *job;                                 /* while running */
    double started_ms;
    void *ctx; /* the bench_ctx, for job callbacks */
} bench_op;

typedef struct {
    char *path, *reason;
} bench_skip;

typedef struct {
    /* options */
    const char *suite, *filter, *backend, *dsl, *arch, *workflow, *output, *store, *python;
    const char *runs_dir;
    int jobs, threads, quiet, verbose, compiled;
    /* suite */
    bench_op *ops;
    size_t nops, capops;
    bench_skip *skips;
    size_t nskips, capskips;
    /* run */
    uv_loop_t *loop;
    akg_harness *env_pool;
    int env_closing;      /* akg_harness_close was called on env_pool */
    cJSON *env;           /* the env answer; owned */
    char env_error[1024]; /* why the env request failed */
    char refusal[2048];   /* why speedups are refused; empty when they are not */
    akg_engine *engine;
    uv_signal_t sigint, sigterm;
    int signals_open, cancelled;
    size_t next, running, finished;
    double t0_ms;
    int exit_code;
} bench_ctx;

static void bench_usage(FILE *f)
{
    fprintf(
        f,
        "usage: akg_cli bench [options]\n"
        "\n"
        "Runs every reference of an operator suite (*.py in KernelBench form, searched\n"
        "recursively; other files are skipped with a note) through the engine, then prints\n"
        "per operator the status, error class, reference and kernel time and speedup, and\n"
        "totals: pass rate, fast_1 and fast_1.5 (share of ALL operators that pass and are\n"
        "faster than PyTorch by more than 1x / 1.5x), geomean speedup over the passing ones,\n"
        "the failures, and the same per family.\n"
        "\n"
        "Before the suite it records the baseline's environment (torch, threads, the BLAS\n"
        "torch calls and its core type, the measured GEMM rate) and refuses to report\n"
        "speedups against a baseline below its best.\n"
        "\n"
        "options:\n"
        "  --suite DIR        the suite (default bench/ops)\n"
        "  --filter TEXT      only references whose family/name.py contains TEXT\n"
        "  --backend NAME     cpu (default)\n"
        "  --dsl NAME         cpp (default)\n"
        "  --arch NAME        x86_64 (default)\n"
        "  --workflow NAME    workflow of every job (default: the DSL config's)\n"
        "  --jobs N           jobs at once (default 1). Timings with N > 1 are NOT\n"
        "                     comparable: other jobs' compilers share the cores\n"
        "  --threads N        threads of kernel and baseline (default: all cores)\n"
        "  --output FILE      write everything as JSON\n"
        "  --runs-dir DIR     run folders as DIR/<family>_<name> (default: the config's log_dir)\n"
        "  --store FILE       SQLite store (default $AKG_STORE or ~/.akg/akg.db)\n"
        "  --python PATH      harness interpreter (default $AKG_PYTHON or %s)\n"
        "  --compiled         also time each reference under torch.compile and report\n"
        "                     speedups against it too (needs PyTorch 2 in the harness\n"
        "                     interpreter: scripts/setup.sh torch2, --python .venv-torch2/bin/python)\n"
        "  --verbose          every stage of every job on stderr\n"
        "  --quiet            no progress on stderr\n"
        "\n"
        "exit status: 0 the suite ran (failures included), 1 the baseline was refused or\n"
        "could not be read, 2 usage error, 130 interrupted.\n",
        BENCH_PYTHON_DEFAULT);
}

/* ---------- small helpers ---------- */

static const char *jstr(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void add_num_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_str_or_null(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* text on one line (line breaks and runs of blanks become one space), cut to max chars with
 * "..." at the end, into out. */
static const char *one_line(const char *text, char *out, size_t n, size_t max)
{
    if (!text) {
        snprintf(out, n, "-");
        return out;
    }
    if (max + 1 > n)
        max = n - 1;
    size_t o = 0;
    int blank = 0;
    const char *p = text;
    for (; *p && o < max; p++) {
        if (isspace((unsigned char)*p)) {
            blank = o > 0;
            continue;
        }
        if (blank && o + 1 < max)
            out[o++] = ' ';
        blank = 0;
        out[o++] = *p;
    }
    while (*p && isspace((unsigned char)*p))
        p++;
    out[o] = '\0';
    if (*p && o >= 3) /* more text did not fit */
        memcpy(out + o - 3, "...", 3);
    return out;
}

static int parse_count(const char *text, int lo, int hi, int *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int same_ci(const char *a, const char *b)
{
    return a && b && strcasecmp(a, b) == 0;
}

/* ---------- the suite ---------- */

/* 0 when the file looks like a KernelBench reference; else the reason in why. */
static int kernelbench_form(const char *path, char *why, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    char err[512];
    if (akg_read_file(path, BENCH_MAX_REF_BYTES, &text, &len, err, sizeof err) != AKG_OK) {
        snprintf(why, n, "%s", err);
        return -1;
    }
    static const char *needed[][2] = {{"class Model(", "no class Model(nn.Module)"},
                                      {"def get_inputs(", "no get_inputs()"},
                                      {"def get_init_inputs(", "no get_init_inputs()"}};
    int rc = 0;
    for (size_t k = 0; k < sizeof needed / sizeof needed[0] && rc == 0; k++) {
        int found = 0;
        size_t nlen = strlen(needed[k][0]);
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
            if (strncmp(p, needed[k][0], nlen) == 0) {
                found = 1;
                break;
            }
        if (!found) {
            snprintf(why, n, "not in KernelBench form: %s", needed[k][1]);
            rc = -1;
        }
    }
    free(text);
    return rc;
}

static int add_op(bench_ctx *c, const char *path, const char *rel)
{
    if (c->nops == BENCH_MAX_OPS)
        return AKG_ENOMEM;
    if (c->nops == c->capops) {
        size_t cap = c->capops ? c->capops * 2 : 64;
        bench_op *ops = realloc(c->ops, cap * sizeof *ops);
        if (!ops)
            return AKG_ENOMEM;
        c->ops = ops;
        c->capops = cap;
    }
    bench_op *op = &c->ops[c->nops];
    memset(op, 0, sizeof *op);
    op->path = akg_strdup(path);
    op->rel = akg_strdup(rel);
    const char *slash = strchr(rel, '/');
    op->family = slash ? strndup(rel, (size_t)(slash - rel)) : akg_strdup("-");
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    op->name = strndup(base, strlen(base) - 3);
    op->status = akg_strdup("not_run");
    op->ref_ms = op->kernel_ms = op->speedup = op->elapsed_s = NAN;
    op->compiled_ms = op->speedup_compiled = op->compile_s = NAN;
    if (!op->path || !op->rel || !op->family || !op->name || !op->status)
        return AKG_ENOMEM;
    c->nops++;
    return AKG_OK;
}

static int add_skip(bench_ctx *c, const char *path, const char *reason)
{
    if (c->nskips == BENCH_MAX_OPS)
        return AKG_ENOMEM;
    if (c->nskips == c->capskips) {
        size_t cap = c->capskips ? c->capskips * 2 : 16;
        bench_skip *s = realloc(c->skips, cap * sizeof *s);
        if (!s)
            return AKG_ENOMEM;
        c->skips = s;
        c->capskips = cap;
    }
    c->skips[c->nskips].path = akg_strdup(path);
    c->skips[c->nskips].reason = akg_strdup(reason);
    c->nskips++;
    return AKG_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks dir (suite/rel) in name order, adding references and skips. */
static int scan_dir(bench_ctx *c, const char *rel, int depth)
{
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s%s%s", c->suite, *rel ? "/" : "", rel);
    DIR *d = opendir(dirpath);
    if (!d)
        return AKG_EIO;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = AKG_OK;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "__pycache__") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = AKG_ENOMEM;
                break;
            }
            names = grown;
        }
        if (!(names[n++] = akg_strdup(e->d_name))) {
            rc = AKG_ENOMEM;
            break;
        }
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && rc == AKG_OK; i++) {
        char sub[2048], path[4096];
        int nsub = snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        int npath = snprintf(path, sizeof path, "%s/%s", c->suite, sub);
        struct stat st;
        if (nsub < 0 || (size_t)nsub >= sizeof sub || npath < 0 || (size_t)npath >= sizeof path ||
            stat(path, &st) != 0)
            continue; /* a path too long to name is not a reference we could run */
        if (S_ISDIR(st.st_mode)) {
            if (depth < BENCH_MAX_DEPTH)
                rc = scan_dir(c, sub, depth + 1);
            continue;
        }
        size_t len = strlen(names[i]);
        if (!S_ISREG(st.st_mode) || len < 4 || strcmp(names[i] + len - 3, ".py") != 0)
            continue;
        if (!strcmp(names[i], "check_suite.py") || !strcmp(names[i], "__init__.py"))
            continue;
        if (c->filter && !strstr(sub, c->filter))
            continue;
        char why[600];
        if (kernelbench_form(path, why, sizeof why) != 0)
            rc = add_skip(c, path, why);
        else
            rc = add_op(c, path, sub);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static void free_suite(bench_ctx *c)
{
    for (size_t i = 0; i < c->nops; i++) {
        bench_op *op = &c->ops[i];
        free(op->path);
        free(op->rel);
        free(op->family);
        free(op->name);
        free(op->status);
        free(op->error_class);
        free(op->error_detail);
        free(op->run_dir);
        free(op->env_note);
        free(op->compiled_error);
        free(op->compiled_isa);
    }
    free(c->ops);
    for (size_t i = 0; i < c->nskips; i++) {
        free(c->skips[i].path);
        free(c->skips[i].reason);
    }
    free(c->skips);
}

/* ---------- the baseline environment ---------- */

/* Fills c->refusal when the env answer shows a baseline below its best. */
static void judge_env(bench_ctx *c)
{
    const cJSON *env = c->env;
    const cJSON *blas = cJSON_GetObjectItem(env, "blas");
    const cJSON *cpu = cJSON_GetObjectItem(env, "cpu");
    const char *kind = jstr(blas, "kind");
    const char *lib = jstr(blas, "library");
    const char *expected = jstr(cpu, "expected_coretype");
    const char *coretype = jstr(env, "openblas_coretype");
    const char *corename = jstr(blas, "corename");
    char *r = c->refusal;
    size_t n = sizeof c->refusal;
    const char *torch_version = jstr(env, "torch");
    if (c->compiled && (!torch_version || atoi(torch_version) < 2)) {
        snprintf(r, n,
                 "--compiled needs PyTorch 2 (torch.compile) but %s has torch %s: run "
                 "scripts/setup.sh torch2 and pass --python .venv-torch2/bin/python",
                 c->python, torch_version ? torch_version : "(unknown)");
        return;
    }
    if (!kind || !strcmp(kind, "unknown")) {
        snprintf(r, n, "cannot tell which BLAS torch calls (BLAS_INFO %s, no BLAS library mapped)",
                 jstr(blas, "info") ? jstr(blas, "info") : "unknown");
        return;
    }
    if (!strcmp(kind, "reference")) {
        snprintf(r, n,
                 "torch calls the reference BLAS (%s), not a tuned one: install OpenBLAS "
                 "(Debian: libopenblas0-pthread) so the baseline runs its fastest kernels",
                 lib ? lib : "libblas");
        return;
    }
    if (!strcmp(kind, "openblas") && expected) {
        if (!coretype) {
            snprintf(r, n,
                     "OPENBLAS_CORETYPE is unset: OpenBLAS may pick generic kernels; this CPU's "
                     "flags call for %s",
                     expected);
            return;
        }
        if (!same_ci(coretype, expected)) {
            snprintf(r, n, "OPENBLAS_CORETYPE=%s does not match this CPU: its flags call for %s",
                     coretype, expected);
            return;
        }
        if (corename && !same_ci(corename, expected)) {
            snprintf(r, n, "OpenBLAS runs its %s kernels, but this CPU's flags call for %s",
                     corename, expected);
            return;
        }
    }
    double threads = jnum(env, "threads");
    double omp = jnum(env, "omp_max_threads");
    const char *omp_env = jstr(cJSON_GetObjectItem(env, "environment"), "OMP_NUM_THREADS");
    if (!(threads == c->threads)) {
        snprintf(r, n, "torch runs %.0f threads but the kernels run %d", threads, c->threads);
        return;
    }
    if (isfinite(omp) && omp != c->threads) {
        snprintf(r, n, "OpenMP runs %.0f threads but torch and the kernels run %d", omp,
                 c->threads);
        return;
    }
    if (!omp_env || atoi(omp_env) != c->threads)
        snprintf(r, n, "OMP_NUM_THREADS=%s but torch and the kernels run %d threads",
                 omp_env ? omp_env : "(unset)", c->threads);
}

static void print_env(FILE *f, const cJSON *env)
{
    const cJSON *blas = cJSON_GetObjectItem(env, "blas");
    const cJSON *cpu = cJSON_GetObjectItem(env, "cpu");
    const cJSON *gemm = cJSON_GetObjectItem(env, "gemm");
    const cJSON *malloc_rec = cJSON_GetObjectItem(env, "malloc");
    const char *lib = jstr(blas, "library");
    const char *base = lib ? strrchr(lib, '/') : NULL;
    char omp[32];
    double omp_threads = jnum(env, "omp_max_threads");
    if (isfinite(omp_threads))
        snprintf(omp, sizeof omp, "%.0f", omp_threads);
    else
        snprintf(omp, sizeof omp, "not loaded");
    fprintf(f, "environment: torch %s, python %s, %.0f threads (OpenMP %s), %s\n",
            jstr(env, "torch") ? jstr(env, "torch") : "?",
            jstr(env, "python") ? jstr(env, "python") : "?", jnum(env, "threads"), omp,
            jstr(cpu, "model") ? jstr(cpu, "model") : "unknown CPU");
    fprintf(f, "BLAS:        %s (%s), core %s; OPENBLAS_CORETYPE=%s, CPU flags call for %s\n",
            jstr(blas, "kind") ? jstr(blas, "kind") : "?", base ? base + 1 : (lib ? lib : "-"),
            jstr(blas, "corename") ? jstr(blas, "corename") : "-",
            jstr(env, "openblas_coretype") ? jstr(env, "openblas_coretype") : "(unset)",
            jstr(cpu, "expected_coretype") ? jstr(cpu, "expected_coretype") : "nothing");
    fprintf(f, "GEMM:        %.0f^3 fp32 torch.matmul %.1f GFLOP/s (median of %.0f, %.3f ms)\n",
            jnum(gemm, "n"), jnum(gemm, "gflops"), jnum(gemm, "runs"), jnum(gemm, "ms"));
    fprintf(f, "settings:    OMP_WAIT_POLICY=%s, OPENBLAS_THREAD_TIMEOUT=%s, malloc %s%s\n",
            jstr(env, "omp_wait_policy") ? jstr(env, "omp_wait_policy") : "(unset)",
            jstr(env, "openblas_thread_timeout") ? jstr(env, "openblas_thread_timeout") : "(unset)",
            jstr(malloc_rec, "policy") ? jstr(malloc_rec, "policy") : "?",
            cJSON_IsTrue(cJSON_GetObjectItem(malloc_rec, "applied")) ? " (applied)" : "");
}

/* ---------- totals ---------- */

typedef struct {
    size_t ops, passed, fast1, fast15, timed, not_run;
    double log_sum; /* sum of log(speedup) over the passing operators with a speedup */
} bench_totals;

/* Which baseline a total compares against: eager PyTorch, or torch.compile (--compiled). */
typedef enum { VS_EAGER, VS_COMPILED } bench_vs;

/* An operator that fails, or whose reference torch.compile could not compile, counts in ops
 * (so not fast) but not in the geomean. */
static void totals_add(bench_totals *t, const bench_op *op, bench_vs vs)
{
    double speedup = vs == VS_COMPILED ? op->speedup_compiled : op->speedup;
    t->ops++;
    if (!strcmp(op->status, "not_run"))
        t->not_run++;
    if (strcmp(op->status, "pass") != 0)
        return;
    t->passed++;
    if (isfinite(speedup) && speedup > 0) {
        t->timed++;
        t->log_sum += log(speedup);
        if (speedup > 1.0)
            t->fast1++;
        if (speedup > 1.5)
            t->fast15++;
    }
}

static bench_totals totals_of(const bench_ctx *c, const char *family, bench_vs vs)
{
    bench_totals t = {0};
    for (size_t i = 0; i < c->nops; i++)
        if (!family || !strcmp(c->ops[i].family, family))
            totals_add(&t, &c->ops[i], vs);
    return t;
}

static double ratio(size_t a, size_t b)
{
    return b ? (double)a / (double)b : NAN;
}

static double geomean(const bench_totals *t)
{
    return t->timed ? exp(t->log_sum / (double)t->timed) : NAN;
}

static cJSON *totals_json(const bench_totals *t, int speedups)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ops", (double)t->ops);
    cJSON_AddNumberToObject(o, "passed", (double)t->passed);
    cJSON_AddNumberToObject(o, "failed", (double)(t->ops - t->passed - t->not_run));
    cJSON_AddNumberToObject(o, "not_run", (double)t->not_run);
    add_num_or_null(o, "pass_rate", ratio(t->passed, t->ops));
    add_num_or_null(o, "fast_1", speedups ? ratio(t->fast1, t->ops) : NAN);
    add_num_or_null(o, "fast_1.5", speedups ? ratio(t->fast15, t->ops) : NAN);
    cJSON_AddNumberToObject(o, "fast_1_count", speedups ? (double)t->fast1 : 0);
    cJSON_AddNumberToObject(o, "fast_1.5_count", speedups ? (double)t->fast15 : 0);
    add_num_or_null(o, "geomean_speedup", speedups ? geomean(t) : NAN);
    cJSON_AddNumberToObject(o, "geomean_over", (double)t->timed);
    return o;
}

static int is_failure(const bench_op *op)
{
    return strcmp(op->status, "pass") != 0;
}

/* Families in order of first appearance (the suite is sorted, so they come grouped). */
static size_t family_list(const bench_ctx *c, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nops; i++) {
        size_t k = 0;
        while (k < n && strcmp(out[k], c->ops[i].family) != 0)
            k++;
        if (k == n && n < max)
            out[n++] = c->ops[i].family;
    }
    return n;
}

static void fmt_ms(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.3f", v);
    else
        snprintf(b, n, "-");
}

static void fmt_pct(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.1f%%", 100.0 * v);
    else
        snprintf(b, n, "-");
}

static void fmt_x(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.2fx", v);
    else
        snprintf(b, n, "-");
}

static void print_report(const bench_ctx *c, FILE *f)
{
    int speedups = c->refusal[0] == '\0';
    if (c->env)
        print_env(f, c->env);
    fprintf(f, "\n%-12s %-28s %-10s %-20s %10s %10s %8s", "family", "op", "status", "error",
            "ref ms", "kernel ms", "speedup");
    if (c->compiled)
        fprintf(f, " %11s %10s", "compiled ms", "vs compile");
    fputc('\n', f);
    for (size_t i = 0; i < c->nops; i++) {
        const bench_op *op = &c->ops[i];
        char r[32], k[32], x[32], cm[32], cx[32];
        fmt_ms(r, sizeof r, op->ref_ms);
        fmt_ms(k, sizeof k, op->kernel_ms);
        fmt_ms(cm, sizeof cm, op->compiled_ms);
        if (speedups) {
            fmt_x(x, sizeof x, op->speedup);
            fmt_x(cx, sizeof cx, op->speedup_compiled);
        } else {
            snprintf(x, sizeof x, "%s", isfinite(op->speedup) ? "withheld" : "-");
            snprintf(cx, sizeof cx, "%s", isfinite(op->speedup_compiled) ? "withheld" : "-");
        }
        fprintf(f, "%-12s %-28s %-10s %-20s %10s %10s %8s", op->family, op->name, op->status,
                op->error_class ? op->error_class : "-", r, k, x);
        if (c->compiled)
            fprintf(f, " %11s %10s", cm, cx);
        fputc('\n', f);
    }
    bench_totals all = totals_of(c, NULL, VS_EAGER);
    size_t nfail = 0;
    for (size_t i = 0; i < c->nops; i++)
        nfail += is_failure(&c->ops[i]);
    if (nfail) {
        fprintf(f, "\nfailures (%zu):\n", nfail);
        for (size_t i = 0; i < c->nops; i++) {
            const bench_op *op = &c->ops[i];
            if (!is_failure(op))
                continue;
            char line[BENCH_LINE_CHARS + 8];
            one_line(op->error_detail, line, sizeof line, BENCH_LINE_CHARS);
            fprintf(f, "  %s/%s  %s  %s: %s\n", op->family, op->name, op->status,
                    op->error_class ? op->error_class : "-", line);
        }
    }
    size_t ncompile_failed = 0;
    for (size_t i = 0; c->compiled && i < c->nops; i++)
        ncompile_failed += c->ops[i].compiled_error != NULL;
    if (ncompile_failed) {
        fprintf(f, "\ntorch.compile failed on %zu references (not fast against it, not in its geomean):\n",
                ncompile_failed);
        for (size_t i = 0; i < c->nops; i++) {
            const bench_op *op = &c->ops[i];
            char line[BENCH_LINE_CHARS + 8];
            if (op->compiled_error)
                fprintf(f, "  %s/%s  %s\n", op->family, op->name,
                        one_line(op->compiled_error, line, sizeof line, BENCH_LINE_CHARS));
        }
    }
    if (c->nskips) {
        fprintf(f, "\nskipped (%zu, not counted):\n", c->nskips);
        for (size_t i = 0; i < c->nskips; i++)
            fprintf(f, "  %s: %s\n", c->skips[i].path, c->skips[i].reason);
    }
    char p[32], f1[32], f15[32], g[32];
    fmt_pct(p, sizeof p, ratio(all.passed, all.ops));
    fmt_pct(f1, sizeof f1, ratio(all.fast1, all.ops));
    fmt_pct(f15, sizeof f15, ratio(all.fast15, all.ops));
    fmt_x(g, sizeof g, geomean(&all));
    if (speedups)
        fprintf(f,
                "\ntotals: %zu ops, %zu pass (%s), fast_1 %s (%zu), fast_1.5 %s (%zu), geomean "
                "speedup %s over %zu passing\n",
                all.ops, all.passed, p, f1, all.fast1, f15, all.fast15, g, all.timed);
    else
        fprintf(f, "\ntotals: %zu ops, %zu pass (%s); speedups withheld: %s\n", all.ops, all.passed,
                p, c->refusal);
    if (c->compiled && speedups) {
        bench_totals ct = totals_of(c, NULL, VS_COMPILED);
        fmt_pct(f1, sizeof f1, ratio(ct.fast1, ct.ops));
        fmt_pct(f15, sizeof f15, ratio(ct.fast15, ct.ops));
        fmt_x(g, sizeof g, geomean(&ct));
        const char *isa = NULL;
        size_t scalar = 0;
        for (size_t i = 0; i < c->nops; i++) {
            const char *s = c->ops[i].compiled_isa;
            if (s && !isa)
                isa = s;
            scalar += s && !strcmp(s, "none");
        }
        fprintf(f, "against torch.compile (inductor's SIMD: %s): fast_1 %s (%zu), fast_1.5 %s (%zu), "
                   "geomean speedup %s over %zu\n",
                isa ? isa : "?", f1, ct.fast1, f15, ct.fast15, g, ct.timed);
        if (scalar)
            fprintf(f, "warning: inductor wrote scalar code for %zu references (its SIMD probe failed): "
                       "the torch.compile baseline is below its best there\n", scalar);
    }
    if (all.not_run)
        fprintf(f, "not run: %zu (interrupted)\n", all.not_run);
    if (c->jobs > 1)
        fprintf(f, "note: --jobs %d: timings are not comparable with a --jobs 1 run\n", c->jobs);
    const char *fams[256];
    size_t nf = family_list(c, fams, 256);
    fprintf(f, "\n%-12s %5s %5s %8s %8s %9s %9s", "family", "ops", "pass", "pass%", "fast_1",
            "fast_1.5", "geomean");
    if (c->compiled)
        fprintf(f, " %11s %12s", "fast_1 comp", "geomean comp");
    fputc('\n', f);
    for (size_t k = 0; k < nf; k++) {
        bench_totals t = totals_of(c, fams[k], VS_EAGER);
        fmt_pct(p, sizeof p, ratio(t.passed, t.ops));
        fmt_pct(f1, sizeof f1, speedups ? ratio(t.fast1, t.ops) : NAN);
        fmt_pct(f15, sizeof f15, speedups ? ratio(t.fast15, t.ops) : NAN);
        fmt_x(g, sizeof g, speedups ? geomean(&t) : NAN);
        fprintf(f, "%-12s %5zu %5zu %8s %8s %9s %9s", fams[k], t.ops, t.passed, p, f1, f15, g);
        if (c->compiled) {
            bench_totals ct = totals_of(c, fams[k], VS_COMPILED);
            fmt_pct(f1, sizeof f1, speedups ? ratio(ct.fast1, ct.ops) : NAN);
            fmt_x(g, sizeof g, speedups ? geomean(&ct) : NAN);
            fprintf(f, " %11s %12s", f1, g);
        }
        fputc('\n', f);
    }
}

static cJSON *report_json(const bench_ctx *c, const char *started_at, double elapsed_s)
{
    int speedups = c->refusal[0] == '\0';
    cJSON *root = cJSON_CreateObject();
    char *suite_abs = akg_abspath(c->suite);
    add_str_or_null(root, "suite", suite_abs);
    free(suite_abs);
    add_str_or_null(root, "filter", c->filter);
    cJSON_AddStringToObject(root, "backend", c->backend);
    cJSON_AddStringToObject(root, "dsl", c->dsl);
    cJSON_AddStringToObject(root, "arch", c->arch);
    add_str_or_null(root, "workflow", c->workflow);
    cJSON_AddNumberToObject(root, "jobs", c->jobs);
    cJSON_AddNumberToObject(root, "threads", c->threads);
    cJSON_AddBoolToObject(root, "timings_comparable", c->jobs == 1);
    cJSON_AddStringToObject(root, "started_at", started_at);
    cJSON_AddNumberToObject(root, "elapsed_s", elapsed_s);
    cJSON *env = c->env ? cJSON_Duplicate(c->env, 1) : cJSON_CreateNull();
    cJSON_DeleteItemFromObject(env, "id");
    cJSON_DeleteItemFromObject(env, "ok");
    cJSON_AddItemToObject(root, "environment", env);
    add_str_or_null(root, "refused", speedups ? NULL : c->refusal);
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    cJSON *fails = cJSON_CreateArray();
    for (size_t i = 0; i < c->nops; i++) {
        const bench_op *op = &c->ops[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "family", op->family);
        cJSON_AddStringToObject(o, "name", op->name);
        cJSON_AddStringToObject(o, "path", op->path);
        cJSON_AddStringToObject(o, "status", op->status);
        add_str_or_null(o, "error_class", op->error_class);
        add_str_or_null(o, "error_detail", op->error_detail);
        add_num_or_null(o, "ref_ms", op->ref_ms);
        add_num_or_null(o, "kernel_ms", op->kernel_ms);
        add_num_or_null(o, "speedup", speedups ? op->speedup : NAN);
        if (c->compiled) {
            add_num_or_null(o, "compiled_ms", op->compiled_ms);
            add_num_or_null(o, "speedup_compiled", speedups ? op->speedup_compiled : NAN);
            add_num_or_null(o, "compile_s", op->compile_s);
            add_str_or_null(o, "compiled_error", op->compiled_error);
            add_str_or_null(o, "compiled_isa", op->compiled_isa);
        }
        add_str_or_null(o, "run_dir", op->run_dir);
        add_num_or_null(o, "elapsed_s", op->elapsed_s);
        if (op->env_note)
            cJSON_AddStringToObject(o, "env_note", op->env_note);
        cJSON_AddItemToArray(ops, o);
        if (is_failure(op)) {
            cJSON *fo = cJSON_CreateObject();
            cJSON_AddStringToObject(fo, "family", op->family);
            cJSON_AddStringToObject(fo, "name", op->name);
            cJSON_AddStringToObject(fo, "status", op->status);
            add_str_or_null(fo, "error_class", op->error_class);
            char line[BENCH_LINE_CHARS + 8];
            cJSON_AddStringToObject(
                fo, "detail", one_line(op->error_detail, line, sizeof line, BENCH_LINE_CHARS));
            cJSON_AddItemToArray(fails, fo);
        }
    }
    cJSON_AddItemToObject(root, "failures", fails);
    cJSON *skipped = cJSON_AddArrayToObject(root, "skipped");
    for (size_t i = 0; i < c->nskips; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "path", c->skips[i].path);
        cJSON_AddStringToObject(s, "reason", c->skips[i].reason);
        cJSON_AddItemToArray(skipped, s);
    }
    cJSON_AddBoolToObject(root, "compiled", c->compiled);
    const char *fams[256];
    size_t nf = family_list(c, fams, 256);
    /* "totals"/"per_family" are against eager PyTorch; with --compiled, "totals_compiled" and
     * "per_family_compiled" are the same against torch.compile */
    for (int vs = VS_EAGER; vs <= (c->compiled ? VS_COMPILED : VS_EAGER); vs++) {
        bench_totals all = totals_of(c, NULL, (bench_vs)vs);
        cJSON_AddItemToObject(root, vs == VS_EAGER ? "totals" : "totals_compiled",
                              totals_json(&all, speedups));
        cJSON *per = cJSON_AddObjectToObject(root, vs == VS_EAGER ? "per_family" : "per_family_compiled");
        for (size_t k = 0; k < nf; k++) {
            bench_totals t = totals_of(c, fams[k], (bench_vs)vs);
            cJSON_AddItemToObject(per, fams[k], totals_json(&t, speedups));
        }
    }
    return root;
}

/* ---------- the suite through the engine ---------- */

static void start_next(bench_ctx *c);

static void on_engine_closed(void *user)
{
    bench_ctx *c = user;
    c->engine = NULL;
    if (c->signals_open) {
        uv_close((uv_handle_t *)&c->sigint, NULL);
        uv_close((uv_handle_t *)&c->sigterm, NULL);
        c->signals_open = 0;
    }
}

static void maybe_finish(bench_ctx *c)
{
    if (c->running == 0 && (c->next >= c->nops || c->cancelled) && c->engine)
        akg_engine_close(c->engine, on_engine_closed, c);
}

static void set_str(char **slot, const char *value)
{
    free(*slot);
    *slot = akg_strdup(value);
}

/* The profile must have run in the recorded environment; else note it and refuse speedups. */
static void check_op_env(bench_ctx *c, bench_op *op, const cJSON *perf_env)
{
    if (!perf_env || !c->env)
        return;
    char note[512] = "";
    double threads = jnum(perf_env, "threads");
    const char *core = jstr(perf_env, "coretype");
    const char *lib = jstr(perf_env, "blas_library");
    const char *want_core = jstr(c->env, "openblas_coretype");
    const char *want_lib = jstr(cJSON_GetObjectItem(c->env, "blas"), "library");
    if (isfinite(threads) && threads != jnum(c->env, "threads"))
        snprintf(note, sizeof note, "timed with %.0f threads, the record says %.0f", threads,
                 jnum(c->env, "threads"));
    else if ((core || want_core) && !(core && want_core && !strcmp(core, want_core)))
        snprintf(note, sizeof note, "timed with OPENBLAS_CORETYPE=%s, the record says %s",
                 core ? core : "(unset)", want_core ? want_core : "(unset)");
    else if (lib && want_lib && strcmp(lib, want_lib) != 0)
        snprintf(note, sizeof note, "timed with BLAS %s, the record says %s", lib, want_lib);
    if (!note[0])
        return;
    set_str(&op->env_note, note);
    if (!c->refusal[0])
        snprintf(c->refusal, sizeof c->refusal, "%s/%s was %s", op->family, op->name, note);
}

static void record_done(bench_ctx *c, bench_op *op, const akg_event *ev)
{
    const cJSON *r = ev->data;
    set_str(&op->status, akg_job_status_name(ev->status));
    const cJSON *err = cJSON_GetObjectItem(r, "error");
    if (err) {
        set_str(&op->error_class, jstr(err, "class"));
        set_str(&op->error_detail, jstr(err, "detail"));
    }
    const cJSON *perf = cJSON_GetObjectItem(r, "perf");
    op->ref_ms = jnum(perf, "ref_ms");
    op->kernel_ms = jnum(perf, "kernel_ms");
    op->speedup = jnum(perf, "speedup");
    op->compiled_ms = jnum(perf, "compiled_ms");
    op->speedup_compiled = jnum(perf, "speedup_compiled");
    op->compile_s = jnum(perf, "compile_s");
    if (jstr(perf, "compiled_error"))
        set_str(&op->compiled_error, jstr(perf, "compiled_error"));
    if (jstr(perf, "compiled_isa"))
        set_str(&op->compiled_isa, jstr(perf, "compiled_isa"));
    set_str(&op->run_dir, jstr(cJSON_GetObjectItem(r, "paths"), "dir"));
    op->elapsed_s = (akg_now_ms() - op->started_ms) / 1000.0;
    if (ev->status == AKG_JOB_PASS && !isfinite(op->speedup) && !op->error_class) {
        set_str(&op->error_class, "no_timing");
        set_str(&op->error_detail, "the kernel passed verification but has no profile");
    }
    if (ev->status == AKG_JOB_PASS)
        check_op_env(c, op, cJSON_GetObjectItem(perf, "env"));
}

static void on_job_event(const akg_event *ev, void *user)
{
    bench_op *op = user;
    bench_ctx *c = op->ctx;
    size_t index = (size_t)(op - c->ops) + 1;
    if (ev->kind != AKG_EVENT_DONE) {
        if (c->verbose && !c->quiet && ev->message &&
            (ev->kind == AKG_EVENT_STAGE || ev->kind == AKG_EVENT_VERIFY ||
             ev->kind == AKG_EVENT_PROFILE || ev->kind == AKG_EVENT_LOG))
            fprintf(stderr, "[bench %zu/%zu] %s/%s: %s\n", index, c->nops, op->family, op->name,
                    ev->message);
        return;
    }
    record_done(c, op, ev);
    op->job = NULL;
    c->running--;
    c->finished++;
    if (!c->quiet) {
        char x[32], r[32], k[32], line[BENCH_LINE_CHARS + 8];
        if (!strcmp(op->status, "pass")) {
            fmt_x(x, sizeof x, op->speedup);
            fmt_ms(r, sizeof r, op->ref_ms);
            fmt_ms(k, sizeof k, op->kernel_ms);
            fprintf(stderr, "[bench %zu/%zu] %s/%s: pass %s (ref %s ms, kernel %s ms) in %.1f s\n",
                    index, c->nops, op->family, op->name, x, r, k, op->elapsed_s);
        } else {
            fprintf(stderr, "[bench %zu/%zu] %s/%s: %s %s: %s (%.1f s)\n", index, c->nops,
                    op->family, op->name, op->status, op->error_class ? op->error_class : "-",
                    one_line(op->error_detail, line, sizeof line, BENCH_LINE_CHARS), op->elapsed_s);
        }
        fflush(stderr);
    }
    start_next(c);
    maybe_finish(c);
}

static void start_next(bench_ctx *c)
{
    while (!c->cancelled && c->running < (size_t)c->jobs && c->next < c->nops) {
        bench_op *op = &c->ops[c->next++];
        op->ctx = c;
        akg_job_options jo = {0};
        jo.reference_path = op->path;
        jo.framework = "torch";
        jo.backend = c->backend;
        jo.arch = c->arch;
        jo.dsl = c->dsl;
        jo.workflow = c->workflow;
        jo.provider = "builtin";
        jo.compiled_baseline = c->compiled;
        char out_dir[4096];
        if (c->runs_dir) {
            snprintf(out_dir, sizeof out_dir, "%s/%s_%s", c->runs_dir, op->family, op->name);
            jo.output_dir = out_dir;
        }
        char err[1024];
        op->started_ms = akg_now_ms();
        if (!c->quiet)
            fprintf(stderr, "[bench %zu/%zu] %s/%s: started\n", c->next, c->nops, op->family,
                    op->name);
        int rc = akg_job_start(c->engine, &jo, on_job_event, op, &op->job, err, sizeof err);
        if (rc != AKG_OK) {
            set_str(&op->status, "error");
            set_str(&op->error_class, rc == AKG_EUNSUPPORTED ? "unsupported" : "start_error");
            set_str(&op->error_detail, err);
            op->elapsed_s = 0;
            c->finished++;
            if (!c->quiet)
                fprintf(stderr, "[bench %zu/%zu] %s/%s: error: %s\n", c->next, c->nops, op->family,
                        op->name, err);
            continue;
        }
        c->running++;
    }
}

static void start_suite(bench_ctx *c)
{
    akg_engine_options eo = {0};
    eo.python = c->python;
    eo.store_path = c->store;
    eo.devices = 1; /* one worker: profiles never overlap, each gets every thread */
    eo.threads = c->threads;
    eo.max_jobs = c->jobs;
    eo.max_queue = c->jobs;
    char err[1024];
    if (akg_engine_new(c->loop, &eo, &c->engine, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli bench: %s\n", err);
        c->exit_code = 1;
        on_engine_closed(c);
        return;
    }
    start_next(c);
    maybe_finish(c);
}

/* ---------- phase one: the env request ---------- */

static void on_env_pool_closed(void *user)
{
    bench_ctx *c = user;
    c->env_pool = NULL;
    if (c->cancelled || !c->env || c->refusal[0]) {
        on_engine_closed(c); /* nothing to run: just close the signal handles */
        return;
    }
    start_suite(c);
}

static void on_env_answer(const cJSON *answer, void *user)
{
    bench_ctx *c = user;
    if (cJSON_IsTrue(cJSON_GetObjectItem(answer, "ok"))) {
        c->env = cJSON_Duplicate(answer, 1);
        if (c->env) {
            judge_env(c);
            if (!c->quiet) {
                print_env(stderr, c->env);
                fflush(stderr);
            }
        }
    } else {
        snprintf(c->env_error, sizeof c->env_error, "%s: %s",
                 jstr(answer, "class") ? jstr(answer, "class") : "error",
                 jstr(answer, "detail") ? jstr(answer, "detail") : "no detail");
    }
    if (!c->env_closing) {
        c->env_closing = 1;
        akg_harness_close(c->env_pool, on_env_pool_closed, c);
    }
}

static int start_env(bench_ctx *c, char *err, size_t errlen)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/backends/harness/worker.py", akg_data_dir());
    akg_harness_options ho = {0};
    ho.python = c->python;
    ho.worker_script = script;
    ho.workers = 1;
    ho.threads = c->threads;
    ho.device_kind = "cpu";
    int rc = akg_harness_new(c->loop, &ho, &c->env_pool, err, errlen);
    if (rc != AKG_OK)
        return rc;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "env");
    rc = akg_harness_submit(c->env_pool, req, BENCH_ENV_TIMEOUT_S, on_env_answer, c, NULL);
    if (rc != AKG_OK) {
        akg_fail(err, errlen, rc, "cannot ask the harness for its environment: %s",
                 akg_strerror(rc));
        c->env_closing = 1;
        akg_harness_close(c->env_pool, NULL, NULL);
        c->env_pool = NULL;
    }
    return rc;
}

static void on_signal(uv_signal_t *s, int signum)
{
    bench_ctx *c = s->data;
    (void)signum;
    if (c->cancelled)
        return;
    c->cancelled = 1;
    fprintf(stderr, "[bench] cancelling...\n");
    if (c->env_pool && !c->env_closing) {
        /* Answers the env request "cancelled", then ends the worker. */
        c->env_closing = 1;
        akg_harness_close(c->env_pool, on_env_pool_closed, c);
    }
    for (size_t i = 0; i < c->nops; i++)
        if (c->ops[i].job)
            akg_job_cancel(c->ops[i].job);
}

/* ---------- the command ---------- */

int cli_bench(int argc, char **argv)
{
    bench_ctx c = {0};
    const char *jobs = NULL, *threads = NULL;
    int help = 0;
    c.suite = "bench/ops";
    c.backend = "cpu";
    c.dsl = "cpp";
    c.arch = "x86_64";
    cli_flag flags[] = {
        {"suite", 1, &c.suite, NULL},     {"filter", 1, &c.filter, NULL},
        {"backend", 1, &c.backend, NULL}, {"dsl", 1, &c.dsl, NULL},
        {"arch", 1, &c.arch, NULL},       {"workflow", 1, &c.workflow, NULL},
        {"jobs", 1, &jobs, NULL},         {"threads", 1, &threads, NULL},
        {"output", 1, &c.output, NULL},   {"runs-dir", 1, &c.runs_dir, NULL},
        {"store", 1, &c.store, NULL},     {"python", 1, &c.python, NULL},
        {"help", 0, NULL, &help},         {"quiet", 0, NULL, &c.quiet},
        {"verbose", 0, NULL, &c.verbose}, {"compiled", 0, NULL, &c.compiled},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos = 0;
    if (cli_parse("bench", argc, argv, flags, pos, 0, &npos))
        return 2;
    if (help) {
        bench_usage(stdout);
        return 0;
    }
    c.jobs = 1;
    if (jobs && parse_count(jobs, 1, 64, &c.jobs) != 0) {
        fprintf(stderr, "akg_cli bench: --jobs must be an integer from 1 to 64\n");
        return 2;
    }
    c.threads = akg_cpu_count();
    if (threads && parse_count(threads, 1, 1024, &c.threads) != 0) {
        fprintf(stderr, "akg_cli bench: --threads must be a positive integer\n");
        return 2;
    }
    char err[1024];
    if (akg_target_check(c.backend, c.dsl, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli bench: %s\n", err);
        return 2;
    }
    if (c.workflow && (!strcmp(c.workflow, "verifier_only"))) {
        fprintf(stderr, "akg_cli bench: --workflow verifier_only needs a kernel per operator; "
                        "bench generates them (use default, coder_only, ...)\n");
        return 2;
    }
    struct stat st;
    if (stat(c.suite, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "akg_cli bench: suite folder not found: %s\n", c.suite);
        return 2;
    }
    if (!c.python || !*c.python)
        c.python = getenv("AKG_PYTHON");
    if (!c.python || !*c.python)
        c.python = BENCH_PYTHON_DEFAULT;

    int rc = scan_dir(&c, "", 0);
    if (rc != AKG_OK) {
        fprintf(stderr, "akg_cli bench: cannot read the suite %s: %s\n", c.suite, akg_strerror(rc));
        free_suite(&c);
        return rc == AKG_ENOMEM ? 1 : 2;
    }
    for (size_t i = 0; i < c.nskips && !c.quiet; i++)
        fprintf(stderr, "[bench] skipping %s: %s\n", c.skips[i].path, c.skips[i].reason);
    if (c.nops == 0) {
        fprintf(stderr, "akg_cli bench: no reference in %s%s%s\n", c.suite,
                c.filter ? " matches --filter " : "", c.filter ? c.filter : "");
        free_suite(&c);
        return 2;
    }
    if (c.jobs > 1 && !c.quiet)
        fprintf(stderr,
                "[bench] --jobs %d: compilers of other jobs share the cores with each "
                "profile; timings are not comparable with a --jobs 1 run\n",
                c.jobs);

    time_t now = time(NULL);
    struct tm tm;
    char started_at[64];
    gmtime_r(&now, &tm);
    strftime(started_at, sizeof started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    c.t0_ms = akg_now_ms();
    c.loop = uv_default_loop();
    if (!c.quiet)
        fprintf(stderr, "[bench] %zu operators; reading the baseline environment (%d threads)\n",
                c.nops, c.threads);
    if (start_env(&c, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli bench: %s\n", err);
        uv_run(c.loop, UV_RUN_DEFAULT);
        free_suite(&c);
        return 1;
    }
    uv_signal_init(c.loop, &c.sigint);
    uv_signal_init(c.loop, &c.sigterm);
    c.sigint.data = c.sigterm.data = &c;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    c.signals_open = 1;
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);

    double elapsed_s = (akg_now_ms() - c.t0_ms) / 1000.0;
    int refused_before = c.env && c.refusal[0] && c.next == 0;
    if (!c.env && !c.cancelled) {
        fprintf(stderr,
                "akg_cli bench: cannot read the baseline environment from the harness "
                "(%s)\n",
                c.env_error[0] ? c.env_error : "no answer");
        c.exit_code = 1;
    } else if (refused_before) {
        print_env(stdout, c.env);
        printf("\nrefused: %s\n", c.refusal);
        fprintf(stderr, "akg_cli bench: refusing to measure speedups: %s\n", c.refusal);
        c.exit_code = 1;
    } else if (c.env) {
        print_report(&c, stdout);
        if (c.cancelled)
            c.exit_code = 130;
        else if (c.refusal[0]) {
            fprintf(stderr, "akg_cli bench: speedups withheld: %s\n", c.refusal);
            c.exit_code = 1;
        }
    } else {
        c.exit_code = 130;
    }
    fflush(stdout);
    if (c.output && c.env) {
        cJSON *root = report_json(&c, started_at, elapsed_s);
        char *text = root ? cJSON_Print(root) : NULL;
        if (!text || akg_write_file(c.output, text, strlen(text), err, sizeof err) != AKG_OK) {
            fprintf(stderr, "akg_cli bench: cannot write %s: %s\n", c.output,
                    text ? err : "out of memory");
            if (c.exit_code == 0)
                c.exit_code = 1;
        }
        free(text);
        cJSON_Delete(root);
    }
    cJSON_Delete(c.env);
    free_suite(&c);
    return c.exit_code;
}
