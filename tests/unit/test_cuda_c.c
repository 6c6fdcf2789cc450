/*
 * test_cuda_c.c: the cuda/cuda backend (CUDA C) without a GPU: it is
 * registered, the Designer's sketches of the activation, reduction, norm and
 * loss families and the GPU matmul designs (the snapshot in
 * tests/sketch/fixtures/triton_cuda/) lower to CUDA C with the launcher's ABI,
 * twice to the same text (all 57; accumulators carried through a loop without
 * an alloc too); gemm is a shared-memory tiled product accumulated in place
 * (f64 in double), as an assignment, a statement or a value; what is not
 * lowered is refused with the sketch's file:line:col and the construct;
 * build_argv is
 * an nvcc command for the configured arch with a content-hashed library. Each
 * .cu is compiled by nvcc where one is installed: ctest sketch_compile_cuda
 * (backends/cuda/cuda/tests/compile_fixtures.sh).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"
#include "check.h"

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static akg_sketch *parse_checked(const char *text)
{
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    if (akg_sketch_parse(text, strlen(text), &sk, diags) == 0 && akg_sketch_check(sk, diags) != 0) {
        akg_sketch_free(sk);
        sk = NULL;
    }
    akg_sketch_diag_list_free(diags);
    return sk;
}

/* tests/sketch/fixtures/DIR/FILE lowered by be: its return code (-1: the fixture does not read
 * or does not check), *src the kernel (the caller frees it), err the message. */
static int lower_fixture(const akg_backend *be, const char *root, const char *dir, const char *file,
                         char **src, char *err, size_t errlen)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/sketch/fixtures/%s/%s", root, dir, file);
    char *text = read_file(path);
    akg_sketch *sk = text ? parse_checked(text) : NULL;
    free(text);
    *src = NULL;
    if (!sk)
        return -1;
    int rc = be->lower(sk, false, src, err, errlen);
    akg_sketch_free(sk);
    return rc;
}

/* build_argv for req is an nvcc command with flag, -shared and the library in req->dir. */
static bool nvcc_arch_flag(const akg_backend *be, const akg_build_request *req, const char *flag)
{
    char err[512] = "";
    char **argv = NULL;
    if (be->build_argv(req, &argv, err, sizeof err) != AKG_OK || !argv) {
        printf("build_argv: %s\n", err);
        return false;
    }
    bool arch = false, shared = false, out = false;
    for (char **a = argv; *a; a++) {
        arch = arch || !strcmp(*a, flag);
        shared = shared || !strcmp(*a, "-shared");
        out = out || !strcmp(*a, "/d/kernel_x.so");
    }
    bool ok = !strcmp(argv[0], "nvcc") && arch && shared && out;
    akg_argv_free(argv);
    return ok;
}

static void test_registration(void)
{
    const akg_backend *be = akg_backend_find("cuda", "cuda");
    CHECK(be != NULL);
    if (!be)
        return;
    CHECK_STR(be->device_kind, "cuda");
    CHECK_STR(be->default_arch, "sm_90");
    CHECK_STR(be->config_path, "backends/cuda/cuda/config.yaml");
    char err[512];
    CHECK(akg_backend_check("cuda", "cuda", err, sizeof err) == AKG_OK);
    /* the build: nvcc for the task's arch (the request's), the library named by the emitter */
    akg_kernel_files files = {.kernel_filename = "kernel.cu", .library_filename = "kernel_x.so"};
    cJSON *config = cJSON_Parse("{\"compiler\": {\"nvcc\": \"nvcc\", \"arch\": \"sm_80\"}}");
    akg_build_request req = {.config = config, .files = &files, .dir = "/d", .arch = "sm_90a"};
    CHECK(nvcc_arch_flag(be, &req, "-arch=sm_90a")); /* H200: the task's arch wins */
    req.arch = NULL; /* no task (tools): the settings' compiler.arch */
    CHECK(nvcc_arch_flag(be, &req, "-arch=sm_80"));
    cJSON_Delete(config);
    config = cJSON_Parse("{\"arch\": \"sm_90; rm -rf\"}");
    req.config = config;
    char **argv = NULL;
    CHECK(be->build_argv(&req, &argv, err, sizeof err) == AKG_EINVAL);
    req.arch = "sm_";
    CHECK(be->build_argv(&req, &argv, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, "names no NVIDIA architecture");
    cJSON_Delete(config);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_fixtures(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "cuda");
    if (!be)
        return;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/sketch/fixtures/triton_cuda", root);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char *names[512];
    size_t n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) && n < 512) {
        size_t len = strlen(ent->d_name);
        if (len > 7 && !strcmp(ent->d_name + len - 7, ".sketch") &&
            strncmp(ent->d_name, "refused_", 8))
            names[n++] = akg_strdup(ent->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    size_t lowered = 0, refused = 0, matmul = 0;
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = read_file(path);
        akg_sketch *sk = text ? parse_checked(text) : NULL;
        CHECK(sk != NULL);
        if (sk) {
            char err[1024] = "", err2[1024] = "";
            char *a = NULL, *b = NULL;
            int rc = be->lower(sk, false, &a, err, sizeof err);
            int rc2 = be->lower(sk, false, &b, err2, sizeof err2);
            CHECK(rc == rc2);
            if (rc == AKG_OK && a && b) {
                CHECK(strcmp(a, b) == 0);
                CHECK_CONTAINS(a, "__global__ void");
                CHECK_CONTAINS(a, "extern \"C\" int akg_kernel(void *const *tensors, const int64_t "
                                  "*symbols, const double *params, void *stream)");
                CHECK_CONTAINS(a, "gridDim.x"); /* the grid-stride program loop */
                if (!strncmp(names[i], "matmul_", 7)) {
                    /* acc = gemm(ta, tb, acc): shared-memory chunks, register sums, the
                     * accumulator updated in place (its buffer is the kernel's only one) */
                    CHECK_CONTAINS(a, "__shared__ float");
                    CHECK_CONTAINS(a, "+= _av[_r] * _bv[_c]");
                    CHECK(strstr(a, "_scr1") == NULL);
                    matmul++;
                }
                lowered++;
            } else {
                CHECK(rc == AKG_EUNSUPPORTED);
                CHECK_CONTAINS(err, "sketch.sketch:");
                printf("refused %s: %s\n", names[i], err);
                refused++;
            }
            free(a);
            free(b);
            akg_sketch_free(sk);
        }
        free(text);
        free(names[i]);
    }
    printf("cuda fixtures: %zu lowered (%zu matmul), %zu refused\n", lowered, matmul, refused);
    CHECK(lowered >= 57);
    CHECK(matmul == 12);
    CHECK(refused == 0);
}

