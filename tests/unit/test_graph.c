/* test_graph.c: the probe's op graph (engine/task/graph.c): parsing, validation with messages
 * that name the value and the fault; and the graph Designer (designer_graph.c) on graphs
 * written here as the harness's trace gives them: GEMM with an epilogue, elementwise chains
 * with broadcasting, views, dtypes, tuples and remainders, embeddings, and the refusals that
 * name the first operation that does not fit. */
#include <stdlib.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/design.h"
#include "akg/graph.h"
#include "akg/sketch.h"
#include "check.h"

/* Linear(64, 32) then ReLU, as every spelling of it traces */
#define LEAVES_LINEAR                                                                              \
    "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[8,64],\"dtype\":\"f32\","  \
    "\"strides\":[64,1]},"                                                                         \
    "{\"id\":1,\"kind\":\"weight\",\"name\":\"fc.weight\",\"shape\":[32,64],\"dtype\":\"f32\","    \
    "\"strides\":[64,1]},"                                                                         \
    "{\"id\":2,\"kind\":\"weight\",\"name\":\"fc.bias\",\"shape\":[32],\"dtype\":\"f32\","         \
    "\"strides\":[1]},"                                                                            \
    "{\"id\":3,\"kind\":\"op\",\"op\":\"permute\",\"args\":[1],\"attrs\":{\"perm\":[1,0]},"        \
    "\"shape\":[64,32],\"dtype\":\"f32\",\"strides\":[1,64],\"line\":14,\"module\":\"fc\"},"       \
    "{\"id\":4,\"kind\":\"op\",\"op\":\"matmul\",\"args\":[0,3],\"attrs\":{},\"shape\":[8,32],"    \
    "\"dtype\":\"f32\",\"strides\":[32,1],\"line\":14,\"module\":\"fc\"},"                         \
    "{\"id\":5,\"kind\":\"op\",\"op\":\"add\",\"args\":[4,2],\"attrs\":{},\"shape\":[8,32],"       \
    "\"dtype\":\"f32\",\"strides\":[32,1],\"line\":14,\"module\":\"fc\"}"

static const char *graph_linear_relu =
    "{\"version\":1,\"values\":[" LEAVES_LINEAR
    ",{\"id\":6,\"kind\":\"op\",\"op\":\"relu\",\"args\":[5],\"attrs\":{},\"shape\":[8,32],"
    "\"dtype\":\"f32\",\"strides\":[32,1],\"line\":15,\"module\":\"\"}],\"outputs\":[6],"
    "\"notes\":[]}";

static const char *ref_linear =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(64, 32)\n"
    "        self.act = nn.ReLU()\n\n    def forward(self, x):\n"
    "        y = self.fc(x)\n        return self.act(y)\n\n"
    "def get_inputs():\n    return [torch.randn(8, 64)]\n\n"
    "def get_init_inputs():\n    return []\n";

static const char *ref_xyz = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                             "    def forward(self, x, y, z):\n        return x * y + z\n\n"
                             "def get_inputs():\n    return [torch.randn(8, 1, 16), "
                             "torch.randn(4, 16), torch.randn(8, 4, 16)]\n\n"
                             "def get_init_inputs():\n    return []\n";

static const char *graph_xyz =
    "{\"version\":1,\"values\":["
    "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[8,1,16],\"dtype\":\"f32\"},"
    "{\"id\":1,\"kind\":\"input\",\"index\":1,\"name\":\"y\",\"shape\":[4,16],\"dtype\":\"f32\"},"
    "{\"id\":2,\"kind\":\"input\",\"index\":2,\"name\":\"z\",\"shape\":[8,4,16],\"dtype\":\"f32\"},"
    "{\"id\":3,\"kind\":\"op\",\"op\":\"mul\",\"args\":[0,1],\"attrs\":{},\"shape\":[8,4,16],"
    "\"dtype\":\"f32\",\"line\":6},"
    "{\"id\":4,\"kind\":\"op\",\"op\":\"add\",\"args\":[3,2],\"attrs\":{},\"shape\":[8,4,16],"
    "\"dtype\":\"f32\",\"line\":6}],\"outputs\":[4]}";

static akg_sketch *parse_checked(const char *text)
{
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(text, strlen(text), &sk, diags) == 0);
    if (sk)
        CHECK(akg_sketch_check(sk, diags) == 0);
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        char *line = akg_sketch_diag_format("graph", akg_sketch_diag_at(diags, i));
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
    char *kernel; /* the cpu/cpp kernel's source */
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
        if (!erc && k.kernel_source)
            r.kernel = akg_strdup(k.kernel_source);
        akg_kernel_files_free(&k);
        akg_sketch_free(sk);
    }
    return r;
}

static void release(designed *r)
{
    free(r->kernel);
    akg_design_free(r->d);
    cJSON_Delete(r->probe);
    akg_reference_free(r->ref);
}

static void expect_malformed(const char *json, const char *needle)
{
    cJSON *j = cJSON_Parse(json);
    akg_graph *g = NULL;
    char err[512] = "";
    CHECK(j != NULL);
    CHECK(akg_graph_parse(j, &g, err, sizeof err) == AKG_EINVAL);
    CHECK(g == NULL);
    CHECK_CONTAINS(err, needle);
    cJSON_Delete(j);
}

