/*
 * bench.c: `akg_cli bench`, every reference of an operator suite through the engine, with a
 * table and a JSON record of pass rate and speedups (see bench/README.md).
 *
 * The run itself is the engine's (akg/suite.h: discovery, the baseline's judgement, one job per
 * reference, the totals and the record), so the language server can run a suite the same way.
 * What stays here is what a terminal needs: the flags, one progress line per operator on stderr
 * (every stage with --verbose), Ctrl-C as akg_suite_cancel, the environment, table and totals on
 * stdout, the record written to --output, and the exit status.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/engine.h"
#include "akg/harness.h" /* akg_cpu_count */
#include "akg/suite.h"
#include "cli.h"

#ifdef AKG_PYTHON_DEFAULT
#define BENCH_PYTHON_DEFAULT AKG_PYTHON_DEFAULT
#else
#define BENCH_PYTHON_DEFAULT "/usr/bin/python3"
#endif

#define BENCH_LINE_CHARS 160 /* a failure's detail in the table */
#define BENCH_MAX_FAMILIES 256

typedef struct {
    akg_suite_options opts;
    const char *output;
    int quiet, verbose;
    uv_loop_t *loop;
    akg_suite *suite;
    uv_signal_t sigint, sigterm;
    int signals_open, cancelling;
    int done;
    akg_suite_status status;
    int code;
    char message[2048];
    int argc;
    char **argv; /* the command line after "akg_cli", recorded with the results */
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
        "  --backend NAME     cpu (default) or cuda\n"
        "  --dsl NAME         cpp (default, cpu) or triton_cuda (cuda)\n"
        "  --arch NAME        the backend's default (x86_64, sm_90) unless given\n"
        "  --workflow NAME    workflow of every job (default: the DSL config's)\n"
        "  --design-check WHEN  every job's design check: first, on_mismatch or off\n"
        "                     (default: the DSL config's, as akg_cli op)\n"
        "  --seed N           every job's seed (default: each job draws its own)\n"
        "  --trials N         every job's verify trials (default: the DSL config's)\n"
        "  --profile-runs N   every job's timed runs (default: the config's run_times);\n"
        "                     fewer runs time the suite more coarsely\n"
        "  --min-speedup X    every job's speed goal, as akg_cli op's (0 keeps the first\n"
        "                     verified kernel)\n"
        "  --jobs N           jobs at once (default 1). Timings with N > 1 are NOT\n"
        "                     comparable: other jobs' compilers share the cores\n"
        "  --threads N        threads of kernel and baseline (default: all cores)\n"
        "  --devices N|LIST   harness workers (default 1): N on devices 0..N-1, or device\n"
        "                     indices with commas (0,0: two workers sharing device 0);\n"
        "                     a profile runs alone on its device, so timings stay\n"
        "                     comparable while verification overlaps\n"
        "  --output FILE      write everything as JSON\n"
        "  --runs-dir DIR     run folders as DIR/<family>_<name> (default: the config's log_dir)\n"
        "  --store FILE       SQLite store (default $AKG_STORE or ~/.akg/akg.db)\n"
        "  --python PATH      harness interpreter (default $AKG_PYTHON or %s)\n"
        "  --scale N          multiply each reference's batch constant by N (1: as\n"
        "                     written); default: the suite's suite.yaml size_scale for\n"
        "                     the backend (bench/ops: 8 on cuda), scaled copies written\n"
        "                     under --runs-dir/scaled-references\n"
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

/* ---------- formatting ---------- */

static const char *jstr(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
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

/* ---------- the table ---------- */

static void print_rows(const bench_ctx *c, FILE *f, const akg_suite_op *ops, size_t nops,
                       int speedups)
{
    fprintf(f, "\n%-12s %-28s %-10s %-20s %10s %10s %8s", "family", "op", "status", "error",
            "ref ms", "kernel ms", "speedup");
    if (c->opts.compiled)
        fprintf(f, " %11s %10s", "compiled ms", "vs compile");
    fputc('\n', f);
    for (size_t i = 0; i < nops; i++) {
        const akg_suite_op *op = &ops[i];
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
        if (c->opts.compiled)
            fprintf(f, " %11s %10s", cm, cx);
        fputc('\n', f);
    }
}

/* Failures, references torch.compile could not compile, and skipped files, each listed apart. */
static void print_lists(const bench_ctx *c, FILE *f, const akg_suite_op *ops, size_t nops)
{
    char line[BENCH_LINE_CHARS + 8];
    size_t nfail = 0, ncompile_failed = 0, nskips = 0;
    for (size_t i = 0; i < nops; i++) {
        nfail += akg_suite_op_failed(&ops[i]);
        ncompile_failed += c->opts.compiled && ops[i].compiled_error != NULL;
    }
    if (nfail) {
        fprintf(f, "\nfailures (%zu):\n", nfail);
        for (size_t i = 0; i < nops; i++) {
            const akg_suite_op *op = &ops[i];
            if (akg_suite_op_failed(op))
                fprintf(f, "  %s/%s  %s  %s: %s\n", op->family, op->name, op->status,
                        op->error_class ? op->error_class : "-",
                        akg_suite_one_line(op->error_detail, line, sizeof line, BENCH_LINE_CHARS));
        }
    }
    if (ncompile_failed) {
        fprintf(f,
                "\ntorch.compile failed on %zu references (not fast against it, not in its "
                "geomean):\n",
                ncompile_failed);
        for (size_t i = 0; i < nops; i++)
            if (ops[i].compiled_error)
                fprintf(f, "  %s/%s  %s\n", ops[i].family, ops[i].name,
                        akg_suite_one_line(ops[i].compiled_error, line, sizeof line,
                                           BENCH_LINE_CHARS));
    }
    const akg_suite_skip *skips = akg_suite_skips(c->suite, &nskips);
    if (nskips) {
        fprintf(f, "\nskipped (%zu, not counted):\n", nskips);
        for (size_t i = 0; i < nskips; i++)
            fprintf(f, "  %s: %s\n", skips[i].path, skips[i].reason);
    }
}

static void print_totals(const bench_ctx *c, FILE *f, const akg_suite_op *ops, size_t nops,
                         int speedups)
{
    akg_suite_totals all = akg_suite_totals_of(ops, nops, NULL, AKG_SUITE_VS_EAGER);
    char p[32], f1[32], f15[32], g[32];
    fmt_pct(p, sizeof p, all.pass_rate);
    fmt_pct(f1, sizeof f1, all.fast_1);
    fmt_pct(f15, sizeof f15, all.fast_15);
    fmt_x(g, sizeof g, all.geomean_speedup);
    if (speedups)
        fprintf(f,
                "\ntotals: %zu ops, %zu pass (%s), fast_1 %s (%zu), fast_1.5 %s (%zu), geomean "
                "speedup %s over %zu passing\n",
                all.ops, all.passed, p, f1, all.fast_1_count, f15, all.fast_15_count, g,
                all.geomean_over);
    else
        fprintf(f, "\ntotals: %zu ops, %zu pass (%s); speedups withheld: %s\n", all.ops,
                all.passed, p, akg_suite_refusal(c->suite));
    if (c->opts.compiled && speedups) {
        akg_suite_totals ct = akg_suite_totals_of(ops, nops, NULL, AKG_SUITE_VS_COMPILED);
        fmt_pct(f1, sizeof f1, ct.fast_1);
        fmt_pct(f15, sizeof f15, ct.fast_15);
        fmt_x(g, sizeof g, ct.geomean_speedup);
        const char *isa = NULL;
        size_t scalar = 0;
        for (size_t i = 0; i < nops; i++) {
            const char *s = ops[i].compiled_isa;
            if (s && !isa)
                isa = s;
            scalar += s && !strcmp(s, "none");
        }
        fprintf(f,
                "against torch.compile (inductor's SIMD: %s): fast_1 %s (%zu), fast_1.5 %s "
                "(%zu), geomean speedup %s over %zu\n",
                isa ? isa : "?", f1, ct.fast_1_count, f15, ct.fast_15_count, g, ct.geomean_over);
        if (scalar)
            fprintf(f,
                    "warning: inductor wrote scalar code for %zu references (its SIMD probe "
                    "failed): the torch.compile baseline is below its best there\n",
                    scalar);
    }
    if (all.not_run)
        fprintf(f, "not run: %zu (interrupted)\n", all.not_run);
    if (c->opts.jobs > 1)
        fprintf(f, "note: --jobs %d: timings are not comparable with a --jobs 1 run\n",
                c->opts.jobs);
}

static void print_families(const bench_ctx *c, FILE *f, const akg_suite_op *ops, size_t nops,
                           int speedups)
{
    const char *fams[BENCH_MAX_FAMILIES];
    size_t nf = akg_suite_families(ops, nops, fams, BENCH_MAX_FAMILIES);
    char p[32], f1[32], f15[32], g[32];
    fprintf(f, "\n%-12s %5s %5s %8s %8s %9s %9s", "family", "ops", "pass", "pass%", "fast_1",
            "fast_1.5", "geomean");
    if (c->opts.compiled)
        fprintf(f, " %11s %12s", "fast_1 comp", "geomean comp");
    fputc('\n', f);
    for (size_t k = 0; k < nf; k++) {
        akg_suite_totals t = akg_suite_totals_of(ops, nops, fams[k], AKG_SUITE_VS_EAGER);
        fmt_pct(p, sizeof p, t.pass_rate);
        fmt_pct(f1, sizeof f1, speedups ? t.fast_1 : NAN);
        fmt_pct(f15, sizeof f15, speedups ? t.fast_15 : NAN);
        fmt_x(g, sizeof g, speedups ? t.geomean_speedup : NAN);
        fprintf(f, "%-12s %5zu %5zu %8s %8s %9s %9s", fams[k], t.ops, t.passed, p, f1, f15, g);
        if (c->opts.compiled) {
            akg_suite_totals ct = akg_suite_totals_of(ops, nops, fams[k], AKG_SUITE_VS_COMPILED);
            fmt_pct(f1, sizeof f1, speedups ? ct.fast_1 : NAN);
            fmt_x(g, sizeof g, speedups ? ct.geomean_speedup : NAN);
            fprintf(f, " %11s %12s", f1, g);
        }
        fputc('\n', f);
    }
}

static void print_report(const bench_ctx *c, FILE *f)
{
    size_t nops = 0;
    const akg_suite_op *ops = akg_suite_ops(c->suite, &nops);
    int speedups = akg_suite_refusal(c->suite) == NULL;
    if (akg_suite_environment(c->suite))
        print_env(f, akg_suite_environment(c->suite));
    print_rows(c, f, ops, nops, speedups);
    print_lists(c, f, ops, nops);
    print_totals(c, f, ops, nops, speedups);
    print_families(c, f, ops, nops, speedups);
}

/* ---------- progress ---------- */

static void print_discovered(const bench_ctx *c, const akg_suite_event *ev)
{
    size_t nskips = 0;
    const akg_suite_skip *skips = akg_suite_skips(c->suite, &nskips);
    for (size_t i = 0; i < nskips && !c->quiet; i++)
        fprintf(stderr, "[bench] skipping %s: %s\n", skips[i].path, skips[i].reason);
    if (ev->count == 0 || c->quiet)
        return;
    if (c->opts.jobs > 1)
        fprintf(stderr,
                "[bench] --jobs %d: compilers of other jobs share the cores with each "
                "profile; timings are not comparable with a --jobs 1 run\n",
                c->opts.jobs);
    fprintf(stderr, "[bench] %zu operators; reading the baseline environment (%d threads)\n",
            ev->count, c->opts.threads);
}

static void print_op_done(const akg_suite_event *ev)
{
    const akg_suite_op *op = ev->op;
    size_t i = ev->index + 1;
    char x[32], r[32], k[32], line[BENCH_LINE_CHARS + 8];
    if (!op->job_started && !strcmp(op->status, "not_run"))
        return; /* cancelled before its job started */
    if (!op->job_started) {
        fprintf(stderr, "[bench %zu/%zu] %s/%s: error: %s\n", i, ev->count, op->family, op->name,
                op->error_detail ? op->error_detail : "-");
    } else if (!strcmp(op->status, "pass")) {
        fmt_x(x, sizeof x, op->speedup);
        fmt_ms(r, sizeof r, op->ref_ms);
        fmt_ms(k, sizeof k, op->kernel_ms);
        fprintf(stderr, "[bench %zu/%zu] %s/%s: pass %s (ref %s ms, kernel %s ms) in %.1f s\n", i,
                ev->count, op->family, op->name, x, r, k, op->elapsed_s);
    } else {
        fprintf(stderr, "[bench %zu/%zu] %s/%s: %s %s: %s (%.1f s)\n", i, ev->count, op->family,
                op->name, op->status, op->error_class ? op->error_class : "-",
                akg_suite_one_line(op->error_detail, line, sizeof line, BENCH_LINE_CHARS),
                op->elapsed_s);
    }
    fflush(stderr);
}

static void close_signals(bench_ctx *c)
{
    if (c->signals_open) {
        uv_close((uv_handle_t *)&c->sigint, NULL);
        uv_close((uv_handle_t *)&c->sigterm, NULL);
        c->signals_open = 0;
    }
}

static void on_suite_event(const akg_suite_event *ev, void *user)
{
    bench_ctx *c = user;
    const akg_event *je = ev->job_event;
    switch (ev->kind) {
    case AKG_SUITE_EVENT_DISCOVERED:
        print_discovered(c, ev);
        break;
    case AKG_SUITE_EVENT_ENVIRONMENT:
        if (!c->quiet) {
            print_env(stderr, ev->environment);
            fflush(stderr);
        }
        break;
    case AKG_SUITE_EVENT_OP_STARTED:
        if (!c->quiet)
            fprintf(stderr, "[bench %zu/%zu] %s/%s: started\n", ev->index + 1, ev->count,
                    ev->op->family, ev->op->name);
        break;
    case AKG_SUITE_EVENT_OP_PROGRESS:
        if (c->verbose && !c->quiet && je->message &&
            (je->kind == AKG_EVENT_STAGE || je->kind == AKG_EVENT_VERIFY ||
             je->kind == AKG_EVENT_PROFILE || je->kind == AKG_EVENT_LOG))
            fprintf(stderr, "[bench %zu/%zu] %s/%s: %s\n", ev->index + 1, ev->count,
                    ev->op->family, ev->op->name, je->message);
        break;
    case AKG_SUITE_EVENT_OP_DONE:
        if (!c->quiet)
            print_op_done(ev);
        break;
    case AKG_SUITE_EVENT_DONE:
        c->done = 1;
        c->status = ev->status;
        c->code = ev->code;
        snprintf(c->message, sizeof c->message, "%s", ev->message ? ev->message : "");
        close_signals(c);
        break;
    }
}

static void on_signal(uv_signal_t *s, int signum)
{
    bench_ctx *c = s->data;
    (void)signum;
    if (c->cancelling)
        return;
    c->cancelling = 1;
    fprintf(stderr, "[bench] cancelling...\n");
    akg_suite_cancel(c->suite);
}

/* ---------- the command ---------- */

/* The exit status, after the report; prints what went wrong on stderr. */
static int conclude(bench_ctx *c)
{
    const char *refusal = akg_suite_refusal(c->suite);
    switch (c->status) {
    case AKG_SUITE_UNREAD:
        fprintf(stderr, "akg_cli bench: %s\n", c->message);
        return c->code == AKG_ENOMEM ? 1 : 2;
    case AKG_SUITE_NO_BASELINE:
        fprintf(stderr, "akg_cli bench: %s\n", c->message);
        return 1;
    case AKG_SUITE_REFUSED:
        print_env(stdout, akg_suite_environment(c->suite));
        printf("\nrefused: %s\n", refusal);
        fprintf(stderr, "akg_cli bench: refusing to measure speedups: %s\n", refusal);
        return 1;
    case AKG_SUITE_CANCELLED:
        if (akg_suite_environment(c->suite))
            print_report(c, stdout);
        return 130;
    case AKG_SUITE_ERROR:
        fprintf(stderr, "akg_cli bench: %s\n", c->message);
        print_report(c, stdout);
        return 1;
    case AKG_SUITE_WITHHELD:
        print_report(c, stdout);
        fprintf(stderr, "akg_cli bench: speedups withheld: %s\n", refusal);
        return 1;
    case AKG_SUITE_COMPLETED:
        print_report(c, stdout);
        return 0;
    }
    return 1;
}

/* "akg_cli ARGS..." with each argument quoted where a POSIX shell would need it (malloc'd). */
static char *shell_command(int argc, char **argv)
{
    static const char plain_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789-_./=:,+@%";
    size_t cap = 16;
    for (int i = 0; i < argc; i++)
        cap += 4 * strlen(argv[i]) + 4;
    char *cmd = malloc(cap);
    if (!cmd)
        return NULL;
    size_t n = (size_t)snprintf(cmd, cap, "akg_cli");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = a[0] != '\0' && strspn(a, plain_chars) == strlen(a);
        cmd[n++] = ' ';
        if (!plain)
            cmd[n++] = '\'';
        for (const char *p = a; *p; p++) {
            if (!plain && *p == '\'') {
                memcpy(cmd + n, "'\\''", 4); /* close, an escaped quote, reopen */
                n += 4;
            } else {
                cmd[n++] = *p;
            }
        }
        if (!plain)
            cmd[n++] = '\'';
    }
    cmd[n] = '\0';
    return cmd;
}

static int write_record(bench_ctx *c)
{
    char err[1024];
    cJSON *root = akg_suite_record(c->suite);
    char *cmd = root ? shell_command(c->argc, c->argv) : NULL;
    if (cmd)
        cJSON_AddStringToObject(root, "command", cmd);
    free(cmd);
    char *text = root ? cJSON_Print(root) : NULL;
    int rc = 0;
    if (!text || akg_write_file(c->output, text, strlen(text), err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli bench: cannot write %s: %s\n", c->output,
                text ? err : "out of memory");
        rc = 1;
    }
    free(text);
    cJSON_Delete(root);
    return rc;
}

int cli_bench(int argc, char **argv)
{
    bench_ctx c;
    memset(&c, 0, sizeof c);
    const char *jobs = NULL, *threads = NULL, *scale = NULL, *devices = NULL, *seed = NULL;
    const char *trials = NULL, *profile_runs = NULL, *min_speedup = NULL;
    int device_ids[AKG_ENGINE_MAX_DEVICES];
    int help = 0;
    akg_suite_options *o = &c.opts;
    c.argc = argc;
    c.argv = argv;
    o->suite_dir = "bench/ops";
    o->backend = "cpu";
    o->dsl = "cpp";
    cli_flag flags[] = {
        {"suite", 1, &o->suite_dir, NULL}, {"filter", 1, &o->filter, NULL},
        {"backend", 1, &o->backend, NULL}, {"dsl", 1, &o->dsl, NULL},
        {"arch", 1, &o->arch, NULL},       {"workflow", 1, &o->workflow, NULL},
        {"jobs", 1, &jobs, NULL},          {"threads", 1, &threads, NULL},
        {"output", 1, &c.output, NULL},    {"runs-dir", 1, &o->runs_dir, NULL},
        {"store", 1, &o->store_path, NULL}, {"python", 1, &o->python, NULL},
        {"help", 0, NULL, &help},          {"quiet", 0, NULL, &c.quiet},
        {"verbose", 0, NULL, &c.verbose},  {"compiled", 0, NULL, &o->compiled},
        {"scale", 1, &scale, NULL},        {"devices", 1, &devices, NULL},
        {"design-check", 1, &o->design_check, NULL}, {"seed", 1, &seed, NULL},
        {"trials", 1, &trials, NULL},      {"profile-runs", 1, &profile_runs, NULL},
        {"min-speedup", 1, &min_speedup, NULL},
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
    o->jobs = 1;
    if (jobs && parse_count(jobs, 1, AKG_SUITE_MAX_JOBS, &o->jobs) != 0) {
        fprintf(stderr, "akg_cli bench: --jobs must be an integer from 1 to %d\n",
                AKG_SUITE_MAX_JOBS);
        return 2;
    }
    if (scale && parse_count(scale, 1, 1024, &o->scale) != 0) {
        fprintf(stderr, "akg_cli bench: --scale must be an integer from 1 to 1024 (1: the "
                        "references' own sizes)\n");
        return 2;
    }
    if (devices) {
        char why[256];
        if (akg_parse_devices(devices, device_ids, &o->devices, why, sizeof why) != AKG_OK) {
            fprintf(stderr, "akg_cli bench: %s\n", why);
            return 2;
        }
        o->device_ids = device_ids;
    }
    if (seed) {
        char *end = NULL;
        errno = 0;
        o->seed = strtoull(seed, &end, 10);
        if (end == seed || *end || errno || seed[0] == '-' || o->seed == 0) {
            fprintf(stderr, "akg_cli bench: --seed must be a whole number from 1 to %llu\n",
                    (unsigned long long)ULLONG_MAX);
            return 2;
        }
    }
    if (trials && parse_count(trials, 1, 1000, &o->trials) != 0) {
        fprintf(stderr, "akg_cli bench: --trials must be an integer from 1 to 1000\n");
        return 2;
    }
    if (profile_runs && parse_count(profile_runs, 1, AKG_PROFILE_RUNS_MAX, &o->profile_runs)) {
        fprintf(stderr, "akg_cli bench: --profile-runs must be an integer from 1 to %d\n",
                AKG_PROFILE_RUNS_MAX);
        return 2;
    }
    if (min_speedup) {
        char *end = NULL;
        o->min_speedup = strtod(min_speedup, &end);
        if (end == min_speedup || *end || !(o->min_speedup >= 0)) {
            fprintf(stderr, "akg_cli bench: --min-speedup %s: expected a number of at least 0 (0 "
                            "keeps the first verified kernel)\n",
                    min_speedup);
            return 2;
        }
        o->min_speedup_set = 1;
    }
    o->threads = akg_cpu_count();
    if (threads && parse_count(threads, 1, AKG_SUITE_MAX_THREADS, &o->threads) != 0) {
        fprintf(stderr, "akg_cli bench: --threads must be a positive integer\n");
        return 2;
    }

    char err[1024];
    c.loop = uv_default_loop();
    int rc = akg_suite_start(c.loop, o, on_suite_event, &c, &c.suite, err, sizeof err);
    if (rc != AKG_OK) {
        fprintf(stderr, "akg_cli bench: %s\n", err);
        return rc == AKG_ENOMEM ? 1 : 2;
    }
    uv_signal_init(c.loop, &c.sigint);
    uv_signal_init(c.loop, &c.sigterm);
    c.sigint.data = c.sigterm.data = &c;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    c.signals_open = 1;
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);

    int exit_code = c.done ? conclude(&c) : 1;
    fflush(stdout);
    /* The record is written whenever the baseline was described, refused runs included. */
    if (c.output && akg_suite_environment(c.suite) && write_record(&c) && exit_code == 0)
        exit_code = 1;
    akg_suite_free(c.suite);
    return exit_code;
}
