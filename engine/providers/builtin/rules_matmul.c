/*
 * rules_matmul.c: the built-in Designer's rules for the matmul family.
 * (No rule yet: every forward is "not this family".)
 */
#include "akg/akg.h"
#include "akg/design.h"

int akg_rules_matmul(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)ref, (void)probe, (void)feedback, (void)attempt, (void)where, (void)err, (void)errlen;
    *out = NULL;
    return AKG_ENOTFOUND;
}
