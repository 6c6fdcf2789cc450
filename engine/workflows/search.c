/*
 * search.c: the search workflows `evolve` and `adaptive_search` (search.h), offline moves.
 *
 * A move is a sketch edit. The design's sketch names its tunable choices with tune(v0, v1, ...);
 * the Coder lowers the first value. A candidate is a genome, one chosen value per tune(), and its
 * sketch is the design's text with each tune(...) rewritten so that the chosen value comes first
 * (the others stay, in their order: the file still says what could be chosen). Its text is parsed
 * and checked like any design before it is lowered; one that does not check is recorded as failed
 * and never lowered.
 *
 * Candidate 0 is the default design (every genome value 0), already profiled by the job's default
 * path. The rules that pick the next genome are in search_rules.c:
 *
 *  - evolve: R rounds of P candidates, slot s of a round belongs to island s mod K; a child's
 *    parent comes from its own island's elites with probability parent_selection_prob, else
 *    from every verified candidate by tiers, and it takes each value from the parent or from an
 *    inspiration (tiers of the ranking: top 30%, next 40%, rest), then one mutation; after every
 *    migration_interval-th round each island's best joins the next island's elites.
 *  - adaptive_search: the first initial_task_count candidates mutate the default design; after
 *    that the parent is the verified candidate of highest UCB (rank quality + 1.414 *
 *    sqrt(ln(N+1)/(n+1)) + a small random tie-break); the search stops at max_total_tasks
 *    candidates or when the best-so-far has not gained over 2% in a window of 5, 3 times in a
 *    row.
 *
 * When the search ends with a best other than the default design, both are timed again (the
 * same profile, one after the other); the best is kept only when it is still the faster, so
 * one lucky timing does not make a kernel slower than the default design the answer.
 *
 * A genome already tried is never run again: a repeated draw is redrawn, then the first untried
 * genome after a random one is taken; when every combination has been tried the search ends.
 * Candidates run one after another through the job's harness pool (the pool times one
 * candidate at a time; a search on P workers is still to come). Each finished candidate is in
 * the store at once (akg__store_candidate), so killing the search loses none; the report holds
 * every candidate, its genome, parent, island and round, and the best-so-far curve.
 *
 * Resume. A candidate's row carries the task's fingerprint and the judge's version
 * (search_cache.c) and its info: the workflow, the default design's key (its sketch's
 * SHA-256), its genome, and for a verified one its speedup, verify and profile answers and
 * files. Once candidate 0 has run, search_resume takes every finished candidate of an earlier
 * run of this task, judge, workflow and default design as done, in its order (its sketch must
 * be the one its genome gives now): the islands, rounds, curve and best are rebuilt as if it
 * had just run, and proposals go on from there. A resumed best's files come from the store.
 *
 * Settings (search_settings.c): the original's defaults, over them the DSL config's `evolve:`
 * and `adaptive_search:` sections (the names above, checked when the config was loaded), over
 * those the job's options (akg_cli op --max-rounds, --parallel-num, --num-islands,
 * --max-total-tasks).
 */
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/sketch.h"
#include "akg/store.h"
#include "search_moves.h"
#include "search_rules.h"
#include "search_settings.h"

#define SEARCH_MAX_CANDIDATES 4096
#define SEARCH_REDRAWS 32

typedef struct {
    int genome[AKG_SEARCH_MAX_TUNABLES];
    double score; /* speedup; < 0 until it passed */
    int passed;
    long parent; /* candidate index, -1 for the default design */
    int island, round, step;
    unsigned visits; /* times it was a parent (UCB) */
} search_cand;

struct akg_search {
    int adaptive;
    akg_evolve_params ev;
    akg_adaptive_params ad;
    int budget; /* candidates in all, the default design included */
    akg_search_rng rng;
    akg_search_moves moves; /* the design's tune() choices */
    cJSON *base_design;
    search_cand *cands;
    size_t n_cands;
    akg_search_island islands[AKG_SEARCH_MAX_ISLANDS];
    int round, slot; /* evolve: the round of the next candidate (1-based), its slot */
    unsigned selections;
    akg_search_convergence conv;
    int converged;
    double best;
    long best_cand;
    cJSON *curve; /* best-so-far speedup after each candidate */
    const char *end;
    char end_text[200]; /* why it ended, when the reason has numbers in it */
    /* the confirmation: the best and the default design timed again before the search ends */
    cJSON *default_rec;  /* candidate 0's kept copy (as akg__pipeline_snapshot made it) */
    cJSON *confirm;      /* the second timings, for the report */
    char design_key[65]; /* the SHA-256 of the default design's sketch: a resumed candidate's */
    int resumed;         /* candidates resumed from the store */
    cJSON *resumed_runs; /* the runs they came from */
    char confirm_path[4096];
};

int akg__search_workflow(const akg_job *j)
{
    return strcmp(j->workflow, "evolve") == 0 || strcmp(j->workflow, "adaptive_search") == 0;
}

static void search_destroy(akg_search *s)
{
    if (!s)
        return;
    akg_search_moves_free(&s->moves);
    cJSON_Delete(s->base_design);
    free(s->cands);
    cJSON_Delete(s->curve);
    cJSON_Delete(s->default_rec);
    cJSON_Delete(s->confirm);
    cJSON_Delete(s->resumed_runs);
    free(s);
}

void akg__search_free(akg_job *j)
{
    search_destroy(j->search);
    j->search = NULL;
}

