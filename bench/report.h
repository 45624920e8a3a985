/*
 * report.h - kura-bench's results: the medians over the repeats, a human table per
 * workload, and the JSON file.
 *
 * Medians are taken field by field over the successful runs of an (engine, workload), so
 * the median ops/s and the median p99 may come from different runs. "vs kura" is the
 * engine's median ops/s over kura's (above 1 = faster than kura); for compact and recover,
 * whose single operation is the whole workload, that is the inverse ratio of the seconds.
 *
 * JSON layout:
 *   {"machine": {"cpu_model", "cores", "mem_bytes", "kernel", "fs", "date", "load_avg_1m"},
 *    "settings": {"command", "engines": [..], "workloads": [..], "num", "key_size",
 *                 "value_size", "threads", "repeat", "sync_num", "partitions",
 *                 "memtable_mb", "cache_mb", "seed", "backfill_num", "lag_gsis",
 *                 "lag_seconds", "gsi_projection", "dir", "engine_settings": {name: ..}},
 *    "results": [{"engine", "workload", "threads", "num", "ops_per_sec", "mb_per_sec",
 *                 "p50_us", "p99_us", "bytes_on_disk", "peak_rss_bytes", "seconds",
 *                 "found", ["extras": {name: value}], "runs": [{"repeat", the same
 *                 figures ...}]}],
 *    "skipped": [{"engine", "workload", "reason"}],
 *    "errors": [{"engine", "workload", "repeat", "error"}]}
 * "num" is the median number of operations timed; "runs" holds the successful runs.
 * "extras" (only workloads that report some, bench.h's bench_extra: the index workloads) holds
 * the median of each extra figure, and each run its own.
 */
#ifndef KURA_BENCH_REPORT_H
#define KURA_BENCH_REPORT_H

#include <stdio.h>

#include "bench/bench.h"
#include "bench/sys.h"

/* The median figures of (engine e, workload w) over the OK runs of `runs`. With no OK run,
 * out->state is SKIPPED or FAILED and out->error says why (the first failure). */
void bench_report_median(const bench_config *cfg, const bench_run *runs, size_t e, size_t w,
                         bench_run *out);

/* Writes the machine, the command line and every engine's settings to `out`. */
void bench_report_header(FILE *out, const bench_config *cfg, const bench_machine *m);

/* Writes a table per workload to `out`. */
void bench_report_table(FILE *out, const bench_config *cfg, const bench_run *runs);

/* Writes the JSON file at `path` (replacing it). KURA_E_IO with a message on failure. */
kura_status bench_report_json(const char *path, const bench_config *cfg,
                              const bench_machine *m, const bench_run *runs);

#endif
