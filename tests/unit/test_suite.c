/* test_suite.c: operator suites (akg/suite.h). The pure parts: the baseline's judgement, the
 * check of each profile's environment, the totals, the one-line details and the discovery of a
 * suite's references. Then the run on a real loop, with a stand-in harness worker (a small
 * Python script speaking the protocol) so that refusal, a missing baseline, cancellation and
 * early release are exercised in milliseconds, each ending with the loop closing cleanly. The
 * real harness and real jobs are the end-to-end test's (tests/families/bench/). */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/suite.h"
#include "check.h"

/* ---------- the baseline ---------- */

/* An env answer at its best for 2 threads on a CPU whose flags call for Zen kernels. */
static const char *GOOD_ENV =
    "{\"ok\":true,\"python\":\"3.11.2\",\"torch\":\"1.13.0\",\"device\":\"cpu\",\"threads\":2,"
    "\"omp_max_threads\":2,"
    "\"environment\":{\"OMP_NUM_THREADS\":\"2\",\"OPENBLAS_CORETYPE\":\"Zen\"},"
    "\"openblas_coretype\":\"Zen\",\"omp_wait_policy\":\"passive\","
    "\"cpu\":{\"expected_coretype\":\"Zen\"},"
    "\"blas\":{\"info\":\"generic\",\"kind\":\"openblas\",\"library\":\"/lib/libopenblasp.so\","
    "\"corename\":\"Zen\"},\"gemm\":{\"n\":1024,\"gflops\":150.0}}";

static cJSON *good_env(void)
{
    return cJSON_Parse(GOOD_ENV);
}

/* Judges env for 2 threads; returns the status and leaves the reason in why. */
static int judge(const cJSON *env, int compiled, char *why, size_t n)
{
    why[0] = '\0';
    return akg_suite_judge_baseline(env, 2, compiled, "/opt/py", why, n);
}

static void set_str_at(cJSON *obj, const char *key, const char *value)
{
    if (value)
        cJSON_ReplaceItemInObject(obj, key, cJSON_CreateString(value));
    else
        cJSON_ReplaceItemInObject(obj, key, cJSON_CreateNull());
}

