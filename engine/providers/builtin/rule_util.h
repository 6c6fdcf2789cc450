/*
 * rule_util.h: what every rule of the built-in Designer needs to read a
 * reference: call arguments by position or keyword, the value of a scalar
 * expression (a literal, a constructor argument as the probe saw it, or a
 * self.<attr> set in __init__), layers, probe shapes, and the uniform
 * "unsupported" message.
 */
#ifndef AKG_RULE_UTIL_H
#define AKG_RULE_UTIL_H

#include <cjson/cJSON.h>

#include "akg/design.h"
#include "akg/task.h"

/* The argument of a call (AKG_EX_CALL) for parameter `name` at positional
 * index pos (method calls count their receiver as position 0, like the
 * functional form), or NULL. */
const akg_expr *akg_rule_arg(const akg_expr *call, size_t pos, const char *name);

/* Resolves e to a scalar: a number/bool literal (also negated), a string
 * literal (kind AKG_EX_STRING: *str set, value 0), a constructor argument
 * (source INIT_PARAM; value from the probe's init_inputs or its default), or
 * self.<attr> assigned in __init__ (followed). Returns AKG_OK, or AKG_EINVAL
 * when e is not a scalar (no message). str may be NULL. */
int akg_rule_scalar(const akg_reference *ref, const cJSON *probe, const akg_expr *e,
                    const char *name, akg_scalar *out, const char **str);

/* Like akg_rule_scalar for an integer list or tuple literal ("(3, 3)",
 * "[1, 2]") or a single integer (repeated n times). Returns the count read
 * (up to max), or -1. */
int akg_rule_int_list(const akg_reference *ref, const cJSON *probe, const akg_expr *e, long *out,
                      int max, int n_if_scalar);

/* The probe's description of forward input i / output i / parameter by name:
 * the cJSON object with "shape" and "dtype", or NULL. */
const cJSON *akg_rule_probe_input(const cJSON *probe, int i);
const cJSON *akg_rule_probe_output(const cJSON *probe, int i);
const cJSON *akg_rule_probe_param(const cJSON *probe, const char *name);
/* An attribute of the model's submodule as built (the probe's "modules"), or NULL. */
const cJSON *akg_rule_probe_attr(const cJSON *probe, const char *module, const char *attr);
/* The attribute as n integers (a number serves all n; a list must have n): 0, or -1 when the
 * probe has no such attribute or it is not that. */
int akg_rule_probe_ints(const cJSON *probe, const char *module, const char *attr, long *out, int n);
/* How many f32 lanes a register tile's vectors should have on the probe's CPU (its `cpu`):
 * 16 where 512-bit FMAs run at full rate (Intel with AVX-512; AMD from family 26, Zen 5),
 * else 8 (AVX2, and Zen 4, which splits each 512-bit FMA in two). 8 when the probe does not
 * say. */
int akg_rule_vector_floats(const cJSON *probe);
/* Rank of a probe tensor description (-1 if none), and dim d (negative
 * counts from the end; -1 when out of range). */
int akg_rule_rank(const cJSON *desc);
long akg_rule_dim(const cJSON *desc, int d);

/* The forward parameter index of a NAME expression, or -1. */
int akg_rule_forward_param(const akg_reference *ref, const akg_expr *e);

/* The single returned expression of forward when forward is
 * `return EXPR` or `y = EXPR; return y` (a straight chain of names is
 * followed back), else NULL. */
const akg_expr *akg_rule_returned_expr(const akg_reference *ref);

/* Follows a NAME to the expression last assigned to it in forward's body
 * (through chains of renames); other expressions come back unchanged. */
const akg_expr *akg_rule_follow(const akg_reference *ref, const akg_expr *e);

/* Fills err with "<path>:<line>: <what>; the built-in provider has no rule
 * for it (write model_new.py by hand ...)", sets *where, returns
 * AKG_EUNSUPPORTED. */
int akg_rule_unsupported(const akg_reference *ref, akg_range r, akg_range *where, char *err,
                         size_t errlen, const char *what);

/* A new family design with op_name, family, kind and dtype set; params is a
 * fresh empty object. The caller fills the rest and sets sketch_text. */
akg_design *akg_rule_family_design(const char *family, const char *op_name);

#endif
