/*
 * test_triton_cuda.c: the cuda/triton_cuda backend without a GPU: it is
 * registered as the issue names it, every fixture sketch of
 * tests/sketch/fixtures/triton_cuda/ lowers (the built-in Designer's sketches
 * of the activation, reduction, norm and loss families) and lowers to the
 * same text twice, the fixtures named refused_*.sketch are refused with
 * AKG_EUNSUPPORTED and the message their first line promises (`# expect: ...`,
 * which names the construct; the message also names the sketch line), and
 * emit writes kernel_<hash12>.py and a model_new.py that runs under Triton's
 * interpreter. What the kernels compute is tested by running them:
 * tests/sketch/difftest/suite.py --dsl triton_cuda (ctest sketch_difftest_triton_cuda).
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
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static akg_sketch *parse_checked(const char *text, const char *what)
{
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    int rc = akg_sketch_parse(text, strlen(text), &sk, diags);
    if (rc == 0 && akg_sketch_check(sk, diags) != 0) {
        akg_sketch_free(sk);
        sk = NULL;
    }
    if (!sk)
        fprintf(stderr, "%s: does not parse or check\n", what);
    akg_sketch_diag_list_free(diags);
    return sk;
}

static void test_registration(void)
{
    const akg_backend *be = akg_backend_find("cuda", "triton_cuda");
    CHECK(be != NULL);
    if (!be)
        return;
    CHECK_STR(be->device_kind, "cuda");
    CHECK_STR(be->default_arch, "sm_90");
    CHECK_STR(be->config_path, "backends/cuda/triton_cuda/config.yaml");
    char err[512];
    CHECK(akg_backend_check("cuda", "triton_cuda", err, sizeof err) == AKG_OK);
    CHECK(akg_backend_find("cpu", "cpp") != NULL);
    char **argv = (char **)1;
    akg_kernel_files files = {0};
    akg_build_request req = {.files = &files, .dir = "/tmp", .arch = "sm_90a"};
    CHECK(be->build_argv(&req, &argv, err, sizeof err) == AKG_OK);
    CHECK(argv == NULL);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The expectation on a refused fixture's first line: `# expect: TEXT`. */