/* Reads the settings and the design's tune() choices. Returns the state, or NULL with why
 * (static text, or written into err) when there is nothing to search. */
static akg_search *search_new(akg_job *j, char *err, size_t errlen)
{
    akg_search *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->adaptive = strcmp(j->workflow, "adaptive_search") == 0;
    /* the config was checked when the job loaded it (akg_backend_config_load) */
    char path[4096];
    snprintf(path, sizeof path, "%s/backends/%s/%s/config.yaml", akg_data_dir(), j->backend,
             j->dsl);
    if (akg_search_settings_read(j->config, path, &j->search_opts, &s->ev, &s->ad, err, errlen) !=
        AKG_OK) {
        search_destroy(s);
        return NULL;
    }
    if (s->ev.num_islands < 1 || s->ev.num_islands > AKG_SEARCH_MAX_ISLANDS)
        s->ev.num_islands = s->ev.num_islands < 1 ? 1 : AKG_SEARCH_MAX_ISLANDS;
    if (s->ev.parallel_num < 1)
        s->ev.parallel_num = 1;
    if (s->ev.max_rounds < 0)
        s->ev.max_rounds = 0;
    long budget = s->adaptive ? s->ad.max_total_tasks
                              : 1L + (long)s->ev.max_rounds * (long)s->ev.parallel_num;
    s->budget = budget < 1                       ? 1
                : budget > SEARCH_MAX_CANDIDATES ? SEARCH_MAX_CANDIDATES
                                                 : (int)budget;
    akg_search_rng_seed(&s->rng, j->seed);
    akg_search_convergence_init(&s->conv, s->ad.convergence_window, s->ad.convergence_threshold,
                                s->ad.patience);
    s->round = 1;
    s->best = -1;
    s->best_cand = -1;
    s->curve = cJSON_CreateArray();
    s->base_design = j->design_info ? cJSON_Duplicate(j->design_info, 1) : cJSON_CreateObject();
    s->cands = calloc((size_t)s->budget, sizeof *s->cands);
    if (!s->curve || !s->base_design || !s->cands) {
        search_destroy(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (j->sketch_text)
        akg_sha256_hex(j->sketch_text, strlen(j->sketch_text), s->design_key);
    /* the tune() choices, and where each stands in the text */
    if (akg_search_moves_init(&s->moves, j->sketch, j->sketch_text, err, errlen) != AKG_OK) {
        search_destroy(s);
        return NULL;
    }
    return s;
}

static int tried(const akg_search *s, const int *g)
{
    for (size_t i = 0; i < s->n_cands; i++)
        if (memcmp(s->cands[i].genome, g, s->moves.n * sizeof(int)) == 0)
            return 1;
    return 0;
}

/* The first untried genome at or after a random one (mixed-radix order); 0 when every genome
 * has been tried. */
static int untried_genome(akg_search *s, int *g)
{
    for (size_t t = 0; t < s->moves.n; t++)
        g[t] = (int)akg_search_rng_below(&s->rng, (size_t)s->moves.n_choices[t]);
    double limit = s->moves.designs < 1e6 ? s->moves.designs : 1e6;
    for (double k = 0; k < limit; k++) {
        if (!tried(s, g))
            return 1;
        for (size_t t = 0; t < s->moves.n; t++) { /* the next genome */
            if (++g[t] < s->moves.n_choices[t])
                break;
            g[t] = 0;
        }
    }
    return 0;
}

/* The verified candidates' indices, best first (the lower index first among equals). */
static size_t ranked(const akg_search *s, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_cands; i++) {
        if (!s->cands[i].passed)
            continue;
        size_t at = n;
        while (at > 0 && s->cands[out[at - 1]].score < s->cands[i].score) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = i;
        n++;
    }
    return n;
}

static double *scores(const akg_search *s)
{
    double *sc = malloc((s->n_cands ? s->n_cands : 1) * sizeof *sc);
    for (size_t i = 0; sc && i < s->n_cands; i++)
        sc[i] = s->cands[i].passed ? s->cands[i].score : -1;
    return sc;
}

/* Draws the next candidate's genome, parent, island and round into c. Returns 1, 0 when every
 * genome has been tried, -1 when out of memory. */
static int propose(akg_job *j, akg_search *s, search_cand *c)
{
    size_t *rank = malloc((s->n_cands ? s->n_cands : 1) * sizeof *rank);
    double *sc = scores(s);
    if (!rank || !sc) {
        free(rank);
        free(sc);
        return -1;
    }
    size_t n_ranked = ranked(s, rank);
    memset(c, 0, sizeof *c);
    c->score = -1;
    c->parent = 0;
    if (!s->adaptive) {
        if (s->slot == 0 && s->round > 1 &&
            akg_search_migration_due(s->round - 1, s->ev.migration_interval)) {
            int moved = akg_search_migrate(s->islands, s->ev.num_islands, sc, s->ev.elite_size);
            char msg[200];
            snprintf(msg, sizeof msg, "evolve: after round %d, %d elite%s migrated between islands",
                     s->round - 1, moved, moved == 1 ? "" : "s");
            akg__pipeline_log(j, AKG_LOG_INFO, msg);
        }
        c->island = s->slot % s->ev.num_islands;
        c->round = s->round;
    }
    int found = 0;
    for (int draw = 0; draw < SEARCH_REDRAWS && !found; draw++) {
        long parent = 0;
        if (s->adaptive) {
            if ((int)s->n_cands >= s->ad.initial_task_count && n_ranked > 0) {
                double *rs = malloc(n_ranked * sizeof *rs);
                unsigned *rv = malloc(n_ranked * sizeof *rv);
                if (!rs || !rv) {
                    free(rs);
                    free(rv);
                    free(rank);
                    free(sc);
                    return -1;
                }
                for (size_t i = 0; i < n_ranked; i++) {
                    rs[i] = s->cands[rank[i]].score;
                    rv[i] = s->cands[rank[i]].visits;
                }
                long pick = akg_search_ucb_select(&s->rng, rs, rv, n_ranked, s->selections,
                                                  s->ad.exploration_coef, s->ad.random_factor);
                parent = pick >= 0 ? (long)rank[pick] : 0;
                free(rs);
                free(rv);
            }
            memcpy(c->genome, s->cands[parent].genome, sizeof c->genome);
        } else {
            int from_own = 0;
            parent = akg_search_pick_parent(&s->rng, &s->islands[c->island],
                                            s->ev.parent_selection_prob, rank, n_ranked, &from_own);
            if (parent < 0)
                parent = 0;
            size_t insp;
            if (akg_search_sample_tiers(&s->rng, n_ranked, 1, &insp) == 1 &&
                (long)rank[insp] != parent)
                akg_search_crossover(&s->rng, c->genome, s->cands[parent].genome,
                                     s->cands[rank[insp]].genome, s->moves.n);
            else
                memcpy(c->genome, s->cands[parent].genome, sizeof c->genome);
        }
        akg_search_mutate(&s->rng, c->genome, s->moves.n, s->moves.n_choices);
        c->parent = parent;
        found = !tried(s, c->genome);
    }
    if (!found) {
        c->parent = -1; /* drawn from the untried ones, no parent's child */
        found = untried_genome(s, c->genome);
    }
    if (found && s->adaptive && c->parent >= 0 && (int)s->n_cands >= s->ad.initial_task_count) {
        s->cands[c->parent].visits++;
        s->selections++;
    }
    if (found && !s->adaptive && ++s->slot == s->ev.parallel_num) {
        s->slot = 0;
        s->round++;
    }
    free(rank);
    free(sc);
    return found;
}

static void candidate_info(const akg_search *s, const search_cand *c, size_t index, cJSON *into)
{
    cJSON *o = cJSON_AddObjectToObject(into, "search");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "candidate", (double)index);
    cJSON_AddItemToObject(o, "tune", akg_search_moves_json(&s->moves, c->genome));
    if (index > 0)
        cJSON_AddNumberToObject(o, "parent", (double)c->parent);
    if (!s->adaptive) {
        cJSON_AddNumberToObject(o, "island", c->island);
        cJSON_AddNumberToObject(o, "round", index == 0 ? 0 : c->round);
    }
    cJSON_AddNumberToObject(o, "best_so_far", s->best > 0 ? s->best : 0);
}

