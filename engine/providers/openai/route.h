/*
 * route.h: the Conductor's answer read (route.c).
 *
 * The Conductor's model is asked for one JSON object,
 *
 *   {"class": "local_code_error", "next_agent": "designer", "suggestion": "..."}
 *
 * and models wrap it: in a fence, after a sentence, before an explanation, inside a <think>
 * part. The reader tries the fenced blocks in order, then the text outside them, and in each
 * every balanced {...} (strings and escapes respected) until one parses as a JSON object that
 * names a known class and agent; "agent" is read where "next_agent" is missing. Classes and
 * agents are matched without regard to case, spaces or hyphens ("Local code error"), with a
 * few spellings models use ("code_error", "truncated", "environment"). The suggestion is
 * optional, at most ROUTE_SUGGESTION_MAX bytes (cut at a line break past it).
 */
#ifndef AKG_OPENAI_ROUTE_H
#define AKG_OPENAI_ROUTE_H

#include <stddef.h>

#include "akg/provider.h"

#define ROUTE_SUGGESTION_MAX 2000

typedef struct {
    akg_route_class cls;
    akg_route_agent agent;
    char *suggestion; /* malloc'd; "" when the answer has none */
} akg_route_choice;

/* Reads text. AKG_OK with *out filled (free it with akg_route_choice_free); AKG_EINVAL with
 * err saying what was wrong (no JSON object, an unknown class or agent, naming what was
 * found and the set that would work); AKG_ENOMEM. */
int akg_route_parse(const char *text, akg_route_choice *out, char *err, size_t errlen);
void akg_route_choice_free(akg_route_choice *choice);

#endif
