/*
 * search_rules.c: the selection rules of evolve and adaptive_search (search_rules.h).
 *
 * Pure functions of their arguments and a seeded generator (splitmix64: small, fast, and the
 * same sequence on every platform), so a fixed seed gives the same search and the unit tests can
 * pin each rule. Ties in a ranking go to the lower index, for the same reason.
 */
#include "search_rules.h"

#include <math.h>
#include <string.h>

void akg_search_rng_seed(akg_search_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t akg_search_rng_next(akg_search_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double akg_search_rng_unit(akg_search_rng *rng)
{
    return (double)(akg_search_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

size_t akg_search_rng_below(akg_search_rng *rng, size_t n)
{
    return n ? (size_t)(akg_search_rng_next(rng) % n) : 0;
}

void akg_evolve_params_default(akg_evolve_params *p)
{
    p->max_rounds = 3;
    p->parallel_num = 4;
    p->num_islands = 2;
    p->migration_interval = 2;
    p->elite_size = 5;
    p->parent_selection_prob = 0.5;
}

void akg_adaptive_params_default(akg_adaptive_params *p)
{
    p->max_total_tasks = 12;
    p->initial_task_count = 4;
    p->exploration_coef = 1.414;
    p->random_factor = 0.01;
    p->convergence_window = 5;
    p->convergence_threshold = 0.02;
    p->patience = 3;
}

/* ---- tiers ---- */

void akg_search_tier_bounds(size_t n, size_t *top_end, size_t *mid_end)
{
    size_t top = (size_t)floor(0.3 * (double)n + 0.5);
    if (top < 1 && n > 0)
        top = 1;
    size_t mid = top + (size_t)floor(0.4 * (double)n + 0.5);
    if (mid > n)
        mid = n;
    *top_end = top;
    *mid_end = mid;
}

size_t akg_search_sample_tiers(akg_search_rng *rng, size_t n, size_t k, size_t *out)
{
    size_t top, mid;
    akg_search_tier_bounds(n, &top, &mid);
    size_t lo[3] = {0, top, mid}, hi[3] = {top, mid, n};
    size_t drawn = 0;
    int tier = 0, empty_in_a_row = 0;
    while (drawn < k && drawn < n && empty_in_a_row < 3) {
        /* the tier's ranks not drawn yet */
        size_t left = 0;
        for (size_t r = lo[tier]; r < hi[tier]; r++) {
            int taken = 0;
            for (size_t q = 0; q < drawn; q++)
                taken |= out[q] == r;
            left += !taken;
        }
        if (left == 0) {
            empty_in_a_row++;
        } else {
            empty_in_a_row = 0;
            size_t pick = akg_search_rng_below(rng, left);
            for (size_t r = lo[tier]; r < hi[tier]; r++) {
                int taken = 0;
                for (size_t q = 0; q < drawn; q++)
                    taken |= out[q] == r;
                if (!taken && pick-- == 0) {
                    out[drawn++] = r;
                    break;
                }
            }
        }
        tier = (tier + 1) % 3;
    }
    return drawn;
}

/* ---- islands ---- */

int akg_search_island_offer(akg_search_island *island, size_t cand, const double *score,
                            int elite_size)
{
    size_t cap = elite_size < 1                       ? 1
                 : elite_size > AKG_SEARCH_MAX_ELITES ? AKG_SEARCH_MAX_ELITES
                                                      : (size_t)elite_size;
    for (size_t i = 0; i < island->n; i++)
        if (island->members[i] == cand)
            return 0;
    /* its place: after every member at least as good (the earlier one wins a tie) */
    size_t at = 0;
    while (at < island->n && score[island->members[at]] >= score[cand])
        at++;
    if (at >= cap)
        return 0;
    size_t n = island->n < cap ? island->n + 1 : cap;
    memmove(&island->members[at + 1], &island->members[at], (n - 1 - at) * sizeof(size_t));
    island->members[at] = cand;
    island->n = n;
    return 1;
}

int akg_search_migrate(akg_search_island *islands, int n_islands, const double *score,
                       int elite_size)
{
    if (n_islands < 2)
        return 0;
    size_t best[AKG_SEARCH_MAX_ISLANDS];
    int has[AKG_SEARCH_MAX_ISLANDS];
    for (int i = 0; i < n_islands && i < AKG_SEARCH_MAX_ISLANDS; i++) {
        has[i] = islands[i].n > 0;
        best[i] = has[i] ? islands[i].members[0] : 0;
    }
    int joined = 0;
    for (int i = 0; i < n_islands && i < AKG_SEARCH_MAX_ISLANDS; i++)
        if (has[i])
            joined +=
                akg_search_island_offer(&islands[(i + 1) % n_islands], best[i], score, elite_size);
    return joined;
}

int akg_search_migration_due(int round, int interval)
{
    return interval > 0 && round > 0 && round % interval == 0;
}

long akg_search_pick_parent(akg_search_rng *rng, const akg_search_island *own, double prob,
                            const size_t *ranked, size_t n_ranked, int *from_own)
{
    double u = akg_search_rng_unit(rng);
    if (own && own->n > 0 && (u < prob || n_ranked == 0)) {
        *from_own = 1;
        return (long)own->members[akg_search_rng_below(rng, own->n)];
    }
    *from_own = 0;
    if (n_ranked == 0)
        return -1;
    size_t r;
    akg_search_sample_tiers(rng, n_ranked, 1, &r);
    return (long)ranked[r];
}

/* ---- UCB ---- */

double akg_search_rank_quality(size_t rank, size_t n)
{
    if (n <= 1)
        return 1.0;
    return 1.0 - (double)rank / (double)(n - 1);
}

double akg_search_ucb(double quality, unsigned total, unsigned visits, double c)
{
    return quality + c * sqrt(log((double)total + 1.0) / ((double)visits + 1.0));
}

long akg_search_ucb_select(akg_search_rng *rng, const double *score, const unsigned *visits,
                           size_t n, unsigned total, double c, double random_factor)
{
    long best = -1;
    double best_value = 0;
    for (size_t i = 0; i < n; i++) {
        /* rank: how many are better, the lower index winning a tie */
        size_t rank = 0;
        for (size_t q = 0; q < n; q++)
            rank += score[q] > score[i] || (score[q] == score[i] && q < i);
        double value = akg_search_ucb(akg_search_rank_quality(rank, n), total, visits[i], c) +
                       random_factor * akg_search_rng_unit(rng);
        if (best < 0 || value > best_value) {
            best = (long)i;
            best_value = value;
        }
    }
    return best;
}

/* ---- convergence ---- */

void akg_search_convergence_init(akg_search_convergence *c, int window, double threshold,
                                 int patience)
{
    memset(c, 0, sizeof *c);
    c->window = window < 1 ? 1 : window > AKG_SEARCH_MAX_WINDOW ? AKG_SEARCH_MAX_WINDOW : window;
    c->threshold = threshold;
    c->patience = patience < 1 ? 1 : patience;
}

int akg_search_convergence_push(akg_search_convergence *c, double best_so_far)
{
    size_t ring = (size_t)c->window + 1;
    c->history[c->pushed % ring] = best_so_far;
    c->pushed++;
    if (c->pushed < ring)
        return 0;
    double then = c->history[(c->pushed - ring) % ring];
    double gain = then > 0 ? (best_so_far - then) / then : (best_so_far > then ? INFINITY : 0);
    if (gain <= c->threshold)
        c->stale++;
    else
        c->stale = 0;
    return c->stale >= c->patience;
}

/* ---- moves ---- */

int akg_search_mutate(akg_search_rng *rng, int *genome, size_t n, const int *n_choices)
{
    size_t movable = 0;
    for (size_t i = 0; i < n; i++)
        movable += n_choices[i] > 1;
    if (movable == 0)
        return -1;
    size_t pick = akg_search_rng_below(rng, movable);
    for (size_t i = 0; i < n; i++) {
        if (n_choices[i] <= 1 || pick-- != 0)
            continue;
        /* another of its values: a draw among the n-1 others */
        int v = (int)akg_search_rng_below(rng, (size_t)n_choices[i] - 1);
        genome[i] = v >= genome[i] ? v + 1 : v;
        return 0;
    }
    return -1;
}

void akg_search_crossover(akg_search_rng *rng, int *child, const int *a, const int *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        child[i] = akg_search_rng_unit(rng) < 0.5 ? a[i] : b[i];
}