static void next_candidate(akg_job *j);

typedef cJSON *(*best_record_fn)(akg_job *j, double speedup, const void *from, char *err,
                                 size_t errlen);

/* Accounts the end of candidate `index` (the last of s->cands): the best (its record made by
 * make_best when it is the fastest so far), the islands, the curve, convergence. Returns 0, or
 * -1 when the job ended. */
static int candidate_account(akg_job *j, cJSON *entry, int passed, double speedup,
                             best_record_fn make_best, const void *from)
{
    akg_search *s = j->search;
    size_t index = s->n_cands - 1;
    search_cand *c = &s->cands[index];
    c->passed = passed;
    c->score = passed ? speedup : -1;
    if (passed && speedup > s->best) {
        char err[512];
        cJSON *rec = make_best(j, speedup, from, err, sizeof err);
        if (!rec) {
            char msg[1024];
            snprintf(msg, sizeof msg, "the candidate could not be kept: %s", err);
            akg__pipeline_finish(j, AKG_JOB_ERROR, "io_error", msg);
            return -1;
        }
        cJSON_Delete(j->best);
        j->best = rec;
        cJSON_AddStringToObject(entry, "dir",
                                cJSON_GetStringValue(cJSON_GetObjectItem(rec, "dir")));
        s->best = speedup;
        s->best_cand = (long)index;
        if (index == 0)
            s->default_rec = cJSON_Duplicate(rec, 1);
    }
    if (passed && !s->adaptive) {
        double *sc = scores(s);
        if (!sc) {
            akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
            return -1;
        }
        if (index == 0) /* the default design seeds every island */
            for (int i = 0; i < s->ev.num_islands; i++)
                akg_search_island_offer(&s->islands[i], 0, sc, s->ev.elite_size);
        else
            akg_search_island_offer(&s->islands[c->island], index, sc, s->ev.elite_size);
        free(sc);
    }
    candidate_info(s, c, index, entry);
    cJSON_AddItemToArray(s->curve, cJSON_CreateNumber(s->best > 0 ? s->best : 0));
    if (s->adaptive && akg_search_convergence_push(&s->conv, s->best > 0 ? s->best : 0))
        s->converged = 1;
    return 0;
}

static cJSON *snapshot_best(akg_job *j, double speedup, const void *from, char *err, size_t errlen)
{
    (void)from;
    return akg__pipeline_snapshot(j, speedup, err, errlen);
}

static void search_resume(akg_job *j);

