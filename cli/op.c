/*
 * op.c: `akg_cli op`, one workflow on one reference, with progress on stderr
 * and a summary on stdout. Ctrl-C cancels the job (children are killed) and
 * exits 130 once the engine has closed. With --sketch FILE the user's sketch
 * is the design: it is checked here first (compiler-style diagnostics, exit
 * 1) so that nothing starts for a sketch that cannot be lowered. The summary
 * says how the candidates were isolated (the harness worker's sandbox line)
 * and any flags the profile raised (a speedup over 10x, beyond the roofline).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/engine.h"
#include "akg/provider.h"
#include "akg/search_cache.h"
#include "akg/sketch_file.h"
#include "cli.h"
#include "interactive.h"

typedef struct {
    uv_loop_t *loop;
    akg_engine *engine;
    akg_job *job;
    uv_signal_t sigint, sigterm;
    int exit_code;
    int quiet;
    int json;
} op_ctx;

static void op_usage(FILE *f)
{
    char providers[256], targets[256];
    akg_provider_names(providers, sizeof providers);
    akg_backend_names(targets, sizeof targets);
    fprintf(f,
            "usage: akg_cli op --framework torch --backend cpu --arch x86_64 --dsl cpp [options] "
            "REFERENCE.py\n"
            "\n"
            "Turns a PyTorch reference in KernelBench form (class Model, get_inputs,\n"
            "get_init_inputs, optionally get_inputs_dyn_list) into a kernel, verifies it on\n"
            "fresh random inputs and profiles it against PyTorch.\n"
            "\n"
            "options:\n"
            "  --framework NAME       torch (default)\n"
            "  --backend NAME         cpu (default) or cuda: the device (this build: %s)\n"
            "  --arch NAME            the backend's architecture: x86_64 (default) or\n"
            "                         aarch64 on cpu; sm_90 (default), sm_90a, sm_80 ... on cuda\n"
            "  --dsl NAME             cpp (default, cpu) or triton_cuda (cuda)\n"
            "  --workflow NAME        default | coder_only | kernelgen_only | verifier_only |\n"
            "                         design_only | evolve | adaptive_search (default: the DSL\n"
            "                         config's default_workflow). evolve and adaptive_search\n"
            "                         search the design's tune() values from the default\n"
            "                         design (candidate 0) and keep the fastest verified one\n"
            "  --max-rounds N         evolve: rounds (default: config's evolve.max_rounds, 3)\n"
            "  --parallel-num N       evolve: candidates a round (evolve.parallel_num, 4)\n"
            "  --num-islands N        evolve: islands (evolve.num_islands, 2)\n"
            "  --max-total-tasks N    adaptive_search: candidates in all, the default design\n"
            "                         included (adaptive_search.max_total_tasks, 12)\n"
            "  --kernel FILE          verifier_only: the model_new.py to verify and profile\n"
            "  --sketch FILE          use this sketch as the design (the Designer is skipped):\n"
            "                         it must check and have a complete bind: section; a\n"
            "                         design the reference interpreter finds wrong is\n"
            "                         reported as its design error\n"
            "  --design-check WHEN    first: run the design in the reference interpreter\n"
            "                         before any code (default); on_mismatch: only to tell a\n"
            "                         wrong design from a wrong kernel; off\n"
            "  --provider NAME        who designs and writes code: %s (default builtin,\n"
            "                         offline)\n"
            "  --devices N|LIST       harness workers of the backend's device kind: N, one\n"
            "                         per device 0..N-1 (default 1), or device indices\n"
            "                         with commas (0,1; 0,0: two workers sharing device\n"
            "                         0; a profile runs alone on its device)\n"
            "  --threads N            CPU threads for kernel and baseline (default: all cores)\n"
            "  --verify-timeout S     seconds each harness request and build may take\n"
            "  --max-step N           attempts of the Conductor loop (default from config)\n"
            "  --trials N             verification trials (default 5)\n"
            "  --min-speedup X        a verified kernel below X times the reference's speed\n"
            "                         sends the remaining attempts to other designs; the\n"
            "                         fastest verified one is kept; 0 keeps the first\n"
            "                         verified kernel (default: config's\n"
            "                         profile_settings.min_speedup, else 1.0)\n"
            "  --profile-runs N       timed runs of the profile, 1 to %d; the warm-up is\n"
            "                         the config's at most N (default: config's\n"
            "                         profile_settings.run_times and warmup_times, 50 and 5).\n"
            "                         A few runs time a kernel briefly, for checks that need a\n"
            "                         verified kernel, not its speed (then --min-speedup 0)\n"
            "  --seed N               base seed (default: drawn and recorded)\n"
            "  --output DIR           run folder (default akg_output/<op>_<dsl>_<time>_<id>)\n"
            "  --sandbox MODE         how each candidate's process is isolated: auto (bubblewrap\n"
            "                         when installed, else an error), bwrap, or none (no\n"
            "                         operating-system sandbox: only on your say-so); default:\n"
            "                         the DSL config's sandbox.mode, else auto\n"
            "  --python PATH          harness interpreter (default $AKG_PYTHON or /usr/bin/python3)\n"
            "  --store FILE           SQLite store (default $AKG_STORE or ~/.akg/akg.db)\n"
            "  --no-cache             run the pipeline even when the store holds a verified\n"
            "                         kernel of this task (same reference text, backend, arch,\n"
            "                         DSL, judge): by default the default workflow answers\n"
            "                         from the store at once (report.json: \"cached\": true)\n"
            "  --json                 print report.json on stdout instead of the summary\n"
            "  --quiet                no progress on stderr\n"
            "\n"
            "Without REFERENCE.py, at a terminal, it starts an interactive session: paste a\n"
            "KernelBench reference or a model snippet (end it with a blank line or Ctrl-D), or\n"
            "type a request such as \"softmax over the last dim of a 512x4096 float32 tensor\";\n"
            "`help` there lists what requests understand, Ctrl-D leaves.\n"
            "\n"
            "exit status: 0 a kernel passed (or was written, for kernelgen_only/design_only),\n"
            "also one slower than the reference (the summary and report.json's verdict say\n"
            "so), 1 no kernel passed (or the sketch does not check), 2 usage error.\n",
            targets, providers, AKG_PROFILE_RUNS_MAX);
}

static const char *num_str(const cJSON *o, const char *key, char *buf, size_t n, const char *fmt)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    if (!cJSON_IsNumber(v))
        return "-";
    snprintf(buf, n, fmt, v->valuedouble);
    return buf;
}

/* One line for the candidates when the Conductor tried more than one verified kernel: each
 * attempt's speedup, and the one kept. */
