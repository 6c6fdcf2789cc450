/* test_graph_conv.c: the graph Designer's convolutions and pooling (designer_graph_conv.c) on
 * graphs written here as the harness's trace gives them: a convolution with a bias viewed
 * per channel and an activation in the epilogue, BatchNorm in eval mode folded into it, a
 * depthwise convolution's epilogue, functional and adaptive pooling; and the refusals that name
 * the op, its line and why (BatchNorm in training mode, a residual, two convolutions, a
 * replicate pad, an epilogue after a transposed convolution). Every design's sketch must check and
 * lower. */
#include <stdlib.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/design.h"
#include "akg/graph.h"
#include "akg/sketch.h"
#include "check.h"

static const char *ref_conv =
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
    "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.w = nn.Parameter(torch.randn(8, 4, 3, 3))\n\n"
    "    def forward(self, x):\n        return torch.sigmoid(F.conv2d(x, self.w, padding=1))\n\n"
    "def get_inputs():\n    return [torch.randn(2, 4, 10, 10)]\n\n"
    "def get_init_inputs():\n    return []\n";

static const char *inputs_conv =
    "[{\"kind\":\"tensor\",\"shape\":[2,4,10,10],\"dtype\":\"float32\"}]";

#define X_LEAF                                                                                     \
    "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[2,4,10,10],\"dtype\":"     \
    "\"f32\"}"
#define CONV_ATTRS(groups, tr)                                                                     \
    "\"attrs\":{\"stride\":[1,1],\"padding\":[1,1],\"dilation\":[1,1],\"groups\":" #groups         \
    ",\"transposed\":" #tr ",\"output_padding\":[0,0]}"
#define OUT_8 "\"shape\":[2,8,10,10],\"dtype\":\"f32\",\"line\":11"

typedef struct {
    akg_reference *ref;
    cJSON *probe;
    akg_design *d;
    int rc;
    akg_range where;
    char err[2048];
} designed;

/* The Designer on ref_conv with graph; a design's sketch must check and cpu/cpp lower it. */
/* the probe's `cpu` member (with its leading comma), "" for none */
static const char *probe_cpu = "";

static designed design(const char *inputs, const char *graph)
{
    designed r = {0};
    char probe[16384];
    snprintf(probe, sizeof probe, "{\"inputs\":%s,\"init_inputs\":[],\"graph\":%s%s}", inputs,
             graph, probe_cpu);
    r.ref = akg_reference_parse(ref_conv, strlen(ref_conv), "ref.py");
    r.probe = cJSON_Parse(probe);
    CHECK(r.probe != NULL);
    r.rc = akg_designer_builtin(r.ref, r.probe, NULL, 1, &r.d, &r.where, r.err, sizeof r.err);
    if (r.rc && getenv("AKG_TEST_DUMP"))
        fprintf(stderr, "%s\n", r.err);
    if (!r.d)
        return r;
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    CHECK(akg_sketch_parse(r.d->sketch_text, strlen(r.d->sketch_text), &sk, diags) == 0);
    if (sk)
        CHECK(akg_sketch_check(sk, diags) == 0);
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        char *line = akg_sketch_diag_format("graph", akg_sketch_diag_at(diags, i));
        fprintf(stderr, "%s\n", line);
        free(line);
    }
    akg_sketch_diag_list_free(diags);
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
    return r;
}

static void release(designed *r)
{
    akg_design_free(r->d);
    cJSON_Delete(r->probe);
    akg_reference_free(r->ref);
}