static const char *expectation(const char *text, char *buf, size_t len)
{
    const char *p = strstr(text, "# expect: ");
    if (!p)
        return NULL;
    p += strlen("# expect: ");
    size_t n = strcspn(p, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static void test_fixtures(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "triton_cuda");
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
        if (len > 7 && !strcmp(ent->d_name + len - 7, ".sketch"))
            names[n++] = akg_strdup(ent->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    size_t lowered = 0, refused = 0;
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = read_file(path);
        CHECK(text != NULL);
        akg_sketch *sk = text ? parse_checked(text, names[i]) : NULL;
        CHECK(sk != NULL);
        if (!sk) {
            free(text);
            free(names[i]);
            continue;
        }
        char err[1024] = "", err2[1024] = "";
        char *a = NULL, *b = NULL;
        int rc = be->lower(sk, false, &a, err, sizeof err);
        int rc2 = be->lower(sk, false, &b, err2, sizeof err2);
        CHECK(rc == rc2);
        if (!strncmp(names[i], "refused_", 8)) {
            char want[256];
            const char *w = expectation(text, want, sizeof want);
            CHECK(w != NULL);
            CHECK(rc == AKG_EUNSUPPORTED);
            if (rc != AKG_EUNSUPPORTED)
                fprintf(stderr, "%s: lowered, but should be refused\n", names[i]);
            CHECK_CONTAINS(err, "sketch.sketch:");
            if (w)
                CHECK_CONTAINS(err, w);
            CHECK_STR(err, err2);
            refused++;
        } else {
            CHECK(rc == AKG_OK);
            if (rc != AKG_OK)
                fprintf(stderr, "%s: %s\n", names[i], err);
            if (a && b) {
                CHECK(strcmp(a, b) == 0); /* deterministic */
                CHECK_CONTAINS(a, "@triton.jit");
                CHECK_CONTAINS(a, "def akg_kernel(tensors, symbols, params):");
                CHECK_CONTAINS(a, "tl.program_id(0)");
                lowered++;
            }
        }
        free(a);
        free(b);
        akg_sketch_free(sk);
        free(text);
        free(names[i]);
    }
    printf("triton_cuda fixtures: %zu lowered, %zu refused as expected\n", lowered, refused);
    CHECK(lowered >= 45);
    CHECK(refused >= 1);
}

/* Lowering details the kernels depend on, on one sketch of each shape of plan. */
static void test_lowering_shapes(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "triton_cuda");
    if (!be)
        return;
    static const struct {
        const char *file, *needles[4];
    } cases[] = {
        /* one parallel loop: a grid over it, the ragged tail masked by the tensor's bound; the
         * index type chosen at launch from the tensors, the symbols and the grid */
        {"activation_relu",
         {"_pid = tl.program_id(0).to(AKG_IDX)", "v_i = _pid * 16384",
          "mask=((v_i + tl.arange(0, 16384)) < S_N)",
          "_akg_k0[(_n0,)](T_x, T_out, S_N, AKG_IDX=_akg_idx([T_x, T_out], [S_N, _n0]))"}},
        /* several axes: every integer the kernel takes cast to the launch's index type */
        {"conv_conv2d_standard",
         {"S_C = tl.cast(S_C, AKG_IDX)", "_n1 = tl.cast(_n1, AKG_IDX)", "AKG_IDX: tl.constexpr",
          "def _akg_idx(tensors, ints):"}},
        /* a row in one block: its extent a constexpr the host computes; NaN-propagating max */
        {"activation_softmax",
         {"PB0: tl.constexpr", "PB0=_akg_p2(S_D)", "_akg_maxnan", "tl.debug_barrier()"}},
        /* a host loop around a parallel loop and its serial tail; the partials a scratch tensor */
        {"reduction_sum_dim1_keepdim",
         {"for v_o in range(0, S_O, 1):", "X_part = torch.empty((8, ",
          "host statements that write memory, one program", "if (S_I == 1):"}},
        /* gemm on 128 x 32 x 128 tiles: tl.dot into the f32 accumulator, IEEE f32 products
         * (the target's f32_dot_precision), Triton's default warps */
        {"matmul_square",
         {"v_acc = tl.full([128, 128], 0, tl.float32)",
          "tl.dot(v_ta, v_tb, v_acc, input_precision=\"ieee\")", "v_acc = _t", "_n0 * _n1]))"}},
        /* a transposed operand loaded as stored and transposed in the kernel */
        {"matmul_transposed_b", {"= tl.trans(v_tb)", "tl.dot(v_ta, _t", NULL}},
        /* a host tile re-issued in the kernel that reads it */
        {"norm_layer_norm",
         {"# re-issued host statements", "v_ln_weight_t = tl.load(",
          "# if I == 1: decided by the bound constants (taken)", "(1.0 / tl.sqrt("}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/tests/sketch/fixtures/triton_cuda/%s.sketch", root,
                 cases[i].file);
        char *text = read_file(path);
        akg_sketch *sk = text ? parse_checked(text, cases[i].file) : NULL;
        CHECK(sk != NULL);
        char err[1024] = "", *src = NULL;
        if (sk && be->lower(sk, false, &src, err, sizeof err) == AKG_OK) {
            for (int k = 0; k < 4 && cases[i].needles[k]; k++)
                CHECK_CONTAINS(src, cases[i].needles[k]);
        } else {
            CHECK(false);
            fprintf(stderr, "%s: %s\n", cases[i].file, err);
        }
        free(src);
        akg_sketch_free(sk);
        free(text);
    }
}

/* gemm on tiles below tl.dot's 16 (the statement form, into its destination): a product
 * summed over K, its padded K zeroed first; dot of vectors: a masked sum. */