static void print_candidates(const cJSON *r)
{
    const cJSON *cands = cJSON_GetObjectItem(r, "candidates"), *c;
    int timed = 0;
    cJSON_ArrayForEach(c, cands) timed += cJSON_IsNumber(cJSON_GetObjectItem(c, "speedup"));
    if (timed < 2)
        return;
    printf("tried:   ");
    cJSON_ArrayForEach(c, cands)
    {
        const cJSON *step = cJSON_GetObjectItem(c, "step"), *sp = cJSON_GetObjectItem(c, "speedup");
        if (cJSON_IsNumber(sp))
            printf(" attempt %d %.2fx%s%s;", step ? step->valueint : 0, sp->valuedouble,
                   sp->valuedouble < 1.0 ? " (slower)" : "",
                   cJSON_IsTrue(cJSON_GetObjectItem(c, "kept")) ? " kept" : "");
        else
            printf(" attempt %d %s;", step ? step->valueint : 0,
                   cJSON_GetStringValue(cJSON_GetObjectItem(c, "error_class"))
                       ? cJSON_GetStringValue(cJSON_GetObjectItem(c, "error_class"))
                       : "failed");
    }
    const char *end = cJSON_GetStringValue(cJSON_GetObjectItem(r, "search_end"));
    if (end)
        printf(" %s", end);
    printf("\n");
}