static void test_judge_baseline(void)
{
    char why[512];
    cJSON *env = good_env();
    CHECK(env != NULL);
    CHECK(judge(env, 0, why, sizeof why) == AKG_OK);
    CHECK_STR(why, "");
    /* thread counts are judged against the kernels' */
    CHECK(akg_suite_judge_baseline(env, 4, 0, NULL, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "torch runs 2 threads but the kernels run 4");
    /* torch.compile needs PyTorch 2; the interpreter is named */
    CHECK(judge(env, 1, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "needs PyTorch 2");
    CHECK_CONTAINS(why, "/opt/py has torch 1.13.0");
    set_str_at(env, "torch", "2.5.1+cpu");
    CHECK(judge(env, 1, why, sizeof why) == AKG_OK);
    cJSON_Delete(env);

    /* on a GPU the host's BLAS and threads time neither side: not judged */
    env = good_env();
    set_str_at(cJSON_GetObjectItem(env, "blas"), "kind", "reference");
    CHECK(akg_suite_judge_baseline(env, 4, 0, NULL, why, sizeof why) == AKG_EINVAL);
    cJSON_AddStringToObject(env, "gpu", "NVIDIA H200");
    CHECK(akg_suite_judge_baseline(env, 4, 0, NULL, why, sizeof why) == AKG_OK);
    CHECK(akg_suite_judge_baseline(env, 4, 1, "/opt/py", why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "needs PyTorch 2");
    cJSON_Delete(env);

    /* the BLAS: unknown, the reference BLAS */
    env = good_env();
    cJSON *blas = cJSON_GetObjectItem(env, "blas");
    set_str_at(blas, "kind", "unknown");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "cannot tell which BLAS torch calls (BLAS_INFO generic");
    cJSON_DeleteItemFromObject(blas, "kind");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "cannot tell which BLAS");
    cJSON_AddStringToObject(blas, "kind", "reference");
    set_str_at(blas, "library", "/usr/lib/libblas.so.3");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "torch calls the reference BLAS (/usr/lib/libblas.so.3)");
    CHECK_CONTAINS(why, "libopenblas0-pthread");
    /* MKL and BLIS have no core type to judge */
    set_str_at(blas, "kind", "mkl");
    set_str_at(env, "openblas_coretype", NULL);
    CHECK(judge(env, 0, why, sizeof why) == AKG_OK);
    cJSON_Delete(env);

    /* OpenBLAS's core type: unset, wrong, or a right name with other kernels running */
    env = good_env();
    cJSON_DeleteItemFromObject(env, "openblas_coretype");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "OPENBLAS_CORETYPE is unset");
    CHECK_CONTAINS(why, "call for Zen");
    cJSON_AddStringToObject(env, "openblas_coretype", "Prescott");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_STR(why, "OPENBLAS_CORETYPE=Prescott does not match this CPU: its flags call for Zen");
    set_str_at(env, "openblas_coretype", "zen"); /* case does not matter */
    CHECK(judge(env, 0, why, sizeof why) == AKG_OK);
    set_str_at(cJSON_GetObjectItem(env, "blas"), "corename", "Prescott");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_STR(why, "OpenBLAS runs its Prescott kernels, but this CPU's flags call for Zen");
    /* a CPU whose flags call for no core type: nothing to judge there */
    set_str_at(cJSON_GetObjectItem(env, "cpu"), "expected_coretype", NULL);
    CHECK(judge(env, 0, why, sizeof why) == AKG_OK);
    cJSON_Delete(env);

    /* threads: OpenMP's and OMP_NUM_THREADS too; an OpenMP not loaded is no objection */
    env = good_env();
    cJSON_ReplaceItemInObject(env, "omp_max_threads", cJSON_CreateNumber(1));
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_STR(why, "OpenMP runs 1 threads but torch and the kernels run 2");
    cJSON_ReplaceItemInObject(env, "omp_max_threads", cJSON_CreateNull());
    CHECK(judge(env, 0, why, sizeof why) == AKG_OK);
    set_str_at(cJSON_GetObjectItem(env, "environment"), "OMP_NUM_THREADS", "8");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_STR(why, "OMP_NUM_THREADS=8 but torch and the kernels run 2 threads");
    set_str_at(cJSON_GetObjectItem(env, "environment"), "OMP_NUM_THREADS", NULL);
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "OMP_NUM_THREADS=(unset)");
    cJSON_DeleteItemFromObject(env, "threads");
    CHECK(judge(env, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "torch runs nan threads"); /* no count at all is no match */
    cJSON_Delete(env);

    /* no answer to judge */
    CHECK(judge(NULL, 0, why, sizeof why) == AKG_EINVAL);
    CHECK_CONTAINS(why, "did not describe the baseline");
    /* a small buffer still gets a terminated prefix */
    env = good_env();
    set_str_at(env, "openblas_coretype", "Prescott");
    char tiny[8];
    CHECK(akg_suite_judge_baseline(env, 2, 0, NULL, tiny, sizeof tiny) == AKG_EINVAL);
    CHECK(strlen(tiny) == sizeof tiny - 1);
    cJSON_Delete(env);
}

static void test_profile_env(void)
{
    char note[256];
    cJSON *env = good_env();
    cJSON *perf = cJSON_Parse(
        "{\"threads\":2,\"coretype\":\"Zen\",\"blas_library\":\"/lib/libopenblasp.so\"}");
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_OK);
    CHECK(akg_suite_check_profile_env(NULL, perf, note, sizeof note) == AKG_OK);
    CHECK(akg_suite_check_profile_env(env, NULL, note, sizeof note) == AKG_OK);
    cJSON_ReplaceItemInObject(perf, "threads", cJSON_CreateNumber(1));
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_EINVAL);
    CHECK_STR(note, "timed with 1 threads, the record says 2");
    cJSON_ReplaceItemInObject(perf, "threads", cJSON_CreateNumber(2));
    set_str_at(perf, "coretype", "Haswell");
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_EINVAL);
    CHECK_STR(note, "timed with OPENBLAS_CORETYPE=Haswell, the record says Zen");
    set_str_at(perf, "coretype", NULL);
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_EINVAL);
    CHECK_CONTAINS(note, "OPENBLAS_CORETYPE=(unset)");
    set_str_at(perf, "coretype", "Zen");
    set_str_at(perf, "blas_library", "/lib/libmkl_rt.so");
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_EINVAL);
    CHECK_STR(note, "timed with BLAS /lib/libmkl_rt.so, the record says /lib/libopenblasp.so");
    /* on a GPU the host's pools and BLAS do not time the kernel: the same env passes */
    cJSON_AddStringToObject(perf, "device", "cuda:0");
    set_str_at(perf, "coretype", NULL);
    CHECK(akg_suite_check_profile_env(env, perf, note, sizeof note) == AKG_OK);
    cJSON_Delete(perf);
    cJSON_Delete(env);
}