/* Records the end of the current candidate (the last of s->cands) and goes on. */
static void candidate_done(akg_job *j, cJSON *entry, int passed, double speedup)
{
    akg_search *s = j->search;
    size_t index = s->n_cands - 1;
    if (candidate_account(j, entry, passed, speedup, snapshot_best, NULL) != 0)
        return;
    char msg[512];
    if (passed)
        snprintf(msg, sizeof msg, "%s: candidate %zu/%d: %.2fx; best so far %.2fx (candidate %ld)",
                 j->workflow, index + 1, s->budget, speedup, s->best, s->best_cand);
    else
        snprintf(msg, sizeof msg, "%s: candidate %zu/%d failed (%s); best so far %.2fx",
                 j->workflow, index + 1, s->budget,
                 cJSON_GetStringValue(cJSON_GetObjectItem(entry, "error_class")), s->best);
    akg_event ev = {0};
    ev.kind = AKG_EVENT_CANDIDATE;
    ev.stage = "search";
    ev.attempt = j->attempt;
    ev.max_attempts = s->budget;
    ev.ok = passed;
    ev.message = msg;
    ev.data = entry;
    akg__job_emit(j, &ev);
    if (j->finishing)
        return;
    if (index == 0) {
        search_resume(j); /* the candidates a killed or earlier run of this search finished */
        if (j->finishing)
            return;
    }
    next_candidate(j);
}

void akg__search_candidate_passed(akg_job *j, cJSON *cand, double speedup)
{
    if (!j->search) {
        /* candidate 0, the default design: the search starts from it */
        char err[512];
        akg_search *s = search_new(j, err, sizeof err);
        if (!s) {
            char msg[700];
            snprintf(msg, sizeof msg, "%s: nothing to search: %s; the default design stands",
                     j->workflow, err);
            akg__pipeline_log(j, AKG_LOG_WARN, msg);
            if (j->finishing)
                return;
            j->kept_step = j->attempt;
            j->search_end = "nothing to search (no tune() choice in the design)";
            akg__pipeline_finish(j, AKG_JOB_PASS, NULL, NULL);
            return;
        }
        j->search = s;
        j->max_step = j->attempt - 1 + s->budget; /* stage lines count the search's candidates */
        s->cands[0].parent = -1;
        s->cands[0].step = j->attempt;
        s->n_cands = 1;
        char msg[600];
        if (s->adaptive)
            snprintf(msg, sizeof msg,
                     "adaptive_search: %zu tune() choice%s (%.0f designs); at most %d candidates "
                     "(the default design is candidate 0), UCB c=%.3f, convergence: a gain over "
                     "%.0f%% in %d, patience %d",
                     s->moves.n, s->moves.n == 1 ? "" : "s", s->moves.designs, s->budget,
                     s->ad.exploration_coef, s->ad.convergence_threshold * 100,
                     s->ad.convergence_window, s->ad.patience);
        else
            snprintf(msg, sizeof msg,
                     "evolve: %zu tune() choice%s (%.0f designs); %d rounds of %d candidates on "
                     "%d islands, migration every %d rounds, %d elites (the default design is "
                     "candidate 0)",
                     s->moves.n, s->moves.n == 1 ? "" : "s", s->moves.designs, s->ev.max_rounds,
                     s->ev.parallel_num, s->ev.num_islands, s->ev.migration_interval,
                     s->ev.elite_size);
        akg__pipeline_log(j, AKG_LOG_INFO, msg);
        if (j->finishing)
            return;
    }
    candidate_done(j, cand, 1, speedup);
}

void akg__search_candidate_failed(akg_job *j, const char *cls, const char *detail)
{
    cJSON *cand = cJSON_CreateObject();
    if (!cand) {
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "fail");
    cJSON_AddStringToObject(cand, "error_class", cls);
    cJSON_AddStringToObject(cand, "detail", detail ? detail : "");
    if (j->design_info)
        cJSON_AddItemToObject(cand, "design", cJSON_Duplicate(j->design_info, 1));
    cJSON_AddItemToArray(j->candidates, cand);
    akg__store_candidate(j, "fail", cls, detail ? detail : "", 0, 0);
    candidate_done(j, cand, 0, 0);
}

/* search_curve.svg in the run folder: the best-so-far speedup after each candidate, the default
 * design's level dashed. A failure to write it is a warning; the report holds the same curve. */