/* How the candidates were isolated, in the harness worker's words: "sandbox:  bwrap (user, pid,
 * net, mount namespaces; ...)", the mode named once whether or not the worker's detail begins
 * with it. Nothing where the worker did not say (an older worker). */
static void print_sandbox(const cJSON *r)
{
    const cJSON *sb = cJSON_GetObjectItem(r, "sandbox");
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(sb, "mode"));
    if (!mode)
        return;
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(sb, "detail"));
    if ((!detail || !*detail) && strcmp(mode, "none") == 0)
        detail = "no operating-system sandbox";
    size_t n = strlen(mode);
    if (!detail || !*detail)
        printf("sandbox:  %s\n", mode);
    else if (strncmp(detail, mode, n) == 0 && (detail[n] == ' ' || detail[n] == ':'))
        printf("sandbox:  %s\n", detail);
    else
        printf("sandbox:  %s (%s)\n", mode, detail);
}

/* The profile's flags on the result line: " [flagged: speedup_over_10x]". */
static void print_flags(const cJSON *flags)
{
    const cJSON *f;
    int n = 0;
    cJSON_ArrayForEach(f, flags)
    {
        const char *name = cJSON_GetStringValue(f);
        if (name)
            printf("%s%s", n++ ? ", " : " [flagged: ", name);
    }
    if (n)
        printf("]");
}

void cli_op_print_summary(const akg_event *ev, int json)
{
    const cJSON *r = ev->data;
    if (json) {
        char *t = cJSON_Print(r);
        if (t) {
            printf("%s\n", t);
            free(t);
        }
        return;
    }
    const cJSON *paths = cJSON_GetObjectItem(r, "paths");
    const cJSON *corr = cJSON_GetObjectItem(r, "correctness");
    const cJSON *perf = cJSON_GetObjectItem(r, "perf");
    const cJSON *err = cJSON_GetObjectItem(r, "error");
    printf("status:   %s\n", akg_job_status_name(ev->status));
    printf("op:       %s (%s/%s, %s workflow, %s provider)\n",
           cJSON_GetStringValue(cJSON_GetObjectItem(r, "op")),
           cJSON_GetStringValue(cJSON_GetObjectItem(r, "backend")),
           cJSON_GetStringValue(cJSON_GetObjectItem(r, "dsl")),
           cJSON_GetStringValue(cJSON_GetObjectItem(r, "workflow")),
           cJSON_GetStringValue(cJSON_GetObjectItem(r, "provider")));
    const cJSON *design = cJSON_GetObjectItem(r, "design");
    const char *source = cJSON_GetStringValue(cJSON_GetObjectItem(design, "source"));
    if (source && strcmp(source, "user") == 0)
        printf("design:   %s (your sketch; the Designer was skipped)\n",
               cJSON_GetStringValue(cJSON_GetObjectItem(design, "path")));
    static const char *keys[] = {"sketch", "kernel", "model_new", "report"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(paths, keys[i]));
        if (p)
            printf("%-9s %s\n", keys[i], p);
    }
    print_sandbox(r);
    char b1[64], b2[64], b3[64];
    if (corr)
        printf("verified: %s trials, max abs err %s, max rel err %s\n",
               num_str(corr, "trials", b1, sizeof b1, "%.0f"),
               num_str(corr, "max_abs_err", b2, sizeof b2, "%.3g"),
               num_str(corr, "max_rel_err", b3, sizeof b3, "%.3g"));
    const char *pverdict = cJSON_GetStringValue(cJSON_GetObjectItem(perf, "verdict"));
    if (perf && pverdict && !strcmp(pverdict, "interpreted")) {
        printf("times:    reference %s ms, kernel %s ms (Triton's interpreter on the CPU)\n",
               num_str(perf, "ref_ms", b2, sizeof b2, "%.4f"),
               num_str(perf, "kernel_ms", b3, sizeof b3, "%.4f"));
    } else if (perf) {
        printf("speedup:  %sx (reference %s ms, kernel %s ms)",
               num_str(perf, "speedup", b1, sizeof b1, "%.2f"),
               num_str(perf, "ref_ms", b2, sizeof b2, "%.4f"),
               num_str(perf, "kernel_ms", b3, sizeof b3, "%.4f"));
        print_flags(cJSON_GetObjectItem(perf, "flags"));
        printf("\n");
    }
    print_candidates(r);
    const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItem(r, "verdict_detail"));
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(r, "verdict"));
    if (verdict && kind && !strcmp(kind, "interpreted"))
        printf("NOT TIMED: %s\n", verdict);
    if (verdict && cJSON_IsTrue(cJSON_GetObjectItem(perf, "slower_than_reference"))) {
        const cJSON *sp = cJSON_GetObjectItem(perf, "speedup");
        double s = cJSON_IsNumber(sp) ? sp->valuedouble : 0;
        printf("SLOWER:   the kernel is verified but slower than the reference: it takes %.2fx "
               "the reference's time (%.2fx speedup); it is not a drop-in speedup\n",
               s > 0 ? 1.0 / s : 0, s);
    }
    if (err)
        printf("error:    %s: %s\n", cJSON_GetStringValue(cJSON_GetObjectItem(err, "class")),
               cJSON_GetStringValue(cJSON_GetObjectItem(err, "detail")));
}

