/*
 * search_settings.c: the evolve: and adaptive_search: sections of a DSL config
 * (search_settings.h).
 *
 * One table names every setting: its section, its key, whether it is a whole number, the range
 * that works and what it means (the error says it), and where it goes in akg_evolve_params or
 * akg_adaptive_params. The ranges are those the rules can honour: counts of at least 1 (the
 * flags' caps above: 1000 rounds and candidates a round, 4096 candidates in all), islands and
 * elites up to the rules' arrays (AKG_SEARCH_MAX_ISLANDS, AKG_SEARCH_MAX_ELITES), a convergence
 * window up to AKG_SEARCH_MAX_WINDOW, probabilities and thresholds in [0, 1], an exploration
 * weight of at least 0. migration_interval may be 0, which search_rules.c reads as "never".
 */
#include "search_settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"

typedef struct {
    const char *section; /* "evolve" or "adaptive_search" */
    const char *key;
    int whole;         /* a whole number (an int field), else a double */
    double min, max;   /* max: HUGE_VAL for no upper bound */
    const char *means; /* what the value is, for the error */
    int adaptive;      /* the field is in akg_adaptive_params, else akg_evolve_params */
    size_t offset;
} search_setting;

/* the field of a setting in akg_evolve_params (EV) or akg_adaptive_params (AD) */
#define EV(field) 0, offsetof(akg_evolve_params, field)
#define AD(field) 1, offsetof(akg_adaptive_params, field)

static const search_setting settings[] = {
    {"evolve", "max_rounds", 1, 1, 1000, "the rounds of the search", EV(max_rounds)},
    {"evolve", "parallel_num", 1, 1, 1000, "the candidates a round", EV(parallel_num)},
    {"evolve", "num_islands", 1, 1, AKG_SEARCH_MAX_ISLANDS, "the islands", EV(num_islands)},
    {"evolve", "migration_interval", 1, 0, 1000,
     "elites migrate after every migration_interval-th round; 0: never", EV(migration_interval)},
    {"evolve", "elite_size", 1, 1, AKG_SEARCH_MAX_ELITES, "the best candidates an island keeps",
     EV(elite_size)},
    {"evolve", "parent_selection_prob", 0, 0, 1, "the probability of a parent from its own island",
     EV(parent_selection_prob)},
    {"adaptive_search", "max_total_tasks", 1, 1, 4096,
     "the candidates in all, the default design included", AD(max_total_tasks)},
    {"adaptive_search", "initial_task_count", 1, 1, 4096,
     "the candidates drawn before UCB picks parents", AD(initial_task_count)},
    {"adaptive_search", "exploration_coef", 0, 0, HUGE_VAL, "UCB's exploration weight",
     AD(exploration_coef)},
    {"adaptive_search", "random_factor", 0, 0, 1, "the scale of UCB's random tie-break",
     AD(random_factor)},
    {"adaptive_search", "convergence_window", 1, 1, AKG_SEARCH_MAX_WINDOW,
     "the candidates a gain is measured over", AD(convergence_window)},
    {"adaptive_search", "convergence_threshold", 0, 0, 1,
     "a relative gain at most this over a window is none", AD(convergence_threshold)},
    {"adaptive_search", "patience", 1, 1, 4096, "the windows without gain that end the search",
     AD(patience)},
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

static const char *const sections[] = {"evolve", "adaptive_search"};

/* "max_rounds, parallel_num, ... and parent_selection_prob": the keys of a section. */
static void section_keys(const char *section, char *out, size_t len)
{
    size_t n = 0, count = 0, done = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_SETTINGS; i++)
        count += strcmp(settings[i].section, section) == 0;
    for (size_t i = 0; i < N_SETTINGS && n < len; i++) {
        if (strcmp(settings[i].section, section) != 0)
            continue;
        done++;
        const char *sep = done == 1 ? "" : done == count ? " and " : ", ";
        int w = snprintf(out + n, len - n, "%s%s", sep, settings[i].key);
        n += w > 0 ? (size_t)w : 0;
    }
}

