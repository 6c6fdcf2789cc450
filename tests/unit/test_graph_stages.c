/* test_graph_stages.c: graphs designed as several stages in one kernel
 * (designer_graph_stages.c, designer_graph_stages_sketch.c): where a graph is cut, the
 * composed sketch of a two-layer MLP, of Linear -> ReLU -> LayerNorm and of three layers (a
 * cut inside a part), each checked and lowered by the cpu/cpp backend; and the composition
 * of two sketch texts on its own (names renamed outside strings and keyword names, a
 * temporary read in another shape than it is written refused). */
#include <stdlib.h>

#include "../../engine/providers/builtin/designer_graph_stages.h"
#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/design.h"
#include "akg/graph.h"
#include "akg/sketch.h"
#include "check.h"

static akg_sketch *parse_checked(const char *text)
{
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(text, strlen(text), &sk, diags) == 0);
    if (sk)
        CHECK(akg_sketch_check(sk, diags) == 0);
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        char *line = akg_sketch_diag_format("stages", akg_sketch_diag_at(diags, i));
        fprintf(stderr, "%s\n", line);
        free(line);
    }
    akg_sketch_diag_list_free(diags);
    return sk;
}

typedef struct {
    akg_reference *ref;
    cJSON *probe;
    akg_design *d;
    int rc;
    akg_range where;
    char err[2048];
} designed;

/* The Designer on ref with a probe of the given inputs and graph; the sketch must check and
 * the cpu/cpp backend must lower it. */
static designed design(const char *src, const char *inputs, const char *graph)
{
    designed r = {0};
    char probe[16384];
    snprintf(probe, sizeof probe, "{\"inputs\":%s,\"init_inputs\":[],\"graph\":%s}", inputs, graph);
    r.ref = akg_reference_parse(src, strlen(src), "ref.py");
    r.probe = cJSON_Parse(probe);
    CHECK(r.probe != NULL);
    r.rc = akg_designer_builtin(r.ref, r.probe, NULL, 1, &r.d, &r.where, r.err, sizeof r.err);
    if (r.rc)
        fprintf(stderr, "design: %s\n", r.err);
    if (r.d) {
        akg_sketch *sk = parse_checked(r.d->sketch_text);
        if (getenv("AKG_TEST_DUMP"))
            fprintf(stderr, "%s\n", r.d->sketch_text);
        const akg_backend *be = akg_backend_find("cpu", "cpp");
        akg_kernel_files k;
        memset(&k, 0, sizeof k);
        char err[1024] = "";
        akg_emit_request req = {.ref = r.ref, .probe = r.probe, .sketch_file = "sketch.sketch"};
        int erc = be && be->emit && sk ? be->emit(sk, &req, &k, err, sizeof err) : -1;
        if (erc)
            fprintf(stderr, "emit: %s\n%s\n", err, r.d->sketch_text);
        CHECK(erc == 0);
        akg_kernel_files_free(&k);
        akg_sketch_free(sk);
    }
    return r;
}

static void release(designed *r)
{
    akg_design_free(r->d);
    cJSON_Delete(r->probe);
    akg_reference_free(r->ref);
}

static const char *ref_mlp =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.mlp = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16),\n"
    "                                 nn.ReLU(), nn.Linear(16, 8))\n"
    "        self.ln = nn.LayerNorm(32)\n\n"
    "    def forward(self, x):\n        return self.mlp(x)\n\n"
    "def get_inputs():\n    return [torch.randn(8, 64)]\n\n"
    "def get_init_inputs():\n    return []\n";

static const char *inputs_8x64 = "[{\"kind\":\"tensor\",\"shape\":[8,64],\"dtype\":\"float32\"}]";

#define LEAF(id, kind, name, shape)                                                                \
    "{\"id\":" #id ",\"kind\":\"" kind "\",\"index\":0,\"name\":\"" name "\",\"shape\":" shape     \
    ",\"dtype\":\"f32\"},"
#define OP(id, op, args, attrs, shape)                                                             \
    "{\"id\":" #id ",\"kind\":\"op\",\"op\":\"" op "\",\"args\":" args ",\"attrs\":" attrs         \
    ",\"shape\":" shape ",\"dtype\":\"f32\",\"line\":14,\"module\":\"mlp\"}"

