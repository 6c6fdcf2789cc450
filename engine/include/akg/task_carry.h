/*
 * task_carry.h: the top-level code of a Python file that some other code
 * needs, traced through the file with tree-sitter (engine/task/carry.c).
 *
 * model_new.py rebuilds Model's constructor statement for statement; what
 * that constructor reads from its own file (a class it builds, a helper, a
 * constant, an import) must come along, or ModelNew is a NameError.
 */
#ifndef AKG_TASK_CARRY_H
#define AKG_TASK_CARRY_H

#include <stddef.h>

#include "akg/akg.h"

/*
 * Appends to out, in the file's order, every top-level statement of source
 * (len bytes, a Python file) that binds a name the texts in roots read
 * (Python statements or expressions, each parsed on its own), and, in turn,
 * what those statements read. Definitions named in skip (Model, get_inputs,
 * ...) and the statements that read them, and `if __name__ == "__main__":`
 * blocks, never come along. A definition is written after two blank lines.
 * Returns the number of statements written (0: nothing is needed), or a
 * negative akg status when out of memory.
 */
int akg_python_carry(const char *source, size_t len, const char *const *roots, size_t nroots,
                     const char *const *skip, size_t nskip, akg_buf *out);

#endif