/* One line on stderr for each progress event (not DONE). */
void cli_op_print_progress(const akg_event *ev)
{
    switch (ev->kind) {
    case AKG_EVENT_STAGE:
        fprintf(stderr, "[akg] %-7s %s\n", ev->stage, ev->message);
        break;
    case AKG_EVENT_SKETCH:
        fprintf(stderr, "[akg] sketch  written to %s\n", ev->path);
        break;
    case AKG_EVENT_KERNEL:
        fprintf(stderr, "[akg] kernel  written to %s\n", ev->path);
        break;
    case AKG_EVENT_VERIFY:
    case AKG_EVENT_PROFILE:
        fprintf(stderr, "[akg] %-7s %s\n", ev->stage, ev->message);
        break;
    case AKG_EVENT_LOG:
        fprintf(stderr, "[akg] %s\n", ev->message);
        break;
    case AKG_EVENT_CANDIDATE:
        fprintf(stderr, "[akg] %-7s %s\n", ev->stage ? ev->stage : "search", ev->message);
        break;
    default:
        break;
    }
    fflush(stderr);
}

static void on_engine_closed(void *user)
{
    op_ctx *c = user;
    uv_close((uv_handle_t *)&c->sigint, NULL);
    uv_close((uv_handle_t *)&c->sigterm, NULL);
}

static void on_event(const akg_event *ev, void *user)
{
    op_ctx *c = user;
    if (ev->kind == AKG_EVENT_DONE) {
        cli_op_print_summary(ev, c->json);
        switch (ev->status) {
        case AKG_JOB_PASS:
        case AKG_JOB_UNVERIFIED: c->exit_code = 0; break;
        case AKG_JOB_CANCELLED: c->exit_code = 130; break;
        default: c->exit_code = 1;
        }
        c->job = NULL;
        akg_engine_close(c->engine, on_engine_closed, c);
        return;
    }
    if (c->quiet)
        return;
    cli_op_print_progress(ev);
}

static void on_signal(uv_signal_t *s, int signum)
{
    op_ctx *c = s->data;
    (void)signum;
    if (c->job) {
        fprintf(stderr, "[akg] cancelling...\n");
        akg_job_cancel(c->job);
    }
}

