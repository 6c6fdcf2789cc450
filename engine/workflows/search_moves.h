/*
 * search_moves.h: the offline moves of a search, as edits of the design's sketch text.
 *
 * A design names its tunable choices with `NAME = tune(v0, v1, ...)` constexprs, and the Coder
 * lowers the first value. A candidate is a genome, one chosen value index per tune(), and its
 * sketch is the design's text with each tune(...) rewritten so that the chosen value comes first,
 * the others following in their order: the file still says what could be chosen, and the
 * edited sketch alone gives the candidate's kernel. Everything else of the text (comments,
 * layout, the `# akg: reference` line) is kept byte for byte.
 *
 * Ownership: akg_search_moves_init fills a caller-owned struct released with
 * akg_search_moves_free; the texts and JSON objects returned are the caller's.
 */
#ifndef AKG_SEARCH_MOVES_H
#define AKG_SEARCH_MOVES_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct akg_sketch;

/* The most tune() choices searched; the ones after keep their first value. */
#define AKG_SEARCH_MAX_TUNABLES 32

typedef struct {
    size_t n;                            /* tune() choices with two or more values */
    char *name[AKG_SEARCH_MAX_TUNABLES]; /* the constexpr's name */
    int n_choices[AKG_SEARCH_MAX_TUNABLES];
    char **values[AKG_SEARCH_MAX_TUNABLES]; /* each value as the sketch printer writes it */
    size_t start[AKG_SEARCH_MAX_TUNABLES], end[AKG_SEARCH_MAX_TUNABLES]; /* tune(...) in text */
    double designs; /* genomes in all (the product of n_choices) */
    char *text;     /* the design's text */
} akg_search_moves;

/* Reads the tune() choices of sketch (parsed from text, and checked). Returns AKG_OK;
 * AKG_ENOTFOUND when no tune() has two values (nothing to search); AKG_EINVAL when a tune() is
 * not where its span says in text; AKG_ENOMEM. err says which, for a person. m is filled in
 * every case and released with akg_search_moves_free. */
int akg_search_moves_init(akg_search_moves *m, const struct akg_sketch *sketch, const char *text,
                          char *err, size_t errlen);
void akg_search_moves_free(akg_search_moves *m);
/* The sketch of genome (m->n value indices), or NULL when out of memory. */
char *akg_search_moves_text(const akg_search_moves *m, const int *genome);
/* {"NAME": value, ...} of genome (numbers as numbers), or NULL when out of memory. */
cJSON *akg_search_moves_json(const akg_search_moves *m, const int *genome);
/* Parses and checks a candidate's text like any design. Returns 0 with *out the checked sketch
 * (the caller frees it with akg_sketch_free), or -1 with the first diagnostic in err. */
int akg_search_moves_check(const char *text, struct akg_sketch **out, char *err, size_t errlen);

#endif
