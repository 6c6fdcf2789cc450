/*
 * akg/sketch_bind.h: a bound sketch's `bind:` section as Python, for the
 * drop-in `model_new.py` of any backend.
 *
 * The Python this writes is the run-time half of the binding semantics
 * (sketch-grammar/README.md, "Binding a sketch to its task"): ModelNew's
 * constructor mirrors Model's (same arguments; the attributes, layers,
 * parameters and buffers the binding reads are built by the same statements
 * Model's constructor uses, so state_dicts match) and checks constexpr
 * specialisations; a method `_akg_bind(self, <forward arguments>)` returns
 * (tensors, symbols, params, outputs): the sketch's tensors as contiguous
 * torch tensors in declaration order (outputs freshly allocated), its symbols
 * and params in declaration order, and the forward result (a tensor or a
 * tuple). A backend's model_new.py then only adds how its kernel is called.
 */
#ifndef AKG_SKETCH_BIND_H
#define AKG_SKETCH_BIND_H

#include "akg/akg.h"
#include "akg/sketch.h"
#include "akg/task.h"

/* Appends to out:
 *   - `class ModelNew(nn.Module):` with `__init__` (Model's signature) and `_akg_bind`,
 *     each indented by four spaces under the class;
 * probe (may be NULL) gives shapes for parameters and buffers that Model's constructor
 * does not create by a plain `self.x = ...` statement. Returns AKG_OK, or AKG_EUNSUPPORTED
 * with a message naming the bind item that cannot be expressed (a sketch without a complete
 * bind: section, a source Model does not have). */
int akg_sketch_bind_python(const akg_sketch *sk, const akg_reference *ref, const cJSON *probe,
                           akg_buf *out, char *err, size_t errlen);

#endif