static void test_parse(void)
{
    cJSON *j = cJSON_Parse(graph_linear_relu);
    akg_graph *g = NULL;
    char err[512] = "";
    CHECK(akg_graph_parse(j, &g, err, sizeof err) == AKG_OK);
    cJSON_Delete(j); /* the graph keeps its own copy */
    if (!g)
        return;
    CHECK(g->n_values == 7 && g->n_outputs == 1 && g->outputs[0] == 6);
    CHECK(g->values[0].kind == AKG_GRAPH_INPUT && g->values[0].index == 0);
    CHECK_STR(g->values[1].name, "fc.weight");
    CHECK(g->values[2].rank == 1 && g->values[2].shape[0] == 32);
    CHECK_STR(g->values[4].op, "matmul");
    CHECK(g->values[4].n_args == 2 && g->values[4].args[1].value == 3);
    CHECK(g->values[4].line == 14 && !strcmp(g->values[4].module, "fc"));
    CHECK(g->values[3].strides[0] == 1 && g->values[3].strides[1] == 64);
    long perm[8];
    CHECK(akg_graph_attr_ints(&g->values[3], "perm", perm, 8) == 2 && perm[0] == 1);
    CHECK(g->values[4].uses == 1 && g->values[4].n_consumers == 1 &&
          g->values[4].consumers[0] == 5);
    CHECK(g->values[6].is_output && g->values[6].uses == 1);
    CHECK(g->values[6].line == 15);
    akg_graph_free(g);

    /* numbers and None as arguments, a value read twice */
    j = cJSON_Parse("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,"
                    "\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"},{\"id\":1,\"kind\":\"op\","
                    "\"op\":\"mul\",\"args\":[0,{\"value\":0.5}],\"shape\":[4],\"dtype\":\"f32\","
                    "\"line\":null},{\"id\":2,\"kind\":\"op\",\"op\":\"where\",\"args\":[1,1,"
                    "{\"value\":true}],\"shape\":[4],\"dtype\":\"f32\"}],\"outputs\":[2]}");
    CHECK(akg_graph_parse(j, &g, err, sizeof err) == AKG_OK);
    cJSON_Delete(j);
    if (g) {
        CHECK(g->values[1].args[1].kind == AKG_GRAPH_ARG_NUMBER &&
              g->values[1].args[1].number == 0.5);
        CHECK(g->values[1].line == 0);
        CHECK(g->values[1].uses == 2 && g->values[1].n_consumers == 1);
        CHECK(g->values[2].args[2].is_bool && g->values[2].args[2].number == 1.0);
        akg_graph_free(g);
    }

    expect_malformed("[]", "not an object");
    expect_malformed("{\"version\":2,\"values\":[],\"outputs\":[]}", "unknown version");
    expect_malformed("{\"version\":1,\"values\":[],\"outputs\":[]}", "no outputs");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":1,\"kind\":\"input\",\"index\":0,"
                     "\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"}],\"outputs\":[0]}",
                     "value 0 (input): its \"id\" is not its position");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,"
                     "\"name\":\"x\",\"shape\":[4],\"dtype\":\"float32\"}],\"outputs\":[0]}",
                     "\"dtype\" must be one of");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,"
                     "\"name\":\"x\",\"shape\":[4,-1],\"dtype\":\"f32\"}],\"outputs\":[0]}",
                     "negative extent");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"op\",\"op\":\"relu\","
                     "\"args\":[0],\"shape\":[4],\"dtype\":\"f32\"}],\"outputs\":[0]}",
                     "value 0 (op relu): argument 0 refers to value 0, which is not an earlier");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,"
                     "\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"},{\"id\":1,\"kind\":\"op\","
                     "\"op\":\"mul\",\"args\":[0,\"two\"],\"shape\":[4],\"dtype\":\"f32\"}],"
                     "\"outputs\":[1]}",
                     "value 1 (op mul): argument 1 is neither");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"tensor\",\"shape\":[4],"
                     "\"dtype\":\"f32\"}],\"outputs\":[0]}",
                     "\"kind\" must be one of");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,"
                     "\"name\":\"x\",\"shape\":[4],\"dtype\":\"f32\"}],\"outputs\":[3]}",
                     "output 0 is not the id of a value");
    expect_malformed("{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"op\",\"args\":[],"
                     "\"shape\":[4],\"dtype\":\"f32\"}],\"outputs\":[0]}",
                     "without an \"op\"");

    /* a probe without a graph says why */
    cJSON *probe = cJSON_Parse("{\"graph\":null,\"graph_error\":\"data-dependent control flow\"}");
    CHECK(akg_graph_from_probe(probe, &g, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "data-dependent control flow");
    cJSON_Delete(probe);
}

static const char *inputs_8x64 = "[{\"kind\":\"tensor\",\"shape\":[8,64],\"dtype\":\"float32\"}]";

static void test_gemm_epilogue(void)
{
    designed r = design(ref_linear, inputs_8x64, graph_linear_relu);
    CHECK(r.rc == AKG_OK);
    if (r.rc)
        fprintf(stderr, "%s\n", r.err);
    if (r.d) {
        CHECK_STR(r.d->family, "matmul");
        CHECK_STR(r.d->op_name, "matmul_bias_relu");
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "a = input(\"x\", [M, K])");
        CHECK_CONTAINS(s, "b = weight(\"fc.weight\", [N, K])");
        CHECK_CONTAINS(s, "v0 = weight(\"fc.bias\", [N])");
        CHECK_CONTAINS(s, "gemm(pa_i, pb_j, acc, trans_a=True)");
        CHECK_CONTAINS(s, "e0 = add(o, vt0)");
        CHECK_CONTAINS(s, "e1 = relu(e0)");
        CHECK_CONTAINS(s, "store(e1 -> c[m0+i:m0+i+MR, n0+j:n0+j+NR])");
    }
    /* `o`, bound in both branches of `if k0 == 0` and read after it, is each thread's own:
     * its storage is declared inside the parallel region of the items, not before the
     * serial loops around it (where the threads would share one tile) */
    const char *o = r.kernel ? strstr(r.kernel, "float o") : NULL;
    const char *par = r.kernel ? strstr(r.kernel, "#pragma omp parallel") : NULL;
    for (const char *p = par; p; p = strstr(p + 1, "#pragma omp parallel"))
        par = p;
    CHECK(o != NULL && par != NULL && o > par);
    release(&r);
}

/* relu(fc(x)) + r: r of the product's shape is read tile by tile in the epilogue (a residual);
 * r of shape [8, 1] is neither that nor a vector of the columns: declined, saying what is read */