static void write_curve_svg(akg_job *j)
{
    akg_search *s = j->search;
    int n = cJSON_GetArraySize(s->curve);
    if (n < 1 || !j->out_dir)
        return;
    double top = 0;
    for (int i = 0; i < n; i++) {
        double v = cJSON_GetNumberValue(cJSON_GetArrayItem(s->curve, i));
        top = v > top ? v : top;
    }
    top = top > 0 ? top * 1.1 : 1;
    const double w = 480, h = 240, left = 48, bottom = 32, right = 12, upper = 24;
    const double pw = w - left - right, ph = h - bottom - upper;
    akg_buf b;
    akg_buf_init(&b, 1u << 20);
    akg_buf_appendf(&b,
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                    "font-family=\"sans-serif\" font-size=\"11\">\n"
                    "<text x=\"%.0f\" y=\"16\">%s: best speedup so far, %d candidates</text>\n"
                    "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#444\"/>\n"
                    "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#444\"/>\n"
                    "<text x=\"4\" y=\"%.0f\">%.2fx</text><text x=\"4\" y=\"%.0f\">0</text>\n",
                    w, h, left, j->workflow, n, left, upper, left, h - bottom, left, h - bottom,
                    w - right, h - bottom, upper + 4, top, h - bottom);
    double def = s->cands[0].passed ? s->cands[0].score : 0;
    if (def > 0)
        akg_buf_appendf(&b,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                        "stroke-dasharray=\"4 3\"/>\n",
                        left, h - bottom - ph * def / top, w - right, h - bottom - ph * def / top);
    akg_buf_puts(&b, "<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"");
    for (int i = 0; i < n; i++) {
        double v = cJSON_GetNumberValue(cJSON_GetArrayItem(s->curve, i));
        double x = left + (n > 1 ? pw * i / (n - 1) : pw / 2);
        akg_buf_appendf(&b, "%s%.1f,%.1f", i ? " " : "", x, h - bottom - ph * v / top);
    }
    akg_buf_puts(&b, "\"/>\n</svg>\n");
    char err[512] = "out of memory";
    char *path = NULL;
    size_t len = strlen(j->out_dir) + sizeof "/search_curve.svg";
    if (akg_buf_status(&b) == AKG_OK && b.data && (path = malloc(len)) != NULL) {
        snprintf(path, len, "%s/search_curve.svg", j->out_dir);
        if (akg_write_file(path, b.data, b.len, err, sizeof err) == AKG_OK)
            *err = '\0';
    }
    if (*err) {
        char msg[700];
        snprintf(msg, sizeof msg, "the search's curve could not be drawn: %s", err);
        akg__pipeline_log(j, AKG_LOG_WARN, msg);
    }
    free(path);
    akg_buf_free(&b);
}

/* Ends the job with job->best, the curve drawn next to report.json. */
static void search_end_job(akg_job *j)
{
    write_curve_svg(j);
    if (!j->finishing)
        akg__pipeline_finish_best(j, j->search->end);
}

static double answer_speedup(const cJSON *ans)
{
    const cJSON *v = cJSON_GetObjectItem(ans, "speedup");
    return cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok")) && cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int set_confirm_path(akg_search *s, const cJSON *rec)
{
    const char *dir = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "dir"));
    const char *name =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "files"), "model_new"));
    if (!dir || !name)
        return -1;
    int n = snprintf(s->confirm_path, sizeof s->confirm_path, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof s->confirm_path ? 0 : -1;
}

/* The second timings are in: the best stays only when it is still faster than the default
 * design (a first timing's luck is not a faster kernel). */
static void on_confirmed_default(akg_job *j, const cJSON *ans)
{
    akg_search *s = j->search;
    double best = cJSON_GetNumberValue(cJSON_GetObjectItem(s->confirm, "best_speedup"));
    double def = answer_speedup(ans);
    cJSON_AddNumberToObject(s->confirm, "default_speedup", def);
    int keep_default = def > 0 && !(best > def);
    cJSON_AddStringToObject(s->confirm, "kept", keep_default ? "default" : "best");
    char msg[300];
    snprintf(msg, sizeof msg, "%s: timed again: candidate %ld %.2fx, the default design %.2fx: %s",
             j->workflow, s->best_cand, best, def,
             keep_default ? "the default design is kept" : "the candidate is kept");
    akg__pipeline_log(j, AKG_LOG_INFO, msg);
    if (j->finishing)
        return;
    if (keep_default) {
        snprintf(s->end_text, sizeof s->end_text,
                 "%s; timed again, candidate %ld (%.2fx) was not faster than the default design "
                 "(%.2fx), which is kept",
                 s->end, s->best_cand, best, def);
        s->end = s->end_text;
        cJSON_Delete(j->best);
        j->best = cJSON_Duplicate(s->default_rec, 1);
        s->best_cand = 0;
        s->best = s->cands[0].score;
    }
    search_end_job(j);
}

static void on_confirmed_best(akg_job *j, const cJSON *ans)
{
    akg_search *s = j->search;
    cJSON_AddNumberToObject(s->confirm, "best_speedup", answer_speedup(ans));
    if (set_confirm_path(s, s->default_rec) != 0) {
        search_end_job(j);
        return;
    }
    akg__pipeline_profile(j, s->confirm_path, on_confirmed_default);
}

/* Ends the search: a best other than the default design is timed again, with the default
 * design, before it is kept (on_confirmed_default decides). */
static void search_finish(akg_job *j)
{
    akg_search *s = j->search;
    if (s->best_cand <= 0 || !s->default_rec || !j->best) {
        search_end_job(j);
        return;
    }
    cJSON_Delete(s->confirm);
    s->confirm = cJSON_CreateObject();
    if (!s->confirm || set_confirm_path(s, j->best) != 0) {
        search_end_job(j);
        return;
    }
    cJSON_AddNumberToObject(s->confirm, "candidate", (double)s->best_cand);
    akg__pipeline_profile(j, s->confirm_path, on_confirmed_best);
}

