/* test_designer.c: the built-in Designer's rules, and the cpu/cpp backend lowering their
 * sketches (the sketch alone: an edited sketch is an edited kernel), on small references
 * written here (never the bench suite). The probe answers are what the harness reports for
 * these sources. */
#include <stdlib.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/design.h"
#include "akg/sketch.h"
#include "check.h"

static const char *probe_1d =
    "{\"inputs\":[{\"kind\":\"tensor\",\"shape\":[8,16],\"dtype\":\"float32\"}],"
    "\"init_inputs\":[{\"kind\":\"scalar\",\"type\":\"float\",\"value\":0.25}]}";

typedef struct {
    akg_reference *ref;
    cJSON *probe;
    akg_design *d;
    int rc;
    akg_range where;
    char err[1024];
} designed;

static akg_sketch *parse_checked(const char *text);

static designed design(const char *src, const char *probe)
{
    designed r = {0};
    r.ref = akg_reference_parse(src, strlen(src), "ref.py");
    r.probe = cJSON_Parse(probe);
    r.rc = akg_designer_builtin(r.ref, r.probe, NULL, 1, &r.d, &r.where, r.err, sizeof r.err);
    if (r.d)
        akg_sketch_free(parse_checked(r.d->sketch_text));
    return r;
}

/* Every sketch the Designer writes parses, checks without errors, and
 * survives print/parse unchanged. Returns the parsed sketch (caller frees). */
static akg_sketch *parse_checked(const char *text)
{
    akg_sketch *sk = NULL, *again = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(text, strlen(text), &sk, diags) == 0);
    if (sk)
        CHECK(akg_sketch_check(sk, diags) == 0);
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        char *line = akg_sketch_diag_format("designer", akg_sketch_diag_at(diags, i));
        fprintf(stderr, "%s\n", line);
        free(line);
    }
    char *printed = NULL;
    if (sk && akg_sketch_print(sk, &printed) == 0) {
        CHECK(akg_sketch_parse(printed, strlen(printed), &again, NULL) == 0);
        CHECK(again && akg_sketch_equal(sk, again));
    }
    free(printed);
    akg_sketch_free(again);
    akg_sketch_diag_list_free(diags);
    return sk;
}

/* The cpu/cpp backend's lowering of sk for ref (safe: the conservative lowering). */
static int emit(const akg_sketch *sk, const designed *r, int safe, akg_kernel_files *k, char *err,
                size_t errlen)
{
    const akg_backend *be = akg_backend_find("cpu", "cpp");
    memset(k, 0, sizeof *k);
    if (!be || !be->emit || !sk)
        return AKG_EUNSUPPORTED;
    akg_emit_request req = {
        .ref = r->ref, .probe = r->probe, .safe = safe != 0, .sketch_file = "sketch.sketch"};
    return be->emit(sk, &req, k, err, errlen);
}

static void release(designed *r)
{
    akg_design_free(r->d);
    cJSON_Delete(r->probe);
    akg_reference_free(r->ref);
}

#define HEADER "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
#define GETTERS                                                                                    \
    "def get_inputs():\n    return [torch.randn(8, 16)]\ndef get_init_inputs():\n    return "      \
    "[0.25]\n"

