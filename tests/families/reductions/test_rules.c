/* test_rules.c: the reduction, norm, scan and loss rules, the bound sketches
 * they write, and the cpu/cpp Coder's lowering of those sketches, on the small
 * references in refs/ with the probe answers the harness gives for them. The
 * analysis stays in the design's params as provenance; the sketch alone is
 * lowered. */
#include <stdlib.h>

#include "../../unit/check.h"
#include "../../../engine/providers/builtin/rules_reduction_core.h"
#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/design.h"
#include "akg/sketch.h"

typedef struct {
    akg_reference *ref;
    cJSON *probe;
    akg_design *d;
    akg_sketch *sk;
    int rc;
    char err[1024];
} designed;

static designed design_source(const char *src, const char *probe)
{
    designed r;
    memset(&r, 0, sizeof r);
    r.ref = akg_reference_parse(src, strlen(src), "ref.py");
    r.probe = cJSON_Parse(probe);
    akg_range where;
    r.rc = akg_designer_builtin(r.ref, r.probe, NULL, 1, &r.d, &where, r.err, sizeof r.err);
    if (r.d) {
        /* every sketch parses and checks with no errors */
        akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
        CHECK(akg_sketch_parse(r.d->sketch_text, strlen(r.d->sketch_text), &r.sk, diags) == 0);
        if (r.sk)
            CHECK(akg_sketch_check(r.sk, diags) == 0);
        for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
            const akg_sketch_diag *dg = akg_sketch_diag_at(diags, i);
            if (dg->severity == AKG_SKETCH_ERROR) {
                char *line = akg_sketch_diag_format("sketch", dg);
                fprintf(stderr, "%s\n%s\n", line, r.d->sketch_text);
                free(line);
            }
        }
        akg_sketch_diag_list_free(diags);
    }
    return r;
}

static designed design_file(const char *name, const char *probe)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.py", AKG_FAMILY_REFS, name);
    char *src = NULL, err[256];
    size_t len = 0;
    if (akg_read_file(path, 1 << 20, &src, &len, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, err);
        designed r;
        memset(&r, 0, sizeof r);
        r.rc = -1;
        check_failed++;
        return r;
    }
    designed r = design_source(src, probe);
    free(src);
    return r;
}

static void release(designed *r)
{
    akg_sketch_free(r->sk);
    akg_design_free(r->d);
    cJSON_Delete(r->probe);
    akg_reference_free(r->ref);
}

/* kernel.cpp and model_new.py lowered from the design's sketch alone (joined). */
static char *emit(designed *r, int safe)
{
    akg_kernel_files files;
    char err[512];
    const akg_backend *be = akg_backend_find("cpu", "cpp");
    akg_emit_request req = {.ref = r->ref, .probe = r->probe, .safe = safe != 0,
                            .sketch_file = "sketch.sketch"};
    if (!r->d || !r->sk || !be || be->emit(r->sk, &req, &files, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "emit failed: %s\n", r->d ? err : "no design");
        check_failed++;
        return NULL;
    }
    char *both = malloc(strlen(files.kernel_source) + strlen(files.model_new_source) + 2);
    sprintf(both, "%s\n%s", files.kernel_source, files.model_new_source);
    CHECK(files.library_filename && strncmp(files.library_filename, "kernel_", 7) == 0);
    akg_kernel_files_free(&files);
    return both;
}

