/*
 * task.h: a reference operator in KernelBench form, as the engine sees it.
 *
 * akg_reference_parse() reads the Python source with tree-sitter-python and
 * finds the Model class, the layers built in __init__, the forward body and its
 * calls, and the input builders. It runs nothing. The probe (the harness's
 * `probe` request) adds shapes and dtypes later; the pair is the Task that the
 * agents read.
 *
 * Positions are 0-based rows and byte columns of the source (the LSP server
 * converts to UTF-16 itself).
 */
#ifndef AKG_TASK_H
#define AKG_TASK_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct {
    unsigned start_row, start_col, end_row, end_col;
} akg_range;

/* One call in forward (or a layer call through self.<name>). */
typedef struct {
    char *callee;    /* as written after resolution: "torch.softmax", "F.relu", "x.sigmoid",
                        "self.act" */
    char *op;        /* the canonical op: "softmax", "relu", "sigmoid", "elu" (layer resolved),
                        or "" when unknown */
    char *args_text; /* the argument list's source text, without parentheses */
    akg_range range; /* the whole call expression */
    int is_layer;    /* 1 when it calls a layer made in __init__ */
} akg_ref_call;

/* A layer built in __init__: self.<name> = nn.<Type>(args). */
typedef struct {
    char *name;
    char *type; /* "ELU", "Linear", "Conv2d", ... */
    char *args_text;
    akg_range range;
    struct akg_expr *ctor; /* the constructor call nn.Type(...) */
} akg_ref_layer;

typedef struct {
    char *name;
    char *default_text; /* NULL when none */
} akg_ref_param;

/* A small expression tree of forward's body, enough for the Designer's rules. */
typedef enum {
    AKG_EX_NAME,      /* x                     name */
    AKG_EX_NUMBER,    /* 0.5, 3                number */
    AKG_EX_STRING,    /* 'tanh'                name (the unquoted text) */
    AKG_EX_BOOL,      /* True / False          number 1/0 */
    AKG_EX_NONE,      /* None */
    AKG_EX_ATTR,      /* obj.attr              name=attr, args[0]=obj */
    AKG_EX_CALL,      /* f(a, k=v)             name=canonical op, callee, args (KWARG for k=v);
                         a method call x.f(a) has method=1 and args[0]=x */
    AKG_EX_BINOP,     /* a + b, a @ b, a < b   name=operator, args[0..1] */
    AKG_EX_UNARY,     /* -a, not a             name=operator, args[0] */
    AKG_EX_KWARG,     /* k=v inside a call     name=k, args[0]=v */
    AKG_EX_TUPLE,     /* (a, b) / [a, b]       args */
    AKG_EX_SUBSCRIPT, /* a[i]                  args[0]=a, text holds the rest */
    AKG_EX_OTHER      /* anything else (lambda, comprehension, ...) */
} akg_expr_kind;

typedef struct akg_expr {
    akg_expr_kind kind;
    char *text; /* the source text */
    char *name;
    char *callee; /* CALL only */
    double number;
    int method;   /* CALL: called as a method of args[0] */
    int is_layer; /* CALL: self.<layer>(...) */
    struct akg_expr **args;
    size_t n_args;
    akg_range range;
} akg_expr;

typedef enum { AKG_STMT_ASSIGN, AKG_STMT_RETURN, AKG_STMT_OTHER } akg_stmt_kind;

/* One top-level statement of forward's body (or self.x = ... in __init__). */
typedef struct {
    akg_stmt_kind kind;
    char *target;    /* ASSIGN: the assigned name (NULL for tuple targets) */
    akg_expr *value; /* ASSIGN/RETURN value; NULL for a bare return */
    char *text;      /* the statement's source */
    akg_range range;
} akg_ref_stmt;

typedef struct akg_reference {
    char *path;         /* may be NULL for unsaved text */
    char *content_hash; /* hex SHA-256 of the source */
    int has_model, has_forward, has_init, has_get_inputs, has_get_init_inputs, has_dyn_list;
    akg_range model_range;      /* the class Model definition */
    akg_range model_name_range; /* the identifier "Model" */
    akg_range forward_range;    /* def forward ... */
    akg_range forward_name_range;
    akg_range get_inputs_range;
    akg_range get_init_inputs_range;
    akg_range dyn_list_range;
    akg_ref_param *init_params;
    size_t n_init_params; /* without self */
    akg_ref_param *forward_params;
    size_t n_forward_params; /* without self */
    akg_ref_layer *layers;
    size_t n_layers;
    akg_ref_call *calls;
    size_t n_calls;            /* calls in forward, in order */
    char *forward_return_text; /* the expression of forward's last return */
    akg_ref_stmt *body;
    size_t n_body; /* forward's statements, in order */
    akg_ref_stmt *attrs;
    size_t n_attrs;    /* self.<target> = value in __init__ */
    char *init_body;   /* __init__'s statements but super().__init__(), dedented to
                          column 0, one after another (NULL: none) */
    int syntax_errors; /* tree-sitter ERROR/MISSING nodes */
    akg_range first_error;
} akg_reference;

/* The layer called self.<name>, or NULL. */
const akg_ref_layer *akg_reference_layer(const akg_reference *ref, const char *name);
/* The value assigned to self.<name> in __init__, or NULL. */
const akg_expr *akg_reference_attr(const akg_reference *ref, const char *name);
/* Index of an __init__ parameter by name, or -1. */
int akg_reference_init_param(const akg_reference *ref, const char *name);
/* Canonical op name of a callee or layer type ("nn.ReLU" -> "relu"); malloc'd. */
char *akg_canonical_op(const char *callee);

/* Parses source (len bytes). Always returns a reference (NULL only when out of
 * memory); the caller frees it with akg_reference_free. path may be NULL. */
akg_reference *akg_reference_parse(const char *source, size_t len, const char *path);
void akg_reference_free(akg_reference *ref);

/* AKG_OK when the reference is in KernelBench form; otherwise AKG_EPARSE with
 * a message that says what is missing ("no class Model(nn.Module)", ...). */
int akg_reference_check_form(const akg_reference *ref, char *err, size_t errlen);

/* What keeps a file from declaring a KernelBench reference at all, as a phrase
 * for a person ("no class Model(nn.Module)", "no module-level get_inputs()",
 * "no module-level get_init_inputs()"; static strings), or NULL when it
 * declares all three. Unlike akg_reference_check_form it ignores syntax errors
 * and a missing forward(): those make a broken reference, not a file of another
 * kind. Operator suites use it to tell references from helper modules. */
const char *akg_reference_form_gap(const akg_reference *ref);

/* A cJSON object describing the parse (for tests, the LSP and the store); the
 * caller deletes it. */
cJSON *akg_reference_to_json(const akg_reference *ref);

#endif