/* ---------- totals ---------- */

static akg_suite_op mk_op(const char *family, const char *status, double speedup,
                          double vs_compiled)
{
    akg_suite_op op;
    memset(&op, 0, sizeof op);
    op.family = (char *)family;
    op.name = (char *)"op";
    op.status = (char *)status;
    op.speedup = speedup;
    op.speedup_compiled = vs_compiled;
    op.ref_ms = op.kernel_ms = op.elapsed_s = op.compiled_ms = op.compile_s = NAN;
    return op;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b));
}

static void test_totals(void)
{
    akg_suite_op ops[] = {
        mk_op("act", "pass", 2.0, 1.2),  mk_op("act", "pass", 0.5, NAN),
        mk_op("act", "fail", NAN, NAN),  mk_op("mm", "pass", 1.6, 0.9),
        mk_op("mm", "pass", NAN, NAN),   /* passed, but no timing: not in the geomean */
        mk_op("mm", "not_run", NAN, NAN), mk_op("red", "error", NAN, NAN),
    };
    size_t n = sizeof ops / sizeof ops[0];
    akg_suite_totals t = akg_suite_totals_of(ops, n, NULL, AKG_SUITE_VS_EAGER);
    CHECK(t.ops == 7 && t.passed == 4 && t.failed == 2 && t.not_run == 1);
    CHECK(t.fast_1_count == 2 && t.fast_15_count == 2 && t.geomean_over == 3);
    CHECK(near(t.pass_rate, 4.0 / 7));
    CHECK(near(t.fast_1, 2.0 / 7)); /* failures stay in the denominator */
    CHECK(near(t.fast_15, 2.0 / 7));
    CHECK(near(t.geomean_speedup, cbrt(2.0 * 0.5 * 1.6)));

    akg_suite_totals c = akg_suite_totals_of(ops, n, NULL, AKG_SUITE_VS_COMPILED);
    CHECK(c.passed == 4 && c.geomean_over == 2 && c.fast_1_count == 1 && c.fast_15_count == 0);
    CHECK(near(c.geomean_speedup, sqrt(1.2 * 0.9)));

    akg_suite_totals mm = akg_suite_totals_of(ops, n, "mm", AKG_SUITE_VS_EAGER);
    CHECK(mm.ops == 3 && mm.passed == 2 && mm.not_run == 1 && mm.failed == 0);
    CHECK(near(mm.geomean_speedup, 1.6));
    akg_suite_totals red = akg_suite_totals_of(ops, n, "red", AKG_SUITE_VS_EAGER);
    CHECK(red.ops == 1 && red.passed == 0 && isnan(red.geomean_speedup) && red.fast_1 == 0);
    akg_suite_totals none = akg_suite_totals_of(ops, n, "nope", AKG_SUITE_VS_EAGER);
    CHECK(none.ops == 0 && isnan(none.pass_rate) && isnan(none.fast_1));
    akg_suite_totals empty = akg_suite_totals_of(NULL, 0, NULL, AKG_SUITE_VS_EAGER);
    CHECK(empty.ops == 0 && isnan(empty.geomean_speedup));

    const char *fams[2];
    CHECK(akg_suite_families(ops, n, fams, 2) == 2); /* capped */
    const char *all[8];
    CHECK(akg_suite_families(ops, n, all, 8) == 3);
    CHECK_STR(all[0], "act");
    CHECK_STR(all[1], "mm");
    CHECK_STR(all[2], "red");

    CHECK(!akg_suite_op_failed(&ops[0]));
    CHECK(akg_suite_op_failed(&ops[2]) && akg_suite_op_failed(&ops[5]));
}

