/*
 * skills.h: the DocSpec skills of a DSL (docspecs/<dsl>/<topic>.md) and their selection for the
 * Designer's and the Coder's prompts (skills.c).
 *
 * A skill is one Markdown file: a YAML header between two lines "---" (name, description,
 * dsl, level, families, keywords, optionally agents), then the text that goes into the prompt.
 * The folder's name is the DSL's name: a DSL gets skills by having the folder, nothing else.
 */
#ifndef AKG_OPENAI_SKILLS_H
#define AKG_OPENAI_SKILLS_H

#include <stdbool.h>
#include <stddef.h>

#include "prompt.h"

/* When a skill goes into a prompt. */
typedef enum {
    AKG_SKILL_ALWAYS,     /* every prompt of its agents, first */
    AKG_SKILL_ON_REQUEST, /* when the task's families or keywords match it */
    AKG_SKILL_DEBUGGING,  /* only after a failure (a debugging round) */
} akg_skill_level;

typedef struct {
    char *path; /* the file, as found (for messages) */
    char *name;
    char *description;
    char *dsl;
    akg_skill_level level;
    char **families; /* operator families ("matmul", "reduction", ...; "any") */
    size_t n_families;
    char **keywords; /* words matched against the task's words, lower case */
    size_t n_keywords;
    unsigned agents; /* AKG_SKILL_FOR_DESIGNER | AKG_SKILL_FOR_CODER */
    char *body;      /* the text below the header */
    size_t tokens;   /* what the skill costs in a prompt, estimated as bytes / 4 */
} akg_skill;

#define AKG_SKILL_FOR_DESIGNER 1u
#define AKG_SKILL_FOR_CODER 2u

typedef struct {
    akg_skill *items; /* in file-name order */
    size_t n;
} akg_skill_set;

/* Parses one skill file's text. path is for messages; dsl, when not NULL, is the folder's DSL,
 * which the header's dsl must name. On failure the message reads
 * "PATH:LINE: error: WHAT; WHAT WOULD WORK". The caller frees *out with akg_skill_free. */
int akg_skill_parse(const char *path, const char *text, const char *dsl, akg_skill *out, char *err,
                    size_t errlen);
void akg_skill_free(akg_skill *s);

/* Reads every <root>/<dsl>/<topic>.md (root NULL: <data dir>/docspecs) in file-name order. A DSL
 * without a folder has no skills (AKG_OK, n = 0); a file that does not parse fails the load
 * with its message. Free *out with akg_skill_set_free. */
int akg_skills_load(const char *root, const char *dsl, akg_skill_set *out, char *err,
                    size_t errlen);
void akg_skill_set_free(akg_skill_set *set);

typedef struct {
    unsigned agent;        /* AKG_SKILL_FOR_DESIGNER or AKG_SKILL_FOR_CODER */
    const char *task_text; /* the task's words: op name, op graph, sketch (may be NULL) */
    bool debugging;        /* a round after a failure */
    size_t budget_tokens;  /* the most the chosen skills may cost */
} akg_skill_query;

/* The skills for q, most relevant first, fitting q->budget_tokens: `always` ones first, then
 * by relevance (a family of the task: 4 points each, a keyword among the task's words: 1
 * point; a debugging skill in a debugging round: 3 points), ties by file name. An on_request
 * skill with no point is not chosen; one that does not fit is skipped for a smaller one after
 * it. order gets indices into set (room for set->n); returns how many. */
size_t akg_skills_select(const akg_skill_set *set, const akg_skill_query *q, size_t *order);

/* The operator families the task's words name ("matmul" for mm/linear/bmm, ...), as a
 * space-separated list into buf. */
void akg_skills_task_families(const char *task_text, char *buf, size_t len);

/* The chosen skills as prompt text ("## name: description" then the body, each), with a last
 * line naming those left out for the budget. malloc'd. */
char *akg_skills_render(const akg_skill_set *set, const size_t *order, size_t n_order,
                        const akg_skill_query *q);

/* The default budget, in tokens, when the DSL's config.yaml sets no skills_token_budget. */
#define AKG_SKILLS_DEFAULT_BUDGET 4000

/* For a prompt template: {{skills}} filled from the template's variables: the DSL ("dsl"),
 * the agent (the template's name: designer... or coder...), the task's words ("op_name",
 * "probe", "sketch"), a debugging round ("debugging" not empty) and the budget
 * (skills_token_budget of backends/<backend>/<dsl>/config.yaml, else the default).
 * malloc'd text, or NULL with a message naming the skill file that is wrong. */
char *akg_skills_for_template(const char *template_name, const akg_prompt_var *vars, size_t n_vars,
                              char *err, size_t errlen);

#endif
