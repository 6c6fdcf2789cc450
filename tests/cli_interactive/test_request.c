/* test_request.c: the interactive CLI's request parser (cli/request.c) on the phrases it accepts
 * and the ones it refuses, and the reference it writes. */
#include <stdio.h>
#include <string.h>

#include "../../cli/request.h"
#include "../unit/check.h"

static cli_request r;
static char err[2048];

static int parse(const char *text)
{
    err[0] = '\0';
    return cli_request_parse(text, &r, err, sizeof err);
}

static void accepts(void)
{
    CHECK(parse("relu") == 0);
    CHECK_STR(r.op, "relu");
    CHECK(r.kind == CLI_REQ_ELEMENTWISE);
    CHECK(r.shape_default && r.dtype_default && !r.dim_default);
    CHECK(r.rank[0] == 2 && r.shape[0][0] == 256 && r.shape[0][1] == 1024);
    CHECK_STR(r.dtype, "float32");

    CHECK(parse("softmax over the last dim of a 512x4096 float32 tensor") == 0);
    CHECK_STR(r.op, "softmax");
    CHECK(r.kind == CLI_REQ_ROWWISE);
    CHECK(r.dim == -1 && !r.dim_default && !r.shape_default && !r.dtype_default);
    CHECK(r.rank[0] == 2 && r.shape[0][0] == 512 && r.shape[0][1] == 4096);

    CHECK(parse("gelu of a 16x1024 f16 tensor") == 0);
    CHECK_STR(r.op, "gelu");
    CHECK_STR(r.dtype, "float16");
    CHECK(r.shape[0][0] == 16 && r.shape[0][1] == 1024);

    CHECK(parse("Generate a Log-Softmax operator, dim=1, shape (8, 16, 32), bf16") == 0);
    CHECK_STR(r.op, "log_softmax");
    CHECK(r.dim == 1 && r.rank[0] == 3 && r.shape[0][2] == 32);
    CHECK_STR(r.dtype, "bfloat16");

    CHECK(parse("sum over dim 0 of a 64 x 128 tensor, keepdim") == 0);
    CHECK_STR(r.op, "sum");
    CHECK(r.dim == 0 && r.keepdim && r.shape[0][0] == 64 && r.shape[0][1] == 128);

    CHECK(parse("mean of all elements of a 1000-element double tensor") == 0);
    CHECK(r.dim_all && r.rank[0] == 1 && r.shape[0][0] == 1000);
    CHECK_STR(r.dtype, "float64");

    CHECK(parse("gelu with tanh approximation") == 0);
    CHECK_STR(r.op, "gelu_tanh");
    CHECK(parse("leaky_relu 32×64") == 0);
    CHECK_STR(r.op, "leaky_relu");
    CHECK(r.shape[0][0] == 32 && r.shape[0][1] == 64);

    CHECK(parse("cumsum along the second axis of a 4 by 8 by 16 tensor") == 0);
    CHECK(r.dim == 1 && r.rank[0] == 3);
    CHECK(parse("argmax of a 128x256 tensor") == 0 && r.dim == -1 && r.dim_default);

    CHECK(parse("layer norm of a 16x384x768 tensor") == 0);
    CHECK_STR(r.op, "layer_norm");
    CHECK(parse("matmul of 256x512 and 512x128") == 0);
    CHECK(r.kind == CLI_REQ_MATMUL && r.nshapes == 2 && r.shape[1][1] == 128);
    CHECK(parse("matrix multiply 256x512 512x128") == 0 && r.nshapes == 2);
    CHECK(parse("batched matrix product of 4x32x64 and 4x64x16") != 0); /* "batched" unknown */
    CHECK(parse("matrix product of 4x32x64 and 4x64x16") == 0 && r.rank[0] == 3);
}

