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
 * A genome already tried (or in flight) is never run again: a repeated draw is redrawn, then the
 * first untried genome after a random one is taken; when every combination has been tried the
 * search ends.
 *
 * Candidates in flight. Up to min(parallel_num, workers) candidates run at once, workers being
 * the harness workers of the job's device kind (--devices N: N workers; on GPUs one a device,
 * on the CPU each with a share of its cores). Each one (search_run) has its own folder,
 * candidates/<step>/, and goes Coder -> build -> Verifier -> profile there: the Coder lowers one
 * candidate at a time (one request per provider session), the builds run in parallel, and the
 * verifications and profiles go to the engine's pool of harness workers. evolve proposes a
 * round's parallel_num candidates together once the round before has finished, so a round's
 * selection sees only finished candidates, as in the original; adaptive_search proposes one each
 * time one ends (its pool refills asynchronously), from the candidates finished by then.
 * Timings never share cores: the pool starts a profile only on an idle device and nothing
 * beside it (harness_client.c, may_start_on; on the CPU every worker shares the one device, so
 * a profile has every core to itself), and the search starts no build (a compiler outside the
 * pool) while one of its profiles waits or runs, nor sends a profile while one of its builds
 * runs (runs_advance). The report's candidates stay in step order; each has started_s and
 * finished_s (seconds since the job started), the worker that timed it and its timings (the
 * verify and profile requests: worker, started_s, finished_s); the search section says how many
 * were in flight at once (max_in_flight), the limit and the workers. The best-so-far curve has
 * one point a candidate, in the order they finished.
 *
 * Each finished candidate is in the store at once (run_store, one INSERT), so killing the
 * search loses none; the report holds every candidate, its genome, parent, island and round,
 * and the best-so-far curve. Candidates in flight when the job ends are dropped (their
 * requests cancelled, their compilers killed); a resumed search runs them again.
 *
 * Resume. A candidate's row carries the task's fingerprint and the judge's version
 * (search_cache.c) and its info: the workflow, the default design's key (its sketch's
 * SHA-256), its genome, and for a verified one its speedup, verify and profile answers and
 * files. Once candidate 0 has run, search_resume takes every finished candidate of an earlier
 * run of this task, judge, workflow and default design as done, in its order (its sketch must
 * be the one its genome gives now): the islands, rounds, curve and best are rebuilt as if it
 * had just run, and proposals go on from there: the candidates that were in flight when the
 * earlier run ended are not in the store, so their genomes are untried and drawn again. A
 * resumed best's files come from the store.
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
#include "akg/backend.h"
#include "akg/child.h"
#include "akg/harness.h"
#include "akg/provider.h"
#include "akg/sketch.h"
#include "akg/store.h"
#include "search_moves.h"
#include "search_rules.h"
#include "search_settings.h"

#define SEARCH_MAX_CANDIDATES 4096
#define SEARCH_REDRAWS 32

enum { CAND_PENDING, CAND_RUNNING, CAND_DONE };

typedef struct {
    int genome[AKG_SEARCH_MAX_TUNABLES];
    double score; /* speedup; < 0 until it passed */
    int passed;
    long parent; /* candidate index, -1 for the default design */
    int island, round, step;
    unsigned visits; /* times it was a parent (UCB) */
    int state;       /* CAND_PENDING: proposed, not started; CAND_RUNNING; CAND_DONE */
} search_cand;

/* A candidate in flight: its own folder (candidates/<step>/) and files, its stage and the
 * request it waits on. The job's own fields (sketch, files, verify, profile) stay candidate
 * 0's while the search runs. */
typedef enum {
    RUN_CODE_WAIT,    /* for the Coder: one request of the job's provider session at a time */
    RUN_CODING,       /* the Coder lowers it */
    RUN_BUILD_WAIT,   /* for the timing gate: no build while one of the search's profiles waits */
    RUN_BUILDING,     /* its compiler runs (as many at once as candidates are in flight) */
    RUN_VERIFYING,    /* a harness worker verifies it */
    RUN_PROFILE_WAIT, /* for the timing gate: no profile while one of the search's builds runs */
    RUN_PROFILING     /* the harness pool times it, alone on its device (may_start_on) */
} run_stage;

typedef struct search_run search_run;
struct search_run {
    akg_job *job; /* NULL once orphaned: the search was freed while its request was pending */
    size_t index; /* its s->cands entry */
    int step;
    run_stage stage;
    char *dir; /* <run folder>/candidates/<step> */
    char *sketch_text;
    struct akg_sketch *sketch;
    cJSON *design_info;
    akg_kernel_files files;
    char *sketch_path, *kernel_path, *model_new_path, *lib_path;
    cJSON *verify, *profile; /* the harness's answers */
    cJSON *timings;          /* {"verify"|"profile": {"worker", "started_s", "finished_s"}} */
    double started_ms;       /* akg_now_ms when it started */
    int worker;              /* the harness worker that timed it (else verified it), -1 none */
    akg_harness_req *hreq;
    akg_provider_op *pop;
    akg_child *child;
    search_run *next; /* s->runs, in the order they started */
};

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
    /* candidates in flight (search_run), as many as limit: min(parallel_num, the pool's workers) */
    search_run *runs;
    int limit, workers, in_flight, max_in_flight;
    size_t next_launch;  /* the first candidate not started yet (CAND_PENDING from here on) */
    int building;        /* builds running (the timing gate) */
    int profiling;       /* profiles submitted and not answered (the timing gate) */
    int coding;          /* a Coder request is pending (one per provider session) */
    int exhausted;       /* every genome was tried */
    int ending;          /* search_finish has run */
    int stepping, again; /* search_step's guard against re-entry (a failure inside a launch) */
};