int main(void)
{
    /* a composite expression becomes one fused SSA program */
    designed r = design(HEADER "class Model(nn.Module):\n"
                               "    def __init__(self, slope):\n"
                               "        super().__init__()\n"
                               "        self.slope = slope\n"
                               "    def forward(self, x):\n"
                               "        y = F.leaky_relu(x, self.slope)\n"
                               "        return y / (1 + y.abs())\n" GETTERS,
                        probe_1d);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK(r.d->kind == AKG_DESIGN_POINTWISE);
        CHECK(r.d->n_scalars == 1);
        CHECK(r.d->scalars[0].source == AKG_SCALAR_INIT_PARAM);
        CHECK_STR(r.d->scalars[0].init_name, "slope");
        CHECK(r.d->scalars[0].value == 0.25);
        CHECK_CONTAINS(r.d->sketch_text, "leaky_relu(");
        CHECK_CONTAINS(r.d->sketch_text, "abs(");
        CHECK_CONTAINS(r.d->sketch_text, "div(");
        CHECK_CONTAINS(r.d->sketch_text, "@llm_hint(\"parallel\", \"coreidx\")");
        akg_kernel_files k;
        char err[256];
        akg_sketch *sk = parse_checked(r.d->sketch_text);
        CHECK(emit(sk, &r, 0, &k, err, sizeof err) == AKG_OK);
        CHECK_CONTAINS(k.kernel_source, "extern \"C\" int akg_kernel(");
        CHECK_CONTAINS(k.kernel_source, "#pragma omp parallel");
        CHECK_CONTAINS(k.kernel_source, "#pragma omp simd");
        CHECK(strstr(k.kernel_source, "_mm256_stream") == NULL); /* plain stores */
        CHECK_CONTAINS(k.model_new_source, "def __init__(self, slope):");
        CHECK_CONTAINS(k.model_new_source, "self._akg_init[\"slope\"]");
        akg_kernel_files_free(&k);
        /* the Coder's conservative lowering drops the pragmas */
        CHECK(emit(sk, &r, 1, &k, err, sizeof err) == AKG_OK);
        CHECK(strstr(k.kernel_source, "#pragma omp") == NULL);
        akg_kernel_files_free(&k);
        akg_sketch_free(sk);

        /* the Coder lowers what the sketch says: an edited sketch (abs turned
         * into sigmoid, the block moved, the parallel hint removed) changes
         * the kernel */
        char *edited = akg_strdup(r.d->sketch_text);
        char *abs_call = strstr(edited, "abs(");
        CHECK(abs_call != NULL);
        if (abs_call) {
            akg_buf e;
            akg_buf_init(&e, 1 << 16);
            akg_buf_append(&e, edited, (size_t)(abs_call - edited));
            akg_buf_puts(&e, "sigmoid(");
            akg_buf_puts(&e, abs_call + 4);
            char *p = strstr(e.data, "BLOCK = tune(");
            CHECK(p != NULL);
            char *par = strstr(e.data, "@llm_hint(\"parallel\", \"coreidx\")");
            CHECK(par != NULL);
            if (par)
                memcpy(par, "# removed by the user           ", 32);
            sk = parse_checked(e.data);
            CHECK(sk && emit(sk, &r, 0, &k, err, sizeof err) == AKG_OK);
            if (sk) {
                CHECK_CONTAINS(k.kernel_source, "(float(1) / (float(1) + akg_exp(-");
                CHECK(strstr(k.kernel_source, "#pragma omp parallel") == NULL);
                akg_kernel_files_free(&k);
            }
            akg_sketch_free(sk);
            akg_buf_free(&e);
        }
        free(edited);

        /* the designer stores plainly; a sketch that asks for streaming stores gets them */
        CHECK(strstr(r.d->sketch_text, "nontemporal") == NULL);
        char *store = strstr(r.d->sketch_text, "store(");
        char *eol = store ? strchr(store, '\n') : NULL;
        CHECK(eol != NULL && eol[-1] == ')');
        if (eol && eol[-1] == ')') {
            akg_buf e;
            akg_buf_init(&e, 1 << 16);
            akg_buf_append(&e, r.d->sketch_text, (size_t)(eol - 1 - r.d->sketch_text));
            akg_buf_puts(&e, ", llm_hint=[\"nontemporal\"])");
            akg_buf_puts(&e, eol);
            sk = parse_checked(e.data);
            CHECK(sk && emit(sk, &r, 0, &k, err, sizeof err) == AKG_OK);
            if (sk) {
                /* the output's rows are written a vector at a time by streaming stores (when
                 * the output is large), and each thread fences them at the end of the region */
                CHECK_CONTAINS(k.kernel_source, "_mm256_stream_ps(T_");
                CHECK_CONTAINS(k.kernel_source, "#include <immintrin.h>");
                CHECK_CONTAINS(k.kernel_source, "_mm_sfence();");
                akg_kernel_files_free(&k);
            }
            akg_sketch_free(sk);
            akg_buf_free(&e);
        }

        /* a parallel loop's schedule: block shares by default, round robin for "cyclic",
         * the next free thread for "dynamic" */
        static const char *const schedules[][2] = {{"", "schedule(static)"},
                                                   {", \"cyclic\"", "schedule(static, 1)"},
                                                   {", \"dynamic\"", "schedule(dynamic, 1)"}};
        const char *par = strstr(r.d->sketch_text, "@llm_hint(\"parallel\", \"coreidx\"");
        CHECK(par != NULL);
        for (size_t q = 0; par && q < sizeof schedules / sizeof schedules[0]; q++) {
            size_t at =
                (size_t)(par - r.d->sketch_text) + strlen("@llm_hint(\"parallel\", \"coreidx\"");
            akg_buf e;
            akg_buf_init(&e, 1 << 16);
            akg_buf_append(&e, r.d->sketch_text, at);
            akg_buf_puts(&e, schedules[q][0]);
            akg_buf_puts(&e, r.d->sketch_text + at);
            sk = parse_checked(e.data);
            CHECK(sk && emit(sk, &r, 0, &k, err, sizeof err) == AKG_OK);
            if (sk) {
                CHECK_CONTAINS(k.kernel_source, schedules[q][1]);
                akg_kernel_files_free(&k);
            }
            akg_sketch_free(sk);
            akg_buf_free(&e);
        }
    }
    release(&r);

    /* layer arguments and defaults: nn.Hardtanh(-2.0, max_val=1.5) */
    r = design(HEADER "class Model(nn.Module):\n"
                      "    def __init__(self):\n"
                      "        super().__init__()\n"
                      "        self.act = nn.Hardtanh(-2.0, max_val=1.5)\n"
                      "    def forward(self, x):\n"
                      "        return self.act(x)\n" GETTERS,
               probe_1d);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_CONTAINS(r.d->sketch_text, "hardtanh(t0, -2, 1.5)");
        CHECK(r.d->n_scalars == 0);
    }
    release(&r);

    /* softmax over dim=-1 as a method call, and log_softmax */
    r = design(HEADER "class Model(nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        return x.softmax(-1)\n" GETTERS,
               probe_1d);
    CHECK(r.rc == AKG_OK);
    CHECK(r.d && r.d->kind == AKG_DESIGN_SOFTMAX && r.d->dim.value == -1 && !r.d->log_softmax);
    release(&r);
    r = design(HEADER "class Model(nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        return torch.log_softmax(x, dim=1)\n" GETTERS,
               probe_1d);
    CHECK(r.d && r.d->kind == AKG_DESIGN_SOFTMAX && r.d->log_softmax && r.d->dim.value == 1);
    release(&r);

    /* a numerical failure sent back by the Conductor gives a different design */
    designed a = design(HEADER "class Model(nn.Module):\n"
                               "    def forward(self, x):\n"
                               "        return torch.sigmoid(x)\n" GETTERS,
                        probe_1d);
    cJSON *fb = cJSON_Parse("{\"class\":\"numerical_mismatch\"}");
    akg_design *d2 = NULL;
    char err[512];
    CHECK(akg_designer_builtin(a.ref, a.probe, fb, 2, &d2, NULL, err, sizeof err) == AKG_OK);
    CHECK(a.d && d2 && a.d->math == AKG_MATH_FAST && d2->math == AKG_MATH_PRECISE);
    akg_design_free(d2);
    cJSON_Delete(fb);
    release(&a);

    /* what the rules do not cover is named, with its line */
    r = design(HEADER "class Model(nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        y = torch.relu(x)\n"
                      "        return torch.fft.fft(y).abs()\n" GETTERS,
               probe_1d);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "ref.py:7:");
    CHECK_CONTAINS(r.err, "torch.fft.fft");
    CHECK_CONTAINS(r.err, "--workflow verifier_only");
    CHECK(r.where.start_row == 6);
    release(&r);

    r = design(HEADER "class Model(nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        for i in range(3):\n"
                      "            x = x + 1\n"
                      "        return x\n" GETTERS,
               probe_1d);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "the statement `for i in range(3)");
    release(&r);

    r = design(HEADER "class Model(nn.Module):\n"
                      "    def forward(self, x):\n"
                      "        return torch.relu(x)\n" GETTERS,
               "{\"inputs\":[{\"kind\":\"tensor\",\"shape\":[8],\"dtype\":\"float16\"}]}");
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "float16");
    release(&r);
    /* the GEMM's register tile follows the probe's CPU: 16-lane vectors (6 x 64 tiles) where
     * 512-bit FMAs run at full rate, 8-lane (6 x 16) on Zen 4 and where the probe says nothing */
    static const char *const cpus[] = {
        ",\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":6,"
        "\"simd\":[\"avx2\",\"fma\",\"avx512f\",\"avx512bw\",\"avx512vl\"]}",
        ",\"cpu\":{\"vendor\":\"AuthenticAMD\",\"family\":25,"
        "\"simd\":[\"avx2\",\"fma\",\"avx512f\",\"avx512bw\",\"avx512vl\"]}",
        ",\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":6,\"simd\":[\"avx2\",\"fma\"]}", ""};
    for (int i = 0; i < 4; i++) {
        char probe[512];
        snprintf(probe, sizeof probe,
                 "{\"inputs\":[{\"kind\":\"tensor\",\"shape\":[64,32],\"dtype\":\"float32\"},"
                 "{\"kind\":\"tensor\",\"shape\":[32,128],\"dtype\":\"float32\"}]%s}",
                 cpus[i]);
        r = design(HEADER
                   "class Model(nn.Module):\n"
                   "    def forward(self, a, b):\n"
                   "        return torch.matmul(a, b)\n"
                   "def get_inputs():\n    return [torch.randn(64, 32), torch.randn(32, 128)]\n"
                   "def get_init_inputs():\n    return []\n",
                   probe);
        CHECK(r.rc == AKG_OK);
        if (r.d) {
            CHECK_CONTAINS(r.d->sketch_text, i == 0 ? "@llm_hint(\"vectorize\", \"simd\", 16)"
                                                    : "@llm_hint(\"vectorize\", \"simd\", 8)");
            CHECK_CONTAINS(r.d->sketch_text, i == 0 ? "NR = tune(64, 32)" : "NR = tune(16, 8, 24)");
            akg_kernel_files k;
            akg_sketch *sk = parse_checked(r.d->sketch_text);
            CHECK(emit(sk, &r, 0, &k, err, sizeof err) == AKG_OK);
            if (k.kernel_source) /* the micro-kernel's vectors are the sketch's width */
                CHECK_CONTAINS(k.kernel_source, i == 0 ? "akg_v16 bv3" : "akg_v8 bv1");
            akg_kernel_files_free(&k);
            akg_sketch_free(sk);
        }
        release(&r);
    }
    return check_summary();
}