static void test_one_line(void)
{
    char out[32];
    CHECK_STR(akg_suite_one_line(NULL, out, sizeof out, 20), "-");
    CHECK_STR(akg_suite_one_line("  a\n  b\tc  ", out, sizeof out, 20), "a b c");
    CHECK_STR(akg_suite_one_line("0123456789abcdefghij", out, sizeof out, 20),
              "0123456789abcdefghij");
    CHECK_STR(akg_suite_one_line("0123456789abcdefghijK", out, sizeof out, 20),
              "0123456789abcdefg...");
    CHECK_STR(akg_suite_one_line("0123456789 abcdefghijklmnopqrstuvwxyz", out, 8, 100),
              "0123...");
}

/* ---------- discovery ---------- */

static const char *REF_TEXT = "import torch\nimport torch.nn as nn\n\n"
                              "class Model(nn.Module):\n"
                              "    def forward(self, x):\n        return torch.relu(x)\n\n"
                              "def get_inputs():\n    return [torch.randn(4)]\n\n"
                              "def get_init_inputs():\n    return []\n";

static void write_text(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    CHECK(akg_mkdirs(path, NULL, 0) == AKG_OK);
    *slash = '/';
    CHECK(akg_write_file(path, text, strlen(text), NULL, 0) == AKG_OK);
}

static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_discover_fixture_suite(void)
{
    char suite[4096], err[512];
    snprintf(suite, sizeof suite, "%s/tests/families/bench/suite", getenv("AKG_SOURCE_DIR"));
    akg_suite_listing l;
    CHECK(akg_suite_discover(suite, NULL, &l, err, sizeof err) == AKG_OK);
    CHECK(l.n_ops == 3);
    if (l.n_ops == 3) {
        CHECK_STR(l.ops[0].rel, "activation/relu_small.py");
        CHECK_STR(l.ops[1].rel, "activation/softmax_small.py");
        CHECK_STR(l.ops[2].rel, "misc/fft_magnitude.py");
        CHECK_STR(l.ops[2].family, "misc");
        CHECK_STR(l.ops[2].name, "fft_magnitude");
        CHECK_STR(l.ops[2].status, "not_run");
        CHECK(isnan(l.ops[2].speedup) && l.ops[2].job_started == 0);
        char want[4200];
        snprintf(want, sizeof want, "%s/misc/fft_magnitude.py", suite);
        CHECK_STR(l.ops[2].path, want);
    }
    CHECK(l.n_skips == 1);
    if (l.n_skips == 1) {
        CHECK_CONTAINS(l.skips[0].path, "misc/helpers.py");
        CHECK_STR(l.skips[0].reason, "not in KernelBench form: no class Model(nn.Module)");
    }
    akg_suite_listing_free(&l);

    /* the filter is on the path relative to the suite, before the form is read */
    CHECK(akg_suite_discover(suite, "misc/", &l, err, sizeof err) == AKG_OK);
    CHECK(l.n_ops == 1 && l.n_skips == 1);
    akg_suite_listing_free(&l);
    CHECK(akg_suite_discover(suite, "relu", &l, err, sizeof err) == AKG_OK);
    CHECK(l.n_ops == 1 && l.n_skips == 0);
    akg_suite_listing_free(&l);
    CHECK(akg_suite_discover(suite, "no-such-op", &l, err, sizeof err) == AKG_OK);
    CHECK(l.n_ops == 0 && l.n_skips == 0);
    akg_suite_listing_free(&l);
}