static void next_candidate(akg_job *j)
{
    akg_search *s = j->search;
    const char *why = NULL;
    if ((int)s->n_cands >= s->budget)
        why = s->adaptive ? "the search's candidates are spent (max_total_tasks)"
                          : "the search's rounds are spent (max_rounds)";
    else if (s->converged) {
        snprintf(s->end_text, sizeof s->end_text,
                 "the search converged: the best gained at most %.0f%% over a window of %d "
                 "candidates, %d times in a row",
                 s->ad.convergence_threshold * 100, s->ad.convergence_window, s->ad.patience);
        why = s->end_text;
    }
    search_cand c;
    int found = why ? 0 : propose(j, s, &c);
    if (found < 0) {
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    if (!why && !found)
        why = "every combination of the design's tune() values was tried";
    if (why) {
        s->end = why;
        search_finish(j);
        return;
    }
    char *text = akg_search_moves_text(&s->moves, c.genome);
    if (!text) {
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    j->attempt++;
    c.step = j->attempt;
    s->cands[s->n_cands++] = c;
    akg_kernel_files_free(&j->files); /* the last candidate's; this one has none yet */
    free(j->sketch_text);
    j->sketch_text = text;
    cJSON_Delete(j->design_info);
    j->design_info = cJSON_Duplicate(s->base_design, 1);
    if (j->design_info) {
        cJSON_DeleteItemFromObject(j->design_info, "tune");
        cJSON_AddItemToObject(j->design_info, "tune", akg_search_moves_json(&s->moves, c.genome));
    }
    akg_sketch_free(j->sketch);
    j->sketch = NULL;
    char err[1200];
    if (akg_search_moves_check(text, &j->sketch, err, sizeof err) != 0) {
        akg__search_candidate_failed(j, "design_error", err);
        return;
    }
    j->safe_mode = 0;
    akg__pipeline_run_candidate(j);
}

/* ---------- resume: the candidates the store already holds ---------- */

/* A whole number of a JSON item, 0 where it is missing or not a number (a cast of NaN is
 * undefined). */
static double json_whole(const cJSON *v)
{
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *file_base(const char *p)
{
    const char *b = p ? strrchr(p, '/') : NULL;
    return b ? b + 1 : p;
}

cJSON *akg__search_store_info(const akg_job *j, int passed)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "workflow", j->workflow);
    const akg_search *s = j->search;
    if (akg__search_workflow(j)) {
        char key[65];
        if (s)
            memcpy(key, s->design_key, sizeof key);
        else if (j->sketch_text) /* candidate 0: its sketch is the default design */
            akg_sha256_hex(j->sketch_text, strlen(j->sketch_text), key);
        else
            key[0] = '\0';
        cJSON_AddStringToObject(o, "design_key", key);
        if (s && s->n_cands > 0) {
            const search_cand *c = &s->cands[s->n_cands - 1];
            cJSON *g = cJSON_AddArrayToObject(o, "genome");
            for (size_t t = 0; g && t < s->moves.n; t++)
                cJSON_AddItemToArray(g, cJSON_CreateNumber(c->genome[t]));
            cJSON_AddNumberToObject(o, "parent", (double)c->parent);
            cJSON_AddNumberToObject(o, "island", c->island);
            cJSON_AddNumberToObject(o, "round", c->round);
        }
    }
    cJSON *files = cJSON_AddObjectToObject(o, "files");
    if (j->sketch_path)
        cJSON_AddStringToObject(files, "sketch", file_base(j->sketch_path));
    if (j->kernel_src_path)
        cJSON_AddStringToObject(files, "kernel", file_base(j->kernel_src_path));
    if (j->model_new_path)
        cJSON_AddStringToObject(files, "model_new", file_base(j->model_new_path));
    if (j->lib_path)
        cJSON_AddStringToObject(files, "library", file_base(j->lib_path));
    if (passed) {
        const cJSON *sp = cJSON_GetObjectItem(j->profile, "speedup");
        if (cJSON_IsNumber(sp))
            cJSON_AddNumberToObject(o, "speedup", sp->valuedouble);
        if (j->verify)
            cJSON_AddItemToObject(o, "verify", cJSON_Duplicate(j->verify, 1));
        if (j->profile)
            cJSON_AddItemToObject(o, "profile", cJSON_Duplicate(j->profile, 1));
    }
    return o;
}

/* A resumed candidate that is the fastest so far: its files are written from the store into
 * candidates/<step>/ of this run, so that the job can end with it as with any kept candidate.
 * from: its row (akg_store_task_candidates). */
static cJSON *resumed_best(akg_job *j, double speedup, const void *from, char *err, size_t errlen)
{
    const cJSON *row = from;
    long long run = (long long)json_whole(cJSON_GetObjectItem(row, "run_id"));
    int step = (int)json_whole(cJSON_GetObjectItem(row, "step"));
    void *lib = NULL;
    size_t lib_len = 0;
    cJSON *full = akg_store_candidate_get(j->engine->store, run, step, &lib, &lib_len);
    const cJSON *info = cJSON_GetObjectItem(row, "info");
    const cJSON *names = cJSON_GetObjectItem(info, "files");
    char rel[64], dir[4200];
    snprintf(rel, sizeof rel, "candidates/%d", j->attempt);
    snprintf(dir, sizeof dir, "%s/%s", j->out_dir, rel);
    cJSON *rec = cJSON_CreateObject();
    cJSON *files = cJSON_AddObjectToObject(rec, "files");
    int rc = full && files
                 ? akg_mkdirs(dir, err, errlen)
                 : akg_fail(err, errlen, AKG_ENOTFOUND,
                            "run %lld's candidate %d is no longer in the store", run, step);
    static const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    static const char *const cols[] = {"sketch", "code", "model_new", NULL};
    for (size_t i = 0; i < 4 && rc == AKG_OK; i++) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(names, keys[i]));
        const char *text =
            cols[i] ? cJSON_GetStringValue(cJSON_GetObjectItem(full, cols[i])) : NULL;
        if (!name)
            continue;
        if (i < 3 && !text) {
            rc = akg_fail(err, errlen, AKG_ENOTFOUND, "the store lacks its %s", keys[i]);
            break;
        }
        if (i == 3 && !lib) {
            rc = akg_fail(err, errlen, AKG_ENOTFOUND, "the store lacks its built library");
            break;
        }
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        rc =
            akg_write_file(path, i == 3 ? lib : text, i == 3 ? lib_len : strlen(text), err, errlen);
        cJSON_AddStringToObject(files, keys[i], name);
    }
    free(lib);
    if (rc != AKG_OK) {
        cJSON_Delete(full);
        cJSON_Delete(rec);
        return NULL;
    }
    cJSON_AddNumberToObject(rec, "step", j->attempt);
    cJSON_AddNumberToObject(rec, "speedup", speedup);
    cJSON_AddStringToObject(rec, "dir", dir);
    const cJSON *v = cJSON_GetObjectItem(info, "verify"), *p = cJSON_GetObjectItem(info, "profile");
    if (v)
        cJSON_AddItemToObject(rec, "verify", cJSON_Duplicate(v, 1));
    if (p)
        cJSON_AddItemToObject(rec, "profile", cJSON_Duplicate(p, 1));
    if (j->design_info)
        cJSON_AddItemToObject(rec, "design", cJSON_Duplicate(j->design_info, 1));
    cJSON_AddStringToObject(rec, "sketch_text",
                            cJSON_GetStringValue(cJSON_GetObjectItem(full, "sketch")));
    cJSON_Delete(full);
    return rec;
}

