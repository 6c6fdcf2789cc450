/*
 * Times parse + check of a generated sketch of about N lines (default 200)
 * and prints microseconds per iteration (median of runs): wall-clock time,
 * and the thread's CPU time, which time slices lost to other processes on a
 * busy machine do not inflate.
 * Usage: sketch_parse_bench [LINES]
 */
#define _POSIX_C_SOURCE 199309L
#include "akg/sketch.h"
#include "sketch_bench_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int lines = argc > 1 ? atoi(argv[1]) : 200;
  size_t n = 0;
  char *t = sketch_bench_text(lines, &n);
  if (!t) return 1;
  enum { RUNS = 201 };
  double times[RUNS], cpu[RUNS], parse[RUNS];
  for (int r = 0; r < RUNS; r++) {
    akg_sketch_diag_list *d = akg_sketch_diag_list_new();
    akg_sketch *s = NULL;
    double t0 = clock_us(CLOCK_MONOTONIC), c0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
    int rc = akg_sketch_parse(t, n, &s, d);
    parse[r] = clock_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    int errors = rc == 0 ? akg_sketch_check(s, d) : -1;
    times[r] = clock_us(CLOCK_MONOTONIC) - t0;
    cpu[r] = clock_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    akg_sketch_free(s);
    akg_sketch_diag_list_free(d);
    if (errors != 0) {
      fprintf(stderr, "benchmark sketch does not check cleanly (rc=%d, errors=%d)\n", rc, errors);
      return 1;
    }
  }
  qsort(times, RUNS, sizeof times[0], cmp);
  qsort(cpu, RUNS, sizeof cpu[0], cmp);
  qsort(parse, RUNS, sizeof parse[0], cmp);
  printf("sketch parse+check, %d lines (%zu bytes): median %.1f us, min %.1f us; thread CPU time median %.1f us (parse alone %.1f us)\n",
         lines, n, times[RUNS / 2], times[0], cpu[RUNS / 2], parse[RUNS / 2]);
  free(t);
  return 0;
}