static void test_discover_rules(void)
{
    char dir[] = "/tmp/akg-suite-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char err[512];
    write_text(dir, "top.py", REF_TEXT); /* at the suite's top: family "-" */
    write_text(dir, "b/second.py", REF_TEXT);
    write_text(dir, "a/first.py", REF_TEXT);
    write_text(dir, "a/deeper/third.py", REF_TEXT); /* the family is the first folder */
    write_text(dir, "a/__init__.py", "");
    write_text(dir, "a/check_suite.py", REF_TEXT); /* never a reference, never listed */
    write_text(dir, "a/notes.txt", REF_TEXT);
    write_text(dir, "a/__pycache__/first.py", REF_TEXT);
    write_text(dir, ".hidden/x.py", REF_TEXT);
    /* broken references count (their jobs fail); helpers are skipped with the reason */
    char broken[1024];
    snprintf(broken, sizeof broken, "%s", REF_TEXT);
    char *colon = strstr(broken, "(self, x):");
    memmove(colon + 9, colon + 10, strlen(colon + 10) + 1); /* drop forward's colon */
    write_text(dir, "c/broken.py", broken);
    write_text(dir, "c/no_forward.py",
               "import torch.nn as nn\nclass Model(nn.Module):\n    pass\n"
               "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n");
    write_text(dir, "c/plain_class.py",
               "class Model:\n    pass\ndef get_inputs():\n    return []\n"
               "def get_init_inputs():\n    return []\n");
    write_text(dir, "c/no_init.py",
               "import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
               "        return x\ndef get_inputs():\n    return []\n");
    write_text(dir, "c/nested_inputs.py",
               "import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
               "        return x\n    def get_inputs(self):\n        return []\n"
               "def get_init_inputs():\n    return []\n");
    write_text(dir, "c/garbage.py", "class (((\n");
    /* deeper than AKG_SUITE_MAX_DEPTH levels below the suite: not searched */
    write_text(dir, "d/1/2/3/4/5/6/7/deep_ok.py", REF_TEXT);
    write_text(dir, "d/1/2/3/4/5/6/7/8/too_deep.py", REF_TEXT);

    akg_suite_listing l;
    CHECK(akg_suite_discover(dir, NULL, &l, err, sizeof err) == AKG_OK);
    const char *want[] = {"a/deeper/third.py", "a/first.py",  "b/second.py", "c/broken.py",
                          "c/no_forward.py",  "d/1/2/3/4/5/6/7/deep_ok.py", "top.py"};
    CHECK(l.n_ops == sizeof want / sizeof want[0]);
    for (size_t i = 0; i < l.n_ops && i < sizeof want / sizeof want[0]; i++)
        CHECK_STR(l.ops[i].rel, want[i]);
    if (l.n_ops == 7) {
        CHECK_STR(l.ops[0].family, "a");
        CHECK_STR(l.ops[0].name, "third");
        CHECK_STR(l.ops[6].family, "-");
        CHECK_STR(l.ops[6].name, "top");
    }
    CHECK(l.n_skips == 4);
    if (l.n_skips == 4) {
        CHECK_CONTAINS(l.skips[0].path, "c/garbage.py");
        CHECK_CONTAINS(l.skips[0].reason, "no class Model(nn.Module) (syntax error at line 1)");
        CHECK_CONTAINS(l.skips[1].path, "c/nested_inputs.py");
        CHECK_STR(l.skips[1].reason, "not in KernelBench form: no module-level get_inputs()");
        CHECK_CONTAINS(l.skips[2].path, "c/no_init.py");
        CHECK_STR(l.skips[2].reason, "not in KernelBench form: no module-level get_init_inputs()");
        CHECK_CONTAINS(l.skips[3].path, "c/plain_class.py");
        CHECK_STR(l.skips[3].reason, "not in KernelBench form: no class Model(nn.Module)");
    }
    akg_suite_listing_free(&l);

    /* a folder that cannot be read is an error with its name */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none", dir);
    CHECK(akg_suite_discover(missing, NULL, &l, err, sizeof err) == AKG_EIO);
    CHECK_CONTAINS(err, "cannot read the suite folder");
    CHECK_CONTAINS(err, "/none");
    CHECK(l.n_ops == 0 && l.ops == NULL);
    CHECK(akg_suite_discover(NULL, NULL, &l, err, sizeof err) == AKG_EINVAL);
    remove_tree(dir);
}

/* ---------- a run on the loop, with a stand-in harness worker ---------- */

/* Speaks the harness protocol: "ready", then answers env as AKG_FAKE_ENV says (accept: at its
 * best for the threads the engine gave it; refuse: a wrong core type; fail: ok false; hang: no
 * answer). */
