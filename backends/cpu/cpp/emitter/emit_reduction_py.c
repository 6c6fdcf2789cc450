/*
 * emit_reduction_py.c: model_new.py for the reduction, norm, scan and loss
 * designs. ModelNew keeps Model's constructor and forward signature, owns
 * the parameters and buffers the kernel reads under Model's state_dict
 * names, computes the [O, D, I] view and the output shape from the inputs'
 * sizes at run time, allocates the output and passes pointers: it calls no
 * torch compute op in forward.
 */
#include <stdio.h>
#include <string.h>

#include "emit_reduction_core.h"

static int count(const cJSON *params, const char *key)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(params, key));
}

static const char *design_kind(const cJSON *params)
{
    const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(params, "design"));
    return k ? k : "";
}

static const char *input_dtype(const cJSON *params, int k)
{
    const char *dt =
        cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(params, "input_dtypes"), k));
    return dt ? dt : "float32";
}

static int out_is_int64(const cJSON *params)
{
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(params, "out_dtype"));
    return dt && !strcmp(dt, "int64");
}

/* The probe's shape; a parameter built from other constructor arguments
 * keeps the probed shape (ModelNew then raises on a mismatch). */
static void py_shape_of_tensor(akg_buf *py, const cJSON *shape)
{
    akg_buf_puts(py, "(");
    const cJSON *v;
    cJSON_ArrayForEach(v, shape) akg_buf_appendf(py, "%ld, ", (long)v->valuedouble);
    akg_buf_puts(py, ")");
}

static void py_tensors_init(akg_buf *py, const cJSON *params, const akg_reference *ref)
{
    const cJSON *t;
    char made[16][64];
    int nmade = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(params, "tensors"))
    {
        const char *attr = cJSON_GetStringValue(cJSON_GetObjectItem(t, "attr"));
        const char *dot = attr ? strchr(attr, '.') : NULL;
        if (!attr)
            continue;
        if (dot) {
            char layer[64];
            snprintf(layer, sizeof layer, "%.*s", (int)(dot - attr), attr);
            int seen = 0;
            for (int i = 0; i < nmade; i++)
                seen |= !strcmp(made[i], layer);
            if (seen || nmade >= 16)
                continue;
            snprintf(made[nmade++], 64, "%s", layer);
            const akg_ref_layer *l = akg_reference_layer(ref, layer);
            if (l)
                akg_buf_appendf(py, "        self.%s = %s(%s)\n", layer,
                                l->ctor && l->ctor->callee ? l->ctor->callee : l->type,
                                l->args_text ? l->args_text : "");
            continue;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItem(t, "buffer"))) {
            akg_buf_appendf(py, "        self.register_buffer(\"%s\", torch.zeros(", attr);
            py_shape_of_tensor(py, cJSON_GetObjectItem(t, "shape"));
            akg_buf_puts(py, "))\n");
        } else {
            akg_buf_appendf(py, "        self.%s = nn.Parameter(torch.zeros(", attr);
            py_shape_of_tensor(py, cJSON_GetObjectItem(t, "shape"));
            akg_buf_puts(py, "))\n");
        }
    }
}

static void py_scalar(akg_buf *py, const cJSON *s)
{
    const char *fi = cJSON_GetStringValue(cJSON_GetObjectItem(s, "from_init"));
    if (fi)
        akg_buf_appendf(py, "float(self._akg_%s)", fi);
    else
        akg_buf_appendf(py, "%.17g", cJSON_GetNumberValue(cJSON_GetObjectItem(s, "value")));
}

