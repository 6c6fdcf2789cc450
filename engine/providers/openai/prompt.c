/*
 * prompt.c: filling the provider's prompt templates and taking its answers apart (prompt.h).
 *
 * Why templates on disk: a prompt is tuned far more often than the code around it, and read
 * by people who do not read C. Why answers are split, not pattern-matched: models wrap what
 * they write in chatter, several fences, unclosed fences (a cut answer) and reasoning; the
 * callers try each block in turn and keep the first one the engine's own checker accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "prompt.h"
#include "skills.h"

#define PROMPT_FILE_LIMIT ((size_t)256 << 10)
#define GRAMMAR_FILE_LIMIT ((size_t)1 << 20)
#define USER_MARK "<!-- user -->"

static const char *var_value(const akg_prompt_var *vars, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(vars[i].name) == len && memcmp(vars[i].name, name, len) == 0)
            return vars[i].value ? vars[i].value : "";
    return NULL;
}

static char *fill(const char *t, size_t len, const akg_prompt_var *vars, size_t n)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    size_t i = 0;
    while (i < len) {
        const char *open = strstr(t + i, "{{");
        if (!open || (size_t)(open - t) >= len) {
            akg_buf_append(&b, t + i, len - i);
            break;
        }
        const char *close = strstr(open + 2, "}}");
        const char *v = close ? var_value(vars, n, open + 2, (size_t)(close - open - 2)) : NULL;
        akg_buf_append(&b, t + i, (size_t)(open - (t + i)));
        if (v) {
            akg_buf_puts(&b, v);
            i = (size_t)(close + 2 - t);
        } else {
            akg_buf_append(&b, "{{", 2);
            i = (size_t)(open + 2 - t);
        }
    }
    return akg_buf_take(&b);
}

int akg_prompt_render(const char *name, const akg_prompt_var *vars, size_t n_vars, char **system,
                      char **user, char *err, size_t errlen)
{
    char path[4096], ferr[512];
    char *t = NULL;
    size_t len = 0;
    *system = *user = NULL;
    snprintf(path, sizeof path, "%s/engine/providers/openai/prompts/%s.md", akg_data_dir(), name);
    if (akg_read_file(path, PROMPT_FILE_LIMIT, &t, &len, ferr, sizeof ferr) != AKG_OK)
        return akg_fail(err, errlen, AKG_EIO,
                        "cannot read the %s prompt %s (%s); the prompts ship with akg under "
                        "engine/providers/openai/prompts/ (set AKG_HOME to the folder holding "
                        "them)",
                        name, path, ferr);
    /* {{skills}}: the DSL's DocSpec skills chosen for this agent and task (skills.c) */
    akg_prompt_var *with = NULL;
    if (strstr(t, "{{skills}}") && !var_value(vars, n_vars, "skills", 6)) {
        char *skills = akg_skills_for_template(name, vars, n_vars, err, errlen);
        with = skills ? malloc((n_vars + 1) * sizeof *with) : NULL;
        if (!with) {
            free(skills);
            free(t);
            return skills ? akg_fail(err, errlen, AKG_ENOMEM, "out of memory") : AKG_EPARSE;
        }
        memcpy(with, vars, n_vars * sizeof *with);
        with[n_vars++] = (akg_prompt_var){"skills", skills};
        vars = with;
    }
    const char *mark = strstr(t, USER_MARK);
    if (mark) {
        const char *rest = mark + strlen(USER_MARK);
        if (*rest == '\n')
            rest++;
        *system = fill(t, (size_t)(mark - t), vars, n_vars);
        *user = fill(rest, strlen(rest), vars, n_vars);
    } else {
        *system = akg_strdup("");
        *user = fill(t, len, vars, n_vars);
    }
    free(t);
    if (with) {
        free((char *)with[n_vars - 1].value);
        free(with);
    }
    if (!*system || !*user) {
        free(*system);
        free(*user);
        *system = *user = NULL;
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory filling the %s prompt", name);
    }
    return AKG_OK;
}

char *akg_prompt_trim(const char *text, size_t budget)
{
    size_t len = text ? strlen(text) : 0;
    if (len <= budget)
        return akg_strdup(text ? text : "");
    size_t cut = budget;
    while (cut > 0 && text[cut - 1] != '\n')
        cut--;
    if (cut == 0)
        cut = budget;
    akg_buf b;
    akg_buf_init(&b, 0);
    akg_buf_append(&b, text, cut);
    akg_buf_appendf(&b, "%s[... %zu more bytes left out]\n",
                    cut && text[cut - 1] == '\n' ? "" : "\n", len - cut);
    return akg_buf_take(&b);
}