/* "a whole number from 1 to 1000", "a number from 0 to 1", "a number of at least 0". */
static void range_text(const search_setting *s, char *out, size_t len)
{
    const char *kind = s->whole ? "a whole number" : "a number";
    if (s->max == HUGE_VAL)
        snprintf(out, len, "%s of at least %g", kind, s->min);
    else
        snprintf(out, len, "%s from %g to %g", kind, s->min, s->max);
}

static const search_setting *find_setting(const char *section, const char *key)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(settings[i].section, section) == 0 && strcmp(settings[i].key, key) == 0)
            return &settings[i];
    return NULL;
}

static int value_ok(const search_setting *s, const cJSON *v)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    if (!isfinite(d) || !(d >= s->min && d <= s->max))
        return 0;
    return !s->whole || d == floor(d);
}

/* Checks one section and, when ev/ad are given, stores its values there. */
static int read_section(const cJSON *config, const char *section, const char *path,
                        akg_evolve_params *ev, akg_adaptive_params *ad, char *err, size_t errlen)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(config, section);
    char keys[512];
    if (!sec || cJSON_IsNull(sec))
        return AKG_OK;
    if (!cJSON_IsObject(sec)) {
        section_keys(section, keys, sizeof keys);
        return akg_fail(err, errlen, AKG_EINVAL,
                        "%s: %s must be a mapping of settings (%s), such as %s: {%s}", path,
                        section, keys, section,
                        strcmp(section, "evolve") == 0 ? "max_rounds: 3" : "max_total_tasks: 12");
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, sec)
    {
        const search_setting *s = find_setting(section, item->string);
        if (!s) {
            section_keys(section, keys, sizeof keys);
            return akg_fail(err, errlen, AKG_EINVAL,
                            "%s: %s.%s is not an %s setting; the settings are %s", path, section,
                            item->string, section, keys);
        }
        if (!value_ok(s, item)) {
            char *shown = cJSON_PrintUnformatted(item);
            char range[96];
            range_text(s, range, sizeof range);
            int rc = akg_fail(err, errlen, AKG_EINVAL, "%s: %s.%s is %s; it must be %s (%s)", path,
                              section, s->key, shown ? shown : "?", range, s->means);
            free(shown);
            return rc;
        }
        char *base = s->adaptive ? (char *)ad : (char *)ev;
        if (!base)
            continue;
        if (s->whole)
            *(int *)(base + s->offset) = (int)item->valuedouble;
        else
            *(double *)(base + s->offset) = item->valuedouble;
    }
    return AKG_OK;
}

int akg_search_settings_check(const cJSON *config, const char *config_path, char *err,
                              size_t errlen)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        int rc = read_section(config, sections[i], config_path, NULL, NULL, err, errlen);
        if (rc)
            return rc;
    }
    return AKG_OK;
}

int akg_search_settings_read(const cJSON *config, const char *config_path,
                             const akg_search_options *opts, akg_evolve_params *ev,
                             akg_adaptive_params *ad, char *err, size_t errlen)
{
    akg_evolve_params_default(ev);
    akg_adaptive_params_default(ad);
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        int rc = read_section(config, sections[i], config_path, ev, ad, err, errlen);
        if (rc) {
            akg_evolve_params_default(ev);
            akg_adaptive_params_default(ad);
            return rc;
        }
    }
    if (opts) {
        if (opts->max_rounds > 0)
            ev->max_rounds = opts->max_rounds;
        if (opts->parallel_num > 0)
            ev->parallel_num = opts->parallel_num;
        if (opts->num_islands > 0)
            ev->num_islands = opts->num_islands;
        if (opts->max_total_tasks > 0)
            ad->max_total_tasks = opts->max_total_tasks;
    }
    return AKG_OK;
}
