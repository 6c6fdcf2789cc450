/* test_search_rules.c: the selection rules of evolve and adaptive_search with fixed seeds:
 * tiers, parent choice, migration, UCB, convergence and the moves on a genome; and the moves as
 * edits of a sketch's text (search_moves.h). */
#include <math.h>
#include <stdlib.h>

#include "../../engine/workflows/search_moves.h"
#include "../../engine/workflows/search_rules.h"
#include "akg/akg.h"
#include "akg/sketch.h"
#include "check.h"

static void test_rng(void)
{
    akg_search_rng a, b, c;
    akg_search_rng_seed(&a, 42);
    akg_search_rng_seed(&b, 42);
    akg_search_rng_seed(&c, 43);
    int same = 1, differs = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = akg_search_rng_next(&a), y = akg_search_rng_next(&b);
        same &= x == y;
        differs |= x != akg_search_rng_next(&c);
    }
    CHECK(same);
    CHECK(differs);
    double lo = 1, hi = 0;
    for (int i = 0; i < 10000; i++) {
        double u = akg_search_rng_unit(&a);
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    CHECK(lo >= 0 && lo < 0.01 && hi < 1 && hi > 0.99);
}

static void test_tiers(void)
{
    size_t top, mid;
    akg_search_tier_bounds(10, &top, &mid);
    CHECK(top == 3 && mid == 7);
    akg_search_tier_bounds(1, &top, &mid);
    CHECK(top == 1 && mid == 1);
    akg_search_tier_bounds(4, &top, &mid);
    CHECK(top == 1 && mid == 3); /* 1.2 -> 1, then 1.6 -> 2 */

    akg_search_rng rng;
    akg_search_rng_seed(&rng, 7);
    /* three draws of ten: one from each tier, in the order top, middle, rest */
    for (int rep = 0; rep < 200; rep++) {
        size_t out[3];
        CHECK(akg_search_sample_tiers(&rng, 10, 3, out) == 3);
        if (!(out[0] < 3 && out[1] >= 3 && out[1] < 7 && out[2] >= 7)) {
            CHECK(!"a draw left its tier");
            break;
        }
    }
    /* every rank once when all are asked for, then no more */
    size_t all[12];
    CHECK(akg_search_sample_tiers(&rng, 10, 12, all) == 10);
    int seen[10] = {0};
    for (int i = 0; i < 10; i++)
        seen[all[i]]++;
    int once = 1;
    for (int i = 0; i < 10; i++)
        once &= seen[i] == 1;
    CHECK(once);
    /* one draw always comes from the top tier; each of its ranks about a third of the time */
    int hits[10] = {0};
    for (int rep = 0; rep < 3000; rep++) {
        size_t r;
        akg_search_sample_tiers(&rng, 10, 1, &r);
        hits[r]++;
    }
    CHECK(hits[0] + hits[1] + hits[2] == 3000);
    CHECK(hits[0] > 850 && hits[1] > 850 && hits[2] > 850);
    /* the same seed, the same draws */
    akg_search_rng a, b;
    akg_search_rng_seed(&a, 99);
    akg_search_rng_seed(&b, 99);
    size_t x[5], y[5];
    akg_search_sample_tiers(&a, 20, 5, x);
    akg_search_sample_tiers(&b, 20, 5, y);
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK(akg_search_sample_tiers(&a, 0, 3, x) == 0);
}

static void test_islands_and_migration(void)
{
    double score[8] = {1.0, 2.0, 0.5, 3.0, 1.5, 0.1, 4.0, 2.5};
    akg_search_island isl[2] = {0};
    /* island 0 keeps its 3 best of 0..3, best first */
    for (size_t c = 0; c < 4; c++)
        akg_search_island_offer(&isl[0], c, score, 3);
    CHECK(isl[0].n == 3 && isl[0].members[0] == 3 && isl[0].members[1] == 1 &&
          isl[0].members[2] == 0);
    CHECK(!akg_search_island_offer(&isl[0], 3, score, 3)); /* already there */
    CHECK(!akg_search_island_offer(&isl[0], 5, score, 3)); /* worse than the worst */
    for (size_t c = 4; c < 6; c++)
        akg_search_island_offer(&isl[1], c, score, 3);
    CHECK(isl[1].n == 2 && isl[1].members[0] == 4);
    /* migration on the ring: 0's best (3) joins 1, 1's best as it was (4) joins 0 */
    CHECK(akg_search_migrate(isl, 2, score, 3) == 2);
    CHECK(isl[1].members[0] == 3 && isl[1].n == 3);
    CHECK(isl[0].n == 3 && isl[0].members[0] == 3 && isl[0].members[1] == 1 &&
          isl[0].members[2] == 4); /* 4 (1.5) pushed out 0 (1.0) */
    /* again: nothing new moves */
    CHECK(akg_search_migrate(isl, 2, score, 3) == 0);
    CHECK(akg_search_migrate(isl, 1, score, 3) == 0);
    /* after rounds 2 and 4, not 1 or 3; never with interval 0 */
    CHECK(!akg_search_migration_due(1, 2) && akg_search_migration_due(2, 2) &&
          !akg_search_migration_due(3, 2) && akg_search_migration_due(4, 2));
    CHECK(!akg_search_migration_due(2, 0));

    /* a parent from its own island about half the time with prob 0.5 */
    akg_search_rng rng;
    akg_search_rng_seed(&rng, 1234);
    size_t ranked[8] = {6, 3, 7, 1, 4, 0, 2, 5};
    int own = 0, in_own_pool = 1;
    for (int rep = 0; rep < 10000; rep++) {
        int from_own = -1;
        long p = akg_search_pick_parent(&rng, &isl[1], 0.5, ranked, 8, &from_own);
        if (from_own) {
            own++;
            in_own_pool &= p == 3 || p == 4 || p == 5;
        }
    }
    CHECK(own > 4700 && own < 5300);
    CHECK(in_own_pool);
    /* an empty island draws from all; nothing at all gives -1 */
    akg_search_island empty = {0};
    int from_own = -1;
    CHECK(akg_search_pick_parent(&rng, &empty, 1.0, ranked, 8, &from_own) >= 0 && !from_own);
    CHECK(akg_search_pick_parent(&rng, &empty, 0.5, ranked, 0, &from_own) == -1);
}