static void test_gemm_residual(void)
{
    static const char *ref =
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(64, 32)\n"
        "        self.act = nn.ReLU()\n\n    def forward(self, x, r):\n"
        "        y = self.fc(x)\n        return self.act(y) + r\n\n"
        "def get_inputs():\n    return [torch.randn(8, 64), torch.randn(8, 32)]\n\n"
        "def get_init_inputs():\n    return []\n";
    for (int column = 0; column < 2; column++) {
        char inputs[512], graph[4096];
        const char *rshape = column ? "[8,1]" : "[8,32]";
        snprintf(inputs, sizeof inputs,
                 "[{\"kind\":\"tensor\",\"shape\":[8,64],\"dtype\":\"float32\"},"
                 "{\"kind\":\"tensor\",\"shape\":%s,\"dtype\":\"float32\"}]",
                 rshape);
        /* the trace lists the leaves first: x, r, then the layer's weights */
        snprintf(graph, sizeof graph,
                 "{\"version\":1,\"values\":["
                 "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[8,64],"
                 "\"dtype\":\"f32\"},"
                 "{\"id\":1,\"kind\":\"input\",\"index\":1,\"name\":\"r\",\"shape\":%s,"
                 "\"dtype\":\"f32\"},"
                 "{\"id\":2,\"kind\":\"weight\",\"name\":\"fc.weight\",\"shape\":[32,64],"
                 "\"dtype\":\"f32\"},"
                 "{\"id\":3,\"kind\":\"weight\",\"name\":\"fc.bias\",\"shape\":[32],"
                 "\"dtype\":\"f32\"},"
                 "{\"id\":4,\"kind\":\"op\",\"op\":\"permute\",\"args\":[2],"
                 "\"attrs\":{\"perm\":[1,0]},\"shape\":[64,32],\"dtype\":\"f32\",\"line\":14},"
                 "{\"id\":5,\"kind\":\"op\",\"op\":\"matmul\",\"args\":[0,4],\"attrs\":{},"
                 "\"shape\":[8,32],\"dtype\":\"f32\",\"line\":14},"
                 "{\"id\":6,\"kind\":\"op\",\"op\":\"add\",\"args\":[5,3],\"attrs\":{},"
                 "\"shape\":[8,32],\"dtype\":\"f32\",\"line\":14},"
                 "{\"id\":7,\"kind\":\"op\",\"op\":\"relu\",\"args\":[6],\"attrs\":{},"
                 "\"shape\":[8,32],\"dtype\":\"f32\",\"line\":15},"
                 "{\"id\":8,\"kind\":\"op\",\"op\":\"add\",\"args\":[7,1],\"attrs\":{},"
                 "\"shape\":[8,32],\"dtype\":\"f32\",\"line\":15}],\"outputs\":[8]}",
                 rshape);
        designed r = design(ref, inputs, graph);
        if (!column) {
            CHECK(r.rc == AKG_OK);
            if (r.rc)
                fprintf(stderr, "%s\n", r.err);
            if (r.d) {
                const char *s = r.d->sketch_text;
                CHECK_CONTAINS(s, "res0[M, N]: f32;");
                CHECK_CONTAINS(s, "res0 = input(\"r\", [M, N])");
                CHECK_CONTAINS(s, "load(res0[m0+i:m0+i+MR, n0+j:n0+j+NR] -> rt0)");
                CHECK_CONTAINS(s, "e2 = add(e1, rt0)");
                CHECK_CONTAINS(s, "store(e2 -> c[m0+i:m0+i+MR, n0+j:n0+j+NR])");
            }
        } else {
            CHECK(r.rc == AKG_EUNSUPPORTED);
            CHECK_CONTAINS(r.err, "cannot design add (ref.py:15): it reads input r of shape [8, 1]: "
                                  "an epilogue reads only numbers, f32 vectors of the product's "
                                  "32 columns and f32 tensors of its shape");
        }
        release(&r);
    }
}

static void test_broadcast_chain(void)
{
    const char *inputs = "[{\"kind\":\"tensor\",\"shape\":[8,1,16],\"dtype\":\"float32\"},"
                         "{\"kind\":\"tensor\",\"shape\":[4,16],\"dtype\":\"float32\"},"
                         "{\"kind\":\"tensor\",\"shape\":[8,4,16],\"dtype\":\"float32\"}]";
    designed r = design(ref_xyz, inputs, graph_xyz);
    CHECK(r.rc == AKG_OK);
    if (r.rc)
        fprintf(stderr, "%s\n", r.err);
    if (r.d) {
        CHECK_STR(r.d->family, "pointwise");
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "x0 = input(\"x\", [D0, 1, D2])");
        CHECK_CONTAINS(s, "x1 = input(\"y\", [D1, D2])");
        CHECK_CONTAINS(s, "load(x0[r // (D1), 0, c0:c0+BLOCK] -> t0)");
        CHECK_CONTAINS(s, "load(x1[r % D1, c0:c0+BLOCK] -> t1)");
        CHECK_CONTAINS(s, "t4 = add(t3, t2)");
    }
    release(&r);
}

static void test_refusal(void)
{
    const char *graph =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[8,64],\"dtype\":"
        "\"f32\"},"
        "{\"id\":1,\"kind\":\"op\",\"op\":\"aten.grid_sampler_2d\",\"args\":[0,0],\"attrs\":{},"
        "\"shape\":[8,64],\"dtype\":\"f32\",\"line\":12},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"cumsum\",\"args\":[1],\"attrs\":{\"dim\":1},"
        "\"shape\":[8,64],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"relu\",\"args\":[2],\"attrs\":{},"
        "\"shape\":[8,64],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":4,\"kind\":\"op\",\"op\":\"aten.foo\",\"args\":[3],\"attrs\":{},"
        "\"shape\":[8,64],\"dtype\":\"f32\",\"line\":14}],\"outputs\":[4]}";
    designed r = design(ref_linear, inputs_8x64, graph);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    /* cumsum has a rule (designer_graph_reduce.c): aten.foo is the one more */
    CHECK_CONTAINS(r.err, "cannot design aten.grid_sampler_2d (ref.py:12): no rule for this "
                          "operation; 1 more operation is not covered");
    CHECK_CONTAINS(r.err, "--workflow verifier_only");
    CHECK(r.where.start_row == 11);
    release(&r);

    /* a graph that is malformed leaves the rules' message */
    r = design(ref_linear, inputs_8x64, "{\"version\":1,\"values\":[],\"outputs\":[]}");
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK(strstr(r.err, "cannot design") == NULL);
    release(&r);
}