static const char *FAKE_WORKER =
    "import json, os, sys\n"
    "mode = os.environ.get('AKG_FAKE_ENV', 'accept')\n"
    "threads = int(os.environ.get('AKG_THREADS', '0'))\n"
    "def say(o):\n"
    "    sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
    "say({'event': 'ready', 'pid': os.getpid(), 'torch': '1.13.0', 'device': 'cpu',"
    " 'threads': threads})\n"
    "for line in sys.stdin:\n"
    "    if not line.strip():\n"
    "        continue\n"
    "    req = json.loads(line)\n"
    "    if req.get('op') == 'shutdown':\n"
    "        break\n"
    "    if mode == 'hang':\n"
    "        continue\n"
    "    if mode == 'fail':\n"
    "        say({'id': req['id'], 'ok': False, 'class': 'runtime_error',"
    " 'detail': 'no torch here'})\n"
    "        continue\n"
    "    core = 'Prescott' if mode == 'refuse' else 'Zen'\n"
    "    say({'id': req['id'], 'ok': True, 'torch': '1.13.0', 'python': '3', 'threads': threads,"
    " 'omp_max_threads': threads,"
    " 'environment': {'OMP_NUM_THREADS': os.environ.get('OMP_NUM_THREADS')},"
    " 'openblas_coretype': core, 'cpu': {'expected_coretype': 'Zen'},"
    " 'blas': {'kind': 'openblas', 'library': '/lib/libopenblasp.so', 'corename': core},"
    " 'gemm': {'n': 1024, 'gflops': 100.0}})\n";

typedef struct {
    int kinds[64];
    size_t nkinds;
    int in_start;        /* set while akg_suite_start runs: no event may come then */
    int during_start;    /* an event came inside akg_suite_start */
    int done;
    akg_suite_status status;
    int code;
    char message[1024];
    char refusal[1024];
    int env_refused;     /* ENVIRONMENT carried a refusal */
    size_t op_started, op_done;
    int cancel_on_discovered;
    int free_on_done;    /* akg_suite_free inside the DONE callback */
    cJSON *record;       /* akg_suite_record taken at DONE */
    akg_suite *suite;
} run_log;

static void on_event(const akg_suite_event *ev, void *user)
{
    run_log *r = user;
    if (r->in_start)
        r->during_start = 1;
    if (r->nkinds < 64)
        r->kinds[r->nkinds++] = (int)ev->kind;
    switch (ev->kind) {
    case AKG_SUITE_EVENT_DISCOVERED:
        if (r->cancel_on_discovered)
            akg_suite_cancel(ev->suite);
        break;
    case AKG_SUITE_EVENT_ENVIRONMENT:
        r->env_refused = ev->refusal != NULL;
        CHECK(ev->environment != NULL);
        break;
    case AKG_SUITE_EVENT_OP_STARTED:
        r->op_started++;
        CHECK(ev->op != NULL && ev->index < ev->count);
        break;
    case AKG_SUITE_EVENT_OP_PROGRESS:
        break;
    case AKG_SUITE_EVENT_OP_DONE:
        r->op_done++;
        break;
    case AKG_SUITE_EVENT_DONE:
        r->done++;
        r->status = ev->status;
        r->code = ev->code;
        snprintf(r->message, sizeof r->message, "%s", ev->message ? ev->message : "");
        snprintf(r->refusal, sizeof r->refusal, "%s", ev->refusal ? ev->refusal : "");
        r->record = akg_suite_record(ev->suite);
        CHECK(akg_suite_status_get(ev->suite) == ev->status);
        if (r->free_on_done)
            akg_suite_free(ev->suite);
        break;
    }
}

typedef struct {
    uv_timer_t timer;
    akg_suite *suite;
} canceller;

static void on_cancel_timer(uv_timer_t *t)
{
    canceller *c = t->data;
    akg_suite_cancel(c->suite);
    uv_close((uv_handle_t *)t, NULL);
}

/* Runs a suite to its end on a fresh loop; cancel_after_ms > 0 cancels it then. Returns the
 * suite (freed by the caller) unless log->free_on_done. */
static akg_suite *run_suite(const akg_suite_options *o, run_log *log, int cancel_after_ms)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[512];
    akg_suite *s = NULL;
    log->in_start = 1;
    int rc = akg_suite_start(&loop, o, on_event, log, &s, err, sizeof err);
    log->in_start = 0;
    CHECK(rc == AKG_OK);
    if (rc != AKG_OK) {
        fprintf(stderr, "akg_suite_start: %s\n", err);
        uv_loop_close(&loop);
        return NULL;
    }
    log->suite = s;
    canceller c;
    if (cancel_after_ms > 0) {
        uv_timer_init(&loop, &c.timer);
        c.timer.data = &c;
        c.suite = s;
        uv_timer_start(&c.timer, on_cancel_timer, (uint64_t)cancel_after_ms, 0);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0); /* nothing of the suite is left on the loop */
    CHECK(log->done == 1);
    CHECK(!log->during_start);
    CHECK(log->nkinds > 0 && log->kinds[log->nkinds - 1] == AKG_SUITE_EVENT_DONE);
    return log->free_on_done ? NULL : s;
}

