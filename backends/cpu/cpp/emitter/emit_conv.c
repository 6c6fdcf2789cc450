/*
 * emit_conv.c: lowering of convolution sketches to C++ (cpu/cpp).
 *
 * Every layer of the chain runs as an implicit GEMM (weights packed once into
 * MR-row panels; the input, with its padding written out once, read one
 * NR-column panel at a time: in place when the panel is a unit-stride run of
 * one output row, else gathered; the shared micro-kernel; blocking
 * MR/NR/KC/MC/NC from the sketch), as GEMM + col2im for a transposed layer, or,
 * for a depthwise layer the Designer marked direct, as a vectorised row loop
 * with OWB outputs per block. Geometry is a run-time int64 array per layer that
 * ModelNew computes from its own layers (built from the same constructor
 * arguments as Model's) and the input's sizes.
 */
#include <stdio.h>
#include <string.h>

#include "emit_common.h"
#include "emit_conv_runtime.h"
#include "emit_matmul_gemm.h"

#define GEOM_LEN 24

static const char geometry_py[] =
    "\n\ndef _akg_geometry(conv, shape, dims, transposed, has_bias):\n"
    "    \"\"\"The kernel's geometry of one layer for an input of this shape, and the output shape.\"\"\"\n"
    "    ks, st, dl = list(conv.kernel_size), list(conv.stride), list(conv.dilation)\n"
    "    pad = conv.padding\n"
    "    if isinstance(pad, str):\n"
    "        pad = [dl[i] * (ks[i] - 1) // 2 if pad == \"same\" else 0 for i in range(dims)]\n"
    "    pad = list(pad)\n"
    "    n, c, ins = shape[0], shape[1], list(shape[2:])\n"
    "    if len(ins) != dims or c != conv.in_channels:\n"
    "        raise ValueError(\"expected [N, %d, %d spatial dims], got %s\" % (conv.in_channels, dims, shape))\n"
    "    if transposed:\n"
    "        op = list(conv.output_padding)\n"
    "        outs = [(ins[i] - 1) * st[i] - 2 * pad[i] + dl[i] * (ks[i] - 1) + op[i] + 1 for i in range(dims)]\n"
    "    elif conv.padding == \"same\":\n"
    "        outs = list(ins)\n"
    "    else:\n"
    "        outs = [(ins[i] + 2 * pad[i] - dl[i] * (ks[i] - 1) - 1) // st[i] + 1 for i in range(dims)]\n"
    "    lead = 3 - dims\n"
    "    def full(v, fill):\n"
    "        return [fill] * lead + list(v)\n"
    "    reflect = 1 if conv.padding_mode == \"reflect\" else 0\n"
    "    geom = ([n, c] + full(ins, 1) + [conv.out_channels] + full(outs, 1) + full(ks, 1) +\n"
    "            full(st, 1) + full(pad, 0) + full(dl, 1) + [conv.groups, 1 if transposed else 0, reflect])\n"
    "    return geom, [n, conv.out_channels] + outs\n";