int akg__search_workflow(const akg_job *j)
{
    return strcmp(j->workflow, "evolve") == 0 || strcmp(j->workflow, "adaptive_search") == 0;
}

static void run_free(search_run *r)
{
    if (!r)
        return;
    free(r->dir);
    free(r->sketch_text);
    akg_sketch_free(r->sketch);
    cJSON_Delete(r->design_info);
    akg_kernel_files_free(&r->files);
    free(r->sketch_path);
    free(r->kernel_path);
    free(r->model_new_path);
    free(r->lib_path);
    cJSON_Delete(r->verify);
    cJSON_Delete(r->profile);
    cJSON_Delete(r->timings);
    free(r);
}

/* The job is over: every candidate still in flight is dropped. A pending request is cancelled;
 * its run is orphaned (job NULL) and freed by the request's callback, which may come later (a
 * compiler's process group is killed, its exit comes on a later loop iteration). */
static void runs_drop(akg_search *s)
{
    search_run *r = s->runs;
    s->runs = NULL;
    while (r) {
        search_run *next = r->next;
        r->job = NULL;
        r->next = NULL;
        if (r->hreq)
            akg_harness_cancel(r->hreq); /* its callback frees r before this returns */
        else if (r->pop)
            akg_provider_cancel(r->pop); /* likewise */
        else if (r->child)
            akg_child_cancel(r->child); /* its callback frees r, later */
        else
            run_free(r);
        r = next;
    }
}