static void test_start_checks(const char *suite)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[512];
    akg_suite *s = (akg_suite *)&loop; /* must be reset to NULL on failure */
    akg_suite_options o;
    memset(&o, 0, sizeof o);
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_EINVAL);
    CHECK(s == NULL);
    o.suite_dir = suite;
    o.jobs = AKG_SUITE_MAX_JOBS + 1;
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "jobs must be from 1 to 64");
    o.jobs = 0;
    o.threads = -1;
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_EINVAL);
    o.threads = 0;
    o.dsl = "no-such-dsl";
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "no-such-dsl");
    o.dsl = NULL;
    o.workflow = "verifier_only";
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "verifier_only");
    o.workflow = NULL;
    o.suite_dir = "/no/such/suite";
    CHECK(akg_suite_start(&loop, &o, on_event, NULL, &s, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "suite folder not found: /no/such/suite");
    CHECK(s == NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    akg_suite_free(NULL);
}

static void check_not_run_record(const cJSON *rec, size_t nops)
{
    CHECK(rec != NULL);
    const cJSON *ops = cJSON_GetObjectItem(rec, "ops");
    CHECK((size_t)cJSON_GetArraySize(ops) == nops);
    const cJSON *op;
    cJSON_ArrayForEach(op, ops) {
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(op, "status")), "not_run");
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(op, "speedup")));
    }
    const cJSON *totals = cJSON_GetObjectItem(rec, "totals");
    CHECK(cJSON_GetObjectItem(totals, "not_run")->valuedouble == (double)nops);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(totals, "geomean_speedup")));
}