/* A stored candidate's genome, when it is one of this search's: the same workflow and default
 * design, a value for every tune(), not the default design itself, not tried yet, and its
 * stored sketch the one the genome gives now. */
static int resumable(const akg_job *j, const akg_search *s, const cJSON *row, int *g)
{
    const cJSON *info = cJSON_GetObjectItem(row, "info");
    const char *wf = cJSON_GetStringValue(cJSON_GetObjectItem(info, "workflow"));
    const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(info, "design_key"));
    const cJSON *genome = cJSON_GetObjectItem(info, "genome");
    if (!wf || strcmp(wf, j->workflow) != 0 || !key || strcmp(key, s->design_key) != 0 ||
        !cJSON_IsArray(genome) || (size_t)cJSON_GetArraySize(genome) != s->moves.n)
        return 0;
    int any = 0;
    memset(g, 0, AKG_SEARCH_MAX_TUNABLES * sizeof *g);
    for (size_t t = 0; t < s->moves.n; t++) {
        const cJSON *v = cJSON_GetArrayItem(genome, (int)t);
        if (!cJSON_IsNumber(v) || v->valueint < 0 || v->valueint >= s->moves.n_choices[t])
            return 0;
        g[t] = v->valueint;
        any |= g[t] != 0;
    }
    if (!any || tried(s, g))
        return 0;
    char *text = akg_search_moves_text(&s->moves, g);
    const char *stored = cJSON_GetStringValue(cJSON_GetObjectItem(row, "sketch"));
    int same = text && stored && strcmp(text, stored) == 0;
    free(text);
    return same;
}

/* Takes the finished candidates of earlier runs of this search on this task (a run killed or
 * cancelled, or one that ended) as done: their status, timings and sketches are read back,
 * never run again; the rounds, islands, curve and best are rebuilt from them in their order,
 * and the search goes on from there. Candidate 0, the default design, has just run again: its
 * timing is the one the others are compared with, and its design gives the tune() choices. */
static void search_resume(akg_job *j)
{
    akg_search *s = j->search;
    if (!j->store_run || !j->fingerprint[0] || !j->judge[0] || !s->design_key[0])
        return;
    cJSON *rows =
        akg_store_task_candidates(j->engine->store, j->fingerprint, j->judge, j->id, 4096);
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        if ((int)s->n_cands >= s->budget)
            break;
        int g[AKG_SEARCH_MAX_TUNABLES];
        if (!resumable(j, s, row, g))
            continue;
        const cJSON *info = cJSON_GetObjectItem(row, "info");
        const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(row, "status"));
        int passed = status && strcmp(status, "pass") == 0;
        double speedup = cJSON_GetNumberValue(cJSON_GetObjectItem(info, "speedup"));
        if (passed && !(speedup > 0))
            continue; /* a verified candidate without its timing cannot be ranked */
        search_cand *c = &s->cands[s->n_cands];
        memset(c, 0, sizeof *c);
        memcpy(c->genome, g, sizeof g);
        long parent = (long)json_whole(cJSON_GetObjectItem(info, "parent"));
        c->parent = parent >= 0 && (size_t)parent < s->n_cands ? parent : 0;
        size_t k = s->n_cands - 1; /* search candidates before this one */
        if (!s->adaptive) {
            c->island = (int)(k % (size_t)s->ev.parallel_num) % s->ev.num_islands;
            c->round = 1 + (int)(k / (size_t)s->ev.parallel_num);
        }
        c->step = ++j->attempt;
        s->n_cands++;
        long long from_run = (long long)json_whole(cJSON_GetObjectItem(row, "run_id"));
        int from_step = (int)json_whole(cJSON_GetObjectItem(row, "step"));
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddNumberToObject(entry, "step", c->step);
        cJSON_AddStringToObject(entry, "status", passed ? "pass" : "fail");
        if (passed) {
            cJSON_AddNumberToObject(entry, "ref_ms",
                                    cJSON_GetNumberValue(cJSON_GetObjectItem(row, "ref_ms")));
            cJSON_AddNumberToObject(entry, "kernel_ms",
                                    cJSON_GetNumberValue(cJSON_GetObjectItem(row, "kernel_ms")));
            cJSON_AddNumberToObject(entry, "speedup", speedup);
            cJSON_AddBoolToObject(entry, "slower_than_reference", speedup < 1.0);
        } else {
            const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(row, "error_class"));
            const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(row, "error_detail"));
            cJSON_AddStringToObject(entry, "error_class", cls ? cls : "runtime_error");
            cJSON_AddStringToObject(entry, "detail", detail ? detail : "");
        }
        cJSON_AddBoolToObject(entry, "resumed", 1);
        cJSON *from = cJSON_AddObjectToObject(entry, "resumed_from");
        cJSON_AddNumberToObject(from, "run", (double)from_run);
        cJSON_AddNumberToObject(from, "step", from_step);
        cJSON_AddItemToArray(j->candidates, entry);
        if (candidate_account(j, entry, passed, speedup, resumed_best, row) != 0)
            break;
        s->resumed++;
        if (!s->resumed_runs)
            s->resumed_runs = cJSON_CreateArray();
        int known = 0;
        const cJSON *r;
        cJSON_ArrayForEach(r, s->resumed_runs) known |= (long long)r->valuedouble == from_run;
        if (!known)
            cJSON_AddItemToArray(s->resumed_runs, cJSON_CreateNumber((double)from_run));
    }
    cJSON_Delete(rows);
    if (j->finishing || s->resumed == 0)
        return;
    if (!s->adaptive) { /* the next candidate's round and slot */
        size_t k = s->n_cands - 1;
        s->round = 1 + (int)(k / (size_t)s->ev.parallel_num);
        s->slot = (int)(k % (size_t)s->ev.parallel_num);
    }
    char msg[300];
    snprintf(msg, sizeof msg,
             "%s: resumed %d finished candidate%s from the store (not run again); best so far "
             "%.2fx (candidate %ld); %d of %d candidates left",
             j->workflow, s->resumed, s->resumed == 1 ? "" : "s", s->best, s->best_cand,
             s->budget - (int)s->n_cands, s->budget);
    akg__pipeline_log(j, AKG_LOG_INFO, msg);
}