static void refuses(void)
{
    CHECK(parse("sort a 1000-element tensor") != 0);
    CHECK_CONTAINS(err, "not understood: \"sort\"");
    CHECK_CONTAINS(err, "paste a KernelBench reference");

    CHECK(parse("make my model faster") != 0);
    CHECK_CONTAINS(err, "\"my\"");
    CHECK_CONTAINS(err, "\"model\"");

    CHECK(parse("a 512x512 tensor") != 0);
    CHECK_CONTAINS(err, "no operator named");

    CHECK(parse("relu then softmax") != 0);
    CHECK_CONTAINS(err, "composition of operators: paste a reference");
    CHECK(parse("relu softmax") != 0);
    CHECK_CONTAINS(err, "two operators named, relu and softmax");

    CHECK(parse("relu over dim 1") != 0);
    CHECK_CONTAINS(err, "elementwise");

    CHECK(parse("softmax over dim 2 of a 64x64 tensor") != 0);
    CHECK_CONTAINS(err, "dim 2 is out of range for a 2-D tensor");

    CHECK(parse("relu of an int32 tensor") != 0);
    CHECK_CONTAINS(err, "floating-point");

    CHECK(parse("conv2d with 3x3 kernel") != 0);
    CHECK_CONTAINS(err, "a convolution needs channels");

    CHECK(parse("matmul of 256x512") != 0);
    CHECK_CONTAINS(err, "give both operands");
    CHECK(parse("matmul of 256x512 and 256x128") != 0);
    CHECK_CONTAINS(err, "do not fit");

    CHECK(parse("relu of a 0x16 tensor") != 0);
    CHECK_CONTAINS(err, "at least 1");
    CHECK(parse("relu of a 100000x100000 tensor") != 0);
    CHECK_CONTAINS(err, "more than");

    CHECK(parse("softmax float32 float16") != 0);
    CHECK_CONTAINS(err, "two dtypes");
    CHECK(parse("layer norm over dim 0 of a 8x16 tensor") != 0);
    CHECK_CONTAINS(err, "last dim only");
    CHECK(parse("softmax over dim") != 0);
    CHECK_CONTAINS(err, "without a number");
}

static void writes(void)
{
    char desc[1024], name[256], ref[4096];
    CHECK(parse("softmax") == 0);
    cli_request_describe(&r, desc, sizeof desc);
    CHECK_CONTAINS(desc, "softmax over dim -1 (the last) of a 256x1024 float32 tensor");
    CHECK_CONTAINS(desc, "defaults taken: shape 256x1024");
    CHECK_CONTAINS(desc, "dtype float32");
    cli_request_name(&r, name, sizeof name);
    CHECK_STR(name, "softmax_256x1024_float32_lastdim");
    CHECK(cli_request_reference(&r, "softmax \"quoted\"", ref, sizeof ref) == 0);
    CHECK_CONTAINS(ref, "return torch.softmax(x, dim=-1)");
    CHECK_CONTAINS(ref, "torch.randn(256, 1024, dtype=torch.float32)");
    CHECK_CONTAINS(ref, "request \"softmax 'quoted'\"");
    CHECK_CONTAINS(ref, "def get_init_inputs():");

    CHECK(parse("max over dim 0 of a 8x16 f64 tensor") == 0);
    cli_request_describe(&r, desc, sizeof desc);
    CHECK(strstr(desc, "defaults") == NULL);
    CHECK(cli_request_reference(&r, "x", ref, sizeof ref) == 0);
    CHECK_CONTAINS(ref, "torch.amax(x, dim=0)");

    CHECK(parse("matmul of 32x64 and 64x16") == 0);
    cli_request_name(&r, name, sizeof name);
    CHECK_STR(name, "matmul_32x64_by_64x16_float32");
    CHECK(cli_request_reference(&r, "m", ref, sizeof ref) == 0);
    CHECK_CONTAINS(ref, "forward(self, x: torch.Tensor, b: torch.Tensor)");
    CHECK_CONTAINS(ref, "[torch.randn(32, 64, dtype=torch.float32), torch.randn(64, 16, ");
    CHECK(cli_request_reference(&r, "m", ref, 64) == -1);

    CHECK(parse("cumprod of a 4x8 tensor") == 0);
    CHECK(cli_request_reference(&r, "c", ref, sizeof ref) == 0);
    CHECK_CONTAINS(ref, "1 + 0.01 * torch.randn(4, 8");
}

static void code_or_words(void)
{
    CHECK(cli_request_looks_like_code("import torch"));
    CHECK(cli_request_looks_like_code("class Block(nn.Module):"));
    CHECK(cli_request_looks_like_code("    def forward(self, x):"));
    CHECK(cli_request_looks_like_code("HIDDEN = 768"));
    CHECK(cli_request_looks_like_code("# akg: x: f32[8, 64]"));
    CHECK(!cli_request_looks_like_code("relu"));
    CHECK(!cli_request_looks_like_code("softmax over dim=-1 of a 8x8 tensor"));
    CHECK(!cli_request_looks_like_code("gelu of a 16x1024 f16 tensor"));
}

int main(void)
{
    accepts();
    refuses();
    writes();
    code_or_words();
    return check_summary();
}