static void test_ucb(void)
{
    CHECK(akg_search_rank_quality(0, 5) == 1.0);
    CHECK(akg_search_rank_quality(4, 5) == 0.0);
    CHECK(fabs(akg_search_rank_quality(1, 5) - 0.75) < 1e-12);
    CHECK(akg_search_rank_quality(0, 1) == 1.0);
    /* the formula: q + 1.414 * sqrt(ln(N+1)/(n+1)) */
    CHECK(fabs(akg_search_ucb(0.5, 9, 1, 1.414) - (0.5 + 1.414 * sqrt(log(10.0) / 2.0))) < 1e-12);

    akg_search_rng rng;
    akg_search_rng_seed(&rng, 5);
    double score[3] = {2.0, 1.0, 0.5};
    /* no one visited: the best rank wins (the tie-break is small) */
    unsigned v0[3] = {0, 0, 0};
    CHECK(akg_search_ucb_select(&rng, score, v0, 3, 0, 1.414, 0.01) == 0);
    /* the best visited often, the worst never: exploration picks the worst */
    unsigned v1[3] = {20, 5, 0};
    CHECK(akg_search_ucb_select(&rng, score, v1, 3, 25, 1.414, 0.01) == 2);
    /* without exploration the rank alone decides */
    CHECK(akg_search_ucb_select(&rng, score, v1, 3, 25, 0.0, 0.01) == 0);
    /* equal scores and visits: the tie-break spreads the picks */
    double flat[4] = {1, 1, 1, 1};
    unsigned v2[4] = {0, 0, 0, 0};
    int picked[4] = {0};
    for (int rep = 0; rep < 400; rep++)
        picked[akg_search_ucb_select(&rng, flat, v2, 4, 0, 0.0, 10.0)]++;
    CHECK(picked[0] > 50 && picked[1] > 50 && picked[2] > 50 && picked[3] > 50);
    CHECK(akg_search_ucb_select(&rng, flat, v2, 0, 0, 1.414, 0.01) == -1);
}

static void test_convergence(void)
{
    akg_search_convergence c;
    /* flat: windows are stale from the 6th value on; the 3rd stale one converges (8th push) */
    akg_search_convergence_init(&c, 5, 0.02, 3);
    int at = 0;
    for (int i = 1; i <= 20 && !at; i++)
        if (akg_search_convergence_push(&c, 1.0))
            at = i;
    CHECK(at == 8);
    /* 3% better every candidate: each window gains more than 2%: never converges */
    akg_search_convergence_init(&c, 5, 0.02, 3);
    double best = 1.0;
    int converged = 0;
    for (int i = 0; i < 40; i++, best *= 1.03)
        converged |= akg_search_convergence_push(&c, best);
    CHECK(!converged);
    /* a gain resets the count: flat 7, a jump, then flat: converges 3 stale windows after the
     * jump has left the window */
    akg_search_convergence_init(&c, 5, 0.02, 3);
    at = 0;
    double seq[20] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    for (int i = 0; i < 20 && !at; i++)
        if (akg_search_convergence_push(&c, seq[i]))
            at = i + 1;
    CHECK(at == 15); /* pushes 8..12 see the jump in their window; 13, 14, 15 are stale */
    /* 1% gains are no gain */
    akg_search_convergence_init(&c, 5, 0.02, 3);
    best = 1.0;
    at = 0;
    for (int i = 1; i <= 20 && !at; i++, best *= 1.001)
        if (akg_search_convergence_push(&c, best))
            at = i;
    CHECK(at == 8);
}