static void test_runs(void)
{
    char home[] = "/tmp/akg-suite-home-XXXXXX";
    CHECK(mkdtemp(home) != NULL);
    write_text(home, "backends/harness/worker.py", FAKE_WORKER);
    write_text(home, "suite/act/relu.py", REF_TEXT);
    write_text(home, "suite/act/relu2.py", REF_TEXT);
    write_text(home, "suite/misc/helper.py", "X = 1\n");
    char empty[4200], suite[4200], store[4200];
    snprintf(empty, sizeof empty, "%s/empty", home);
    CHECK(akg_mkdirs(empty, NULL, 0) == AKG_OK);
    snprintf(suite, sizeof suite, "%s/suite", home);
    snprintf(store, sizeof store, "%s/akg.db", home);
    /* the suite's worker script (and the engine's config) come from AKG_HOME */
    setenv("AKG_HOME", home, 1);

    akg_suite_options o;
    memset(&o, 0, sizeof o);
    o.suite_dir = suite;
    o.threads = 2;
    o.store_path = store;
    test_start_checks(suite);

    /* refused: the baseline's core type is wrong; no operator runs, the record says so */
    setenv("AKG_FAKE_ENV", "refuse", 1);
    run_log r;
    memset(&r, 0, sizeof r);
    akg_suite *s = run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_REFUSED);
    CHECK(r.env_refused);
    CHECK_STR(r.refusal,
              "OPENBLAS_CORETYPE=Prescott does not match this CPU: its flags call for Zen");
    CHECK_STR(r.message, r.refusal);
    CHECK(r.kinds[0] == AKG_SUITE_EVENT_DISCOVERED && r.kinds[1] == AKG_SUITE_EVENT_ENVIRONMENT);
    CHECK(r.nkinds == 3 && r.op_started == 0);
    check_not_run_record(r.record, 2);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(r.record, "refused")), r.refusal);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
                  cJSON_GetObjectItem(r.record, "environment"), "openblas_coretype")),
              "Prescott");
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(r.record, "environment"), "id") == NULL);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.record, "skipped")) == 1);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r.record, "timings_comparable")));
    CHECK(cJSON_GetObjectItem(r.record, "totals_compiled") == NULL);
    size_t n = 0;
    CHECK(akg_suite_ops(s, &n) != NULL && n == 2);
    CHECK(akg_suite_environment(s) != NULL);
    CHECK_STR(akg_suite_refusal(s), r.refusal);
    cJSON_Delete(r.record);
    akg_suite_free(s);

    /* no baseline: the harness answers env with a failure */
    setenv("AKG_FAKE_ENV", "fail", 1);
    memset(&r, 0, sizeof r);
    s = run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_NO_BASELINE);
    CHECK_CONTAINS(r.message, "cannot read the baseline environment from the harness");
    CHECK_CONTAINS(r.message, "runtime_error: no torch here");
    CHECK(akg_suite_environment(s) == NULL);
    cJSON_Delete(r.record);
    akg_suite_free(s);

    /* cancelled while the baseline is being read: the request is dropped, the worker ends */
    setenv("AKG_FAKE_ENV", "hang", 1);
    memset(&r, 0, sizeof r);
    s = run_suite(&o, &r, 300);
    CHECK(r.status == AKG_SUITE_CANCELLED && r.code == AKG_ECANCELED);
    CHECK(r.nkinds == 2 && r.kinds[0] == AKG_SUITE_EVENT_DISCOVERED);
    cJSON_Delete(r.record);
    akg_suite_free(s);

    /* cancelled from the DISCOVERED callback: no baseline is asked for */
    memset(&r, 0, sizeof r);
    r.cancel_on_discovered = 1;
    s = run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_CANCELLED && r.nkinds == 2);
    cJSON_Delete(r.record);
    akg_suite_free(s);

    /* accepted: the engine starts; here AKG_HOME has no backend config, so every job fails
     * to start, is reported as an error, and the run completes; freed inside DONE */
    setenv("AKG_FAKE_ENV", "accept", 1);
    memset(&r, 0, sizeof r);
    r.free_on_done = 1;
    o.jobs = 2;
    run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_COMPLETED && r.code == AKG_OK && r.message[0] == '\0');
    CHECK(!r.env_refused && r.refusal[0] == '\0');
    CHECK(r.op_started == 2 && r.op_done == 2);
    const cJSON *ops = cJSON_GetObjectItem(r.record, "ops");
    const cJSON *op;
    cJSON_ArrayForEach(op, ops) {
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(op, "status")), "error");
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(op, "error_class")), "start_error");
        CHECK_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(op, "error_detail")),
                       "config.yaml");
    }
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.record, "failures")) == 2);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(r.record, "refused")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(r.record, "timings_comparable")));
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(r.record, "totals"), "failed")->valuedouble == 2);
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(r.record, "totals"), "fast_1")->valuedouble == 0);
    cJSON_Delete(r.record);
    o.jobs = 0;

    /* a folder without references: UNREAD, asynchronously */
    o.suite_dir = empty;
    memset(&r, 0, sizeof r);
    s = run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_UNREAD && r.code == AKG_ENOTFOUND);
    CHECK_CONTAINS(r.message, "no reference in");
    CHECK(r.nkinds == 2 && r.kinds[0] == AKG_SUITE_EVENT_DISCOVERED);
    cJSON_Delete(r.record);
    akg_suite_free(s);
    o.filter = "nothing-matches";
    o.suite_dir = suite;
    memset(&r, 0, sizeof r);
    s = run_suite(&o, &r, 0);
    CHECK(r.status == AKG_SUITE_UNREAD);
    CHECK_CONTAINS(r.message, "matches the filter nothing-matches");
    cJSON_Delete(r.record);
    akg_suite_free(s);
    o.filter = NULL;

    /* released before its end: it winds down without another callback, and nothing leaks */
    {
        uv_loop_t loop;
        uv_loop_init(&loop);
        char err[512];
        memset(&r, 0, sizeof r);
        CHECK(akg_suite_start(&loop, &o, on_event, &r, &s, err, sizeof err) == AKG_OK);
        akg_suite_free(s);
        uv_run(&loop, UV_RUN_DEFAULT);
        CHECK(uv_loop_close(&loop) == 0);
        CHECK(r.nkinds == 0);
    }
    unsetenv("AKG_FAKE_ENV");
    remove_tree(home);
}

int main(void)
{
    test_judge_baseline();
    test_profile_env();
    test_totals();
    test_one_line();
    test_discover_fixture_suite();
    test_discover_rules();
    test_runs();
    return check_summary();
}