static void search_destroy(akg_search *s)
{
    if (!s)
        return;
    runs_drop(s);
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
    /* candidates in flight at once: a round's slots (or the pool's refill) on the pool's workers
     * (--devices: one harness worker a device, on the CPU one a share of its cores) */
    s->workers = j->engine->devices > 0 ? j->engine->devices : 1;
    s->limit = s->ev.parallel_num < s->workers ? s->ev.parallel_num : s->workers;
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

static void search_step(akg_job *j);

typedef cJSON *(*best_record_fn)(akg_job *j, double speedup, const void *from, char *err,
                                 size_t errlen);

/* Accounts the end of candidate `index`: the best (its record made by make_best when it is the
 * fastest so far), the islands, the curve, convergence. Returns 0, or -1 when the job ended. */
static int candidate_account(akg_job *j, size_t index, cJSON *entry, int passed, double speedup,
                             best_record_fn make_best, const void *from)
{
    akg_search *s = j->search;
    search_cand *c = &s->cands[index];
    c->state = CAND_DONE;
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
        cJSON_DeleteItemFromObject(entry, "dir");
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

/* Records the end of candidate `index` (its entry already in job->candidates) and goes on:
 * the CLI's line, the candidate event, then the next candidates. */
static void candidate_done(akg_job *j, size_t index, int step, cJSON *entry, int passed,
                           double speedup, best_record_fn make_best, const void *from)
{
    akg_search *s = j->search;
    if (candidate_account(j, index, entry, passed, speedup, make_best, from) != 0)
        return;
    size_t done = 0;
    for (size_t i = 0; i < s->n_cands; i++)
        done += s->cands[i].state == CAND_DONE;
    char msg[512];
    if (passed)
        snprintf(msg, sizeof msg,
                 "%s: candidate %zu/%d: %.2fx; best so far %.2fx (candidate %ld); %zu done, %d "
                 "running",
                 j->workflow, index + 1, s->budget, speedup, s->best, s->best_cand, done,
                 s->in_flight);
    else
        snprintf(msg, sizeof msg,
                 "%s: candidate %zu/%d failed (%s); best so far %.2fx; %zu done, %d running",
                 j->workflow, index + 1, s->budget,
                 cJSON_GetStringValue(cJSON_GetObjectItem(entry, "error_class")), s->best, done,
                 s->in_flight);
    akg_event ev = {0};
    ev.kind = AKG_EVENT_CANDIDATE;
    ev.stage = "search";
    ev.attempt = step;
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
    search_step(j);
}

/* Seconds since the job started, for the report's times. */
static double job_seconds(const akg_job *j, double ms)
{
    return (ms - j->started_ms) / 1000.0;
}

/* {"worker", "started_s", "finished_s"} of a harness answer that has just come in (the pool's
 * ran_s is how long its worker had it), or NULL when no worker took it. */
static cJSON *answer_timing(const akg_job *j, const cJSON *ans)
{
    const cJSON *w = cJSON_GetObjectItem(ans, "worker"), *ran = cJSON_GetObjectItem(ans, "ran_s");
    if (!cJSON_IsNumber(w) || !cJSON_IsNumber(ran))
        return NULL;
    double now = job_seconds(j, akg_now_ms());
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "worker", w->valueint);
    cJSON_AddNumberToObject(o, "started_s", now - ran->valuedouble);
    cJSON_AddNumberToObject(o, "finished_s", now);
    return o;
}

void akg__search_candidate_passed(akg_job *j, cJSON *cand, double speedup)
{
    if (j->search) {
        /* the search runs its candidates itself (search_run); the pipeline runs none of them */
        akg__pipeline_log(j, AKG_LOG_WARN, "a search's candidate ended outside the search");
        return;
    }
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
    s->next_launch = 1;
    /* its profile has just been answered: when and on which worker it was timed */
    cJSON *t = answer_timing(j, j->profile);
    if (t) {
        cJSON *timings = cJSON_AddObjectToObject(cand, "timings");
        cJSON_AddItemToObject(timings, "profile", t);
        cJSON_AddNumberToObject(cand, "worker",
                                cJSON_GetNumberValue(cJSON_GetObjectItem(t, "worker")));
    }
    char msg[700];
    if (s->adaptive)
        snprintf(msg, sizeof msg,
                 "adaptive_search: %zu tune() choice%s (%.0f designs); at most %d candidates "
                 "(the default design is candidate 0), UCB c=%.3f, convergence: a gain over "
                 "%.0f%% in %d, patience %d; %d in flight at once (%d worker%s)",
                 s->moves.n, s->moves.n == 1 ? "" : "s", s->moves.designs, s->budget,
                 s->ad.exploration_coef, s->ad.convergence_threshold * 100,
                 s->ad.convergence_window, s->ad.patience, s->limit, s->workers,
                 s->workers == 1 ? "" : "s");
    else
        snprintf(msg, sizeof msg,
                 "evolve: %zu tune() choice%s (%.0f designs); %d rounds of %d candidates on "
                 "%d islands, migration every %d rounds, %d elites (the default design is "
                 "candidate 0); %d in flight at once (%d worker%s)",
                 s->moves.n, s->moves.n == 1 ? "" : "s", s->moves.designs, s->ev.max_rounds,
                 s->ev.parallel_num, s->ev.num_islands, s->ev.migration_interval, s->ev.elite_size,
                 s->limit, s->workers, s->workers == 1 ? "" : "s");
    akg__pipeline_log(j, AKG_LOG_INFO, msg);
    if (j->finishing)
        return;
    candidate_done(j, 0, j->attempt, cand, 1, speedup, snapshot_best, NULL);
}

void akg__search_candidate_failed(akg_job *j, const char *cls, const char *detail)
{
    /* the search runs its candidates itself (search_run): the pipeline's failures after
     * candidate 0 cannot be a search's; recorded as any attempt, and the search goes on */
    cJSON *cand = cJSON_CreateObject();
    if (!cand) {
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    cJSON_AddNumberToObject(cand, "step", j->attempt);
    cJSON_AddStringToObject(cand, "status", "fail");
    cJSON_AddStringToObject(cand, "error_class", cls);
    cJSON_AddStringToObject(cand, "detail", detail ? detail : "");
    cJSON_AddItemToArray(j->candidates, cand);
    akg__store_candidate(j, "fail", cls, detail ? detail : "", 0, 0);
    if (j->search && !j->finishing)
        search_step(j);
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

/* ---------- candidates in flight ----------
 * A candidate goes Coder -> build -> Verifier -> profile in its own folder (candidates/<step>/)
 * with its own files and requests (search_run); the search keeps up to s->limit of them in
 * flight. The Coder answers one request of the job's session at a time (the provider's rule);
 * the builds run at once; verifications and profiles go to the engine's harness pool of the
 * job's device kind. The pool never times two kernels on one device at once, nor a kernel
 * beside any other request there (harness_client.c, may_start_on: a profile starts only on an
 * idle device and nothing starts beside it; on the CPU every worker shares the one device). A
 * build is a compiler on the engine's own cores, outside the pool, so the search gates it: no
 * build of its starts while one of its profiles waits or runs, and no profile is sent while
 * one of its builds runs (runs_advance). */

static double json_whole(const cJSON *v);
static const char *file_base(const char *p);
static cJSON *search_store_info(const akg_job *j, const search_cand *c, const char *const paths[4],
                                const cJSON *verify, const cJSON *profile, int passed);

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void run_emit(akg_job *j, const search_run *r, akg_event_kind kind, const char *stage,
                     int ok, const char *msg, const cJSON *data, const char *path, const char *text)
{
    akg_event ev = {0};
    ev.kind = kind;
    ev.stage = stage;
    ev.attempt = r->step;
    ev.max_attempts = j->max_step;
    ev.ok = ok;
    ev.message = msg;
    ev.data = data;
    ev.path = path;
    ev.text = text;
    akg__job_emit(j, &ev);
}

/* The report's candidates stay in step order, whatever order they finish in. */
static void add_entry_by_step(akg_job *j, cJSON *entry)
{
    double step = json_whole(cJSON_GetObjectItem(entry, "step"));
    int at = cJSON_GetArraySize(j->candidates);
    while (at > 0 && json_whole(cJSON_GetObjectItem(cJSON_GetArrayItem(j->candidates, at - 1),
                                                    "step")) > step)
        at--;
    /* the later ones move behind it (cJSON_InsertItemInArray of cJSON 1.7.15 refuses a middle
     * position) */
    cJSON *later = cJSON_CreateArray();
    while (later && cJSON_GetArraySize(j->candidates) > at)
        cJSON_AddItemToArray(later, cJSON_DetachItemFromArray(j->candidates, at));
    cJSON_AddItemToArray(j->candidates, entry);
    while (later && cJSON_GetArraySize(later) > 0)
        cJSON_AddItemToArray(j->candidates, cJSON_DetachItemFromArray(later, 0));
    cJSON_Delete(later);
}

static void run_unlink(akg_search *s, search_run *r)
{
    for (search_run **p = &s->runs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            r->next = NULL;
            return;
        }
}

/* The record of a run that is the fastest so far (j->best): its files are already in its
 * folder, candidates/<step>/, where akg__pipeline_snapshot would have copied them. */
static cJSON *run_best(akg_job *j, double speedup, const void *from, char *err, size_t errlen)
{
    const search_run *r = from;
    cJSON *rec = cJSON_CreateObject();
    cJSON *names = cJSON_AddObjectToObject(rec, "files");
    if (!rec || !names) {
        cJSON_Delete(rec);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    static const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    const char *const paths[] = {r->sketch_path, r->kernel_path, r->model_new_path, r->lib_path};
    for (size_t i = 0; i < 4; i++) {
        if (!paths[i])
            continue;
        FILE *f = fopen(paths[i], "rb");
        if (!f) {
            snprintf(err, errlen, "%s: cannot be read", paths[i]);
            cJSON_Delete(rec);
            return NULL;
        }
        fclose(f);
        cJSON_AddStringToObject(names, keys[i], file_base(paths[i]));
    }
    cJSON_AddNumberToObject(rec, "step", r->step);
    cJSON_AddNumberToObject(rec, "speedup", speedup);
    cJSON_AddStringToObject(rec, "dir", r->dir);
    cJSON_AddItemToObject(rec, "verify", cJSON_Duplicate(r->verify, 1));
    cJSON_AddItemToObject(rec, "profile", cJSON_Duplicate(r->profile, 1));
    if (r->design_info)
        cJSON_AddItemToObject(rec, "design", cJSON_Duplicate(r->design_info, 1));
    cJSON_AddStringToObject(rec, "sketch_text", r->sketch_text ? r->sketch_text : "");
    (void)j;
    return rec;
}

/* The run's row in the store, written as soon as it ends (one INSERT: a kill after it loses
 * nothing of it). */
static void run_store(akg_job *j, const search_run *r, int passed, const char *cls,
                      const char *detail, double ref_ms, double kernel_ms)
{
    if (!j->store_run)
        return; /* said when the job started */
    const char *const paths[] = {r->sketch_path, r->kernel_path, r->model_new_path, r->lib_path};
    cJSON *info =
        search_store_info(j, &j->search->cands[r->index], paths, r->verify, r->profile, passed);
    akg__store_record(j, r->step, r->sketch_text, &r->files, r->lib_path, passed ? "pass" : "fail",
                      cls, detail, ref_ms, kernel_ms, info);
    cJSON_Delete(info);
}

/* The end of a candidate in flight: its entry in the report (with when it started and ended,
 * and the worker that timed it), its row in the store, then the search's accounting. */
static void run_end(akg_job *j, search_run *r, int passed, const char *cls, const char *detail)
{
    akg_search *s = j->search;
    run_unlink(s, r);
    s->in_flight--;
    const cJSON *p = r->profile;
    double ref_ms = passed ? cJSON_GetNumberValue(cJSON_GetObjectItem(p, "ref_ms")) : 0;
    double kernel_ms = passed ? cJSON_GetNumberValue(cJSON_GetObjectItem(p, "kernel_ms")) : 0;
    double speedup = passed ? cJSON_GetNumberValue(cJSON_GetObjectItem(p, "speedup")) : 0;
    cJSON *entry = cJSON_CreateObject();
    if (!entry) {
        run_free(r);
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    cJSON_AddNumberToObject(entry, "step", r->step);
    cJSON_AddStringToObject(entry, "status", passed ? "pass" : "fail");
    if (passed) {
        cJSON_AddNumberToObject(entry, "ref_ms", ref_ms);
        cJSON_AddNumberToObject(entry, "kernel_ms", kernel_ms);
        cJSON_AddNumberToObject(entry, "speedup", speedup);
        cJSON_AddBoolToObject(entry, "slower_than_reference", speedup < 1.0);
    } else {
        cJSON_AddStringToObject(entry, "error_class", cls);
        cJSON_AddStringToObject(entry, "detail", detail ? detail : "");
    }
    if (r->design_info)
        cJSON_AddItemToObject(entry, "design", cJSON_Duplicate(r->design_info, 1));
    cJSON_AddNumberToObject(entry, "started_s", job_seconds(j, r->started_ms));
    cJSON_AddNumberToObject(entry, "finished_s", job_seconds(j, akg_now_ms()));
    if (r->worker >= 0)
        cJSON_AddNumberToObject(entry, "worker", r->worker);
    if (r->timings)
        cJSON_AddItemToObject(entry, "timings", cJSON_Duplicate(r->timings, 1));
    add_entry_by_step(j, entry);
    run_store(j, r, passed, cls, detail, ref_ms, kernel_ms);
    candidate_done(j, r->index, r->step, entry, passed, speedup, run_best, r);
    run_free(r);
}

static void run_failed(akg_job *j, search_run *r, const char *cls, const char *detail)
{
    if (strcmp(cls, "sandbox_error") == 0) {
        /* the machine cannot isolate a candidate: no other would fare better (as pipeline.c) */
        char msg[4400];
        snprintf(msg, sizeof msg,
                 "the candidate could not be run: its sandbox could not be set up (%s); no "
                 "other kernel was tried, since it would meet the same machine. Fix what this "
                 "names (install bubblewrap, allow unprivileged user namespaces), or run "
                 "candidates without an operating-system sandbox with --sandbox none "
                 "(sandbox.mode in config.yaml)",
                 detail && *detail ? detail : "no detail");
        akg__pipeline_finish(j, AKG_JOB_ERROR, "sandbox_error", msg);
        return; /* r stays in s->runs; the search's end frees it */
    }
    run_end(j, r, 0, cls, detail);
}

static void on_run_answer(const cJSON *ans, void *user);

static void run_submit(akg_job *j, search_run *r, cJSON *req)
{
    char err[512];
    const char *kind = j->be->device_kind ? j->be->device_kind : "cpu";
    akg_harness *pool = akg__engine_harness(j->engine, kind, err, sizeof err);
    if (!pool) {
        cJSON_Delete(req);
        char msg[700];
        snprintf(msg, sizeof msg, "the harness for %s is not available: %s", kind, err);
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", msg);
        return;
    }
    if (akg_harness_submit(pool, req, j->verify_timeout_s, on_run_answer, r, &r->hreq) != AKG_OK) {
        r->hreq = NULL;
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "the harness is not available");
    }
}

static void run_verify_start(akg_job *j, search_run *r)
{
    r->stage = RUN_VERIFYING;
    char msg[200];
    snprintf(msg, sizeof msg, "attempt %d/%d: %d trials with fresh seeded inputs", r->step,
             j->max_step, j->trials);
    run_emit(j, r, AKG_EVENT_STAGE, "verify", 0, msg, NULL, NULL, NULL);
    if (j->finishing)
        return;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "verify");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddStringToObject(req, "kernel", r->model_new_path);
    cJSON_AddNumberToObject(req, "trials", j->trials);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    cJSON_AddNullToObject(req, "atol");
    cJSON_AddNullToObject(req, "rtol");
    run_submit(j, r, req);
}

static void run_profile_start(akg_job *j, search_run *r)
{
    r->stage = RUN_PROFILING;
    j->search->profiling++;
    char msg[200];
    snprintf(msg, sizeof msg,
             "attempt %d/%d: timing reference and kernel: %d warm-up, %d runs, interleaved",
             r->step, j->max_step, j->warmup_times, j->run_times);
    run_emit(j, r, AKG_EVENT_STAGE, "profile", 0, msg, NULL, NULL, NULL);
    if (j->finishing)
        return;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "profile");
    cJSON_AddStringToObject(req, "reference", j->reference_path);
    cJSON_AddStringToObject(req, "kernel", r->model_new_path);
    cJSON_AddNumberToObject(req, "warmup", j->warmup_times);
    cJSON_AddNumberToObject(req, "runs", j->run_times);
    if (j->compiled_baseline)
        cJSON_AddBoolToObject(req, "compiled", 1);
    cJSON_AddNumberToObject(req, "seed", (double)(j->seed % 1000000007ULL));
    run_submit(j, r, req);
}

static void on_run_answer(const cJSON *ans, void *user)
{
    search_run *r = user;
    r->hreq = NULL;
    akg_job *j = r->job;
    if (!j) { /* orphaned: the job is over */
        run_free(r);
        return;
    }
    akg_search *s = j->search;
    int profile = r->stage == RUN_PROFILING;
    if (profile)
        s->profiling--;
    akg__job_add_harness_time(j, profile ? "profile" : "verify", ans);
    cJSON *t = answer_timing(j, ans);
    if (t) {
        if (!r->timings)
            r->timings = cJSON_CreateObject();
        if (profile || r->worker < 0)
            r->worker = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "worker"));
        cJSON_DeleteItemFromObject(r->timings, profile ? "profile" : "verify");
        cJSON_AddItemToObject(r->timings, profile ? "profile" : "verify", t);
    }
    if (j->finishing)
        return; /* the job ends (cancelled, or an error): the search's end frees r */
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"));
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(ans, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(ans, "detail"));
    char msg[1024];
    cJSON_Delete(profile ? r->profile : r->verify);
    if (profile)
        r->profile = cJSON_Duplicate(ans, 1);
    else
        r->verify = cJSON_Duplicate(ans, 1);
    if (!ok)
        snprintf(msg, sizeof msg, "%s failed (%s): %s", profile ? "profiling" : "verification",
                 cls ? cls : "?", detail ? detail : "");
    else if (profile)
        snprintf(msg, sizeof msg, "reference %.4f ms, kernel %.4f ms, speedup %.2fx",
                 cJSON_GetNumberValue(cJSON_GetObjectItem(ans, "ref_ms")),
                 cJSON_GetNumberValue(cJSON_GetObjectItem(ans, "kernel_ms")),
                 cJSON_GetNumberValue(cJSON_GetObjectItem(ans, "speedup")));
    else
        snprintf(msg, sizeof msg, "verified: %d trials, max abs err %.3g, max rel err %.3g",
                 (int)json_whole(cJSON_GetObjectItem(ans, "trials")),
                 json_whole(cJSON_GetObjectItem(ans, "max_abs_err")),
                 json_whole(cJSON_GetObjectItem(ans, "max_rel_err")));
    run_emit(j, r, profile ? AKG_EVENT_PROFILE : AKG_EVENT_VERIFY, profile ? "profile" : "verify",
             ok, msg, ans, NULL, NULL);
    if (j->finishing)
        return;
    const cJSON *sp = cJSON_GetObjectItem(ans, "speedup");
    if (!ok) {
        run_failed(j, r, cls ? cls : "runtime_error", detail ? detail : "");
        return;
    }
    if (profile) {
        if (!cJSON_IsNumber(sp) || !(sp->valuedouble > 0)) {
            run_failed(j, r, "runtime_error", "the profile answered no speedup");
            return;
        }
        run_end(j, r, 1, NULL, NULL);
        return;
    }
    r->stage = RUN_PROFILE_WAIT;
    search_step(j);
}