/* a 3-D input through Linear(64, 48) then tanh-GELU: the leading dims are rows */
static void test_gemm_rows_of_3d(void)
{
    const char *graph =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[4,12,64],"
        "\"dtype\":\"f32\"},"
        "{\"id\":1,\"kind\":\"weight\",\"name\":\"fc.weight\",\"shape\":[48,64],\"dtype\":"
        "\"f32\"},"
        "{\"id\":2,\"kind\":\"weight\",\"name\":\"fc.bias\",\"shape\":[48],\"dtype\":\"f32\"},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"permute\",\"args\":[1],\"attrs\":{\"perm\":[1,0]},"
        "\"shape\":[64,48],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":4,\"kind\":\"op\",\"op\":\"matmul\",\"args\":[0,3],\"attrs\":{},"
        "\"shape\":[4,12,48],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":5,\"kind\":\"op\",\"op\":\"add\",\"args\":[4,2],\"attrs\":{},"
        "\"shape\":[4,12,48],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":6,\"kind\":\"op\",\"op\":\"gelu\",\"args\":[5],\"attrs\":{\"approximate\":"
        "\"tanh\"},\"shape\":[4,12,48],\"dtype\":\"f32\",\"line\":13},"
        "{\"id\":7,\"kind\":\"op\",\"op\":\"mul\",\"args\":[6,{\"value\":2}],\"attrs\":{},"
        "\"shape\":[4,12,48],\"dtype\":\"f32\",\"line\":13}],\"outputs\":[7]}";
    const char *inputs = "[{\"kind\":\"tensor\",\"shape\":[4,12,64],\"dtype\":\"float32\"}]";
    designed r = design(ref_linear, inputs, graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_STR(r.d->op_name, "matmul_bias_gelu_tanh_mul");
        CHECK_CONTAINS(s, "a[R, K]: f32");
        CHECK_CONTAINS(s, "a = input(\"x\", [Z0, M, K])");
        CHECK_CONTAINS(s, "c = output(0, [Z0, M, N])");
        CHECK_CONTAINS(s, "e1 = gelu_tanh(e0)");
        CHECK_CONTAINS(s, "e2 = mul(e1, 2.0)");
    }
    release(&r);

    /* work before the product is declined at that op */
    const char *pre =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[8,64],"
        "\"dtype\":\"f32\"},"
        "{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[64,32],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"relu\",\"args\":[0],\"attrs\":{},"
        "\"shape\":[8,64],\"dtype\":\"f32\",\"line\":12},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"matmul\",\"args\":[2,1],\"attrs\":{},"
        "\"shape\":[8,32],\"dtype\":\"f32\",\"line\":13}],\"outputs\":[3]}";
    r = design(ref_linear, inputs_8x64, pre);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design matmul (ref.py:13): a matrix product whose operands");
    release(&r);
}

/* ---------- reductions, norms and softmax (designer_graph_reduce.c) ---------- */

#define REF_HEAD "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
#define REF_TAIL "\ndef get_init_inputs():\n    return []\n"
#define X_LEAF(shape)                                                                              \
    "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":" shape ",\"dtype\":"       \
    "\"f32\"}"
#define OP(id, op, args, attrs, shape, line)                                                       \
    ",{\"id\":" #id ",\"kind\":\"op\",\"op\":\"" op "\",\"args\":" args ",\"attrs\":" attrs        \
    ",\"shape\":" shape ",\"dtype\":\"f32\",\"line\":" #line "}"