/* gemm's other forms on inline sketches: the statement with dst= on an f64 accumulator
 * (double sums and shared chunks, trans_b read from B as stored), dot as a value under an
 * elementwise operation (a new per-block buffer), and what stays refused with its line. */
static const char *const gemm_f64_stmt =
    "sketch mm64 {\n"
    "  symbols: M, N, K;\n"
    "  tensors: a[M, K]: f64; b[N, K]: f64; c[M, N]: f64;\n"
    "  constexpr: BM = 32, BN = 32, BK = 8;\n"
    "  bind: a = input(\"a\", [M, K]), b = input(\"b\", [N, K]), c = output(0, [M, N])\n"
    "\n"
    "  @llm_hint(\"parallel\", \"grididx\")\n"
    "  for i in range(0, M, BM):\n"
    "    @llm_hint(\"parallel\", \"grididx\")\n"
    "    for j in range(0, N, BN):\n"
    "      acc = alloc([BM, BN], dtype=f64, llm_hint=[\"accumulator\", \"init_zero\"])\n"
    "      for k in range(0, K, BK):\n"
    "        ta = alloc([BM, BK], dtype=f64)\n"
    "        tb = alloc([BN, BK], dtype=f64)\n"
    "        load(a[i:i+BM, k:k+BK] -> ta)\n"
    "        load(b[j:j+BN, k:k+BK] -> tb)\n"
    "        gemm(ta, tb, dst=acc, trans_b=True)\n"
    "      store(acc -> c[i:i+BM, j:j+BN])\n"
    "}\n";

static const char *const gemm_dot_value =
    "sketch mmv {\n"
    "  symbols: M, N, K;\n"
    "  tensors: a[M, K]: f32; b[K, N]: f32; c[M, N]: f32;\n"
    "  constexpr: BM = 64, BN = 32;\n"
    "  bind: a = input(\"a\", [M, K]), b = input(\"b\", [K, N]), c = output(0, [M, N])\n"
    "\n"
    "  @llm_hint(\"parallel\", \"grididx\")\n"
    "  for i in range(0, M, BM):\n"
    "    @llm_hint(\"parallel\", \"grididx\")\n"
    "    for j in range(0, N, BN):\n"
    "      ta = alloc([BM, K], dtype=f32)\n"
    "      tb = alloc([K, BN], dtype=f32)\n"
    "      load(a[i:i+BM, 0:K] -> ta)\n"
    "      load(b[0:K, j:j+BN] -> tb)\n"
    "      store(relu(dot(ta, tb)) -> c[i:i+BM, j:j+BN])\n"
    "}\n";

static const char *const call_refused = "sketch r {\n"
                                        "  symbols: N;\n"
                                        "  tensors: x[N]: f32; y[N]: f32;\n"
                                        "  constexpr: B = 256;\n"
                                        "  bind: x = input(\"x\", [N]), y = output(0, [N])\n"
                                        "\n"
                                        "  @llm_hint(\"parallel\", \"grididx\")\n"
                                        "  for i in range(0, N, B):\n"
                                        "    t = alloc([B], dtype=f32)\n"
                                        "    load(x[i:i+B] -> t)\n"
                                        "    u = alloc([B], dtype=f32)\n"
                                        "    relu(t, u)\n"
                                        "    store(u -> y[i:i+B])\n"
                                        "}\n";