static const char *param_str(const akg_design *d, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(d->params, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return cJSON_GetStringValue(o);
}

#define T(shape) "{\"kind\":\"tensor\",\"shape\":" shape ",\"dtype\":\"float32\"}"
#define I(v) "{\"kind\":\"scalar\",\"type\":\"int\",\"value\":" v "}"
#define F(v) "{\"kind\":\"scalar\",\"type\":\"float\",\"value\":" v "}"

int main(void)
{
    /* a reduction over a constructor-given dim, kept: a bound sketch whose branches are
     * the design (rows, long rows split in parts, strided CH columns) */
    designed r = design_file("sum_keepdim",
                             "{\"inputs\":[" T("[6,37,10]") "],\"init_inputs\":[" I("1") "]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->family, "reduction");
        CHECK_STR(param_str(r.d, "design", NULL), "reduce");
        const cJSON *dim = cJSON_GetObjectItem(cJSON_GetObjectItem(r.d->params, "dims"), "dim");
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(dim, "from_init")), "dim");
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r.d->params, "keepdim")) == 1);
        CHECK(r.sk && akg_sketch_has_binding(r.sk));
        CHECK_CONTAINS(r.d->sketch_text, "bind: x = input(\"x\", [A0, A1, A2]), O = A0, D = A1, "
                                         "I = A2");
        CHECK_CONTAINS(r.d->sketch_text, "bind: out = output(0, [A0, 1, A2]), DIM = init(\"dim\")");
        CHECK_CONTAINS(r.d->sketch_text, "if I == 1:");
        /* f32 blocks folded into an f64 accumulator; f64 column accumulators */
        CHECK_CONTAINS(r.d->sketch_text,
                       "acc0 = add(acc0, cast(reduce_sum(t0, axis=0), f64))");
        CHECK_CONTAINS(r.d->sketch_text, "acc = add(acc, cast(t0, f64))");
        /* the partials of parallel parts go to a tile, combined afterwards */
        CHECK_CONTAINS(r.d->sketch_text, "part = alloc([P, I], dtype=f64, llm_hint=[\"slow\"])");
        CHECK_CONTAINS(r.d->sketch_text, "store(acc -> part[p, :])");
        char *k = emit(&r, 0);
        CHECK_CONTAINS(k, "#pragma omp parallel");
        CHECK_CONTAINS(k, "#pragma omp simd");
        CHECK_CONTAINS(k, "static constexpr int64_t C_CH = 256;");
        CHECK_CONTAINS(k, "self._akg_init[\"dim\"]");
        free(k);
        /* safe mode: no OpenMP, no simd pragmas */
        k = emit(&r, 1);
        CHECK(k && !strstr(k, "\n#pragma omp") && !strstr(k, " #pragma omp"));
        free(k);
        /* the sketch's tunables drive the kernel: choose CH = 64 */
        for (size_t i = 0; r.sk && i < akg_sketch_const_count(r.sk); i++)
            if (!strcmp(akg_sketch_const_name(r.sk, i), "CH"))
                CHECK(akg_sketch_const_choose(r.sk, i, 1) == 0);
        k = emit(&r, 0);
        CHECK_CONTAINS(k, "static constexpr int64_t C_CH = 64;");
        free(k);
    }
    release(&r);

    /* argmin writes int64: the extreme, then the first index holding it */
    r = design_file("argmin_last", "{\"inputs\":[" T("[33,45]") "],\"init_inputs\":[]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_CONTAINS(r.d->sketch_text, "out[O, I]: i64");
        CHECK_CONTAINS(r.d->sketch_text, "m0 = reduce_min(t0, axis=0)");
        CHECK_CONTAINS(r.d->sketch_text, "k0 = reduce_min(where(logical_or(eq(t0, m0), ne(t0, "
                                         "t0)), arange(0, D), D), axis=0)");
        CHECK_CONTAINS(r.d->sketch_text, "store(cast(k0, i64) -> out[o, 0:1])");
        char *k = emit(&r, 0);
        CHECK_CONTAINS(k, "int64_t *__restrict T_out");
        CHECK_CONTAINS(k, "torch.int64");
        free(k);
    }
    release(&r);

    /* RMS norm written with torch ops: statistics + elementwise map, the weight a
     * parameter of Model, eps a constructor argument */
    const char *rms_probe =
        "{\"inputs\":[" T("[5,7,24]") "],\"init_inputs\":[" I("24") "," F(
            "1e-5") "],\"params\":[{\"name\":\"weight\",\"shape\":[24],\"dtype\":\"float32\"}]";
    char probe[1024];
    snprintf(probe, sizeof probe, "%s}", rms_probe);
    r = design_file("rms", probe);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->family, "norm");
        CHECK_STR(param_str(r.d, "design", NULL), "rowmap");
        const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(r.d->params, "tensors"), 0);
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(t, "attr")), "weight");
        const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(r.d->params, "scalars"), 0);
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(s, "from_init")), "eps");
        CHECK_CONTAINS(r.d->sketch_text, "weight = weight(\"weight\", [A2])");
        CHECK_CONTAINS(r.d->sketch_text, "eps = init(\"eps\")");
        CHECK_CONTAINS(r.d->sketch_text,
                       "acc0 = add(acc0, cast(reduce_sum(mul(t0, t0), axis=0), f64))");
        CHECK_CONTAINS(r.d->sketch_text, "st0 = div(acc0, D)");
        char *k = emit(&r, 0);
        CHECK_CONTAINS(k, "self.weight");
        CHECK_CONTAINS(k, "self._akg_init[\"eps\"]");
        free(k);
    }
    release(&r);
    /* the same reference with a dynamic case of another rank: a bound sketch gives each
     * tensor one rank, so the design is refused with a message that says so */
    snprintf(probe, sizeof probe,
             "%s,\"dyn_cases\":[{\"inputs\":[" T("[3,24]") "]}]}", rms_probe);
    r = design_file("rms", probe);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK(r.d == NULL);
    CHECK_CONTAINS(r.err, "rank 3 in one case and 2 in another");
    release(&r);

    /* GroupNorm layer: groups and eps from the constructor, the layer rebuilt */
    r = design_file("group_norm",
                    "{\"inputs\":[" T("[3,12,5,7]") "],\"init_inputs\":[" I("12") "," I("4") "," F(
                        "1e-5") "],\"params\":[{\"name\":\"gn.weight\",\"shape\":[12]},{\"name\":"
                                "\"gn.bias\",\"shape\":[12]}]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(param_str(r.d, "design", NULL), "chnorm");
        CHECK_STR(param_str(r.d, "mode", NULL), "group");
        CHECK_CONTAINS(r.d->sketch_text, "bind: G = init(\"groups\"), CG = C // G");
        CHECK_CONTAINS(r.d->sketch_text, "gn_weight = weight(\"gn.weight\", [A1])");
        CHECK_CONTAINS(r.d->sketch_text, "for c in range(g * CG, g * CG + CG):");
        char *k = emit(&r, 0);
        CHECK_CONTAINS(k, "self.gn = nn.GroupNorm(groups, channels, eps=eps)");
        CHECK_CONTAINS(k, "self.gn.weight");
        CHECK_CONTAINS(k, "self._akg_init[\"groups\"]");
        free(k);
    }
    release(&r);

    /* a reverse scan read from flip(cumprod(flip(x))): running products from the end */
    r = design_file("reverse_cumprod", "{\"inputs\":[" T("[30,17]") "],\"init_inputs\":[]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->family, "scan");
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r.d->params, "reverse")));
        CHECK(!cJSON_IsTrue(cJSON_GetObjectItem(r.d->params, "exclusive")));
        CHECK_CONTAINS(r.d->sketch_text, "load(x[o + 3, D - 1 - d, 0] -> u3_0)");
        CHECK_CONTAINS(r.d->sketch_text, "r3 = mul(r3, cast(u3_0, f64))");
        CHECK_CONTAINS(r.d->sketch_text, "run = mul(run, cast(t0, f64))");
        free(emit(&r, 0));
    }
    release(&r);

    /* an exclusive scan stores the running value before adding the element */
    r = design_file("masked_exclusive_cumsum",
                    "{\"inputs\":[" T("[8,100]") "],\"init_inputs\":[" I("-1") "]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r.d->params, "exclusive")));
        const char *st = strstr(r.d->sketch_text, "store(cast(r0, f32) -> y[o, d, 0])");
        const char *up = strstr(r.d->sketch_text, "r0 = add(r0, cast(u0_0, f64))");
        CHECK(st && up && st < up);
    }
    release(&r);

    /* cross entropy with int64 targets: a row loss, the target's logit by gather */
    r = design_file("cross_entropy",
                    "{\"inputs\":[" T("[50,13]") ",{\"kind\":\"tensor\",\"shape\":[50],"
                                                 "\"dtype\":\"int64\"}],\"init_inputs\":[]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->family, "loss");
        CHECK_STR(param_str(r.d, "kind", NULL), "cross_entropy");
        CHECK_CONTAINS(r.d->sketch_text, "targets[B]: i64");
        CHECK_CONTAINS(r.d->sketch_text, "g = gather(t0, k, 0)");
        CHECK_CONTAINS(r.d->sketch_text, "lv = alloc([B], dtype=f64, llm_hint=[\"slow\"])");
        char *k = emit(&r, 0);
        CHECK_CONTAINS(k, "const int64_t *__restrict T_targets");
        free(k);
    }
    release(&r);

    /* HuberLoss layer: delta and reduction from its constructor */
    r = design_file(
        "huber", "{\"inputs\":[" T("[20,31]") "," T("[20,31]") "],\"init_inputs\":[" F("0.7") "]}");
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(r.d->params, "stats"), 0);
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(st, "mode")), "sum");
        const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(r.d->params, "scalars"), 0);
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(s, "from_init")), "delta");
        CHECK_CONTAINS(r.d->sketch_text, "delta = init(\"delta\")");
        CHECK_CONTAINS(r.d->sketch_text, "where(lt(abs(sub(t0, t1)), delta)");
    }
    release(&r);

    /* not one run of dims: a clear message, no design */
    r = design_source("import torch\nimport torch.nn as nn\n"
                      "class Model(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n"
                      "    def forward(self, x):\n        return torch.sum(x, dim=(0, 2))\n"
                      "def get_inputs():\n    return [torch.randn(3, 4, 5)]\n"
                      "def get_init_inputs():\n    return []\n",
                      "{\"inputs\":[" T("[3,4,5]") "],\"init_inputs\":[]}");
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK(r.d == NULL);
    CHECK_CONTAINS(r.err, "built-in provider has no rule");
    CHECK_CONTAINS(r.err, "ref.py:7");
    release(&r);

    /* a row loss of a kind the sketch writers do not know is a design failure with a
     * message, never a kernel */
    r = design_file("cross_entropy",
                    "{\"inputs\":[" T("[50,13]") ",{\"kind\":\"tensor\",\"shape\":[50],"
                                                 "\"dtype\":\"int64\"}],\"init_inputs\":[]}");
    if (r.d) {
        cJSON_ReplaceItemInObject(r.d->params, "kind", cJSON_CreateString("focal"));
        char err[512] = "";
        CHECK(akg_rx_write_sketch(r.d, r.ref, r.probe, 0, "a loss", err, sizeof err) ==
              AKG_EUNSUPPORTED);
        CHECK_CONTAINS(err, "row loss of kind 'focal'");
    }
    release(&r);

    return check_summary();
}