static void test_reductions(void)
{
    /* LayerNorm written by hand: mean, variance of x - mean, scale and shift */
    const char *ln_ref =
        REF_HEAD "    def __init__(self):\n        super().__init__()\n"
                 "        self.weight = nn.Parameter(torch.ones(512))\n"
                 "        self.bias = nn.Parameter(torch.zeros(512))\n\n"
                 "    def forward(self, x):\n        m = x.mean(dim=-1, keepdim=True)\n"
                 "        v = ((x - m) ** 2).mean(dim=-1, keepdim=True)\n"
                 "        return (x - m) / torch.sqrt(v + 1e-5) * self.weight + self.bias\n\n"
                 "def get_inputs():\n    return [torch.randn(32, 512)]\n" REF_TAIL;
    const char *ln_graph = "{\"version\":1,\"values\":[" X_LEAF(
        "[32,512]") ",{\"id\":1,\"kind\":\"weight\",\"name\":\"weight\",\"shape\":[512],\"dtype\":"
                    "\"f32\"}"
                    ",{\"id\":2,\"kind\":\"weight\",\"name\":\"bias\",\"shape\":[512],\"dtype\":"
                    "\"f32\"}" OP(3, "mean", "[0]", "{\"dims\":[1],\"keepdim\":true}", "[32,1]",
                                  11) OP(4, "sub", "[0,3]", "{}", "[32,512]", 12)
                        OP(5, "pow", "[4,{\"value\":2.0}]", "{}", "[32,512]", 12)
                            OP(6, "mean", "[5]", "{\"dims\":[1],\"keepdim\":true}", "[32,1]", 12)
                                OP(7, "add", "[6,{\"value\":1e-05}]", "{}", "[32,1]", 13)
                                    OP(8, "sqrt", "[7]", "{}", "[32,1]", 13)
                                        OP(9, "div", "[4,8]", "{}", "[32,512]", 13)
                                            OP(10, "mul", "[9,1]", "{}", "[32,512]", 13)
                                                OP(11, "add", "[10,2]", "{}", "[32,512]",
                                                   13) "],"
                                                       "\"outputs\":"
                                                       "[11]}";
    const char *in_32x512 = "[{\"kind\":\"tensor\",\"shape\":[32,512],\"dtype\":\"float32\"}]";
    designed r = design(ln_ref, in_32x512, ln_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "x = input(\"x\", [A0, A1])");
        CHECK_CONTAINS(s, "bias = weight(\"bias\", [A1])");
        CHECK_CONTAINS(s, "load(weight[:] -> v1)");
        CHECK_CONTAINS(s, "v3 = cast(reduce_mean(cast(v0, f64), axis=1), f32)");
        CHECK_CONTAINS(s, "v6 = cast(reduce_mean(cast(v5, f64), axis=1), f32)");
        CHECK_CONTAINS(s, "v9 = div(v4, v8)");
        CHECK_CONTAINS(s, "store(v11 -> result[k0:k0+1, :])");
    }
    release(&r);

    /* a sum over dims that are not adjacent, streamed: a task per kept index, the outer
     * reduced dim a loop, the contiguous last one in BLK blocks folded into f64 */
    const char *sum_ref =
        REF_HEAD "    def forward(self, x):\n        return x.sum(dim=(0, 2))\n\n"
                 "def get_inputs():\n    return [torch.randn(16, 64, 128)]\n" REF_TAIL;
    const char *sum_graph = "{\"version\":1,\"values\":[" X_LEAF("[16,64,128]")
        OP(1, "sum", "[0]", "{\"dims\":[0,2],\"keepdim\":false}", "[64]", 6) "],\"outputs\":[1]}";
    const char *in_3d = "[{\"kind\":\"tensor\",\"shape\":[16,64,128],\"dtype\":\"float32\"}]";
    r = design(sum_ref, in_3d, sum_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "for r0 in range(0, A0):");
        CHECK_CONTAINS(s, "load(x[r0, k1, q:q + min(BLK, D - q)] -> v0)");
        CHECK_CONTAINS(s, "acc1 = add(acc1, cast(reduce_sum(v0, axis=0), f64))");
        CHECK_CONTAINS(s, "result = output(0, [A1])");
        /* few tasks with long runs: parts across cores, their partials combined */
        CHECK_CONTAINS(s, "if O >= 32 or D < 65536:");
        CHECK_CONTAINS(s, "load(x[r0, k1, lo + q:lo + q + min(BLK, hi - lo - q)] -> v0)");
        CHECK_CONTAINS(s, "store(acc1 -> part_acc1[p:p + 1])");
        CHECK_CONTAINS(s, "acc1 = reduce_sum(part_acc1, axis=0)");
        CHECK_CONTAINS(s, "store(v1 -> result[o:o + 1])");
    }
    release(&r);

    /* the unbiased variance divides by N - 1; softmax as a composite op, last dim kept */
    const char *var_ref =
        REF_HEAD "    def forward(self, x):\n        return x.var(dim=1)\n\n"
                 "def get_inputs():\n    return [torch.randn(16, 64, 128)]\n" REF_TAIL;
    const char *var_graph = "{\"version\":1,\"values\":[" X_LEAF("[16,64,128]")
        OP(1, "var", "[0]", "{\"dims\":[1],\"keepdim\":false,\"correction\":1}", "[16,128]",
           6) "],\"outputs\":[1]}";
    r = design(var_ref, in_3d, var_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "NC = 1 * A1 - 1");
        CHECK_CONTAINS(s, "for c in range(0, A2, CH):");
        CHECK_CONTAINS(s, "s1 = div(s1, NC)");
        CHECK_CONTAINS(s, "store(v1 -> result[k0:k0+1, 0:1, c:c+CH])");
    }
    release(&r);

    /* reductions over two different sets of dims are declined at the second */
    const char *two_ref =
        REF_HEAD "    def forward(self, x):\n        a = x.sum(dim=1, keepdim=True)\n"
                 "        return a + x.sum(dim=2, keepdim=True)\n\n"
                 "def get_inputs():\n    return [torch.randn(16, 64, 128)]\n" REF_TAIL;
    const char *two_graph = "{\"version\":1,\"values\":[" X_LEAF("[16,64,128]")
        OP(1, "sum", "[0]", "{\"dims\":[1],\"keepdim\":true}", "[16,1,128]", 6)
            OP(2, "sum", "[0]", "{\"dims\":[2],\"keepdim\":true}", "[16,64,1]", 7)
                OP(3, "add", "[1,2]", "{}", "[16,64,128]", 7) "],\"outputs\":[3]}";
    r = design(two_ref, in_3d, two_graph);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design sum (ref.py:7): it runs over dims [2], the first "
                          "reduction (line 6) over [1]");
    release(&r);

    /* x.reshape(B, -1).sum(1): the input is read with its own dims, the merged run bound as
     * their product */
    const char *flat_ref =
        REF_HEAD "    def forward(self, x):\n        return x.reshape(8, -1).sum(1)\n\n"
                 "def get_inputs():\n    return [torch.randn(8, 3, 40, 40)]\n" REF_TAIL;
    const char *flat_graph = "{\"version\":1,\"values\":[" X_LEAF("[8,3,40,40]")
        OP(1, "reshape", "[0]", "{\"shape\":[8,4800]}", "[8,4800]", 6)
            OP(2, "sum", "[1]", "{\"dims\":[1],\"keepdim\":false}", "[8]", 6) "],\"outputs\":[2]}";
    const char *in_4d = "[{\"kind\":\"tensor\",\"shape\":[8,3,40,40],\"dtype\":\"float32\"}]";
    r = design(flat_ref, in_4d, flat_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "x[A0, A1]: f32");
        CHECK_CONTAINS(s, "x = input(\"x\", [A0, X1_1, X1_2, X1_3]), A1 = X1_1 * X1_2 * X1_3");
        CHECK_CONTAINS(s, "load(x[k0, q:q + min(BLK, D - q)] -> v1)");
    }
    release(&r);

    /* a reshape that splits a dim is not a merge: declined, naming it */
    const char *split_graph = "{\"version\":1,\"values\":[" X_LEAF("[8,4800]")
        OP(1, "reshape", "[0]", "{\"shape\":[8,3,1600]}", "[8,3,1600]", 6)
            OP(2, "sum", "[1]", "{\"dims\":[2],\"keepdim\":false}", "[8,3]", 6) "],\"outputs\":"
                                                                                "[2]}";
    const char *in_flat = "[{\"kind\":\"tensor\",\"shape\":[8,4800],\"dtype\":\"float32\"}]";
    r = design(flat_ref, in_flat, split_graph);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design reshape (ref.py:6): a reshape of x from [8, 4800] to "
                          "[8, 3, 1600] that splits or reorders its dims");
    release(&r);

    /* a global average pool then flatten: the result's reshape is only the output's shape;
     * the pooled dims are one run of H * W */
    const char *gap_ref = REF_HEAD
        "    def forward(self, x):\n        return x.mean((2, 3), keepdim=True)"
        ".flatten(1)\n\ndef get_inputs():\n    return [torch.randn(8, 64, 14, 14)]\n" REF_TAIL;
    const char *gap_graph = "{\"version\":1,\"values\":[" X_LEAF("[8,64,14,14]")
        OP(1, "mean", "[0]", "{\"dims\":[2,3],\"keepdim\":true}", "[8,64,1,1]", 6)
            OP(2, "reshape", "[1]", "{\"shape\":[8,64]}", "[8,64]", 6) "],\"outputs\":[2]}";
    const char *in_gap = "[{\"kind\":\"tensor\",\"shape\":[8,64,14,14],\"dtype\":\"float32\"}]";
    r = design(gap_ref, in_gap, gap_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "x[A0 * A1, A2 * A3]: f32");
        CHECK_CONTAINS(s, "D = A2 * A3, NR = 1 * A2 * A3, result = output(0, [A0, A1])");
        CHECK_CONTAINS(s, "v1 = cast(div(acc1, NR), f32)");
    }
    release(&r);

    /* (mean, max) of each row: two outputs of one pass */
    const char *pair_ref =
        REF_HEAD "    def forward(self, x):\n        return x.mean(-1), x.amax(-1)\n\n"
                 "def get_inputs():\n    return [torch.randn(256, 96)]\n" REF_TAIL;
    const char *pair_graph = "{\"version\":1,\"values\":[" X_LEAF("[256,96]")
        OP(1, "mean", "[0]", "{\"dims\":[1],\"keepdim\":false}", "[256]", 6)
            OP(2, "amax", "[0]", "{\"dims\":[1],\"keepdim\":false}", "[256]", 6) "],\"outputs\":"
                                                                                 "[1,2]}";
    const char *in_pair = "[{\"kind\":\"tensor\",\"shape\":[256,96],\"dtype\":\"float32\"}]";
    r = design(pair_ref, in_pair, pair_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "result0 = output(0, [A0]), result1 = output(1, [A0])");
        CHECK_CONTAINS(s, "v2 = max(v2, reduce_max(v0, axis=0))");
        CHECK_CONTAINS(s, "store(v1 -> result0[o:o + 1])");
        CHECK_CONTAINS(s, "store(v2 -> result1[o:o + 1])");
    }
    release(&r);

    /* logsumexp over dim 0 (the last dim kept): CH columns, the max then the f64 sum of
     * exp(x - max), each streamed over the rows */
    const char *lse_ref =
        REF_HEAD "    def forward(self, x):\n        return torch.logsumexp(x, dim=0)\n\n"
                 "def get_inputs():\n    return [torch.randn(512, 64)]\n" REF_TAIL;
    const char *lse_graph = "{\"version\":1,\"values\":[" X_LEAF("[512,64]")
        OP(1, "logsumexp", "[0]", "{\"dims\":[0],\"keepdim\":false}", "[64]", 6) "],"
                                                                                 "\"outputs\":[1]}";
    const char *in_lse = "[{\"kind\":\"tensor\",\"shape\":[512,64],\"dtype\":\"float32\"}]";
    r = design(lse_ref, in_lse, lse_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "for c in range(0, I, CH):");
        CHECK_CONTAINS(s, "m1 = max(m1, v0)");
        CHECK_CONTAINS(s, "acc1 = add(acc1, cast(exp(sub(v0, m1)), f64))");
        CHECK_CONTAINS(s, "store(v1 -> result[o, c:c + min(CH, I - c)])");
        /* few tasks: the rows split into P parts across cores, partial columns combined */
        CHECK_CONTAINS(s, "if O * ceil(I, CH) >= 4 or A0 < 64:");
        CHECK_CONTAINS(s, "for r0 in range(lo, hi):");
        CHECK_CONTAINS(s, "store(m1 -> part_m1[p, :])");
        CHECK_CONTAINS(s, "m1 = reduce_max(part_m1, axis=0, keepdim=False)");
        CHECK_CONTAINS(s, "acc1 = reduce_sum(part_acc1, axis=0, keepdim=False)");
    }
    release(&r);

    /* f64 tensors: the sketch's tensors and results are f64 */
    const char *f64_ref = REF_HEAD
        "    def forward(self, x):\n        return x.var(dim=1)\n\n"
        "def get_inputs():\n    return [torch.randn(120, 500, dtype=torch.float64)]\n" REF_TAIL;
    const char *f64_graph =
        "{\"version\":1,\"values\":[{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\","
        "\"shape\":[120,500],\"dtype\":\"f64\"},{\"id\":1,\"kind\":\"op\",\"op\":\"var\","
        "\"args\":[0],\"attrs\":{\"dims\":[1],\"keepdim\":false,\"correction\":1},\"shape\":[120],"
        "\"dtype\":\"f64\",\"line\":6}],\"outputs\":[1]}";
    const char *in_f64 = "[{\"kind\":\"tensor\",\"shape\":[120,500],\"dtype\":\"float64\"}]";
    r = design(f64_ref, in_f64, f64_graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "x[A0, A1]: f64; result[A0, 1]: f64");
        CHECK_CONTAINS(s, "v1 = cast(s1, f64)");
    }
    release(&r);
}