static void test_gemm_forms(void)
{
    const akg_backend *be = akg_backend_find("cuda", "cuda");
    if (!be)
        return;
    struct {
        const char *text, *want, *want2;
        bool ok;
    } cases[] = {
        {gemm_f64_stmt, "__shared__ double", "AKG_CVT(double, _e", true},
        {gemm_dot_value, "__shared__ float", "_scr0", true},
        {call_refused, "sketch.sketch:12:5: `relu(...)` as a statement: not lowered",
         "gemm(a, b, dst=c)", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        akg_sketch *sk = parse_checked(cases[i].text);
        CHECK(sk != NULL);
        if (!sk)
            continue;
        char err[1024] = "", err2[1024] = "";
        char *a = NULL, *b = NULL;
        int rc = be->lower(sk, false, &a, err, sizeof err);
        int rc2 = be->lower(sk, false, &b, err2, sizeof err2);
        CHECK(rc == rc2);
        if (cases[i].ok) {
            if (rc != AKG_OK)
                printf("case %zu: %s\n", i, err);
            CHECK(rc == AKG_OK);
            if (a && b) {
                CHECK(strcmp(a, b) == 0);
                CHECK_CONTAINS(a, cases[i].want);
                CHECK_CONTAINS(a, cases[i].want2);
            }
        } else {
            CHECK(rc == AKG_EUNSUPPORTED);
            CHECK_CONTAINS(err, cases[i].want);
            CHECK_CONTAINS(err, cases[i].want2);
        }
        free(a);
        free(b);
        akg_sketch_free(sk);
    }
}

/* Lowering details: a row reduction is a block reduction, an elementwise map one strided loop
 * guarded by the tensor's bounds, and a load into a tile region is refused with its line. */
static void test_shapes(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "cuda");
    if (!be)
        return;
    struct {
        const char *file, *want;
    } cases[] = {
        {"reduction_sum_dim1_keepdim.sketch", "akg_block_reduce<0>"},
        {"activation_softmax.sketch", "akg_block_reduce<1>"},
        {"activation_relu.sketch", "threadIdx.x"},
        /* an accumulator assigned before its loop without an alloc: a register written in
         * place (`acc0 = fill([1], 1.0, dtype=f64)`, then `acc0 = mul(acc0, ...)`) */
        {"reduction_prod_dim1.sketch", "_u5 = AKG_CVT(double, _e20);"},
        /* a carried tile (`bv = t0`, then `bv = where(better, t0, bv)`): a per-block buffer */
        {"reduction_argmax_dim1.sketch", "float *const _buf146 = _scr0"},
        {"refused_matmul_square.sketch", "sketch.sketch:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[1024] = "";
        char *src = NULL;
        int rc = lower_fixture(be, root, "triton_cuda", cases[i].file, &src, err, sizeof err);
        CHECK(rc != -1);
        if (!strncmp(cases[i].file, "refused_", 8)) {
            CHECK(rc == AKG_EUNSUPPORTED);
            CHECK_CONTAINS(err, cases[i].want);
            CHECK_CONTAINS(err, "load into a tile region");
        } else {
            CHECK(rc == AKG_OK);
            if (src)
                CHECK_CONTAINS(src, cases[i].want);
        }
        free(src);
    }
}

/* Partial reductions are cooperative (tests/sketch/fixtures/cuda_reduce): a group of threads an
 * output, chosen at run time; along a reduced contiguous axis a group is adjacent threads, else
 * adjacent threads hold adjacent outputs; argmax/argmin combine (value, index) pairs. No output
 * is walked by one thread alone over its whole reduced extent. */
static void test_partial_reductions(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "cuda");
    if (!be)
        return;
    struct {
        const char *file, *want[3];
    } cases[] = {
        {"activation_log_softmax.sketch",
         {"akg_red_group(_no11, _nr12, true)", "akg_group_reduce<1>(", "akg_group_reduce<0>("}},
        {"reduction_mean_dim_last.sketch", {"akg_red_group(", ", true);", "/ (float)(1LL * (_x"}},
        {"reduction_sum_dim0.sketch", {", false);", "akg_group_reduce<0>(", "threadIdx.x % _np"}},
        {"reduction_argmax_dim1.sketch", {"akg_group_argreduce<true>(", ", false);", ", true);"}},
        {"reduction_argmin_dim_last.sketch",
         {"akg_group_argreduce<false>(", "akg_argcomb<false>(", "int _u"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[1024] = "";
        char *src = NULL;
        CHECK(lower_fixture(be, root, "cuda_reduce", cases[i].file, &src, err, sizeof err) ==
              AKG_OK);
        for (int k = 0; k < 3 && src; k++)
            CHECK_CONTAINS(src, cases[i].want[k]);
        /* the serial walk of the old lowering: `for (long long _jN = 0; _jN < ...` */
        if (src)
            CHECK(!strstr(src, "for (long long _j"));
        free(src);
    }
}

int main(void)
{
    const char *root = getenv("AKG_SOURCE_DIR");
    if (!root)
        root = ".";
    test_registration();
    test_fixtures(root);
    test_shapes(root);
    test_partial_reductions(root);
    test_gemm_forms();
    return check_summary();
}
