/*
 * needs.c: what the TaskConstructor cannot know, put to a person and back.
 *
 * The constructor never guesses a shape; it lists what it lacks
 * (akg_task_construct_needs). The editor and the terminal ask the same
 * questions, worded here, and accept the same answers, checked here before
 * they become the `# akg:` comments the constructor reads: an answer that is
 * not of the form asked is refused with what was wrong and what would work,
 * so a front end asks again instead of constructing from it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/task_constructor.h"

#define DTYPES "f32, f16, bf16, f64, i64, i32, i8, u8, bool"

static const char *const dtype_names[] = {"f32",   "float32", "f16", "float16", "bf16",
                                          "f64",   "float64", "i64", "int64",   "i32",
                                          "int32", "i8",      "u8",  "bool"};

static int known_dtype(const char *d, size_t n)
{
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strlen(dtype_names[i]) == n && !strncmp(d, dtype_names[i], n))
            return 1;
    return 0;
}

static int is_integer_dtype(const char *d, size_t n)
{
    return (n >= 2 && (d[0] == 'i' || d[0] == 'u')) || (n >= 3 && !strncmp(d, "int", 3));
}

/* s[0..n) without the blanks around it. */
static void strip(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

static int all_digits(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_identifier(const char *s, size_t n)
{
    if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* A positive whole number that fits a size (leading zeros refused: 08 reads as a typo). */
static int is_size(const char *s, size_t n)
{
    return all_digits(s, n) && n <= 12 && s[0] != '0';
}

void akg_task_need_question(const akg_task_need *need, char *out, size_t outlen)
{
    char at[32] = ""; /* a line 0 is one of the answers, not of the file */
    if (need->line)
        snprintf(at, sizeof at, ", line %u", need->line);
    switch (need->kind) {
    case AKG_TASK_NEED_SHAPE:
        snprintf(out, outlen,
                 "shape of `%s` (read by %s%s): DTYPE[SIZES] such as f32[8, 64], or 8x64 for "
                 "float32",
                 need->name, need->owner, at);
        break;
    case AKG_TASK_NEED_VALUE:
        snprintf(out, outlen,
                 "value of `%s` (a size in the shape of `%s`%s): a whole number such as 32",
                 need->name, need->owner, need->line ? at : ", as you answered");
        break;
    case AKG_TASK_NEED_INIT:
        snprintf(out, outlen,
                 "arguments to construct %s (its __init__ parameter `%s`%s%s has no default): "
                 "a Python list such as [64]",
                 need->owner, need->name, at, need->line ? "," : "");
        break;
    default:
        snprintf(out, outlen, "`%s`", need->name);
    }
}

void akg_task_need_placeholder(const akg_task_need *need, char *out, size_t outlen)
{
    if (need->kind == AKG_TASK_NEED_VALUE)
        snprintf(out, outlen, "# akg: %s = ?", need->name);
    else if (need->kind == AKG_TASK_NEED_INIT)
        snprintf(out, outlen, "# akg: init = [?]");
    else
        snprintf(out, outlen, "# akg: %s: f32[?]", need->name);
}

/* DTYPE[SIZES] (< BOUND) or sizes alone (float32) into out as `# akg: name: f32[8, 64]`. */
static int answer_shape(const akg_task_need *need, const char *a, size_t n, char *out,
                        size_t outlen, char *err, size_t errlen)
{
    akg_buf b;
    akg_buf_init(&b, 1024);
    akg_buf_appendf(&b, "# akg: %s: ", need->name);
    const char *open = memchr(a, '[', n);
    const char *sizes = a, *dtype = "f32";
    size_t nsizes = n, ndtype = 3;
    const char *bound = NULL;
    size_t nbound = 0;
    int rc = AKG_OK;
    if (open) {
        const char *close = memchr(open, ']', n - (size_t)(open - a));
        dtype = a;
        ndtype = (size_t)(open - a);
        strip(&dtype, &ndtype);
        if (!close) {
            rc = akg_fail(err, errlen, AKG_EINVAL,
                          "`%.*s` has no closing `]`: write DTYPE[SIZES] such as f32[8, 64]",
                          (int)n, a);
            goto done;
        }
        if (!known_dtype(dtype, ndtype)) {
            rc = akg_fail(err, errlen, AKG_EINVAL,
                          "`%.*s` is not a dtype akg knows; write one of " DTYPES
                          " before the sizes (f32[8, 64])",
                          (int)ndtype, dtype);
            goto done;
        }
        sizes = open + 1;
        nsizes = (size_t)(close - sizes);
        const char *rest = close + 1;
        size_t nrest = n - (size_t)(rest - a);
        strip(&rest, &nrest);
        if (nrest) {
            if (rest[0] != '<' || !is_integer_dtype(dtype, ndtype)) {
                rc = akg_fail(err, errlen, AKG_EINVAL,
                              "`%.*s` after the sizes is not understood; only an integer dtype "
                              "takes a bound (i64[8, 64] < 1000)",
                              (int)nrest, rest);
                goto done;
            }
            bound = rest + 1;
            nbound = nrest - 1;
            strip(&bound, &nbound);
            if (!is_size(bound, nbound) && !is_identifier(bound, nbound)) {
                rc = akg_fail(err, errlen, AKG_EINVAL,
                              "the bound `%.*s` is not a whole number or a symbol (i64[8] < 1000)",
                              (int)nbound, bound);
                goto done;
            }
        }
    }
    akg_buf_appendf(&b, "%.*s[", (int)ndtype, dtype);
    /* sizes: separated by commas (DTYPE[...]), or by x, *, commas or blanks (sizes alone) */
    size_t i = 0, count = 0;
    strip(&sizes, &nsizes);
    while (i < nsizes) {
        size_t j = i;
        if (open)
            while (j < nsizes && sizes[j] != ',')
                j++;
        else
            while (j < nsizes && !strchr(",xX* \t", sizes[j]))
                j++;
        const char *d = sizes + i;
        size_t nd = j - i;
        strip(&d, &nd);
        if (nd || open) {
            if (!is_size(d, nd) && !(open && is_identifier(d, nd))) {
                rc = akg_fail(err, errlen, AKG_EINVAL,
                              "`%.*s` is not a size%s; write whole numbers %s", (int)(nd ? nd : 1),
                              nd ? d : "?", nd && d[0] == '0' ? " above 0" : "",
                              open ? "or symbols, such as f32[8, 64] or f32[B, 64] (with the "
                                     "value of B asked next)"
                                   : "such as 8x64, or DTYPE[SIZES] such as f16[8, 64]");
                goto done;
            }
            akg_buf_appendf(&b, "%s%.*s", count++ ? ", " : "", (int)nd, d);
        }
        i = j + 1;
    }
    if (!open && count == 0) {
        rc = akg_fail(err, errlen, AKG_EINVAL,
                      "`%.*s` is not a shape; write DTYPE[SIZES] such as f32[8, 64], or sizes "
                      "such as 8x64 (float32)",
                      (int)n, a);
        goto done;
    }
    akg_buf_puts(&b, "]");
    if (bound)
        akg_buf_appendf(&b, " < %.*s", (int)nbound, bound);
    if (!b.data || b.len + 1 > outlen)
        rc = akg_fail(err, errlen, AKG_EINVAL, "the answer is too long");
    else
        memcpy(out, b.data, b.len + 1);
done:
    akg_buf_free(&b);
    return rc;
}

int akg_task_need_answer(const akg_task_need *need, const char *answer, char *out, size_t outlen,
                         char *err, size_t errlen)
{
    const char *a = answer ? answer : "";
    size_t n = strlen(a);
    strip(&a, &n);
    if (n == 0)
        return akg_fail(err, errlen, AKG_EINVAL, "no answer given");
    if (memchr(a, '\n', n) || memchr(a, '#', n) || memchr(a, ';', n))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "`%.*s` holds a line break, `#` or `;`, which a `# akg:` comment cannot "
                        "keep; answer on one line",
                        (int)n, a);
    switch (need->kind) {
    case AKG_TASK_NEED_SHAPE:
        return answer_shape(need, a, n, out, outlen, err, errlen);
    case AKG_TASK_NEED_VALUE:
        if (!is_size(a, n))
            return akg_fail(err, errlen, AKG_EINVAL,
                            "`%.*s` is not a whole number above 0; `%s` is a size (such as 32)",
                            (int)n, a, need->name);
        snprintf(out, outlen, "# akg: %s = %.*s", need->name, (int)n, a);
        return AKG_OK;
    case AKG_TASK_NEED_INIT: {
        int depth = 0;
        char quote = 0;
        for (size_t i = 0; i < n; i++) {
            char ch = a[i];
            if (quote) {
                if (ch == '\\')
                    i++;
                else if (ch == quote)
                    quote = 0;
            } else if (ch == '"' || ch == '\'') {
                quote = ch;
            } else if (strchr("([{", ch)) {
                depth++;
            } else if (strchr(")]}", ch) && --depth < 0) {
                break;
            }
        }
        if (depth != 0 || quote)
            return akg_fail(err, errlen, AKG_EINVAL,
                            "`%.*s` has unbalanced brackets or quotes; write the arguments as a "
                            "Python list such as [64] or [64, 4]",
                            (int)n, a);
        if (a[0] == '[' && a[n - 1] == ']')
            snprintf(out, outlen, "# akg: init = %.*s", (int)n, a);
        else
            snprintf(out, outlen, "# akg: init = [%.*s]", (int)n, a);
        return AKG_OK;
    }
    }
    return akg_fail(err, errlen, AKG_EINVAL, "akg asked nothing of that kind");
}