static void test_moves(void)
{
    akg_search_rng rng;
    akg_search_rng_seed(&rng, 11);
    int n_choices[3] = {3, 1, 2};
    int ok = 1, moved_fixed = 0;
    for (int rep = 0; rep < 500; rep++) {
        int g[3] = {rep % 3, 0, rep % 2}, before[3] = {g[0], g[1], g[2]};
        CHECK(akg_search_mutate(&rng, g, 3, n_choices) == 0);
        int changed = (g[0] != before[0]) + (g[1] != before[1]) + (g[2] != before[2]);
        ok &= changed == 1 && g[0] >= 0 && g[0] < 3 && g[2] >= 0 && g[2] < 2;
        moved_fixed |= g[1] != 0;
    }
    CHECK(ok);
    CHECK(!moved_fixed);
    int one[2] = {1, 1};
    int g[2] = {0, 0};
    CHECK(akg_search_mutate(&rng, g, 2, one) == -1);
    int a[4] = {0, 0, 0, 0}, b[4] = {1, 1, 1, 1}, child[4];
    int from_a = 0;
    for (int rep = 0; rep < 250; rep++) {
        akg_search_crossover(&rng, child, a, b, 4);
        for (int i = 0; i < 4; i++)
            from_a += child[i] == 0;
    }
    CHECK(from_a > 400 && from_a < 600);
}

static const char *RELU_SKETCH =
    "# akg: reference relu.py\n"
    "sketch relu {\n"
    "  symbols: N;\n"
    "  tensors: x[N]: f32; y[N]: f32;\n"
    "  # a comment kept\n"
    "  constexpr: BLOCK = tune(1024, 0, 4096), VW = 8, U = tune(2, 4);\n"
    "  @llm_hint(\"parallel\", \"coreidx\")\n"
    "  for i in range(0, N, BLOCK):\n"
    "    t = alloc([BLOCK])\n"
    "    load(x[i:i+BLOCK] -> t)\n"
    "    t = relu(t)\n"
    "    store(t -> y[i:i+BLOCK])\n"
    "}\n";

static void test_sketch_moves(void)
{
    akg_sketch *sk = NULL;
    char err[512];
    CHECK(akg_search_moves_check(RELU_SKETCH, &sk, err, sizeof err) == 0);
    akg_search_moves m;
    CHECK(akg_search_moves_init(&m, sk, RELU_SKETCH, err, sizeof err) == AKG_OK);
    CHECK(m.n == 2 && m.designs == 6);
    CHECK_STR(m.name[0], "BLOCK");
    CHECK_STR(m.name[1], "U");
    CHECK(m.n_choices[0] == 3 && m.n_choices[1] == 2);
    /* genome 0 is the design itself, byte for byte */
    int g0[2] = {0, 0};
    char *t0 = akg_search_moves_text(&m, g0);
    CHECK_STR(t0, RELU_SKETCH);
    free(t0);
    /* the chosen value first, the others after in their order; the rest of the text kept */
    int g1[2] = {2, 1};
    char *t1 = akg_search_moves_text(&m, g1);
    CHECK_CONTAINS(t1, "  # a comment kept\n  constexpr: BLOCK = tune(4096, 1024, 0), VW = 8, "
                       "U = tune(4, 2);\n");
    CHECK_CONTAINS(t1, "# akg: reference relu.py\n");
    akg_sketch *sk1 = NULL;
    CHECK(akg_search_moves_check(t1, &sk1, err, sizeof err) == 0);
    int64_t v = 0;
    for (size_t i = 0; sk1 && i < akg_sketch_const_count(sk1); i++)
        if (strcmp(akg_sketch_const_name(sk1, i), "BLOCK") == 0)
            akg_sketch_const_int(sk1, i, &v);
    CHECK(v == 4096); /* the value the Coder takes */
    akg_sketch_free(sk1);
    cJSON *j1 = akg_search_moves_json(&m, g1);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(j1, "BLOCK")) == 4096);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(j1, "U")) == 4);
    cJSON_Delete(j1);
    free(t1);
    /* a value the checker refuses: the candidate does not check, with the checker's words */
    int g2[2] = {1, 0};
    char *t2 = akg_search_moves_text(&m, g2);
    akg_sketch *sk2 = NULL;
    CHECK(akg_search_moves_check(t2, &sk2, err, sizeof err) == -1 && sk2 == NULL);
    CHECK_CONTAINS(err, "step must be positive");
    free(t2);
    akg_search_moves_free(&m);
    akg_sketch_free(sk);
    /* no tune() with a choice: nothing to search */
    const char *fixed = "sketch r {\n  symbols: N;\n  tensors: x[N]: f32; y[N]: f32;\n"
                        "  constexpr: B = tune(64);\n"
                        "  for i in range(0, N, B):\n    t = alloc([B])\n"
                        "    load(x[i:i+B] -> t)\n    store(t -> y[i:i+B])\n}\n";
    CHECK(akg_search_moves_check(fixed, &sk, err, sizeof err) == 0);
    CHECK(akg_search_moves_init(&m, sk, fixed, err, sizeof err) == AKG_ENOTFOUND);
    CHECK_CONTAINS(err, "no tune() with more than one value");
    akg_search_moves_free(&m);
    akg_sketch_free(sk);
}

int main(void)
{
    test_rng();
    test_tiers();
    test_islands_and_migration();
    test_ucb();
    test_convergence();
    test_moves();
    test_sketch_moves();
    return check_summary();
}