char *akg_prompt_grammar(size_t budget, char *err, size_t errlen)
{
    char path[4096], ferr[512];
    char *t = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/sketch-grammar/README.md", akg_data_dir());
    if (akg_read_file(path, GRAMMAR_FILE_LIMIT, &t, &len, ferr, sizeof ferr) != AKG_OK) {
        akg_fail(err, errlen, AKG_EIO,
                 "cannot read the sketch language reference %s (%s); set AKG_HOME to the folder "
                 "holding sketch-grammar/",
                 path, ferr);
        return NULL;
    }
    /* sections start at a line "## "; what is before the first one is the title and intro.
     * The syntax, the examples, the binding and the semantics are what a model needs to write
     * a sketch, in that order of need when they do not all fit (a small model's context: a
     * worked example teaches it more than the semantics' prose); they go in first, the rest
     * (the intro last) as the budget allows, and the chosen ones are printed in the
     * document's order. */
    enum { MAX_SECTIONS = 64 };
    static const char *const wanted[] = {"## Syntax", "## Examples", "## Binding", "## Semantics"};
    const char *start[MAX_SECTIONS];
    size_t size[MAX_SECTIONS];
    int keep[MAX_SECTIONS] = {0};
    size_t n = 0, used = 0;
    const char *p = t, *end = t + len;
    while (p < end && n < MAX_SECTIONS) {
        const char *next = p;
        do {
            const char *nl = memchr(next, '\n', (size_t)(end - next));
            next = nl ? nl + 1 : end;
        } while (next < end && strncmp(next, "## ", 3) != 0);
        start[n] = p;
        size[n] = (size_t)(next - p);
        n++;
        p = next;
    }
    for (size_t w = 0; w <= sizeof wanted / sizeof wanted[0]; w++)
        for (size_t i = w < sizeof wanted / sizeof wanted[0] ? 0 : 1; i < n; i++) {
            int match = w < sizeof wanted / sizeof wanted[0]
                            ? strncmp(start[i], wanted[w], strlen(wanted[w])) == 0
                            : 1;
            if (match && !keep[i] && used + size[i] <= budget) {
                keep[i] = 1;
                used += size[i];
            }
        }
    if (n && !keep[0] && used + size[0] <= budget)
        keep[0] = 1;
    akg_buf out, left;
    akg_buf_init(&out, 0);
    akg_buf_init(&left, 0);
    for (size_t i = 0; i < n; i++) {
        if (keep[i]) {
            akg_buf_append(&out, start[i], size[i]);
        } else if (i > 0) {
            const char *nl = memchr(start[i], '\n', size[i]);
            akg_buf_appendf(&left, "%s%.*s", left.len ? "; " : "",
                            (int)((nl ? nl : start[i] + size[i]) - start[i]), start[i]);
        }
    }
    if (left.len)
        akg_buf_appendf(&out, "\n(Left out to fit the prompt: %s.)\n", left.data);
    akg_buf_free(&left);
    free(t);
    char *r = akg_buf_take(&out);
    if (!r)
        akg_fail(err, errlen, AKG_ENOMEM, "out of memory reading the sketch language reference");
    return r;
}

/* ---- answers --------------------------------------------------------------------------- */

/* Whether the line at p opens or closes a fence; *mark gets the fence ("```" or "~~~"). */
static int fence_at(const char *p, const char **mark)
{
    while (*p == ' ')
        p++;
    if (strncmp(p, "```", 3) == 0 || strncmp(p, "~~~", 3) == 0) {
        *mark = p;
        return 1;
    }
    return 0;
}

static char *dup_n(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

int akg_answer_split(const char *text, akg_answer_parts *out)
{
    memset(out, 0, sizeof *out);
    akg_buf outside;
    akg_buf_init(&outside, 0);
    const char *p = text ? text : "";
    /* a reasoning model's <think> part is not the answer */
    const char *think_end = strstr(p, "</think>");
    if (strncmp(p, "<think>", 7) == 0 && think_end)
        p = think_end + 8;
    size_t cap = 0;
    int rc = AKG_OK;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *line_end = nl ? nl : p + strlen(p);
        const char *mark;
        if (!fence_at(p, &mark)) {
            akg_buf_append(&outside, p, (size_t)(line_end - p) + (nl ? 1 : 0));
            p = nl ? nl + 1 : line_end;
            continue;
        }
        /* the info word: what follows the fence up to a space */
        const char *info = mark + 3;
        while (*info == mark[0])
            info++;
        const char *info_end = info;
        while (info_end < line_end && *info_end != ' ' && *info_end != '\t' && *info_end != '\r')
            info_end++;
        const char *body = nl ? nl + 1 : line_end;
        const char *q = body, *close = NULL;
        while (*q) {
            const char *m2;
            const char *qnl = strchr(q, '\n');
            if (fence_at(q, &m2) && m2[0] == mark[0]) {
                close = q;
                p = qnl ? qnl + 1 : q + strlen(q);
                break;
            }
            q = qnl ? qnl + 1 : q + strlen(q);
        }
        if (!close) { /* unclosed: runs to the end */
            close = q;
            p = q;
        }
        if (out->n_blocks == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            akg_answer_block *nb = realloc(out->blocks, ncap * sizeof *nb);
            if (!nb) {
                rc = AKG_ENOMEM;
                break;
            }
            out->blocks = nb;
            cap = ncap;
        }
        akg_answer_block *b = &out->blocks[out->n_blocks];
        b->tag = dup_n(info, (size_t)(info_end - info));
        b->body = dup_n(body, (size_t)(close - body));
        if (!b->tag || !b->body) {
            free(b->tag);
            free(b->body);
            rc = AKG_ENOMEM;
            break;
        }
        out->n_blocks++;
    }
    out->outside = akg_buf_take(&outside);
    if (rc != AKG_OK || !out->outside) {
        akg_answer_parts_free(out);
        return AKG_ENOMEM;
    }
    return AKG_OK;
}

void akg_answer_parts_free(akg_answer_parts *p)
{
    for (size_t i = 0; i < p->n_blocks; i++) {
        free(p->blocks[i].tag);
        free(p->blocks[i].body);
    }
    free(p->blocks);
    free(p->outside);
    memset(p, 0, sizeof *p);
}

static int opens_sketch(const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "sketch", 6) != 0 || (line[6] != ' ' && line[6] != '\t'))
        return 0;
    const char *nl = strchr(line, '\n');
    const char *brace = strchr(line, '{');
    return brace && (!nl || brace < nl);
}

char *akg_answer_sketch_from(const char *s)
{
    const char *p = s, *comments = NULL;
    while (p && *p) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (opens_sketch(p))
            return akg_strdup(comments ? comments : p);
        if (*q == '#')
            comments = comments ? comments : p;
        else
            comments = NULL;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}