static void on_run_built(const akg_child_result *res, void *user)
{
    search_run *r = user;
    r->child = NULL;
    akg_job *j = r->job;
    if (!j) {
        run_free(r);
        return;
    }
    j->search->building--;
    if (j->finishing || res->cancelled)
        return;
    if (res->timed_out || res->exit_status != 0 || res->term_signal) {
        akg_buf msg;
        akg__build_failure(res, &msg);
        run_failed(j, r, "build_error",
                   akg_buf_status(&msg) == AKG_OK && msg.data
                       ? msg.data
                       : "the build failed (its output did not fit in memory)");
        akg_buf_free(&msg);
        if (!j->finishing)
            search_step(j);
        return;
    }
    run_verify_start(j, r);
    if (!j->finishing)
        search_step(j); /* a build fewer: a waiting profile may go */
}

static void run_build_start(akg_job *j, search_run *r)
{
    akg_search *s = j->search;
    r->stage = RUN_BUILDING;
    char err[1024], msg[700];
    char **argv = NULL;
    akg_build_request breq = {
        .config = j->config, .files = &r->files, .dir = r->dir, .arch = j->arch};
    if (j->be->build_argv && j->be->build_argv(&breq, &argv, err, sizeof err) != AKG_OK) {
        run_failed(j, r, "build_error", err);
        return;
    }
    if (!argv) {
        snprintf(msg, sizeof msg, "attempt %d/%d: nothing to build for %s/%s", r->step, j->max_step,
                 j->be->name, j->be->dsl);
        run_emit(j, r, AKG_EVENT_STAGE, "build", 0, msg, NULL, NULL, NULL);
        if (!j->finishing)
            run_verify_start(j, r);
        return;
    }
    akg_buf cmd; /* the command as a person would type it, its file arguments by their names */
    akg_buf_init(&cmd, 400);
    for (char **a = argv; *a; a++) {
        const char *word = strrchr(*a, '/') && **a == '/' ? strrchr(*a, '/') + 1 : *a;
        akg_buf_appendf(&cmd, "%s%s", a == argv ? "" : " ", word);
    }
    snprintf(msg, sizeof msg, "attempt %d/%d: %s", r->step, j->max_step,
             akg_buf_status(&cmd) == AKG_OK && cmd.data ? cmd.data : argv[0]);
    akg_buf_free(&cmd);
    run_emit(j, r, AKG_EVENT_STAGE, "build", 0, msg, NULL, NULL, NULL);
    if (j->finishing) {
        akg_argv_free(argv);
        return;
    }
    if (akg_child_run(j->engine->loop, argv, r->dir, j->verify_timeout_s, on_run_built, r,
                      &r->child) != 0) {
        snprintf(msg, sizeof msg, "cannot start the build command %s of %s/%s", argv[0],
                 j->be->name, j->be->dsl);
        akg_argv_free(argv);
        r->child = NULL;
        run_failed(j, r, "build_error", msg);
        return;
    }
    s->building++;
    akg_argv_free(argv);
}

