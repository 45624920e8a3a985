/*
 * progress.c - This file contains the time-left estimate of the benchmarks' progress lines
 * (see progress.h).
 */
#include "bench/progress.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "util/thread.h"

void bench_progress_init(bench_progress *p)
{
    memset(p, 0, sizeof *p);
    p->start_ns = know_ns();
}

void bench_progress_step_done(bench_progress *p, size_t kind, double seconds)
{
    assert(kind < BENCH_PROGRESS_MAX_KINDS);
    p->sum_s[kind] += seconds;
    p->count[kind]++;
    p->done_s += seconds;
    p->done++;
}

double bench_progress_expect(const bench_progress *p, size_t kind)
{
    assert(kind < BENCH_PROGRESS_MAX_KINDS);
    if (p->count[kind] > 0)
        return p->sum_s[kind] / p->count[kind];
    return p->done > 0 ? p->done_s / p->done : 0;
}

double bench_progress_elapsed(const bench_progress *p)
{
    return (double)(know_ns() - p->start_ns) / 1e9;
}

/* "M:SS", or "H:MM:SS" from an hour on; rounded to the second. */
static void bp_clock(char *buf, size_t cap, double s)
{
    unsigned long t = s > 0 ? (unsigned long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(buf, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%lu:%02lu", t / 60, t % 60);
}

void bench_progress_format(char *buf, size_t cap, double elapsed_s, double left_s,
                           bool left_known)
{
    char el[32], left[32];
    bp_clock(el, sizeof el, elapsed_s);
    if (!left_known) {
        snprintf(buf, cap, "%s elapsed", el);
        return;
    }
    bp_clock(left, sizeof left, left_s);
    snprintf(buf, cap, "%s elapsed, ~%s left", el, left);
}
