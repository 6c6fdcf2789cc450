/*
 * prompt.h: the openai provider's prompts and answers (prompt.c, extract.c).
 *
 * Prompts are Markdown templates under <data dir>/engine/providers/openai/prompts/, read at run
 * time, so they can be changed without a rebuild. A template's text before a line
 * "<!-- user -->" is the system message, the rest the user message; {{name}} placeholders are
 * filled from a list of (name, value) pairs, an unknown one is left as it stands.
 *
 * Extraction reads a model's answer: fenced blocks in order (``` or ~~~, any tag), the text
 * outside them, a <think>...</think> part dropped.
 */
#ifndef AKG_OPENAI_PROMPT_H
#define AKG_OPENAI_PROMPT_H

#include <stddef.h>

typedef struct {
    const char *name;
    const char *value; /* NULL: "" */
} akg_prompt_var;

/* Reads prompts/<name>.md and fills it: *system and *user are malloc'd (the caller frees
 * them; *system is "" when the template has no "<!-- user -->" line). Fails with a message
 * naming the file. */
int akg_prompt_render(const char *name, const akg_prompt_var *vars, size_t n_vars, char **system,
                      char **user, char *err, size_t errlen);

/* text cut to at most budget bytes at a line break, with a last line saying how much was
 * left out. malloc'd. */
char *akg_prompt_trim(const char *text, size_t budget);

/* The sketch language reference (sketch-grammar/README.md) within budget bytes: whole "## "
 * sections in their order, those that do not fit left out and named at the end. malloc'd, or
 * NULL with a message. */
char *akg_prompt_grammar(size_t budget, char *err, size_t errlen);

/* The blocks of an answer. */
typedef struct {
    char *tag;  /* the fence's info word ("sketch", "python", ""); malloc'd */
    char *body; /* malloc'd */
} akg_answer_block;

typedef struct {
    akg_answer_block *blocks;
    size_t n_blocks;
    char *outside; /* the text outside the fences, <think> dropped; malloc'd */
} akg_answer_parts;

/* Splits text into parts (the caller frees them with akg_answer_parts_free). An unclosed fence
 * runs to the end of the text (an answer cut at max_tokens). Returns 0 or AKG_ENOMEM. */
int akg_answer_split(const char *text, akg_answer_parts *out);
void akg_answer_parts_free(akg_answer_parts *p);

/* From s, the part starting at the first line that opens a sketch ("sketch NAME {"), comments
 * just above it kept; NULL when s holds none. malloc'd. */
char *akg_answer_sketch_from(const char *s);

#endif