static int write_in(akg_job *j, search_run *r, const char *name, const char *text, char **path)
{
    char err[1024];
    free(*path);
    *path = path_in(r->dir, name);
    if (*path && akg_write_file(*path, text, strlen(text), err, sizeof err) == AKG_OK)
        return 0;
    if (!*path)
        snprintf(err, sizeof err, "out of memory");
    char msg[1400];
    snprintf(msg, sizeof msg, "candidate %d's files could not be written: %s", r->step, err);
    akg__pipeline_finish(j, AKG_JOB_ERROR, "io_error", msg);
    return -1;
}

static void on_run_coded(akg_code_answer *a, void *user)
{
    search_run *r = user;
    r->pop = NULL;
    akg_job *j = r->job;
    if (!j) {
        run_free(r);
        return;
    }
    j->search->coding = 0;
    if (a->provenance) { /* what the Coder's model was asked and answered */
        cJSON_Delete(j->code_info);
        j->code_info = cJSON_Duplicate(a->provenance, 1);
    }
    if (j->finishing || a->status == AKG_ECANCELED)
        return;
    if (a->status != AKG_OK || !a->files || !a->files->model_new_source) {
        run_failed(j, r, "unsupported",
                   a->status != AKG_OK ? (a->message ? a->message : akg_strerror(a->status))
                                       : "the Coder wrote no model_new.py");
        if (!j->finishing)
            search_step(j);
        return;
    }
    r->files = *a->files;
    memset(a->files, 0, sizeof *a->files);
    if (write_in(j, r, r->files.kernel_filename, r->files.kernel_source, &r->kernel_path) ||
        write_in(j, r, "model_new.py", r->files.model_new_source, &r->model_new_path))
        return;
    free(r->lib_path);
    r->lib_path = r->files.library_filename ? path_in(r->dir, r->files.library_filename) : NULL;
    run_emit(j, r, AKG_EVENT_KERNEL, "code", 1, "kernel written", NULL, r->kernel_path,
             r->files.kernel_source);
    if (j->finishing)
        return;
    r->stage = RUN_BUILD_WAIT;
    search_step(j);
}

