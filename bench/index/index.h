/*
 * index.h - kura-bench's secondary-index workloads (issue 15): what GSIs cost a PutItem, how
 * far behind its table a GSI runs, how fast a GSI is built on a live table, and what a Query
 * of a GSI costs against one of the table. They run through the C API on the kura-capi
 * engine only (`--engines=kura-capi`), with its settings (KURA_RELAXED, --memtable-mb,
 * --cache-mb, --partitions), one table "bench" (S pk HASH, S sk RANGE).
 *
 * Items: the item workloads' items (bench/item_fields.h, ~400 bytes) plus two attributes
 * for the indexes: grp (S, "team" + the 12 digits of the partition key, so the GSI
 * collection of grp holds exactly the 20 items of the table's collection of pk) and ts (N,
 * unique). The GSIs, in order; a table with k GSIs has the first k, so each GSI indexes a
 * different attribute and every put touches every index:
 *
 *   by_grp (grp HASH, sk RANGE), by_email (email), by_name (name), by_price (price, N),
 *   by_ts (ts, N)
 *
 * all projecting ALL (--gsi-projection=keys: KEYS_ONLY). The workloads:
 *
 *   putitem_gsi0/2/5  fresh table with 0, 2 or 5 GSIs; --num PutItems of items 0..num-1,
 *                one thread, then kura_index_wait on every GSI. ops/s is over the whole
 *                time, the applier's catching up included; the extras give the rate of the
 *                acknowledgements alone, the catching up (drain) and the backlog at the last
 *                acknowledgement. p50/p99: PutItem latency (back-pressure waits included)
 *   query_base   num/20 Queries "pk = :p" of random partition keys on the table the workload
 *                before left (20 items each must come back)
 *   query_gsi    the same on GSI by_grp, "grp = :g" (the same 20 items); needs a table with
 *                by_grp (after putitem_gsi2 or putitem_gsi5). Both wait for the GSIs first
 *   gsi_lag      fresh table with --lag-gsis GSIs. Calibration: num/2 PutItems untimed
 *                (past what the memtables absorb), then num/2 closed-loop PutItems and the
 *                drain, timed: the maximum write rate is num/2 over that time (ops/s of the
 *                run). Then two open-loop phases of --lag-seconds each, at 50% and 90% of it
 *                (a writer on a fixed schedule, released on a 1 ms grid: BIX_PACE_NS; new
 *                items). A watcher thread reads the GSI applier's count of applied writes
 *                (kura_index_stats_get) every BIX_POLL_US: a write's lag is the time from its
 *                acknowledgement to the first poll that finds it applied (0 if applied
 *                before the acknowledgement), so each lag is an upper bound, by at most the
 *                poll period and the poll's wake-up. Extras per phase: offered and achieved rate, lag p50/p99/max, the
 *                largest backlog (writes, MiB), PutItem latency from its scheduled time
 *                (put_*: a writer that falls behind its schedule shows) and of the call
 *                alone (call_max_ms), the watcher's CPU
 *   backfill     fresh table with no GSI; --backfill-num smaller items (no `data`
 *                attribute: ~210 bytes as DynamoDB counts them) written by PutItem in a
 *                random order, timed (the "fill" rate); then, while a writer puts new items
 *                on a fixed schedule at 10% of the fill rate, UpdateTable creates by_grp
 *                and DescribeTable is polled every 10 ms until it is ACTIVE. ops/s =
 *                --backfill-num / the time from UpdateTable to ACTIVE; p50/p99 the writer's
 *                PutItem latency during that time (from the scheduled time); extras: the
 *                fill rate, the ratio, the writer's figures
 *
 * Every workload checks what it reads: Queries return their 20 items, the GSIs hold the
 * items written (gsi_lag and backfill query some groups at the end), and a write that fails
 * fails the run.
 */
#ifndef KURA_BENCH_INDEX_H
#define KURA_BENCH_INDEX_H

#include <stdint.h>

#include "bench/bench.h"
#include "kura.h"

struct bench_workload;

/* Runs index workload `wl` in directory `dir` (empty if wl->fresh), with the contract of
 * bench_workload_run (bench/workloads.h). */
kura_status bench_index_run(const struct bench_workload *wl, const bench_config *cfg,
                            uint32_t repeat, const char *dir, bench_run *run_out);

#endif