cJSON *akg__search_report(const akg_job *j)
{
    const akg_search *s = j->search;
    if (!akg__search_workflow(j))
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "workflow", j->workflow);
    if (!s) {
        cJSON_AddNumberToObject(o, "candidates", (double)cJSON_GetArraySize(j->candidates));
        return o;
    }
    cJSON *p = cJSON_AddObjectToObject(o, "settings");
    if (s->adaptive) {
        cJSON_AddNumberToObject(p, "max_total_tasks", s->ad.max_total_tasks);
        cJSON_AddNumberToObject(p, "initial_task_count", s->ad.initial_task_count);
        cJSON_AddNumberToObject(p, "exploration_coef", s->ad.exploration_coef);
        cJSON_AddNumberToObject(p, "random_factor", s->ad.random_factor);
        cJSON_AddNumberToObject(p, "convergence_window", s->ad.convergence_window);
        cJSON_AddNumberToObject(p, "convergence_threshold", s->ad.convergence_threshold);
        cJSON_AddNumberToObject(p, "patience", s->ad.patience);
    } else {
        cJSON_AddNumberToObject(p, "max_rounds", s->ev.max_rounds);
        cJSON_AddNumberToObject(p, "parallel_num", s->ev.parallel_num);
        cJSON_AddNumberToObject(p, "num_islands", s->ev.num_islands);
        cJSON_AddNumberToObject(p, "migration_interval", s->ev.migration_interval);
        cJSON_AddNumberToObject(p, "elite_size", s->ev.elite_size);
        cJSON_AddNumberToObject(p, "parent_selection_prob", s->ev.parent_selection_prob);
    }
    cJSON_AddNumberToObject(o, "seed", (double)j->seed);
    cJSON *tun = cJSON_AddObjectToObject(o, "tunables");
    for (size_t t = 0; tun && t < s->moves.n; t++) {
        cJSON *vals = cJSON_AddArrayToObject(tun, s->moves.name[t]);
        for (int c = 0; vals && c < s->moves.n_choices[t]; c++)
            cJSON_AddItemToArray(vals, cJSON_CreateString(s->moves.values[t][c]));
    }
    cJSON_AddNumberToObject(o, "designs", s->moves.designs);
    cJSON_AddNumberToObject(o, "candidates", (double)s->n_cands);
    size_t passed = 0;
    for (size_t i = 0; i < s->n_cands; i++)
        passed += s->cands[i].passed;
    cJSON_AddNumberToObject(o, "verified", (double)passed);
    cJSON_AddNumberToObject(o, "resumed", s->resumed);
    if (s->resumed_runs)
        cJSON_AddItemToObject(o, "resumed_from_runs", cJSON_Duplicate(s->resumed_runs, 1));
    cJSON_AddNumberToObject(o, "best_candidate", (double)s->best_cand);
    cJSON_AddNumberToObject(o, "best_speedup", s->best > 0 ? s->best : 0);
    cJSON_AddNumberToObject(o, "default_speedup",
                            s->n_cands && s->cands[0].passed ? s->cands[0].score : 0);
    cJSON_AddItemToObject(o, "best_so_far", cJSON_Duplicate(s->curve, 1));
    if (s->confirm)
        cJSON_AddItemToObject(o, "confirmation", cJSON_Duplicate(s->confirm, 1));
    if (s->end)
        cJSON_AddStringToObject(o, "end", s->end);
    return o;
}