static void run_code_start(akg_job *j, search_run *r)
{
    akg_search *s = j->search;
    r->stage = RUN_CODING;
    char msg[300], err[1024];
    snprintf(msg, sizeof msg, "attempt %d/%d: lowering the sketch to %s for %s", r->step,
             j->max_step, j->be->dsl, j->be->name);
    run_emit(j, r, AKG_EVENT_STAGE, "code", 0, msg, NULL, NULL, NULL);
    if (j->finishing)
        return;
    akg_code_request req = {.sketch = r->sketch,
                            .ref = j->ref,
                            .probe = j->probe,
                            .backend = j->be,
                            .safe = false,
                            .sketch_file = "sketch.sketch"};
    if (!j->session) {
        run_failed(j, r, "crash", "the provider's session is closed");
        return;
    }
    s->coding = 1;
    if (akg_provider_code(j->session, &req, on_run_coded, r, &r->pop, err, sizeof err) != AKG_OK) {
        s->coding = 0;
        r->pop = NULL;
        run_failed(j, r, "crash", err);
    }
}

/* Starts candidate `index` (proposed, CAND_PENDING): its folder and sketch, checked like any
 * design; one that does not check is recorded as failed and never lowered. */
static void run_launch(akg_job *j, size_t index)
{
    akg_search *s = j->search;
    search_cand *c = &s->cands[index];
    c->state = CAND_RUNNING;
    search_run *r = calloc(1, sizeof *r);
    char rel[64];
    snprintf(rel, sizeof rel, "candidates/%d", c->step);
    if (!r || !(r->dir = path_in(j->out_dir, rel)) ||
        !(r->sketch_text = akg_search_moves_text(&s->moves, c->genome))) {
        run_free(r);
        akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
        return;
    }
    r->job = j;
    r->index = index;
    r->step = c->step;
    r->worker = -1;
    r->started_ms = akg_now_ms();
    r->stage = RUN_CODE_WAIT;
    r->design_info = cJSON_Duplicate(s->base_design, 1);
    if (r->design_info) {
        cJSON_DeleteItemFromObject(r->design_info, "tune");
        cJSON_AddItemToObject(r->design_info, "tune", akg_search_moves_json(&s->moves, c->genome));
    }
    search_run **tail = &s->runs;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    if (++s->in_flight > s->max_in_flight)
        s->max_in_flight = s->in_flight;
    char err[1200];
    if (akg_mkdirs(r->dir, err, sizeof err) != AKG_OK) {
        char msg[1400];
        snprintf(msg, sizeof msg, "candidate %d's folder could not be made: %s", r->step, err);
        akg__pipeline_finish(j, AKG_JOB_ERROR, "io_error", msg);
        return;
    }
    if (write_in(j, r, "sketch.sketch", r->sketch_text, &r->sketch_path))
        return;
    run_emit(j, r, AKG_EVENT_SKETCH, "design", 1, "sketch ready (a search's candidate)", NULL,
             r->sketch_path, r->sketch_text);
    if (j->finishing)
        return;
    if (akg_search_moves_check(r->sketch_text, &r->sketch, err, sizeof err) != 0)
        run_failed(j, r, "design_error", err);
}