int akg_rx_model_new(akg_buf *py, const akg_design *d, const akg_reference *ref, const char *lib)
{
    const cJSON *params = d->params;
    const char *kind = design_kind(params);
    akg_buf argt;
    akg_buf_init(&argt, 4096);
    int nin = count(params, "inputs"), nt = count(params, "tensors"), ns = count(params, "scalars");
    for (int i = 0; i < nin + 1 + nt; i++)
        akg_buf_puts(&argt, "ctypes.c_void_p, ");
    akg_buf_puts(&argt, "ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_double");
    for (int i = 0; i < ns; i++)
        akg_buf_puts(&argt, ", ctypes.c_float");
    akg_cpp_model_new_prologue(py, d, lib, argt.data);
    akg_buf_free(&argt);
    akg_buf_puts(
        py,
        "\ndef _prod(sizes):\n    n = 1\n    for s in sizes:\n        n *= s\n    return n\n\n\n");
    akg_cpp_model_new_init(py, ref);
    py_tensors_init(py, params, ref);
    akg_cpp_model_new_forward_def(py, ref);
    for (int k = 0; k < nin; k++) {
        int fi = (int)cJSON_GetArrayItem(cJSON_GetObjectItem(params, "inputs"), k)->valuedouble;
        const char *name = ref->forward_params[fi].name;
        const char *dt = input_dtype(params, k);
        const char *tdt = !strcmp(dt, "int64")  ? "torch.int64"
                          : !strcmp(dt, "bool") ? "torch.bool"
                                                : "torch.float32";
        akg_buf_appendf(py,
                        "        if %s.dtype != %s or %s.device.type != \"cpu\":\n"
                        "            raise TypeError(\"input %s: this kernel takes %s CPU tensors, "
                        "got %%s on %%s\" %% (%s.dtype, %s.device))\n"
                        "        x%d = %s.contiguous()\n",
                        name, tdt, name, name, dt, name, name, k, name);
        if (k > 0 && !strcmp(kind, "rowloss"))
            akg_buf_appendf(
                py,
                "        if x%d.dim() == 0 or x%d.size(0) != x0.size(0) or (x%d.dtype == "
                "torch.float32 and x%d.size() != x0.size()):\n"
                "            raise ValueError(\"inputs must agree in their batch dim\")\n",
                k, k, k, k);
        if (k > 0 && strcmp(kind, "rowloss") != 0)
            akg_buf_appendf(
                py,
                "        if x%d.size() != x0.size():\n"
                "            raise ValueError(\"inputs must have one shape (no broadcasting)\")\n",
                k);
    }
    akg_buf_puts(py, "        sizes = list(x0.size())\n        r = len(sizes)\n");
    const cJSON *dims = cJSON_GetObjectItem(params, "dims");
    if (!dims || cJSON_GetObjectItem(dims, "all")) {
        akg_buf_puts(py, "        d0, d1 = 0, r\n");
    } else {
        const cJSON *dm = cJSON_GetObjectItem(dims, "dim");
        const char *fi = cJSON_GetStringValue(cJSON_GetObjectItem(dm, "from_init"));
        int n = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dims, "n"));
        if (fi)
            akg_buf_appendf(py, "        d0 = int(self._akg_%s)\n", fi);
        else
            akg_buf_appendf(py, "        d0 = %d\n",
                            (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dm, "value")));
        akg_buf_appendf(
            py,
            "        if d0 < 0:\n            d0 += r\n"
            "        d1 = d0 + %d\n"
            "        if r == 0:\n            d0, d1 = 0, 0\n"
            "        if d0 < 0 or d1 > r:\n"
            "            raise IndexError(\"dim out of range for a tensor of rank %%d\" %% r)\n",
            n < 1 ? 1 : n);
    }
    akg_buf_puts(py,
                 "        O, D, I = _prod(sizes[:d0]), _prod(sizes[d0:d1]), _prod(sizes[d1:])\n");
    const char *dtype = out_is_int64(params) ? "torch.int64" : "torch.float32";
    if (!strcmp(kind, "reduce")) {
        if (cJSON_IsTrue(cJSON_GetObjectItem(params, "keepdim")) ||
            cJSON_GetNumberValue(cJSON_GetObjectItem(params, "keepdim")) == 1)
            akg_buf_puts(py, "        shape = sizes[:d0] + [1] * (d1 - d0) + sizes[d1:]\n");
        else
            akg_buf_puts(py, "        shape = sizes[:d0] + sizes[d1:]\n");
    } else if (!strcmp(kind, "rowloss")) {
        akg_buf_puts(py, "        shape = []\n        O, D, I = sizes[0], _prod(sizes[1:]), 1\n");
    } else if (!strcmp(kind, "chnorm")) {
        akg_buf_puts(
            py,
            "        shape = sizes\n"
            "        if r < 2:\n            raise ValueError(\"expected an input of rank >= 2\")\n"
            "        O, D, I = sizes[0], sizes[1], _prod(sizes[2:])\n");
    } else {
        akg_buf_puts(py, "        shape = sizes\n");
    }
    akg_buf_appendf(py, "        y = torch.empty(shape, dtype=%s)\n", dtype);
    const char *divk = cJSON_GetStringValue(cJSON_GetObjectItem(params, "div"));
    if (divk && !strcmp(divk, "batch"))
        akg_buf_puts(py, "        div = float(sizes[0]) if r > 0 else 1.0\n");
    else
        akg_buf_puts(py, "        div = 1.0\n");
    int k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(params, "tensors"))
    {
        akg_buf_appendf(py, "        p%d = self.%s.detach().contiguous()\n", k,
                        cJSON_GetStringValue(cJSON_GetObjectItem(t, "attr")));
        if (!strcmp(kind, "rowmap"))
            akg_buf_appendf(py,
                            "        if p%d.numel() != D:\n"
                            "            raise ValueError(\"parameter %s must have one entry per "
                            "reduced element\")\n",
                            k, cJSON_GetStringValue(cJSON_GetObjectItem(t, "attr")));
        k++;
    }
    akg_buf_puts(py, "        if y.numel() > 0 and x0.numel() > 0:\n            rc = _KERNEL(");
    for (int i = 0; i < nin; i++)
        akg_buf_appendf(py, "x%d.data_ptr(), ", i);
    akg_buf_puts(py, "y.data_ptr(), ");
    for (int i = 0; i < nt; i++)
        akg_buf_appendf(py, "p%d.data_ptr(), ", i);
    akg_buf_puts(py, "O, D, I, div");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(params, "scalars"))
    {
        akg_buf_puts(py, ", ");
        py_scalar(py, s);
    }
    akg_buf_puts(py,
                 ")\n            if rc != 0:\n"
                 "                raise RuntimeError(\"akg_kernel failed with status %d\" % rc)\n"
                 "        return y\n");
    return AKG_OK;
}