/* conv, then + b[:, None, None], then sigmoid */
static void test_bias_view_and_activation(void)
{
    const char *graph =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[8,4,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"weight\",\"name\":\"b\",\"shape\":[8],\"dtype\":\"f32\"},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(
            1, false) "," OUT_8 "},"
                      "{\"id\":4,\"kind\":\"op\",\"op\":\"reshape\",\"args\":[2],\"attrs\":{"
                      "\"shape\":[8,1,1]},\"shape\":[8,1,1],\"dtype\":\"f32\",\"line\":11},"
                      "{\"id\":5,\"kind\":\"op\",\"op\":\"add\",\"args\":[3,4],\"attrs\":{}," OUT_8
                      "},{\"id\":6,\"kind\":\"op\",\"op\":\"sigmoid\",\"args\":[5],\"attrs\":{},"
                      "" OUT_8 "}],\"outputs\":[6]}";
    designed r = design(inputs_conv, graph);
    CHECK(r.rc == AKG_OK);
    if (r.rc)
        fprintf(stderr, "%s\n", r.err);
    if (r.d) {
        CHECK_STR(r.d->family, "conv");
        CHECK_STR(r.d->op_name, "conv2d_bias_sigmoid");
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "bind: w0 = weight(\"w\", [OC0, ICG0, KH0, KW0])\n");
        CHECK_CONTAINS(s, "bind: v0 = weight(\"b\", [OC0])");
        CHECK_CONTAINS(s, "KH0 = 3, SH0 = 1, PH0 = 1");
        CHECK(strstr(s, "attr(") == NULL);
        CHECK_CONTAINS(s, "load(v0[g * OCG0 + p * MR:g * OCG0 + p * MR + MR] -> vt0)");
        CHECK_CONTAINS(s, "e0 = add(o, vt0)\n");
        CHECK_CONTAINS(s, "e1 = sigmoid(e0)\n");
        CHECK_CONTAINS(s, "store(e1 -> y[n, g * OCG0");
        /* no `cpu` in the probe: 8-lane vectors, [6, 16] tiles (4 rows: 8 channels) */
        CHECK_CONTAINS(s, "@llm_hint(\"vectorize\", \"simd\", 8)");
        CHECK_CONTAINS(s, "MR = tune(4, 6), NR = tune(16, 8, 24)");
    }
    release(&r);
    /* where 512-bit FMAs run at full rate: 16-lane vectors, [MR, 32] tiles with MR the row
     * count that fills the 8 output channels (8) */
    probe_cpu = ",\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":6,\"simd\":[\"avx2\",\"fma\","
                "\"avx512f\",\"avx512bw\",\"avx512vl\"]}";
    r = design(inputs_conv, graph);
    probe_cpu = "";
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_CONTAINS(r.d->sketch_text, "@llm_hint(\"vectorize\", \"simd\", 16)");
        CHECK_CONTAINS(r.d->sketch_text, "MR = tune(8, 4), NR = tune(32, 16, 64)");
    }
    release(&r);
}

#define BN_LEAVES                                                                                  \
    "{\"id\":1,\"kind\":\"weight\",\"name\":\"conv.weight\",\"shape\":[8,4,3,3],\"dtype\":"        \
    "\"f32\"},"                                                                                    \
    "{\"id\":2,\"kind\":\"weight\",\"name\":\"bn.weight\",\"shape\":[8],\"dtype\":\"f32\"},"       \
    "{\"id\":3,\"kind\":\"weight\",\"name\":\"bn.bias\",\"shape\":[8],\"dtype\":\"f32\"},"         \
    "{\"id\":4,\"kind\":\"buffer\",\"name\":\"bn.running_mean\",\"shape\":[8],\"dtype\":\"f32\"}," \
    "{\"id\":5,\"kind\":\"buffer\",\"name\":\"bn.running_var\",\"shape\":[8],\"dtype\":\"f32\"},"  \
    "{\"id\":6,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(        \
        1, false) "," OUT_8 "},"

static void test_batch_norm(void)
{
    char graph[4096];
    snprintf(graph, sizeof graph,
             "{\"version\":1,\"values\":[" X_LEAF "," BN_LEAVES
             "{\"id\":7,\"kind\":\"op\",\"op\":\"batch_norm\",\"args\":[6,2,3,4,5],\"attrs\":{"
             "\"training\":%s,\"momentum\":0.1,\"eps\":1e-05}," OUT_8 "},"
             "{\"id\":8,\"kind\":\"op\",\"op\":\"relu\",\"args\":[7],\"attrs\":{}," OUT_8 "}],"
             "\"outputs\":[8]}",
             "false");
    designed r = design(inputs_conv, graph);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->op_name, "conv2d_batch_norm_relu");
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "bind: v3 = weight(\"bn.running_var\", [OC0])");
        CHECK_CONTAINS(s, "bn0 = div(vt0, sqrt(add(vt3, 1e-05)))\n");
        CHECK_CONTAINS(s, "e1 = add(mul(o, bn0), sub(vt1, mul(vt2, bn0)))\n");
        CHECK_CONTAINS(s, "e2 = relu(e1)\n");
    }
    release(&r);

    snprintf(graph, sizeof graph,
             "{\"version\":1,\"values\":[" X_LEAF "," BN_LEAVES
             "{\"id\":7,\"kind\":\"op\",\"op\":\"batch_norm\",\"args\":[6,2,3,4,5],\"attrs\":{"
             "\"training\":%s,\"momentum\":0.1,\"eps\":1e-05}," OUT_8 "}],\"outputs\":[7]}",
             "true");
    r = design(inputs_conv, graph);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design batch_norm (ref.py:11): BatchNorm in training mode");
    CHECK_CONTAINS(r.err, "call .eval()");
    CHECK(r.where.start_row == 10);
    release(&r);
}

