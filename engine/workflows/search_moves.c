/*
 * search_moves.c: a search's candidates as edits of the design's sketch text (search_moves.h).
 *
 * The edit works on the text, not on a reprinted IR, so that a user's sketch keeps its comments
 * and layout: each tune(...) is found by its span from the parser (0-based line and byte column)
 * and rewritten in place; one that is not where its span says refuses the search rather than
 * editing the wrong text.
 */
#include "search_moves.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/sketch.h"

/* The byte offset of (line, col), both 0-based, in text; (size_t)-1 past its end. */
static size_t text_offset(const char *text, uint32_t line, uint32_t col)
{
    size_t off = 0;
    for (uint32_t l = 0; l < line; l++) {
        const char *nl = strchr(text + off, '\n');
        if (!nl)
            return (size_t)-1;
        off = (size_t)(nl - text) + 1;
    }
    return off + col <= strlen(text) ? off + col : (size_t)-1;
}

void akg_search_moves_free(akg_search_moves *m)
{
    for (size_t t = 0; t < m->n; t++) {
        free(m->name[t]);
        for (int c = 0; m->values[t] && c < m->n_choices[t]; c++)
            free(m->values[t][c]);
        free(m->values[t]);
    }
    free(m->text);
    memset(m, 0, sizeof *m);
}

int akg_search_moves_init(akg_search_moves *m, const struct akg_sketch *sketch, const char *text,
                          char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->designs = 1;
    m->text = akg_strdup(text);
    if (!m->text)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    size_t prev_end = 0;
    for (size_t i = 0; i < akg_sketch_const_count(sketch); i++) {
        size_t n = akg_sketch_const_candidate_count(sketch, i);
        if (!akg_sketch_const_is_tunable(sketch, i) || n < 2)
            continue;
        if (m->n == AKG_SEARCH_MAX_TUNABLES)
            break; /* the rest keep their first value */
        akg_sketch_span sp = akg_sketch_expr_span(akg_sketch_const_value(sketch, i));
        size_t a = text_offset(m->text, sp.line, sp.col);
        size_t b = text_offset(m->text, sp.end_line, sp.end_col);
        if (a == (size_t)-1 || b == (size_t)-1 || b <= a || a < prev_end ||
            strncmp(m->text + a, "tune", 4) != 0 || m->text[b - 1] != ')')
            return akg_fail(err, errlen, AKG_EINVAL,
                            "the tune() of constexpr %s could not be found in the sketch's text "
                            "(line %u), so it cannot be edited",
                            akg_sketch_const_name(sketch, i), sp.line + 1);
        size_t t = m->n++;
        m->start[t] = a;
        m->end[t] = b;
        prev_end = b;
        m->name[t] = akg_strdup(akg_sketch_const_name(sketch, i));
        m->n_choices[t] = (int)n;
        m->values[t] = calloc(n, sizeof(char *));
        int ok = m->name[t] && m->values[t];
        for (size_t c = 0; ok && c < n; c++)
            ok = (m->values[t][c] =
                      akg_sketch_expr_to_string(akg_sketch_const_candidate(sketch, i, c))) != NULL;
        if (!ok)
            return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
        m->designs *= (double)n;
    }
    if (m->n == 0)
        return akg_fail(err, errlen, AKG_ENOTFOUND,
                        "the design has no tune() with more than one value to choose");
    return AKG_OK;
}

char *akg_search_moves_text(const akg_search_moves *m, const int *genome)
{
    akg_buf b;
    akg_buf_init(&b, 1u << 22);
    size_t at = 0;
    for (size_t t = 0; t < m->n; t++) {
        akg_buf_append(&b, m->text + at, m->start[t] - at);
        akg_buf_appendf(&b, "tune(%s", m->values[t][genome[t]]);
        for (int c = 0; c < m->n_choices[t]; c++)
            if (c != genome[t])
                akg_buf_appendf(&b, ", %s", m->values[t][c]);
        akg_buf_puts(&b, ")");
        at = m->end[t];
    }
    akg_buf_puts(&b, m->text + at);
    if (akg_buf_status(&b) != AKG_OK || !b.data) {
        akg_buf_free(&b);
        return NULL;
    }
    return b.data; /* the buffer's text is the caller's now */
}

cJSON *akg_search_moves_json(const akg_search_moves *m, const int *genome)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t t = 0; o && t < m->n; t++) {
        const char *v = m->values[t][genome[t]];
        char *end = NULL;
        double x = strtod(v, &end);
        if (end != v && end && *end == '\0')
            cJSON_AddNumberToObject(o, m->name[t], x);
        else
            cJSON_AddStringToObject(o, m->name[t], v);
    }
    return o;
}

int akg_search_moves_check(const char *text, struct akg_sketch **out, char *err, size_t errlen)
{
    *out = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    if (!diags) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = akg_sketch_parse(text, strlen(text), out, diags);
    if (rc == 0 && akg_sketch_check(*out, diags) != 0)
        rc = -1;
    if (rc != 0) {
        char *line = akg_sketch_diag_count(diags)
                         ? akg_sketch_diag_format("sketch.sketch", akg_sketch_diag_at(diags, 0))
                         : NULL;
        snprintf(err, errlen, "the candidate's sketch does not check: %s",
                 line ? line : "no diagnostic");
        free(line);
        akg_sketch_free(*out);
        *out = NULL;
    }
    akg_sketch_diag_list_free(diags);
    return rc == 0 ? 0 : -1;
}
