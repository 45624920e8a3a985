/*
 * progress.h - This file contains the time-left estimate of the progress lines that
 * kura-bench and kura-http-bench print on stderr.
 *
 * A benchmark is a known list of steps. Each step has a kind (kura-bench: an (engine,
 * workload) pair, which takes about as long in every round; kura-http-bench: a server start,
 * the load, ...), and a step whose kind has not run yet is expected to take as long as the
 * steps done so far took on average. Steps of a known duration (a timed workload) are the
 * caller's to add. The estimate is only as good as that assumption: the first round of
 * kura-bench, where every kind is new, underestimates a slow engine after a fast one.
 *
 * Single-threaded; a bench_progress is plain data (no allocation, nothing to free).
 */
#ifndef KURA_BENCH_PROGRESS_H
#define KURA_BENCH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* kura-bench's kinds are BENCH_MAX_ENGINES x BENCH_MAX_WORKLOADS. */
#define BENCH_PROGRESS_MAX_KINDS 256

typedef struct bench_progress {
    uint64_t start_ns;                        /* know_ns() at bench_progress_init */
    double sum_s[BENCH_PROGRESS_MAX_KINDS];   /* seconds of the finished steps per kind */
    uint32_t count[BENCH_PROGRESS_MAX_KINDS]; /* finished steps per kind */
    double done_s;                            /* seconds of all finished steps */
    uint32_t done;                            /* finished steps */
} bench_progress;

/* Starts the clock. */
void bench_progress_init(bench_progress *p);

/* Records a finished step of `kind` (< BENCH_PROGRESS_MAX_KINDS) that took `seconds`. */
void bench_progress_step_done(bench_progress *p, size_t kind, double seconds);

/* The expected seconds of a step of `kind`: the mean of its kind, else the mean of every
 * step done, else 0 (nothing has finished yet). */
double bench_progress_expect(const bench_progress *p, size_t kind);

/* Seconds since bench_progress_init. */
double bench_progress_elapsed(const bench_progress *p);

/*
 * Writes "M:SS elapsed, ~M:SS left" (H:MM:SS from an hour on) into buf; with
 * `left_known` false (no step has finished and no duration is known) only the elapsed
 * part. Truncated to cap - 1 bytes.
 */
void bench_progress_format(char *buf, size_t cap, double elapsed_s, double left_s,
                           bool left_known);

#endif