int cli_op(int argc, char **argv)
{
    const char *framework = "torch", *backend = "cpu", *arch = NULL, *dsl = "cpp";
    const char *workflow = NULL, *kernel = NULL, *provider = "builtin", *devices = NULL;
    const char *threads = NULL, *verify_timeout = NULL, *output = NULL, *max_step = NULL;
    const char *trials = NULL, *seed = NULL, *python = NULL, *store = NULL, *sketch = NULL;
    const char *design_check = NULL, *min_speedup = NULL, *sandbox = NULL, *profile_runs = NULL;
    const char *max_rounds = NULL, *parallel_num = NULL, *num_islands = NULL;
    const char *max_total_tasks = NULL;
    int help = 0, quiet = 0, json = 0, no_cache = 0;
    cli_flag flags[] = {
        {"framework", 1, &framework, NULL}, {"backend", 1, &backend, NULL},
        {"arch", 1, &arch, NULL},           {"dsl", 1, &dsl, NULL},
        {"workflow", 1, &workflow, NULL},   {"kernel", 1, &kernel, NULL},
        {"provider", 1, &provider, NULL},   {"devices", 1, &devices, NULL},
        {"threads", 1, &threads, NULL},     {"verify-timeout", 1, &verify_timeout, NULL},
        {"output", 1, &output, NULL},       {"max-step", 1, &max_step, NULL},
        {"trials", 1, &trials, NULL},       {"seed", 1, &seed, NULL},
        {"python", 1, &python, NULL},       {"store", 1, &store, NULL},
        {"sketch", 1, &sketch, NULL},       {"design-check", 1, &design_check, NULL},
        {"min-speedup", 1, &min_speedup, NULL}, {"sandbox", 1, &sandbox, NULL},
        {"profile-runs", 1, &profile_runs, NULL},
        {"max-rounds", 1, &max_rounds, NULL}, {"parallel-num", 1, &parallel_num, NULL},
        {"num-islands", 1, &num_islands, NULL}, {"max-total-tasks", 1, &max_total_tasks, NULL},
        {"help", 0, NULL, &help},           {"quiet", 0, NULL, &quiet},
        {"json", 0, NULL, &json},           {"no-cache", 0, NULL, &no_cache},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[4];
    int npos = 0;
    if (cli_parse("op", argc, argv, flags, pos, 1, &npos))
        return 2;
    if (help) {
        op_usage(stdout);
        return 0;
    }
    if (!akg_provider_find(provider)) {
        char names[256];
        akg_provider_names(names, sizeof names);
        int several = akg_provider_list()[0] && akg_provider_list()[1];
        fprintf(stderr, "akg_cli op: unknown provider '%s'; %s %s\n", provider,
                several ? "the providers in this build are" : "the only provider in this build is",
                names);
        return 2;
    }
    /* No reference and a person at a terminal: the interactive session (interactive.c). */
    int interactive = npos == 0 && isatty(STDIN_FILENO);
    if (npos != 1 && !interactive) {
        fprintf(stderr, "akg_cli op: a REFERENCE.py is required (see akg_cli op --help); "
                        "run it at a terminal without one for the interactive session\n");
        return 2;
    }
    if (interactive && (kernel || sketch)) {
        fprintf(stderr, "akg_cli op: --%s names a file for one reference; the interactive "
                        "session takes neither --kernel nor --sketch\n",
                kernel ? "kernel" : "sketch");
        return 2;
    }
    if (!interactive && access(pos[0], R_OK) != 0) {
        fprintf(stderr, "akg_cli op: reference not found: %s\n", pos[0]);
        return 2;
    }
    if (kernel && access(kernel, R_OK) != 0) {
        fprintf(stderr, "akg_cli op: kernel not found: %s\n", kernel);
        return 2;
    }
    char err[1024];
    if (strcmp(framework, "torch") != 0) {
        fprintf(stderr, "akg_cli op: framework '%s' is not supported (only torch)\n", framework);
        return 2;
    }
    if (akg_target_check(backend, dsl, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli op: %s\n", err);
        return 2;
    }
    if (arch && akg_backend_arch_check(akg_backend_find(backend, dsl), arch, err, sizeof err)) {
        fprintf(stderr, "akg_cli op: %s\n", err);
        return 2;
    }
    double min_speedup_value = 0;
    if (min_speedup) {
        char *end = NULL;
        min_speedup_value = strtod(min_speedup, &end);
        if (end == min_speedup || *end || !(min_speedup_value >= 0)) {
            fprintf(stderr,
                    "akg_cli op: --min-speedup %s: expected a number of at least 0 (0 keeps the "
                    "first verified kernel; 1.5 asks for 1.5x the reference's speed)\n",
                    min_speedup);
            return 2;
        }
    }
    long profile_runs_value = 0;
    if (profile_runs) {
        char *end = NULL;
        profile_runs_value = strtol(profile_runs, &end, 10);
        if (end == profile_runs || *end || profile_runs_value < 1 ||
            profile_runs_value > AKG_PROFILE_RUNS_MAX) {
            fprintf(stderr,
                    "akg_cli op: --profile-runs %s: expected a whole number from 1 to %d (the "
                    "timed runs of the profile; 5 times a kernel briefly, the config's "
                    "profile_settings.run_times is the default)\n",
                    profile_runs, AKG_PROFILE_RUNS_MAX);
            return 2;
        }
    }
    struct {
        const char *flag, *text;
        int *into;
        int max;
    } counts[] = {{"max-rounds", max_rounds, NULL, 1000},
                  {"parallel-num", parallel_num, NULL, 1000},
                  {"num-islands", num_islands, NULL, 64},
                  {"max-total-tasks", max_total_tasks, NULL, 4096}};
    akg_search_options search = {0};
    counts[0].into = &search.max_rounds;
    counts[1].into = &search.parallel_num;
    counts[2].into = &search.num_islands;
    counts[3].into = &search.max_total_tasks;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        if (!counts[i].text)
            continue;
        char *end = NULL;
        long v = strtol(counts[i].text, &end, 10);
        if (end == counts[i].text || *end || v < 1 || v > counts[i].max) {
            fprintf(stderr, "akg_cli op: --%s %s: expected a whole number from 1 to %d\n",
                    counts[i].flag, counts[i].text, counts[i].max);
            return 2;
        }
        *counts[i].into = (int)v;
    }
    if (sandbox && strcmp(sandbox, "auto") && strcmp(sandbox, "bwrap") && strcmp(sandbox, "none")) {
        fprintf(stderr, "akg_cli op: --sandbox %s is not a sandbox mode; use auto, bwrap or none\n",
                sandbox);
        return 2;
    }
    if (workflow && !strcmp(workflow, "verifier_only") && sketch) {
        fprintf(stderr, "akg_cli op: --sketch gives a design to lower; --workflow verifier_only "
                        "checks an existing kernel (--kernel): use one of them\n");
        return 2;
    }
    if (workflow && !strcmp(workflow, "verifier_only") && !kernel) {
        fprintf(stderr, "akg_cli op: --workflow verifier_only needs --kernel MODEL_NEW.py\n");
        return 2;
    }
    if (sketch) {
        /* The design is the user's: check it before anything starts. */
        akg_sketch_file f;
        int src = akg_sketch_file_load(sketch, sketch, &f, err, sizeof err);
        if (src == AKG_ENOTFOUND) {
            fprintf(stderr, "akg_cli op: sketch not found: %s\n", sketch);
            akg_sketch_file_free(&f);
            return 2;
        }
        if (src == AKG_EPARSE) {
            fprintf(stderr, "%s\n", f.diagnostics ? f.diagnostics : err);
            akg_sketch_file_free(&f);
            return 1;
        }
        akg_sketch_file_free(&f);
        if (src != AKG_OK) {
            fprintf(stderr, "akg_cli op: %s\n", err);
            return 1;
        }
    }

    /* The default workflow on a task the store has a verified kernel of: that kernel, at
     * once, with no engine and no harness worker (search_cache.c). */
    if (!interactive && !no_cache && !kernel && !sketch &&
        (!workflow || !strcmp(workflow, "default"))) {
        akg_cache_request cr = {.store_path = store,
                                .reference_path = pos[0],
                                .backend = backend,
                                .arch = arch,
                                .dsl = dsl,
                                .output_dir = output};
        cJSON *cached = NULL;
        char cerr[1024];
        int hit = akg_cache_answer(&cr, &cached, cerr, sizeof cerr);
        if (hit == 1) {
            if (!quiet) {
                const cJSON *from = cJSON_GetObjectItem(cached, "cached_from");
                fprintf(stderr,
                        "[akg] cached  a verified kernel of this task from run %.0f (%s "
                        "workflow); --no-cache runs the pipeline again\n",
                        cJSON_GetNumberValue(cJSON_GetObjectItem(from, "run_id")),
                        cJSON_GetStringValue(cJSON_GetObjectItem(from, "workflow")));
            }
            akg_event ev = {0};
            ev.kind = AKG_EVENT_DONE;
            ev.status = AKG_JOB_PASS;
            ev.data = cached;
            cli_op_print_summary(&ev, json);
            cJSON_Delete(cached);
            fflush(stdout);
            return 0;
        }
        if (hit < 0 && !quiet)
            fprintf(stderr, "[akg] the store could not be asked for a cached kernel: %s\n", cerr);
    }

    op_ctx c = {0};
    c.quiet = quiet;
    c.json = json;
    c.exit_code = 1;
    c.loop = uv_default_loop();
    /* the engine gives every worker it starts the config's sandbox settings with this mode */
    if (sandbox && setenv("AKG_SANDBOX_MODE", sandbox, 1) != 0) {
        fprintf(stderr, "akg_cli op: cannot set the sandbox mode: out of memory\n");
        return 1;
    }
    akg_engine_options eo = {0};
    eo.python = python;
    eo.store_path = store;
    int device_ids[AKG_ENGINE_MAX_DEVICES];
    eo.devices = 1;
    if (devices) {
        if (akg_parse_devices(devices, device_ids, &eo.devices, err, sizeof err) != AKG_OK) {
            fprintf(stderr, "akg_cli op: %s\n", err);
            return 2;
        }
        eo.device_ids = device_ids;
    }
    eo.threads = threads ? atoi(threads) : 0;
    if (akg_engine_new(c.loop, &eo, &c.engine, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg_cli op: %s\n", err);
        return 1;
    }
    akg_job_options jo = {0};
    jo.reference_path = interactive ? NULL : pos[0];
    jo.framework = framework;
    jo.backend = backend;
    jo.arch = arch;
    jo.dsl = dsl;
    jo.workflow = workflow;
    jo.kernel_path = kernel;
    jo.provider = provider;
    jo.sketch_path = sketch;
    jo.design_check = design_check;
    jo.output_dir = output;
    jo.verify_timeout_s = verify_timeout ? atof(verify_timeout) : 0;
    jo.max_step = max_step ? atoi(max_step) : 0;
    jo.trials = trials ? atoi(trials) : 0;
    jo.seed = seed ? strtoull(seed, NULL, 10) : 0;
    jo.min_speedup = min_speedup_value;
    jo.min_speedup_set = min_speedup != NULL;
    jo.profile_runs = (int)profile_runs_value;
    jo.search = search;
    if (interactive) {
        cli_session_options so = {c.engine, &jo, quiet, json};
        int status = cli_interactive(c.loop, &so);
        uv_loop_close(c.loop);
        fflush(stdout);
        return status;
    }
    int rc = akg_job_start(c.engine, &jo, on_event, &c, &c.job, err, sizeof err);
    if (rc != AKG_OK) {
        fprintf(stderr, "akg_cli op: %s\n", err);
        c.exit_code = (rc == AKG_EUNSUPPORTED || rc == AKG_ENOTFOUND) ? 2 : 1;
        akg_engine_close(c.engine, NULL, NULL);
        uv_run(c.loop, UV_RUN_DEFAULT);
        return c.exit_code;
    }
    uv_signal_init(c.loop, &c.sigint);
    uv_signal_init(c.loop, &c.sigterm);
    c.sigint.data = c.sigterm.data = &c;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    uv_run(c.loop, UV_RUN_DEFAULT);
    uv_loop_close(c.loop);
    fflush(stdout);
    return c.exit_code;
}