/* ---------- views, dtypes, tuples, remainder, gathers (designer_graph_ew.c, _gather.c) ----------
 */

#define LEAF(id, name, shape, dt)                                                                  \
    "{\"id\":" #id ",\"kind\":\"input\",\"index\":" #id ",\"name\":\"" name "\",\"shape\":" shape  \
    ",\"dtype\":\"" dt "\"},"
#define OPD(id, op, args, attrs, shape, dt)                                                        \
    "{\"id\":" #id ",\"kind\":\"op\",\"op\":\"" op "\",\"args\":" args ",\"attrs\":" attrs         \
    ",\"shape\":" shape ",\"dtype\":\"" dt "\",\"line\":6}"
#define TENSOR(shape, dt) "{\"kind\":\"tensor\",\"shape\":" shape ",\"dtype\":\"" dt "\"}"

/* a reference of forward(self, a, b) (line 6) that no spelling rule reads: the graph says
 * what it computes */
static const char *ref_ab = REF_HEAD "    def forward(self, a, b):\n        return frob(a, b)\n\n"
                                     "def get_inputs():\n    return []\n" REF_TAIL;

static designed design_ab(const char *inputs, const char *values, const char *outputs)
{
    char graph[8192];
    snprintf(graph, sizeof graph, "{\"version\":1,\"values\":[%s],\"outputs\":%s}", values,
             outputs);
    return design(ref_ab, inputs, graph);
}

