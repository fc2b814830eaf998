/* bench_stats.h - the small numerical helpers the benchmarks share: CPU and wall clocks,
 * medians (with "never reached" values as +inf), and the seed list.
 * Benchmarks only; nothing here is part of libnccltune. */
#ifndef NCCLTUNE_BENCH_STATS_H
#define NCCLTUNE_BENCH_STATS_H

#include <stddef.h>

/* CPU time of the calling thread, in seconds. Returns NAN if the clock is unavailable. */
double bench_thread_cpu_s(void);

/* CPU time of the whole process, in seconds. Returns NAN if the clock is unavailable. */
double bench_process_cpu_s(void);

/* Monotonic wall time in seconds. Returns NAN if the clock is unavailable. */
double bench_wall_s(void);

/* Median of n values (n >= 1), sorting v in place; +inf values sort last, so a median
 * of mostly "never reached" values is +inf. NAN when n == 0. Can't fail otherwise. */
double bench_median(double *v, size_t n);

/* Parse a positive integer option value; returns 0 or -1 (message in err naming opt). */
int bench_parse_count(const char *opt, const char *arg, long lo, long hi, long *out,
                      char *err, size_t errlen);

#endif