static void test_gemm_small(void)
{
    const akg_backend *be = akg_backend_find("cuda", "triton_cuda");
    if (!be)
        return;
    const char *text =
        "sketch g {\n  symbols: M, N, K;\n"
        "  tensors: a[M, K]: f32; b[K, N]: f32; c[M, N]: f32; v[K]: f32; d[1]: f32;\n"
        "  @llm_hint(\"parallel\", \"grididx\")\n"
        "  for i in range(0, M, 8):\n"
        "    acc = alloc([8, 8], dtype=f32, llm_hint=[\"init_zero\"])\n"
        "    ta = alloc([8, min(8, K)])\n    tb = alloc([min(8, K), 8])\n"
        "    load(a[i:i+8, 0:min(8, K)] -> ta)\n    load(b[0:min(8, K), 0:8] -> tb)\n"
        "    gemm(ta, tb, dst=acc)\n    store(acc -> c[i:i+8, 0:8])\n"
        "    x = alloc([min(8, K)])\n    load(v[0:min(8, K)] -> x)\n"
        "    store(dot(x, x) -> d[0:1])\n}\n";
    akg_sketch *sk = parse_checked(text, "gemm_small");
    CHECK(sk != NULL);
    char err[1024] = "", *src = NULL;
    if (sk && be->lower(sk, false, &src, err, sizeof err) == AKG_OK) {
        CHECK_CONTAINS(src, "[:, :, None] * ");
        CHECK_CONTAINS(src, "axis=1)");
        CHECK_CONTAINS(src, "tl.where(tl.arange(0, PB");
        CHECK(strstr(src, "tl.dot(") == NULL);
    } else {
        CHECK(false);
        fprintf(stderr, "gemm_small: %s\n", err);
    }
    free(src);
    akg_sketch_free(sk);
}

static void test_emit(const char *root)
{
    const akg_backend *be = akg_backend_find("cuda", "triton_cuda");
    if (!be)
        return;
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/fixtures/refs/relu.py", root);
    char *src = read_file(path);
    snprintf(path, sizeof path, "%s/tests/fixtures/sketches/relu.sketch", root);
    char *text = read_file(path);
    CHECK(src && text);
    if (!src || !text) {
        free(src);
        free(text);
        return;
    }
    akg_reference *ref = akg_reference_parse(src, strlen(src), "relu.py");
    akg_sketch *sk = parse_checked(text, "relu.sketch");
    CHECK(ref != NULL && sk != NULL);
    if (ref && sk) {
        akg_emit_request req = {.ref = ref, .sketch_file = "relu.sketch"};
        akg_kernel_files files = {0};
        char err[1024] = "";
        CHECK(be->emit(sk, &req, &files, err, sizeof err) == AKG_OK);
        if (files.kernel_filename) {
            CHECK(!strncmp(files.kernel_filename, "kernel_", 7));
            CHECK(strlen(files.kernel_filename) == strlen("kernel_") + 12 + 3);
            CHECK(files.library_filename == NULL);
            char mod[64];
            snprintf(mod, sizeof mod, "import %.*s as _akg", 19, files.kernel_filename);
            CHECK_CONTAINS(files.model_new_source, mod);
            CHECK_CONTAINS(files.model_new_source,
                           "_AKG_DEVICE = None if os.environ.get(\"TRITON_INTERPRET\") == \"1\" "
                           "else \"cuda\"");
            CHECK_CONTAINS(files.model_new_source, "_akg.akg_kernel(tensors, symbols, params)");
        }
        akg_kernel_files_free(&files);
    }
    akg_sketch_free(sk);
    akg_reference_free(ref);
    free(src);
    free(text);
}

int main(void)
{
    const char *root = getenv("AKG_SOURCE_DIR");
    if (!root)
        root = ".";
    test_registration();
    test_fixtures(root);
    test_lowering_shapes(root);
    test_gemm_small();
    test_emit(root);
    return check_summary();
}