/* Starts one stage a run waits for, when it may start (the Coder is free; the timing gate);
 * returns 1 when it started one (s->runs may have changed), 0 when none may start. */
static int runs_advance(akg_job *j)
{
    akg_search *s = j->search;
    int profile_waits = 0;
    for (const search_run *r = s->runs; r; r = r->next)
        profile_waits |= r->stage == RUN_PROFILE_WAIT;
    for (search_run *r = s->runs; r; r = r->next) {
        if (r->stage == RUN_CODE_WAIT && !s->coding) {
            run_code_start(j, r);
            return 1;
        }
        if (r->stage == RUN_PROFILE_WAIT && s->building == 0) {
            run_profile_start(j, r);
            return 1;
        }
        if (r->stage == RUN_BUILD_WAIT && s->profiling == 0 && !profile_waits) {
            run_build_start(j, r);
            return 1;
        }
    }
    return 0;
}

/* Why the search proposes no more candidates, or NULL. */
static const char *stop_reason(akg_search *s)
{
    if ((int)s->n_cands >= s->budget)
        return s->adaptive ? "the search's candidates are spent (max_total_tasks)"
                           : "the search's rounds are spent (max_rounds)";
    if (s->converged) {
        snprintf(s->end_text, sizeof s->end_text,
                 "the search converged: the best gained at most %.0f%% over a window of %d "
                 "candidates, %d times in a row",
                 s->ad.convergence_threshold * 100, s->ad.convergence_window, s->ad.patience);
        return s->end_text;
    }
    if (s->exhausted)
        return "every combination of the design's tune() values was tried";
    return NULL;
}

