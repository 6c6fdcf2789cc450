/*
 * search_rules.h: the selection rules of the search workflows, as pure, seeded code.
 *
 * `evolve` (an island model) and `adaptive_search` (UCB over the candidates found so far) pick
 * which candidates to build on; search.c turns those picks into sketch edits and runs them
 * through the job's Coder -> Verifier -> profile path. Nothing here touches a job, a file or the
 * clock: every random choice comes from an akg_search_rng seeded by the caller, so one seed gives
 * one sequence of picks (tests/unit/test_search_rules.c pins them).
 *
 * Candidates are named by their index in the caller's list; a score is a candidate's speedup over
 * the reference (higher is better), and only verified candidates have one.
 */
#ifndef AKG_SEARCH_RULES_H
#define AKG_SEARCH_RULES_H

#include <stddef.h>
#include <stdint.h>

/* ---- the random source ---------------------------------------------------- */

typedef struct {
    uint64_t state;
} akg_search_rng;

void akg_search_rng_seed(akg_search_rng *rng, uint64_t seed);
uint64_t akg_search_rng_next(akg_search_rng *rng);
/* Uniform in [0, 1). */
double akg_search_rng_unit(akg_search_rng *rng);
/* Uniform in [0, n); 0 when n is 0. */
size_t akg_search_rng_below(akg_search_rng *rng, size_t n);

/* ---- parameters (the names and defaults of the original AKG) -------------- */

typedef struct {
    int max_rounds;               /* 3 */
    int parallel_num;             /* 4: candidates a round, shared among the islands */
    int num_islands;              /* 2 */
    int migration_interval;       /* 2: elites migrate after every 2nd round (0: never) */
    int elite_size;               /* 5: the best candidates an island keeps */
    double parent_selection_prob; /* 0.5: a parent from its own island, else from all */
} akg_evolve_params;

typedef struct {
    int max_total_tasks;          /* 12: candidates in all, the default design included */
    int initial_task_count;       /* 4: candidates drawn before UCB has anything to rank */
    double exploration_coef;      /* 1.414 */
    double random_factor;         /* 0.01: the tie-break's scale */
    int convergence_window;       /* 5 */
    double convergence_threshold; /* 0.02: a gain at most this over the window is none */
    int patience;                 /* 3 windows without gain end the search */
} akg_adaptive_params;

void akg_evolve_params_default(akg_evolve_params *p);
void akg_adaptive_params_default(akg_adaptive_params *p);

/* The most elites an island keeps, and the most islands (larger settings are refused). */
#define AKG_SEARCH_MAX_ELITES 64
#define AKG_SEARCH_MAX_ISLANDS 64

/* ---- tiers (inspirations) --------------------------------------------------- */

/* Of n candidates ranked best first: the top tier is [0, *top_end) (30%, at least one),
 * the middle [*top_end, *mid_end) (the next 40%), the rest [*mid_end, n). */
void akg_search_tier_bounds(size_t n, size_t *top_end, size_t *mid_end);
/* Samples up to k distinct ranks of n candidates ranked best first, one tier at a time in turn
 * (top, middle, rest, top, ...), uniformly inside a tier, skipping a tier that is used up.
 * Writes the ranks to out (room for k) and returns how many were drawn (min(k, n)). */
size_t akg_search_sample_tiers(akg_search_rng *rng, size_t n, size_t k, size_t *out);

/* ---- islands ------------------------------------------------------------------ */

typedef struct {
    size_t members[AKG_SEARCH_MAX_ELITES]; /* candidate indices, best first */
    size_t n;
} akg_search_island;

/* Offers candidate cand (score[cand]) to the island: it joins the elites when there is room or
 * it beats the worst, which then leaves; a candidate already there is not added twice. Returns 1
 * when it joined. */
int akg_search_island_offer(akg_search_island *island, size_t cand, const double *score,
                            int elite_size);
/* Migration on a ring: each island's best elite (as the islands stood before any moved) is
 * offered to the next island. Returns how many joined. */
int akg_search_migrate(akg_search_island *islands, int n_islands, const double *score,
                       int elite_size);
/* Whether elites migrate after round (1-based) with this interval (0: never). */
int akg_search_migration_due(int round, int interval);
/* Picks a parent for a child of island own: with probability prob one of its elites
 * (uniformly), otherwise one of all ranked candidates (ranked best first, n_ranked of them),
 * drawn by tiers. Returns the candidate index, or -1 when there is none; *from_own says which
 * pool it came from. */
long akg_search_pick_parent(akg_search_rng *rng, const akg_search_island *own, double prob,
                            const size_t *ranked, size_t n_ranked, int *from_own);

/* ---- UCB (adaptive_search) ---------------------------------------------------- */

/* The quality of rank r (0 best) among n: 1 for the best, 0 for the worst, linear between. */
double akg_search_rank_quality(size_t rank, size_t n);
/* quality + c * sqrt(ln(total + 1) / (visits + 1)). */
double akg_search_ucb(double quality, unsigned total, unsigned visits, double c);
/* The candidate of n (score[i], visits[i]: times it was a parent; total: all selections) with
 * the highest UCB plus random_factor times a uniform draw. Returns its index, or -1 when n is 0. */
long akg_search_ucb_select(akg_search_rng *rng, const double *score, const unsigned *visits,
                           size_t n, unsigned total, double c, double random_factor);

/* ---- convergence ----------------------------------------------------------------- */

#define AKG_SEARCH_MAX_WINDOW 64

typedef struct {
    int window, patience;
    double threshold;
    double history[AKG_SEARCH_MAX_WINDOW + 1]; /* the last window+1 best-so-far values, a ring */
    size_t pushed;
    int stale; /* consecutive candidates whose window gained at most threshold */
} akg_search_convergence;

void akg_search_convergence_init(akg_search_convergence *c, int window, double threshold,
                                 int patience);
/* Adds the best-so-far score after one more candidate. Once window+1 values are in, a window
 * whose relative gain (best now over best window candidates ago) is at most threshold counts
 * as stale; a gain above it resets the count. Returns 1 when patience stale windows ran in a
 * row (the search has converged). */
int akg_search_convergence_push(akg_search_convergence *c, double best_so_far);

/* ---- moves on a genome (one chosen candidate index per tune()) --------------------- */

/* Changes one gene whose tune() has more than one value to another of its values. Returns 0,
 * or -1 when no gene can change. */
int akg_search_mutate(akg_search_rng *rng, int *genome, size_t n, const int *n_choices);
/* child[i] is a[i] or b[i], each with probability one half. */
void akg_search_crossover(akg_search_rng *rng, int *child, const int *a, const int *b, size_t n);

#endif
