/*
 * hist.h - a log-bucketed latency histogram (nanoseconds in, microsecond percentiles out).
 *
 * Values below 32 ns have a bucket each; above, every power of two is split into 16
 * buckets, so a percentile is within ~6% of the true value. Adding is a few instructions
 * and no allocation, so it can sit in the timed loop. One histogram per thread; merge after.
 */
#ifndef KURA_BENCH_HIST_H
#define KURA_BENCH_HIST_H

#include <stdint.h>

#define BENCH_HIST_SUB_BITS 4
#define BENCH_HIST_EXACT (2u << BENCH_HIST_SUB_BITS) /* values below this are exact */
#define BENCH_HIST_BUCKETS                                                                     \
    (BENCH_HIST_EXACT + (64u - BENCH_HIST_SUB_BITS - 1u) * (1u << BENCH_HIST_SUB_BITS))

typedef struct bench_hist {
    uint64_t count;
    uint64_t min_ns, max_ns;
    uint64_t buckets[BENCH_HIST_BUCKETS];
} bench_hist;

void bench_hist_init(bench_hist *h);
void bench_hist_add(bench_hist *h, uint64_t ns);
/* Adds every sample of src to dst. */
void bench_hist_merge(bench_hist *dst, const bench_hist *src);
/* The p-th percentile (0 < p <= 100) in microseconds, interpolated within its bucket;
 * 0 for an empty histogram. */
double bench_hist_percentile_us(const bench_hist *h, double p);

#endif
