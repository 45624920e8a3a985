/*
 * hist.c - the log-bucketed latency histogram (layout in hist.h).
 *
 * Bucket of v >= BENCH_HIST_EXACT: with e = floor(log2 v) and the SUB_BITS bits below the
 * leading one as `sub`, index = EXACT + (e - SUB_BITS - 1) * 2^SUB_BITS + sub. The bucket
 * covers [(2^SUB_BITS + sub) << (e - SUB_BITS), + 2^(e - SUB_BITS)).
 */
#include "bench/hist.h"

#include <string.h>

#define SUB_COUNT (1u << BENCH_HIST_SUB_BITS)

void bench_hist_init(bench_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

static unsigned bucket_of(uint64_t ns)
{
    if (ns < BENCH_HIST_EXACT)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    unsigned sub = (unsigned)(ns >> (e - BENCH_HIST_SUB_BITS)) & (SUB_COUNT - 1);
    return BENCH_HIST_EXACT + (e - BENCH_HIST_SUB_BITS - 1) * SUB_COUNT + sub;
}

/* The smallest value of bucket i and the width over which its samples are spread. */
static void bucket_range(unsigned i, double *lower_out, double *width_out)
{
    if (i < BENCH_HIST_EXACT) { /* holds only the value i: nothing to interpolate */
        *lower_out = i;
        *width_out = 0;
        return;
    }
    unsigned j = i - BENCH_HIST_EXACT;
    unsigned shift = j / SUB_COUNT + 1; /* e - SUB_BITS */
    unsigned sub = j % SUB_COUNT;
    *lower_out = (double)((uint64_t)(SUB_COUNT + sub) << shift);
    *width_out = (double)((uint64_t)1 << shift);
}

void bench_hist_add(bench_hist *h, uint64_t ns)
{
    h->buckets[bucket_of(ns)]++;
    h->count++;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

void bench_hist_merge(bench_hist *dst, const bench_hist *src)
{
    for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

double bench_hist_percentile_us(const bench_hist *h, double p)
{
    if (h->count == 0)
        return 0;
    double rank = p / 100.0 * (double)h->count;
    double cum = 0;
    for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
        double n = (double)h->buckets[i];
        if (n == 0 || cum + n < rank) {
            cum += n;
            continue;
        }
        double lower, width;
        bucket_range(i, &lower, &width);
        double v = lower + (rank - cum) / n * width;
        if (v < (double)h->min_ns)
            v = (double)h->min_ns;
        if (v > (double)h->max_ns)
            v = (double)h->max_ns;
        return v / 1000.0;
    }
    return (double)h->max_ns / 1000.0;
}