/* a depthwise convolution times a [C, 1, 1] parameter: [1, 1] tiles per channel */
static void test_depthwise_epilogue(void)
{
    const char *graph =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[2,8,10,10],\"dtype\":"
        "\"f32\"},"
        "{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[8,1,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"weight\",\"name\":\"scale\",\"shape\":[8,1,1],\"dtype\":\"f32\"},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(
            8, false) "," OUT_8 "},"
                      "{\"id\":4,\"kind\":\"op\",\"op\":\"mul\",\"args\":[3,2],\"attrs\":{}," OUT_8
                      "},{\"id\":5,\"kind\":\"op\",\"op\":\"hardswish\",\"args\":[4],\"attrs\":{},"
                      "" OUT_8 "}],\"outputs\":[5]}";
    const char *inputs = "[{\"kind\":\"tensor\",\"shape\":[2,8,10,10],\"dtype\":\"float32\"}]";
    designed r = design(inputs, graph);
    CHECK(r.rc == AKG_OK);
    if (r.rc)
        fprintf(stderr, "%s\n", r.err);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "bind: v0 = weight(\"scale\", [OC0, 1, 1])");
        CHECK_CONTAINS(s, "depthwise");
        CHECK_CONTAINS(s, "load(v0[oc:oc + 1] -> vt0)");
        CHECK_CONTAINS(s, "e1 = hardswish(e0)");
        CHECK_CONTAINS(s, "store(e1 -> y[n, oc:oc + 1, od, oh, q0:q0 + OWB])");
    }
    release(&r);
}

static void test_refusals(void)
{
    /* a residual: conv(x) + x reads a tensor of the input's shape, not one per channel */
    const char *residual =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[2,8,10,10],\"dtype\":"
        "\"f32\"},"
        "{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[8,8,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(
            1, false) "," OUT_8 "},"
                      "{\"id\":3,\"kind\":\"op\",\"op\":\"add\",\"args\":[2,0],\"attrs\":{}," OUT_8
                      "}],\"outputs\":[3]}";
    const char *inputs = "[{\"kind\":\"tensor\",\"shape\":[2,8,10,10],\"dtype\":\"float32\"}]";
    designed r = design(inputs, residual);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design add (ref.py:11): it reads input x, not one value per "
                          "output channel");
    release(&r);

    /* two convolutions */
    const char *two =
        "{\"version\":1,\"values\":["
        "{\"id\":0,\"kind\":\"input\",\"index\":0,\"name\":\"x\",\"shape\":[2,8,10,10],\"dtype\":"
        "\"f32\"},"
        "{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[8,8,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(
            1, false) ",\"shape\":[2,8,10,10],\"dtype\":\"f32\",\"line\":10},"
                      "{\"id\":3,\"kind\":\"op\",\"op\":\"conv\",\"args\":[2,1,{\"none\":true}],"
                      "" CONV_ATTRS(1, false) "," OUT_8 "}],\"outputs\":[3]}";
    r = design(inputs, two);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design conv (ref.py:11): a second convolution or pooling");
    CHECK_CONTAINS(r.err, "the first is at line 10");
    release(&r);

    /* a pad is the convolution's padding only when it is zeros or reflections */
    const char *replicate =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[8,4,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"pad\",\"args\":[0],\"attrs\":{\"pad\":[1,1,1,1],"
        "\"mode\":\"replicate\",\"value\":null},\"shape\":[2,4,12,12],\"dtype\":\"f32\","
        "\"line\":10},"
        "{\"id\":3,\"kind\":\"op\",\"op\":\"conv\",\"args\":[2,1,{\"none\":true}]," CONV_ATTRS(
            1, false) "," OUT_8 "}],\"outputs\":[3]}";
    r = design(inputs_conv, replicate);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design pad (ref.py:10): a replicate pad before a convolution");
    release(&r);

    /* an epilogue after a transposed convolution */
    const char *tr =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"weight\",\"name\":\"w\",\"shape\":[4,8,3,3],\"dtype\":\"f32\"},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"conv\",\"args\":[0,1,{\"none\":true}]," CONV_ATTRS(
            1, true) "," OUT_8 "},"
                     "{\"id\":3,\"kind\":\"op\",\"op\":\"relu\",\"args\":[2],\"attrs\":{}," OUT_8
                     "}],\"outputs\":[3]}";
    r = design(inputs_conv, tr);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design relu (ref.py:11): an epilogue after a transposed");
    release(&r);
}

