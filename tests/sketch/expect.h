/*
 * The check macro of the sketch tests: EXPECT(cond, printf-format, ...)
 * counts a failure and says where, without stopping the test, so one run
 * reports every broken case. main() returns failures != 0.
 */
#ifndef AKG_SKETCH_TEST_EXPECT_H
#define AKG_SKETCH_TEST_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
    }                                                                                              \
  } while (0)

#endif /* AKG_SKETCH_TEST_EXPECT_H */