static void expect_sketch(designed *r, const char *const *needles)
{
    CHECK(r->rc == AKG_OK);
    if (r->rc)
        fprintf(stderr, "%s\n", r->err);
    for (int i = 0; r->d && needles[i]; i++)
        CHECK_CONTAINS(r->d->sketch_text, needles[i]);
    release(r);
}

static void expect_refusal(designed *r, const char *needle)
{
    CHECK(r->rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r->err, needle);
    release(r);
}

static void test_views(void)
{
    /* a.t() + b: tiles of the output's last two dims, the transposed operand loaded along its
     * own last dim and transposed in registers */
    const char *in = "[" TENSOR("[6,4]", "float32") "," TENSOR("[4,6]", "float32") "]";
    designed r = design_ab(in,
                           LEAF(0, "a", "[6,4]", "f32") LEAF(1, "b", "[4,6]", "f32")
                               OPD(2, "permute", "[0]", "{\"perm\":[1,0]}", "[4,6]",
                                   "f32") "," OPD(3, "add", "[2,1]", "{}", "[4,6]", "f32"),
                           "[3]");
    expect_sketch(&r, (const char *const[]){
                          "x0 = input(\"a\", [D1, D0])", "load(x0[c0:c0+BC, w0:w0+BW] -> t0_r)",
                          "t0 = transpose(t0_r)", "load(x1[w0:w0+BW, c0:c0+BC] -> t1)",
                          "add(t0, t1)", "store(t3 -> out0[w0:w0+BW, c0:c0+BC])", 0});
    /* a[:, None] * b[None, :]: a is one element per row */
    in = "[" TENSOR("[5]", "float32") "," TENSOR("[7]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[5]", "f32") LEAF(1, "b", "[7]", "f32")
                      OPD(2, "reshape", "[0]", "{\"shape\":[5,1]}", "[5,1]",
                          "f32") "," OPD(3, "reshape", "[1]", "{\"shape\":[1,7]}", "[1,7]",
                                         "f32") "," OPD(4, "mul", "[2,3]", "{}", "[5,7]", "f32"),
                  "[4]");
    expect_sketch(&r, (const char *const[]){"t0 = alloc([1]", "load(x0[r:r + 1] -> t0)",
                                            "load(x1[c0:c0+BLOCK] -> t1)", "mul(t0, t1)", 0});
    /* a.t() returned alone: a copy through the transposed view */
    in = "[" TENSOR("[6,4]", "float32") "," TENSOR("[4,6]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[6,4]", "f32")
                      OPD(1, "permute", "[0]", "{\"perm\":[1,0]}", "[4,6]", "f32"),
                  "[1]");
    expect_sketch(&r,
                  (const char *const[]){"sketch permute {", "load(x0[c0:c0+BC, w0:w0+BW] -> t0_r)",
                                        "store(t0 -> out0[w0:w0+BW, c0:c0+BC])", 0});
    /* x.chunk(2, -1) as a GLU: two slices of one tensor, the second at an offset; a select
     * and a stepped slice */
    in = "[" TENSOR("[4,10]", "float32") "," TENSOR("[4,3,10]", "float32") "]";
    r = design_ab(
        in,
        LEAF(0, "a", "[4,10]", "f32") LEAF(1, "b", "[4,3,10]", "f32")
            OPD(2, "slice", "[0]", "{\"dim\":1,\"start\":0,\"end\":5,\"step\":1}", "[4,5]", "f32") "," OPD(
                3, "slice", "[0]", "{\"dim\":1,\"start\":5,\"end\":10,\"step\":1}", "[4,5]",
                "f32") "," OPD(4, "sigmoid", "[3]", "{}", "[4,5]",
                               "f32") "," OPD(5, "select", "[1]", "{\"dim\":1,\"index\":2}",
                                              "[4,10]",
                                              "f32") "," OPD(6, "slice", "[5]",
                                                             "{\"dim\":1,\"start\":1,\"end\":10,"
                                                             "\"step\":2}",
                                                             "[4,5]",
                                                             "f32") "," OPD(7, "mul", "[2,4]", "{}",
                                                                            "[4,5]",
                                                                            "f32") "," OPD(8, "add",
                                                                                           "[7,6]",
                                                                                           "{}",
                                                                                           "[4,5]",
                                                                                           "f32"),
        "[8]");
    expect_sketch(&r, (const char *const[]){"x0[D0, E0]: f32", "x1[D0, E1, E2]: f32",
                                            "load(x0[r, c0:c0+BLOCK] -> t0)",
                                            "load(x0[r, c0 + 5:c0 + 5 + BLOCK] -> t0_1)",
                                            "load(x1[r, 2, 1 + 2 * c0:1 + 2 * (c0 + BLOCK):2] -> "
                                            "t1)",
                                            0});
    /* a.view(4, 2, 3) * b: the tensor declared in the reshaped shape, bound from the original */
    in = "[" TENSOR("[4,6]", "float32") "," TENSOR("[2,1]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "f32") LEAF(1, "b", "[2,1]", "f32")
                      OPD(2, "reshape", "[0]", "{\"shape\":[4,2,3]}", "[4,2,3]",
                          "f32") "," OPD(3, "mul", "[2,1]", "{}", "[4,2,3]", "f32"),
                  "[3]");
    expect_sketch(&r, (const char *const[]){"x0[D0, D1, D2]: f32",
                                            "x0 = input(\"a\", [D0, E0]), D1 = 2, D2 = E0 // (1 * "
                                            "D1)",
                                            "load(x0[r // (D1), r % D1, c0:c0+BLOCK] -> t2)", 0});
    /* a reshape of a computed value that regroups dims is refused with what is read instead */
    in = "[" TENSOR("[4,6]", "float32") "," TENSOR("[24]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "f32") LEAF(1, "b", "[24]", "f32")
                      OPD(2, "neg", "[0]", "{}", "[4,6]",
                          "f32") "," OPD(3, "reshape", "[2]", "{\"shape\":[24]}", "[24]",
                                         "f32") "," OPD(4, "add", "[3,1]", "{}", "[24]", "f32"),
                  "[4]");
    expect_refusal(&r, "cannot design reshape (ref.py:6): a reshape that regroups the dims of a "
                       "computed value");
}