static void test_pools(void)
{
    /* F.avg_pool2d(x, 3, stride=2, padding=1): the window as constants, no layer to read */
    const char *avg =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"op\",\"op\":\"avg_pool\",\"args\":[0],\"attrs\":{\"kernel\":[3,3],"
        "\"stride\":[2,2],\"padding\":[1,1],\"ceil_mode\":false,\"count_include_pad\":true,"
        "\"divisor_override\":null},\"shape\":[2,4,5,5],\"dtype\":\"f32\",\"line\":11}],"
        "\"outputs\":[1]}";
    designed r = design(inputs_conv, avg);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->family, "pool");
        CHECK_STR(r.d->op_name, "avg_pool2d");
        CHECK_CONTAINS(r.d->sketch_text, "KH = 3, SH = 2, PH = 1, DLH = 1");
        CHECK(strstr(r.d->sketch_text, "attr(") == NULL);
    }
    release(&r);

    /* adaptive to 5x5 from 10x10: a plain pool of 2x2 windows for that size, else the formula */
    const char *even =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"op\",\"op\":\"adaptive_avg_pool\",\"args\":[0],\"attrs\":{"
        "\"output_size\":[5,5]},\"shape\":[2,4,5,5],\"dtype\":\"f32\",\"line\":11}],"
        "\"outputs\":[1]}";
    r = design(inputs_conv, even);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        CHECK_STR(r.d->op_name, "adaptive_avg_pool2d");
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "OH = 5, OW = 5, KH = 2, KW = 2;");
        CHECK_CONTAINS(s, "if IH == KH * OH and IW == KW * OW:\n");
        CHECK_CONTAINS(s, "H1 = ceil((oH + 1) * IH, OH)\n"); /* other sizes */
        CHECK_CONTAINS(s, "load(x[r, oH * KH + kH, c0:c0 + qw * KW:KW] -> t)");
        CHECK_CONTAINS(s, "store(div(acc, KH * KW) -> y[r, oH, q0:q0 + qw])");
    }
    release(&r);

    /* adaptive to 3x4 from 10x10: PyTorch's start/end windows */
    const char *uneven =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"op\",\"op\":\"adaptive_avg_pool\",\"args\":[0],\"attrs\":{"
        "\"output_size\":[3,4]},\"shape\":[2,4,3,4],\"dtype\":\"f32\",\"line\":11}],"
        "\"outputs\":[1]}";
    r = design(inputs_conv, uneven);
    CHECK(r.rc == AKG_OK);
    if (r.d) {
        const char *s = r.d->sketch_text;
        CHECK_CONTAINS(s, "OWB = tune(256, 64, 1024), OH = 3, OW = 4;");
        CHECK(strstr(s, "if IH ==") == NULL);
        CHECK_CONTAINS(s, "H0 = oH * IH // OH\n");
        CHECK_CONTAINS(s, "H1 = ceil((oH + 1) * IH, OH)\n");
        CHECK_CONTAINS(s, "store(div(v, (H1 - H0) * (W1 - W0)) -> y[r, oH, oW:oW + 1])");
    }
    release(&r);

    /* a pool followed by an op is not fused */
    const char *after =
        "{\"version\":1,\"values\":[" X_LEAF
        ",{\"id\":1,\"kind\":\"op\",\"op\":\"max_pool\",\"args\":[0],\"attrs\":{\"kernel\":[2,2],"
        "\"stride\":[2,2],\"padding\":[0,0],\"dilation\":[1,1],\"ceil_mode\":false},"
        "\"shape\":[2,4,5,5],\"dtype\":\"f32\",\"line\":11},"
        "{\"id\":2,\"kind\":\"op\",\"op\":\"relu\",\"args\":[1],\"attrs\":{},\"shape\":[2,4,5,5],"
        "\"dtype\":\"f32\",\"line\":12}],\"outputs\":[2]}";
    r = design(inputs_conv, after);
    CHECK(r.rc == AKG_EUNSUPPORTED);
    CHECK_CONTAINS(r.err, "cannot design relu (ref.py:12): after pooling nothing is fused yet");
    release(&r);
}

int main(void)
{
    test_bias_view_and_activation();
    test_batch_norm();
    test_depthwise_epilogue();
    test_refusals();
    test_pools();
    return check_summary();
}
