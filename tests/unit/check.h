/* check.h: a minimal test harness: CHECK records failures and keeps going,
 * the test's main returns check_summary(), which prints "N passed, N failed". */
#ifndef AKG_TEST_CHECK_H
#define AKG_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (cond) {                                                                           \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                                     \
    } while (0)

#define CHECK_STR(a, b)                                                                       \
    do {                                                                                      \
        const char *check_a_ = (a), *check_b_ = (b);                                          \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                        \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__,       \
                    check_b_ ? check_b_ : "(null)", check_a_ ? check_a_ : "(null)");          \
        }                                                                                     \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                           \
    do {                                                                                      \
        const char *check_h_ = (hay), *check_n_ = (needle);                                   \
        if (check_h_ && strstr(check_h_, check_n_)) {                                         \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: \"%s\" not found in \"%s\"\n", __FILE__, __LINE__,        \
                    check_n_, check_h_ ? check_h_ : "(null)");                                \
        }                                                                                     \
    } while (0)

static int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
