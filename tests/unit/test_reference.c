/* test_reference.c: the tree-sitter reading of KernelBench references, on the
 * fixture files (real files, parsed as the engine parses them). */
#include <stdlib.h>

#include "akg/akg.h"
#include "akg/task.h"
#include "check.h"

static akg_reference *load(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/refs/%s", getenv("AKG_SOURCE_DIR"), name);
    char *src = NULL;
    size_t len = 0;
    char err[256];
    if (akg_read_file(path, 1 << 20, &src, &len, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    akg_reference *r = akg_reference_parse(src, len, path);
    free(src);
    return r;
}

static const char *first_op(const akg_reference *r)
{
    return r && r->n_calls ? r->calls[0].op : NULL;
}

static void check_form_ok(const char *name, const char *op, size_t n_init, int dyn)
{
    akg_reference *r = load(name);
    CHECK(r != NULL);
    if (!r)
        return;
    char err[512] = "";
    CHECK(akg_reference_check_form(r, err, sizeof err) == AKG_OK);
    CHECK(r->has_model && r->has_forward && r->has_get_inputs && r->has_get_init_inputs);
    CHECK(r->has_dyn_list == dyn);
    CHECK(r->n_forward_params == 1);
    CHECK(r->n_init_params == n_init);
    CHECK_STR(first_op(r), op);
    CHECK(r->n_body >= 1);
    CHECK(r->content_hash && strlen(r->content_hash) == 64);
    akg_reference_free(r);
}

int main(void)
{
    /* functional, method and layer call styles resolve to one canonical op */
    check_form_ok("relu.py", "relu", 0, 1);
    check_form_ok("leaky_relu.py", "leaky_relu", 1, 0);
    check_form_ok("sigmoid.py", "sigmoid", 0, 0);
    check_form_ok("tanh.py", "tanh", 0, 0);      /* nn.Tanh layer */
    check_form_ok("gelu.py", "gelu", 0, 0);
    check_form_ok("silu.py", "silu", 0, 0);
    check_form_ok("softplus.py", "softplus", 0, 0);
    check_form_ok("elu.py", "elu", 1, 0);        /* nn.ELU(alpha=alpha) */
    check_form_ok("selu.py", "selu", 0, 0);
    check_form_ok("hardtanh.py", "hardtanh", 2, 0);
    check_form_ok("hardsigmoid.py", "hardsigmoid", 0, 0);
    check_form_ok("softmax.py", "softmax", 0, 1);

    /* layers, their constructor calls, and __init__ attributes */
    akg_reference *r = load("elu.py");
    CHECK(r && r->n_layers == 1);
    if (r && r->n_layers == 1) {
        CHECK_STR(r->layers[0].type, "ELU");
        CHECK(r->layers[0].ctor && r->layers[0].ctor->kind == AKG_EX_CALL);
        CHECK(r->calls[0].is_layer);
    }
    akg_reference_free(r);

    r = load("with_linear.py");
    CHECK(r && akg_reference_check_form(r, NULL, 0) == AKG_OK);
    CHECK(r && r->n_layers >= 1 && strcmp(r->layers[0].type, "Linear") == 0);
    akg_reference_free(r);

    /* __init__'s body as ModelNew runs it: locals and compound statements kept, dedented,
     * super().__init__() and comments left out */
    {
        static const char src[] =
            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
            "    def __init__(self, n):\n"
            "        super(Model, self).__init__()\n"
            "        # statistics\n"
            "        channel = torch.arange(n)\n"
            "        if n > 2:\n"
            "            channel = channel * 2\n"
            "        self.register_buffer(\"mean\", channel.float())\n\n"
            "    def forward(self, x):\n        return x + self.mean\n";
        r = akg_reference_parse(src, sizeof src - 1, "init_body.py");
        CHECK(r != NULL);
        if (r)
            CHECK_STR(r->init_body, "channel = torch.arange(n)\nif n > 2:\n    channel = channel * 2\n"
                                    "self.register_buffer(\"mean\", channel.float())\n");
        akg_reference_free(r);
    }

    /* forward's body as statements with expression trees */
    r = load("softsign.py");
    CHECK(r && r->n_body == 1 && r->body[0].kind == AKG_STMT_RETURN);
    if (r && r->n_body == 1) {
        const akg_expr *e = r->body[0].value;
        CHECK(e && e->kind == AKG_EX_BINOP);
        CHECK_STR(e->name, "/");
        CHECK(e->n_args == 2 && e->args[1]->kind == AKG_EX_BINOP);
    }
    akg_reference_free(r);

    r = load("multi_output.py");
    CHECK(r && r->n_calls >= 2);
    CHECK(r && r->forward_return_text && strchr(r->forward_return_text, ','));
    akg_reference_free(r);

    r = load("unsupported_op.py");
    CHECK(r && akg_reference_check_form(r, NULL, 0) == AKG_OK);
    CHECK(r && r->n_calls >= 1);
    if (r && r->n_calls >= 1)
        CHECK_STR(r->calls[0].callee, "torch.fft.fft(x, dim=-1).abs");
    akg_reference_free(r);

    /* what is missing is said, in words */
    char err[512];
    r = load("no_model_class.py");
    CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "no class Model(nn.Module)");
    akg_reference_free(r);

    r = load("no_get_inputs.py");
    CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "no module-level get_inputs()");
    akg_reference_free(r);

    r = load("not_kernelbench_but_module.py");
    CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "no class Model");
    akg_reference_free(r);

    r = load("syntax_error.py");
    CHECK(r && r->syntax_errors);
    CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "syntax error");
    CHECK(r && r->first_error.start_row + 1 == 14);
    akg_reference_free(r);

    /* akg_reference_form_gap: a file that declares the form is a reference even when it is
     * broken (a syntax error, no forward()); one that does not is told apart, in words */
    r = load("syntax_error.py");
    CHECK(r && akg_reference_form_gap(r) == NULL);
    akg_reference_free(r);
    r = load("no_model_class.py");
    CHECK(r && r->syntax_errors == 0);
    CHECK_STR(r ? akg_reference_form_gap(r) : NULL, "no class Model(nn.Module)");
    akg_reference_free(r);
    r = load("no_get_inputs.py");
    CHECK_STR(r ? akg_reference_form_gap(r) : NULL, "no module-level get_inputs()");
    akg_reference_free(r);
    r = load("relu.py");
    CHECK(r && akg_reference_form_gap(r) == NULL);
    akg_reference_free(r);
    {
        const char *no_forward = "import torch.nn as nn\nclass Model(nn.Module):\n"
                                 "    def __init__(self):\n        super().__init__()\n"
                                 "def get_inputs():\n    return []\n"
                                 "def get_init_inputs():\n    return []\n";
        r = akg_reference_parse(no_forward, strlen(no_forward), "nf.py");
        CHECK(r && akg_reference_form_gap(r) == NULL);
        CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
        CHECK_CONTAINS(err, "nf.py: not in KernelBench form: class Model has no forward()");
        akg_reference_free(r);
        const char *no_init_inputs = "import torch.nn as nn\nclass Model(nn.Module):\n"
                                     "    def forward(self, x):\n        return x\n"
                                     "def get_inputs():\n    return []\n";
        r = akg_reference_parse(no_init_inputs, strlen(no_init_inputs), NULL);
        CHECK_STR(r ? akg_reference_form_gap(r) : NULL, "no module-level get_init_inputs()");
        CHECK(r && akg_reference_check_form(r, err, sizeof err) == AKG_EPARSE);
        CHECK_CONTAINS(err,
                       "reference: not in KernelBench form: no module-level get_init_inputs()");
        akg_reference_free(r);
    }

    /* text that is no Python at all still gives a reference, with errors */
    r = akg_reference_parse("class (((", 9, NULL);
    CHECK(r && r->syntax_errors && !r->has_model);
    akg_reference_free(r);
    return check_summary();
}
