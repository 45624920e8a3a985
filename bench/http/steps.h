/*
 * steps.h - This file contains the progress lines of one kura-http-bench run: the run's
 * steps (run.h) are planned from the configuration, and as each begins a line goes to stderr
 * with the server, the round (--round), the step's number, the time elapsed, the time left,
 * and what the step does.
 *
 * The time left is the timed workloads' known length (warm-up + duration) plus, for the
 * steps whose length is not known beforehand (server starts, the load, workloads in --count
 * mode), what the steps of the same kind took so far (bench/progress.h). It covers this run
 * only: scripts/bench_http.sh runs one per server and round.
 */
#ifndef KURA_BENCH_HTTP_STEPS_H
#define KURA_BENCH_HTTP_STEPS_H

#include <stdint.h>

#include "bench/http/run.h"
#include "bench/progress.h"

#define HB_MAX_STEPS (HB_MAX_STARTS + 8 * HB_MAX_CONNS_LIST + 4)

/* What a step is, for its expected length. */
typedef enum hb_step_kind {
    HB_STEP_START,   /* a server start (and the restart) */
    HB_STEP_LOAD,    /* the load of --items */
    HB_STEP_COUNTED, /* a workload of --count requests */
    HB_STEP_TIMED,   /* a workload of --warmup + --duration, or the --settle wait */
} hb_step_kind;

typedef struct hb_steps {
    const hb_config *cfg; /* borrowed */
    bench_progress prog;
    hb_step_kind kind[HB_MAX_STEPS];
    double timed_s[HB_MAX_STEPS]; /* the length of an HB_STEP_TIMED step */
    uint32_t n, begun;
    uint64_t begun_ns; /* when step begun - 1 began */
} hb_steps;

/* Plans the steps that hb_run will take with cfg (borrowed for the steps' life), and starts
 * the clock. */
void hb_steps_plan(hb_steps *st, const hb_config *cfg);

/* Ends the step under way (its length then counts for its kind) and begins the next one,
 * printing its line (unless cfg->quiet) with `what` (printf format) at its end. Steps must
 * begin in the planned order; one more than planned is a programmer error (assert). */
void hb_steps_begin(hb_steps *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
