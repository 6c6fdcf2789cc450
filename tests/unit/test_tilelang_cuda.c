/*
 * test_tilelang_cuda.c: the cuda/tilelang_cuda backend without a GPU: it is
 * registered (device kind cuda, sm_90, a runtime check); of the family
 * fixtures (tests/sketch/fixtures/triton_cuda/, tests/sketch/fixtures/valid/)
 * the activation sketches, the row reductions inside them (softmax) and the
 * tiled GEMM lower, twice to the same text, with TileLang's constructs
 * (T.Kernel, T.alloc_fragment, T.Parallel, T.reduce_max, T.gemm on shared
 * tiles); the rest is refused with the sketch's file:line:col. The generated
 * Python is parsed by ctest sketch_parse_tilelang_cuda.
 */
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

/* Lowers root/rel; returns the status, the source or the message in *out (malloc'd). */
static int lower_file(const char *root, const char *rel, char **out)
{
    const akg_backend *be = akg_backend_find("cuda", "tilelang_cuda");
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *text = read_file(path);
    *out = NULL;
    if (!text || !be) {
        free(text);
        return -1;
    }
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    int rc = -1;
    if (akg_sketch_parse(text, strlen(text), &sk, diags) == 0 && akg_sketch_check(sk, diags) == 0) {
        char err[1024] = "";
        char *a = NULL, *b = NULL;
        rc = be->lower(sk, false, &a, err, sizeof err);
        char err2[1024] = "";
        CHECK(be->lower(sk, false, &b, err2, sizeof err2) == rc);
        if (rc == AKG_OK && a && b)
            CHECK(strcmp(a, b) == 0);
        *out = rc == AKG_OK ? a : akg_strdup(err);
        if (rc != AKG_OK)
            free(a);
        free(b);
    }
    akg_sketch_free(sk);
    akg_sketch_diag_list_free(diags);
    free(text);
    return rc;
}

static void test_registration(void)
{
    const akg_backend *be = akg_backend_find("cuda", "tilelang_cuda");
    CHECK(be != NULL);
    if (!be)
        return;
    CHECK_STR(be->device_kind, "cuda");
    CHECK_STR(be->default_arch, "sm_90");
    CHECK(be->runtime_missing != NULL);
    char err[512];
    CHECK(akg_backend_check("cuda", "tilelang_cuda", err, sizeof err) == AKG_OK);
}

static void test_families(const char *root)
{
    struct {
        const char *file;
        int ok;
        const char *want[3];
    } cases[] = {
        {"tests/sketch/fixtures/triton_cuda/activation_relu.sketch",
         1,
         {"with T.Kernel(", "T.alloc_fragment((16384, ), \"float32\")", "in T.Parallel(16384)"}},
        {"tests/sketch/fixtures/triton_cuda/activation_gelu.sketch", 1, {"T.erf(", NULL}},
        {"tests/sketch/fixtures/triton_cuda/activation_softmax.sketch",
         1,
         {"T.reduce_max(", "T.reduce_sum(", NULL}},
        {"tests/sketch/fixtures/valid/matmul_tiled.sketch",
         1,
         {"T.alloc_shared((64, 32, ), \"float16\")", "T.gemm(", "T.Pipelined("}},
        {"tests/sketch/fixtures/triton_cuda/reduction_sum_dim1_keepdim.sketch",
         0,
         {"sketch.sketch:26:7: ", "host statement", NULL}},
        {"tests/sketch/fixtures/triton_cuda/refused_matmul_square.sketch",
         0,
         {"sketch.sketch:15:3: ", NULL}},
        {"tests/sketch/fixtures/valid/cumsum.sketch", 0, {"sketch.sketch:10:9: 'cumsum'", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        int rc = lower_file(root, cases[i].file, &out);
        CHECK(cases[i].ok ? rc == AKG_OK : rc == AKG_EUNSUPPORTED);
        if (out)
            for (int k = 0; k < 3 && cases[i].want[k]; k++)
                CHECK_CONTAINS(out, cases[i].want[k]);
        if (out && cases[i].ok) {
            CHECK_CONTAINS(out, "import tilelang.language as T");
            CHECK_CONTAINS(out, "@T.prim_func");
            CHECK_CONTAINS(out, "def akg_kernel(tensors, symbols, params)");
        }
        if (rc != AKG_OK)
            printf("refused %s: %s\n", cases[i].file, out ? out : "?");
        free(out);
    }
}

int main(void)
{
    const char *root = getenv("AKG_SOURCE_DIR");
    if (!root)
        root = ".";
    test_registration();
    test_families(root);
    return check_summary();
}