/* Proposes and starts candidates while fewer than s->limit are in flight: evolve proposes a
 * round's slots together once the round before has finished (selection sees only finished
 * candidates, as in the original), adaptive_search one candidate each time one ends. With none
 * left to propose and none in flight the search ends. Returns how many it started. */
static int search_pump(akg_job *j)
{
    akg_search *s = j->search;
    int started = 0;
    while (!j->finishing) {
        if (s->next_launch < s->n_cands) {
            if (s->in_flight >= s->limit)
                break;
            run_launch(j, s->next_launch++);
            started++;
            continue;
        }
        const char *why = stop_reason(s);
        if (why) {
            if (s->in_flight == 0 && !s->ending) {
                s->ending = 1;
                s->end = why;
                search_finish(j);
            }
            break;
        }
        if (s->in_flight >= s->limit || (!s->adaptive && s->slot == 0 && s->in_flight > 0))
            break;
        int n = s->adaptive ? 1 : s->ev.parallel_num - s->slot;
        for (int k = 0; k < n && (int)s->n_cands < s->budget && !j->finishing; k++) {
            search_cand c;
            int found = propose(j, s, &c);
            if (found < 0) {
                akg__pipeline_finish(j, AKG_JOB_ERROR, "crash", "out of memory");
                return started;
            }
            if (!found) {
                s->exhausted = 1;
                break;
            }
            c.step = ++j->attempt;
            c.state = CAND_PENDING;
            s->cands[s->n_cands++] = c;
        }
    }
    return started;
}

/* Moves the search on: the stages its runs may start, then the candidates it may start. A call
 * from inside (a candidate that fails while it starts) only asks the outer call to go round
 * once more. */
static void search_step(akg_job *j)
{
    akg_search *s = j->search;
    if (s->stepping) {
        s->again = 1;
        return;
    }
    s->stepping = 1;
    do {
        s->again = 0;
        while (!j->finishing && runs_advance(j))
            ;
        if (!j->finishing && search_pump(j) > 0)
            s->again = 1;
    } while (s->again && !j->finishing);
    s->stepping = 0;
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

/* The info column of a candidate's row: the workflow, the design's key (the SHA-256 of the
 * default design's sketch), the candidate's genome, parent, island and round (c; NULL for
 * candidate 0), its files' names, and for a verified one its speedup and answers. */
static cJSON *search_store_info(const akg_job *j, const search_cand *c, const char *const paths[4],
                                const cJSON *verify, const cJSON *profile, int passed)
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
        if (s && c) {
            cJSON *g = cJSON_AddArrayToObject(o, "genome");
            for (size_t t = 0; g && t < s->moves.n; t++)
                cJSON_AddItemToArray(g, cJSON_CreateNumber(c->genome[t]));
            cJSON_AddNumberToObject(o, "parent", (double)c->parent);
            cJSON_AddNumberToObject(o, "island", c->island);
            cJSON_AddNumberToObject(o, "round", c->round);
        }
    }
    cJSON *files = cJSON_AddObjectToObject(o, "files");
    static const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    for (size_t i = 0; i < 4; i++)
        if (paths[i])
            cJSON_AddStringToObject(files, keys[i], file_base(paths[i]));
    if (passed) {
        const cJSON *sp = cJSON_GetObjectItem(profile, "speedup");
        if (cJSON_IsNumber(sp))
            cJSON_AddNumberToObject(o, "speedup", sp->valuedouble);
        if (verify)
            cJSON_AddItemToObject(o, "verify", cJSON_Duplicate(verify, 1));
        if (profile)
            cJSON_AddItemToObject(o, "profile", cJSON_Duplicate(profile, 1));
    }
    return o;
}

cJSON *akg__search_store_info(const akg_job *j, int passed)
{
    /* a candidate the pipeline ran: candidate 0, or an attempt before it */
    const char *const paths[] = {j->sketch_path, j->kernel_src_path, j->model_new_path,
                                 j->lib_path};
    return search_store_info(j, NULL, paths, j->verify, j->profile, passed);
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
        if (candidate_account(j, s->n_cands - 1, entry, passed, speedup, resumed_best, row) != 0)
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
    s->next_launch = s->n_cands;
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
    /* candidates in flight at once: the most there were, the limit (min(parallel_num,
     * workers)) and the harness workers of the job's device kind */
    cJSON_AddNumberToObject(o, "max_in_flight", s->max_in_flight > 0 ? s->max_in_flight : 1);
    cJSON_AddNumberToObject(o, "in_flight_limit", s->limit);
    cJSON_AddNumberToObject(o, "workers", s->workers);
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