/* Linear(64, 32), ReLU, Linear(32, 16) as nn.Sequential traces */
static const char *graph_mlp = "{\"version\":1,\"values\":[" LEAF(0, "input", "x", "[8,64]") LEAF(
    1, "weight", "mlp.0.weight", "[32,64]") LEAF(2, "weight", "mlp.0.bias",
                                                 "[32]") LEAF(3, "weight", "mlp.2.weight",
                                                              "[16,32]") LEAF(4, "weight",
                                                                              "mlp.2.bias", "[16]")
    OP(5, "permute", "[1]", "{\"perm\":[1,0]}", "[64,32]") "," OP(6, "matmul", "[0,5]", "{}", "[8,32]") "," OP(
        7, "add", "[6,2]", "{}",
        "[8,32]") "," OP(8, "relu", "[7]", "{}",
                         "[8,32]") "," OP(9, "permute", "[3]", "{\"perm\":[1,0]}",
                                          "[32,16]") "," OP(10, "matmul", "[8,9]", "{}",
                                                            "[8,16]") "," OP(11, "add", "[10,4]",
                                                                             "{}",
                                                                             "[8,16]") "],"
                                                                                       "\"outputs\""
                                                                                       ":[11]}";

static void test_mlp(void)
{
    cJSON *j = cJSON_Parse(graph_mlp);
    akg_graph *g = NULL;
    char err[512];
    CHECK(akg_graph_parse(j, &g, err, sizeof err) == AKG_OK);
    if (g)
        CHECK(akg_graph_stages_cut(g) == 8); /* the relu the second product reads */
    akg_graph_free(g);
    cJSON_Delete(j);

    designed r = design(ref_mlp, inputs_8x64, graph_mlp);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_STR(r.d->op_name, "matmul_bias_relu_then_matmul_bias");
        CHECK_STR(r.d->family, "matmul");
        CHECK_CONTAINS(s, "sketch matmul_bias_relu_then_matmul_bias {");
        CHECK_CONTAINS(s, "c_1 = alloc([M_1, N_1], dtype=f32, llm_hint=[\"slow\", "
                          "\"temp_workspace\"])");
        CHECK_CONTAINS(s, "a_1 = input(\"x\", [M_1, K_1])");
        CHECK_CONTAINS(s, "bind: M_2 = M_1, K_2 = N_1\n");
        CHECK_CONTAINS(s, "b_2 = weight(\"mlp.2.weight\", [N_2, K_2])");
        CHECK_CONTAINS(s, "c_2 = output(0, [M_2, N_2])");
        /* the second product packs its rows of A from the temporary */
        CHECK_CONTAINS(s, "load(c_1[m0_2+i_2:m0_2+i_2+MR_2, k0_2:k0_2+kc_2] -> ta_2)");
        CHECK_CONTAINS(s, "e1_1 = relu(e0_1)");
        CHECK_CONTAINS(s, "gemm(pa_i_2, pb_j_2, acc_2, trans_a=True)");
        CHECK(strstr(s, "result_of_") == NULL);
        CHECK(strstr(s, "output(0, [M_1") == NULL);
        const cJSON *st = cJSON_GetObjectItem(r.d->params, "stages");
        CHECK(cJSON_GetArraySize(st) == 2);
    }
    release(&r);
}

/* the value a stage would write as a temporary is also returned: refused, naming it */
static void test_cut_returned(void)
{
    char graph[8192];
    snprintf(graph, sizeof graph, "%s", graph_mlp);
    char *outs = strstr(graph, "\"outputs\":[11]");
    CHECK(outs != NULL);
    if (!outs)
        return;
    snprintf(outs, sizeof graph - (size_t)(outs - graph), "\"outputs\":[8,11]}");
    designed r = design(ref_mlp, inputs_8x64, graph);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design relu (ref.py:14): a result of forward that a later "
                          "matrix product or reduction also reads");
    CHECK(r.where.start_row == 13);
    release(&r);
}

