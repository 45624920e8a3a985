/*
 * runner.h - runs every (repeat, engine, workload) of a configuration, each in its own
 * forked process.
 *
 * Why a process per run: peak RSS (VmHWM) is then the engine's own for that workload, a
 * crash or abort inside an engine fails one run rather than the benchmark, and every
 * engine starts with no state (threads, caches, global allocators) left by another. The
 * parent stays single-threaded and never opens an engine, so forking it is always safe.
 * The child sends its bench_run back through a pipe.
 */
#ifndef KURA_BENCH_RUNNER_H
#define KURA_BENCH_RUNNER_H

#include <stddef.h>

#include "bench/bench.h"

/*
 * Runs everything, storing each run at runs[bench_run_index(cfg, r, e, w)] (the array has
 * repeat * nengines * nworkloads entries). Database directories are cfg->dir/rR-ENGINE,
 * created fresh for each (repeat, engine) and removed after it. Prints one progress line per
 * run to stderr (its round, its place in the list of runs, the time elapsed and the time
 * left, the engine, the workload and its figures); with cfg->quiet only the runs that
 * failed. Returns the number of runs that failed.
 */
size_t bench_runner_run(const bench_config *cfg, bench_run *runs);

#endif