int akg_cpp_emit_conv(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                      int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const cJSON *layers = cJSON_GetObjectItem(d->params, "layers");
    int nl = cJSON_GetArraySize(layers);
    const cJSON *inp = cJSON_GetObjectItem(d->params, "input");
    int input = cJSON_IsNumber(inp) ? inp->valueint : 0;
    if (nl < 1 || nl > 4 || input < 0 || (size_t)input >= ref->n_forward_params)
        return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: a conv design without layers");

    akg_gemm_blocking blk;
    akg_cpp_gemm_blocking(sk, safe_mode, &blk);
    long owb = akg_sketch_const_by_name(sk, "OWB", 256);
    if (owb < 8)
        owb = 8;

    akg_buf src;
    akg_buf_init(&src, 4 << 20);
    akg_cpp_emit_header(&src, d);
    akg_cpp_emit_gemm_runtime(&src, &blk);
    akg_buf_appendf(&src, "\n#define AKG_OWB %ld\n", owb);
    akg_buf_puts(&src, akg_cpp_conv_runtime);
    akg_buf_puts(&src, "\n// The layers in order; geom holds 24 int64 per layer (see akg_conv_geom).\n"
                       "extern \"C\" int akg_kernel(const float *x, float *y, const int64_t *geom");
    for (int i = 0; i < nl; i++)
        akg_buf_appendf(&src, ", const float *w%d, const float *b%d", i, i);
    akg_buf_puts(&src, ") {\n  const float *in = x;\n  float *tmp[2] = {nullptr, nullptr};\n"
                       "  int rc = 0;\n");
    for (int i = 0; i < nl; i++) {
        const cJSON *L = cJSON_GetArrayItem(layers, i);
        const char *algo = cJSON_GetStringValue(cJSON_GetObjectItem(L, "algorithm"));
        int direct = algo && !strcmp(algo, "direct");
        akg_buf_appendf(&src, "  {\n    const int64_t *g = geom + %d;\n", i * GEOM_LEN);
        if (i == nl - 1) {
            akg_buf_puts(&src, "    float *o = y;\n");
        } else {
            akg_buf_appendf(&src,
                            "    float *o = akg_alloc_floats(g[0] * g[5] * g[6] * g[7] * g[8]);\n"
                            "    if (!o) { rc = 2; goto done; }\n"
                            "    tmp[%d] = o;\n",
                            i % 2);
        }
        akg_buf_appendf(&src, "    rc = akg_conv_layer(g, in, o, w%d, b%d, %d);  // self.%s\n", i, i,
                        direct, cJSON_GetStringValue(cJSON_GetObjectItem(L, "name")));
        akg_buf_puts(&src, "    if (rc) goto done;\n");
        if (i > 0 && i < nl)
            akg_buf_appendf(&src, "    if (in != x) { std::free((void *)in); tmp[%d] = nullptr; }\n",
                            (i - 1) % 2);
        akg_buf_puts(&src, "    in = o;\n  }\n");
    }
    akg_buf_puts(&src, "done:\n  std::free(tmp[0]);\n  std::free(tmp[1]);\n  return rc;\n}\n");

    char lib[64];
    akg_cpp_library_name(src.data, src.len, lib);
    akg_buf argtypes;
    akg_buf_init(&argtypes, 4096);
    akg_buf_puts(&argtypes, "ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p");
    for (int i = 0; i < nl; i++)
        akg_buf_puts(&argtypes, ", ctypes.c_void_p, ctypes.c_void_p");
    akg_buf py;
    akg_buf_init(&py, 1 << 20);
    akg_cpp_model_new_prologue(&py, d, lib, argtypes.data);
    akg_buf_free(&argtypes);
    akg_buf_puts(&py, geometry_py);
    akg_buf_puts(&py, "\n\n");
    akg_cpp_model_new_init(&py, ref);
    akg_buf_puts(&py, "        # the same layers as Model, from the same arguments: same state_dict\n");
    for (int i = 0; i < nl; i++) {
        const cJSON *L = cJSON_GetArrayItem(layers, i);
        akg_buf_appendf(&py, "        self.%s = nn.%s(%s)\n",
                        cJSON_GetStringValue(cJSON_GetObjectItem(L, "name")),
                        cJSON_GetStringValue(cJSON_GetObjectItem(L, "type")),
                        cJSON_GetStringValue(cJSON_GetObjectItem(L, "args")));
    }
    akg_cpp_model_new_forward_def(&py, ref);
    const char *xn = ref->forward_params[input].name;
    akg_buf_appendf(&py,
                    "        if %s.dtype != torch.float32 or %s.device.type != \"cpu\":\n"
                    "            raise TypeError(\"this kernel takes float32 CPU tensors, got %%s on "
                    "%%s\" %% (%s.dtype, %s.device))\n",
                    xn, xn, xn, xn);
    akg_buf_appendf(&py, "        x = %s.contiguous()\n        shape = list(x.shape)\n"
                         "        geom = []\n        keep = []\n        ptrs = []\n",
                    xn);
    for (int i = 0; i < nl; i++) {
        const cJSON *L = cJSON_GetArrayItem(layers, i);
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(L, "name"));
        int dims = cJSON_GetObjectItem(L, "dims")->valueint;
        int tr = cJSON_GetObjectItem(L, "transposed")->valueint;
        akg_buf_appendf(&py,
                        "        layer = self.%s\n"
                        "        g, shape = _akg_geometry(layer, shape, %d, %s, layer.bias is not None)\n"
                        "        geom += g\n"
                        "        w = layer.weight.detach().contiguous()\n"
                        "        keep.append(w)\n"
                        "        ptrs.append(w.data_ptr())\n"
                        "        if layer.bias is not None:\n"
                        "            bb = layer.bias.detach().contiguous()\n"
                        "            keep.append(bb)\n"
                        "            ptrs.append(bb.data_ptr())\n"
                        "        else:\n"
                        "            ptrs.append(None)\n",
                        name, dims, tr ? "True" : "False");
    }
    akg_buf_puts(&py,
                 "        y = torch.empty(shape, dtype=torch.float32)\n"
                 "        if y.numel() > 0 and x.numel() > 0:\n"
                 "            garr = (ctypes.c_int64 * len(geom))(*geom)\n"
                 "            rc = _KERNEL(x.data_ptr(), y.data_ptr(), garr, *ptrs)\n"
                 "            if rc != 0:\n"
                 "                raise RuntimeError(\"akg_kernel failed with status %d\" % rc)\n"
                 "        return y\n");
    out->library_filename = akg_strdup(lib);
    akg_cpp_finish_files(&src, &py, out);
    return AKG_OK;
}