/* three Linear layers: the second part is cut again */
static void test_three_layers(void)
{
    const char *graph = "{\"version\":1,\"values\":[" LEAF(0, "input", "x", "[8,64]") LEAF(
        1, "weight", "mlp.0.weight", "[32,64]") LEAF(2, "weight", "mlp.2.weight",
                                                     "[16,32]") LEAF(3, "weight", "mlp.4.weight",
                                                                     "[8,16]")
        OP(4, "permute", "[1]", "{\"perm\":[1,0]}", "[64,32]") "," OP(5, "matmul", "[0,4]", "{}", "[8,32]") "," OP(
            6, "relu", "[5]", "{}",
            "[8,32]") "," OP(7, "permute", "[2]", "{\"perm\":[1,0]}",
                             "[32,16]") "," OP(8, "matmul", "[6,7]", "{}",
                                               "[8,16]") "," OP(9, "relu", "[8]", "{}",
                                                                "[8,16]") "," OP(10, "permute",
                                                                                 "[3]",
                                                                                 "{\"perm\":[1,0]}",
                                                                                 "[16,8]") "," OP(11,
                                                                                                  "matmul",
                                                                                                  "[9,10]",
                                                                                                  "{}",
                                                                                                  "[8,8]") "],\"outputs\":[11]}";
    designed r = design(ref_mlp, inputs_8x64, graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        int gemms = 0;
        for (const char *p = s; (p = strstr(p, "gemm(")); p++)
            gemms++;
        CHECK(gemms == 3);
        CHECK_CONTAINS(s, "weight(\"mlp.4.weight\"");
        CHECK_CONTAINS(s, "llm_hint=[\"slow\", \"temp_workspace\"])");
        CHECK(strstr(s, "result_of_") == NULL);
    }
    release(&r);
}

/* Linear(64, 32), ReLU, LayerNorm(32): a GEMM stage then a row stage */
static void test_linear_layernorm(void)
{
    const char *graph = "{\"version\":1,\"values\":[" LEAF(0, "input", "x", "[8,64]")
        LEAF(1, "weight", "fc.weight", "[32,64]") LEAF(2, "weight", "fc.bias", "[32]") LEAF(
            3, "weight", "ln.weight", "[32]") LEAF(4, "weight", "ln.bias", "[32]")
            OP(5, "permute", "[1]", "{\"perm\":[1,0]}", "[64,32]") "," OP(
                6, "matmul", "[0,5]", "{}",
                "[8,32]") "," OP(7, "add", "[6,2]", "{}",
                                 "[8,32]") "," OP(8, "relu", "[7]", "{}",
                                                  "[8,32]") "," OP(9, "layer_norm", "[8,3,4]",
                                                                   "{\"normalized_shape\":[32],"
                                                                   "\"eps\":1e-5}",
                                                                   "[8,32]") "],\"outputs\":[9]}";
    designed r = design(ref_mlp, inputs_8x64, graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(r.d->op_name, "_then_");
        CHECK_CONTAINS(s, "c_1 = alloc([M_1, N_1]");
        CHECK_CONTAINS(s, "weight(\"ln.weight\"");
        CHECK_CONTAINS(s, "reduce_mean(");
        CHECK_CONTAINS(s, "load(c_1[");
    }
    release(&r);
}

