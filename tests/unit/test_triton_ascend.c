/*
 * test_triton_ascend.c: the ascend/triton_ascend backend without an NPU: it
 * is registered (device kind npu, arch ascend910b); the Designer's sketches of
 * the activation, reduction, norm and loss families (the snapshot in
 * tests/sketch/fixtures/triton_cuda/) and the GEMM fixtures lower where the
 * cuda/triton_cuda lowering does (the same Triton, shared through its
 * per-target hook), but for constant blocks above the NPU's limit, and what
 * is refused is refused with the sketch's file:line:col; each module imports torch_npu, launches at
 * most the core count of programs that step through the flattened iterations, and has no cache
 * modifier; a constant block above Triton-Ascend's limit is refused at its extent; emit writes
 * model_new.py for device "npu". The generated Python is parsed by ctest
 * sketch_parse_triton_ascend.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"
#include "akg/task.h"
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

static void test_registration(void)
{
    const akg_backend *be = akg_backend_find("ascend", "triton_ascend");
    CHECK(be != NULL);
    if (!be)
        return;
    CHECK_STR(be->device_kind, "npu");
    CHECK_STR(be->default_arch, "ascend910b");
    CHECK_STR(be->config_path, "backends/ascend/triton_ascend/config.yaml");
    CHECK(be->runtime_missing != NULL);
    char err[512];
    CHECK(akg_backend_check("ascend", "triton_ascend", err, sizeof err) == AKG_OK);
    char **argv = (char **)1;
    akg_build_request req = {0};
    CHECK(be->build_argv(&req, &argv, err, sizeof err) == AKG_OK);
    CHECK(argv == NULL); /* compiled at the first launch */
}

static void check_dir(const char *dir, size_t *lowered, size_t *refused)
{
    const akg_backend *npu = akg_backend_find("ascend", "triton_ascend");
    const akg_backend *gpu = akg_backend_find("cuda", "triton_cuda");
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d || !npu || !gpu)
        return;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len <= 7 || strcmp(ent->d_name + len - 7, ".sketch"))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        char *text = read_file(path);
        akg_sketch *sk = text ? parse_checked(text) : NULL;
        if (sk) {
            char err[1024] = "", err2[1024] = "";
            char *a = NULL, *b = NULL;
            int rc = npu->lower(sk, false, &a, err, sizeof err);
            int rc2 = gpu->lower(sk, false, &b, err2, sizeof err2);
            /* the same lowering, another runtime around it: only a constant block above the
             * NPU's limit (65536-element blocks of hardsigmoid and hardtanh) differs */
            if (rc != rc2)
                CHECK_CONTAINS(err, "above Triton-Ascend's block limit (32768)");
            if (rc == AKG_OK && a) {
                CHECK_CONTAINS(a, "(ascend/triton_ascend backend)");
                CHECK_CONTAINS(a, "import torch_npu");
                CHECK_CONTAINS(a, "def akg_kernel(tensors, symbols, params)");
                CHECK(strstr(a, "cache_modifier") == NULL);
                if (strstr(a, "tl.program_id(0)")) {
                    CHECK_CONTAINS(a, "tl.num_programs(0)");
                    CHECK_CONTAINS(a, "min(_np, _akg_cores(_dev))");
                }
                (*lowered)++;
            } else {
                CHECK(rc == AKG_EUNSUPPORTED);
                CHECK_CONTAINS(err, "sketch.sketch:");
                if (strstr(err2, "triton_cuda emitter"))
                    CHECK_CONTAINS(err, "triton_ascend emitter");
                (*refused)++;
            }
            free(a);
            free(b);
            akg_sketch_free(sk);
        }
        free(text);
    }
    closedir(d);
}

static void test_fixtures(const char *root)
{
    char dir[1024];
    size_t lowered = 0, refused = 0;
    snprintf(dir, sizeof dir, "%s/tests/sketch/fixtures/triton_cuda", root);
    check_dir(dir, &lowered, &refused);
    printf("triton_ascend family fixtures: %zu lowered, %zu refused\n", lowered, refused);
    CHECK(lowered >= 43);
    lowered = refused = 0;
    snprintf(dir, sizeof dir, "%s/tests/sketch/fixtures/valid", root);
    check_dir(dir, &lowered, &refused);
    printf("triton_ascend valid fixtures: %zu lowered, %zu refused\n", lowered, refused);
}

/* A constant block above 32768 elements does not fit Triton-Ascend's limit: refused at the
 * tile's extent, with its line and column. */
static void test_block_limit(void)
{
    const akg_backend *be = akg_backend_find("ascend", "triton_ascend");
    const char *text = "sketch big {\n"
                       "  symbols: N;\n"
                       "  tensors: x[N]: f32; y[N]: f32;\n"
                       "  constexpr: B = 65536;\n"
                       "\n"
                       "  @llm_hint(\"parallel\", \"coreidx\")\n"
                       "  for i in range(0, N, B):\n"
                       "    t = alloc([B])\n"
                       "    load(x[i:i+B] -> t)\n"
                       "    store(t -> y[i:i+B])\n"
                       "}\n";
    akg_sketch *sk = parse_checked(text);
    CHECK(sk != NULL);
    if (!sk || !be)
        return;
    char err[1024] = "";
    char *src = NULL;
    CHECK(be->lower(sk, false, &src, err, sizeof err) == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(err, "sketch.sketch:8:16");
    CHECK_CONTAINS(err, "above Triton-Ascend's block limit (32768)");
    free(src);
    /* the same sketch at 32768 lowers */
    akg_sketch_free(sk);
    char *small = akg_strdup(text);
    char *p = strstr(small, "65536");
    memcpy(p, "32768", 5);
    sk = parse_checked(small);
    CHECK(sk != NULL);
    if (sk) {
        CHECK(be->lower(sk, false, &src, err, sizeof err) == AKG_OK);
        if (src)
            CHECK_CONTAINS(src, "tl.arange(0, 32768)");
        free(src);
        akg_sketch_free(sk);
    }
    free(small);
}

static void test_emit(const char *root)
{
    const akg_backend *be = akg_backend_find("ascend", "triton_ascend");
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/fixtures/refs/relu.py", root);
    char *src = read_file(path);
    snprintf(path, sizeof path, "%s/tests/fixtures/sketches/relu.sketch", root);
    char *text = read_file(path);
    CHECK(src && text && be);
    akg_reference *ref = src ? akg_reference_parse(src, strlen(src), "relu.py") : NULL;
    akg_sketch *sk = text ? parse_checked(text) : NULL;
    CHECK(ref != NULL && sk != NULL);
    if (ref && sk && be) {
        akg_emit_request req = {.ref = ref, .sketch_file = "relu.sketch"};
        akg_kernel_files files = {0};
        char err[1024] = "";
        CHECK(be->emit(sk, &req, &files, err, sizeof err) == AKG_OK);
        if (files.kernel_filename) {
            CHECK(!strncmp(files.kernel_filename, "kernel_", 7));
            CHECK(files.library_filename == NULL);
            CHECK_CONTAINS(files.model_new_source, "import torch_npu");
            CHECK_CONTAINS(files.model_new_source, "_AKG_DEVICE = \"npu\"");
            CHECK_CONTAINS(files.model_new_source, "(ascend/triton_ascend)");
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
    test_block_limit();
    test_emit(root);
    return check_summary();
}