static void test_dtypes(void)
{
    /* f16 * f32 promotes to f32: the f16 tile is cast before the product */
    const char *in = "[" TENSOR("[4,6]", "float16") "," TENSOR("[4,6]", "float32") "]";
    designed r = design_ab(in,
                           LEAF(0, "a", "[4,6]", "f16") LEAF(1, "b", "[4,6]", "f32")
                               OPD(2, "mul", "[0,1]", "{}", "[4,6]", "f32") "," OPD(
                                   3, "add", "[2,{\"value\":1.0}]", "{}", "[4,6]", "f32"),
                           "[3]");
    expect_sketch(&r, (const char *const[]){"x0[N]: f16", "out0[N]: f32", "mul(cast(t0, f32), t1)",
                                            "add(t2, 1.0)", 0});
    /* int32 arithmetic keeps integer literals; a float to int cast truncates */
    in = "[" TENSOR("[4,6]", "int32") "," TENSOR("[4,6]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "i32") LEAF(1, "b", "[4,6]", "f32")
                      OPD(2, "cast", "[1]", "{\"dtype\":\"i32\"}", "[4,6]", "i32") "," OPD(
                          3, "mul", "[2,{\"value\":3}]", "{}", "[4,6]",
                          "i32") "," OPD(4, "add", "[0,3]", "{}", "[4,6]",
                                         "i32") "," OPD(5, "remainder", "[4,{\"value\":5}]", "{}",
                                                        "[4,6]", "i32"),
                  "[5]");
    expect_sketch(&r, (const char *const[]){"out0[N]: i32",
                                            "cast(where(lt(t1, 0.0), neg(floor(neg(t1))), "
                                            "floor(t1)), i32)",
                                            "mul(t2, 3)", "t5 = t4 % 5", 0});
    /* an integer power is refused */
    in = "[" TENSOR("[4,6]", "int32") "," TENSOR("[4,6]", "int32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "i32") LEAF(1, "b", "[4,6]", "i32")
                      OPD(2, "pow", "[0,1]", "{}", "[4,6]", "i32"),
                  "[2]");
    expect_refusal(&r, "cannot design pow (ref.py:6): an integer power");
}

static void test_tuple_and_gather(void)
{
    /* return a + b, a % -0.75: one pass, two outputs */
    const char *in = "[" TENSOR("[4,6]", "float32") "," TENSOR("[4,6]", "float32") "]";
    designed r = design_ab(in,
                           LEAF(0, "a", "[4,6]", "f32") LEAF(1, "b", "[4,6]", "f32")
                               OPD(2, "add", "[0,1]", "{}", "[4,6]", "f32") "," OPD(
                                   3, "remainder", "[0,{\"value\":-0.75}]", "{}", "[4,6]", "f32"),
                           "[2,3]");
    expect_sketch(&r, (const char *const[]){"out1 = output(1, [D0, D1])",
                                            "store(t2 -> out0[i:i+BLOCK])", "t3 = t0 % -0.75",
                                            "store(t3 -> out1[i:i+BLOCK])", 0});
    /* outputs of two shapes are refused */
    in = "[" TENSOR("[4,6]", "float32") "," TENSOR("[6]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "f32") LEAF(1, "b", "[6]", "f32")
                      OPD(2, "add", "[0,1]", "{}", "[4,6]", "f32") "," OPD(3, "neg", "[1]", "{}",
                                                                           "[6]", "f32"),
                  "[2,3]");
    expect_refusal(&r, "output 1 has another shape than output 0");
    /* a matrix product among several outputs */
    in = "[" TENSOR("[4,6]", "float32") "," TENSOR("[6,5]", "float32") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[4,6]", "f32") LEAF(1, "b", "[6,5]", "f32")
                      OPD(2, "matmul", "[0,1]", "{}", "[4,5]", "f32") "," OPD(3, "neg", "[0]", "{}",
                                                                              "[4,6]", "f32"),
                  "[2,3]");
    expect_refusal(&r, "forward returns 2 tensors and one is a matrix product (a GEMM kernel "
                       "writes one output)");
    /* an embedding: the index tile indexes the rows' load */
    in = "[" TENSOR("[100,8]", "float32") "," TENSOR("[3,5]", "int64") "]";
    r = design_ab(in,
                  LEAF(0, "a", "[100,8]", "f32") LEAF(1, "b", "[3,5]", "i64")
                      OPD(2, "aten.embedding", "[0,1]", "{\"padding_idx\":-1}", "[3,5,8]", "f32"),
                  "[2]");
    expect_sketch(&r,
                  (const char *const[]){"ids[R]: i64", "w = input(\"a\", [V, D])",
                                        "out0 = output(0, [I0, I1, D])", "load(ids[r:r+1] -> it)",
                                        "load(w[it, c0:c0+BLOCK] -> t)", 0});
    r = design_ab(in,
                  LEAF(0, "a", "[100,8]", "f32") LEAF(1, "b", "[3,5]", "i64")
                      OPD(2, "aten.embedding", "[0,1]", "{}", "[3,5,8]",
                          "f32") "," OPD(3, "relu", "[2]", "{}", "[3,5,8]", "f32"),
                  "[3]");
    expect_refusal(&r, "an embedding is designed alone");
}

int main(void)
{
    test_parse();
    test_gemm_epilogue();
    test_gemm_residual();
    test_gemm_rows_of_3d();
    test_broadcast_chain();
    test_refusal();
    test_reductions();
    test_views();
    test_dtypes();
    test_tuple_and_gather();
    return check_summary();
}