/* the composition on its own */
static void test_compose(void)
{
    const char *first = "# one: doubles x\n"
                        "sketch one {\n"
                        "  symbols: N;\n"
                        "  tensors: x[N]: f32; y[N]: f32;\n"
                        "  constexpr: B = tune(8, 16);\n"
                        "  bind: x = input(\"x\", [N]), y = output(0, [N])\n"
                        "\n"
                        "  for i in range(0, N, B):\n"
                        "    t = alloc([B])\n"
                        "    load(x[i:i+B] -> t)\n"
                        "    store(mul(t, 2.0) -> y[i:i+B])\n"
                        "}\n";
    const char *second = "sketch two {\n"
                         "  symbols: N;\n"
                         "  tensors: a[N]: f32; b[N]: f32;\n"
                         "  constexpr: B = 4;\n"
                         "  bind: a = input(\"akg_stage0\", [N]), b = output(0, [N])\n"
                         "\n"
                         "  for i in range(0, N, B):\n"
                         "    t = alloc([B], llm_hint=[\"fastest\"])\n"
                         "    load(a[i:i+B] -> t)\n"
                         "    # t and B keep their names in comments\n"
                         "    store(leaky_relu(t, slope=0.5) -> b[i:i+B])\n"
                         "}\n";
    char err[512] = "";
    char *s =
        akg_sketch_compose_stages(first, second, "akg_stage0", "one_then_two", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_CONTAINS(s, "sketch one_then_two {\n  symbols: N_1, N_2\n");
        CHECK_CONTAINS(s, "  tensors: x_1[N_1]: f32; b_2[N_2]: f32\n");
        CHECK_CONTAINS(s, "  constexpr: B_1 = tune(8, 16)\n  constexpr: B_2 = 4\n");
        CHECK_CONTAINS(s, "  bind: N_2 = N_1\n");
        CHECK_CONTAINS(s, "y_1 = alloc([N_1], dtype=f32, llm_hint=[\"slow\", "
                          "\"temp_workspace\"])");
        CHECK_CONTAINS(s, "load(y_1[i_2:i_2+B_2] -> t_2)");
        CHECK_CONTAINS(s, "leaky_relu(t_2, slope=0.5)");
        CHECK_CONTAINS(s, "# t and B keep their names in comments");
        CHECK_CONTAINS(s, "# one: doubles x");
        CHECK(strstr(s, "akg_stage0") == NULL);
        akg_sketch *sk = parse_checked(s);
        CHECK(sk != NULL);
        akg_sketch_free(sk);
        free(s);
    }
    /* the result read twice (an operand and a residual): both read the temporary */
    const char *twice = "sketch two {\n"
                        "  symbols: N;\n"
                        "  tensors: a[N]: f32; r[N]: f32; b[N]: f32;\n"
                        "  bind: a = input(\"akg_stage0\", [N]), r = input(\"akg_stage0\", [N]), "
                        "b = output(0, [N])\n"
                        "\n"
                        "  t = alloc([N])\n"
                        "  u = alloc([N])\n"
                        "  load(a[:] -> t)\n"
                        "  load(r[:] -> u)\n"
                        "  store(add(t, u) -> b[:])\n"
                        "}\n";
    s = akg_sketch_compose_stages(first, twice, "akg_stage0", "x", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_CONTAINS(s, "  tensors: x_1[N_1]: f32; b_2[N_2]: f32\n");
        CHECK_CONTAINS(s, "load(y_1[:] -> t_2)");
        CHECK_CONTAINS(s, "load(y_1[:] -> u_2)");
        CHECK(strstr(s, "akg_stage0") == NULL);
        akg_sketch *sk = parse_checked(s);
        CHECK(sk != NULL);
        akg_sketch_free(sk);
        free(s);
    }
    /* a temporary read in another shape than it is written: refused, saying so */
    const char *second_2d = "sketch two {\n"
                            "  symbols: M, N;\n"
                            "  tensors: a[M, N]: f32; b[M, N]: f32;\n"
                            "  bind: a = input(\"akg_stage0\", [M, N]), b = output(0, [M, N])\n"
                            "\n"
                            "  t = alloc([M, N])\n"
                            "  load(a[:, :] -> t)\n"
                            "  store(t -> b[:, :])\n"
                            "}\n";
    s = akg_sketch_compose_stages(first, second_2d, "akg_stage0", "x", err, sizeof err);
    CHECK(s == NULL);
    CHECK_CONTAINS(err, "an intermediate is read in the shape it is written");
    free(s);
    /* a second stage that does not read the first one's result */
    s = akg_sketch_compose_stages(first, second, "akg_stage1", "x", err, sizeof err);
    CHECK(s == NULL);
    CHECK_CONTAINS(err, "does not read the first one's result");
    free(s);
}

int main(void)
{
    test_mlp();
    test_cut_returned();
    test_three_layers();
    test_linear_layernorm();
    test_compose();
    return check_summary();
}
