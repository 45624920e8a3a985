/*
 * index_int.h - what the index workloads (index.h) share: the database and its table, the
 * items, the GSIs, and a few helpers (items.c).
 */
#ifndef KURA_BENCH_INDEX_INT_H
#define KURA_BENCH_INDEX_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/bench.h"
#include "bench/hist.h"
#include "kura.h"

#define BIX_TABLE "bench"
#define BIX_MAX_GSIS 5
#define BIX_POLL_US 500     /* gsi_lag's watcher: the period of its polls */
#define BIX_WAIT_MS 600000u /* kura_index_wait: 10 minutes means stuck */

/* The GSIs in order (index.h): by_grp, by_email, by_name, by_price, by_ts. */
extern const char *const bix_gsi_names[BIX_MAX_GSIS];

/* Opens kura in `dir` with kura-capi's settings (KURA_RELAXED, the budgets, partitions). */
kura_status bix_open(const char *dir, const bench_config *cfg, kura_db **db_out);

/* Creates the table with the first `ngsis` GSIs (projection ALL, or KEYS_ONLY). */
kura_status bix_create_table(kura_db *db, uint32_t ngsis, bool keys_only);

/* Adds GSI `i` (bix_gsi_names[i]) to the table with UpdateTable; returns at once (the
 * backfill runs in the background). */
kura_status bix_create_gsi(kura_db *db, uint32_t i, bool keys_only);

/* The item `index` as a value (caller frees); small: without the 224-byte `data` attribute.
 * NULL when out of memory. */
kura_value *bix_item(uint64_t index, bool small);

/* PutItem of item `index`. */
kura_status bix_put(kura_db *db, uint64_t index, bool small);

/* Queries the collection of partition key `group` (items group*20 .. group*20+19): on the
 * table ("pk = :p") when gsi is NULL, else on that GSI ("grp = :g"); *count_out = items. */
kura_status bix_query(kura_db *db, const char *gsi, uint64_t group, uint64_t *count_out);

/* Checks that `gsi` returns the `want` items of collection `group`. */
kura_status bix_check_group(kura_db *db, const char *gsi, uint64_t group, uint64_t want);

/* kura_index_wait on each of the table's first `ngsis` GSIs. */
kura_status bix_wait_gsis(kura_db *db, uint32_t ngsis);

/* kura_status with "what: message" for a failed kura call. */
kura_status bix_fail(kura_status s, const char *what);

/* Sleeps until the monotonic clock reads t_ns (at once if it is past). */
void bix_sleep_until(uint64_t t_ns);

/* The open-loop writers' pacing: waits until the write scheduled at sched_ns is due, on a
 * grid of BIX_PACE_NS: a write is released at the first grid point at or after its time, and
 * every write due by then goes at once. One sleep per grid point rather than per write: on
 * this VM a timed sleep costs ~20 us of CPU (the timer programming traps to the hypervisor),
 * which at 20,000 writes/s took half a core from the engine. */
#define BIX_PACE_NS 1000000u
void bix_pace(uint64_t sched_ns);

/* Lets the calling thread's timed sleeps end within ~1 us of their time rather than the
 * default 50 us (prctl PR_SET_TIMERSLACK): the open-loop writers and the lag watcher. */
void bix_precise_sleeps(void);

/* The largest memtable, queue and cache figures seen, sampled during a workload. */
typedef struct bix_mem {
    uint64_t memtable_bytes, queue_bytes, cache_bytes;
} bix_mem;
void bix_mem_sample(kura_db *db, uint32_t ngsis, bix_mem *m);
/* Adds max_memtable_mib, max_gsi_queue_mib and max_cache_mib to run's extras. */
void bix_mem_report(const bix_mem *m, bench_run *run);

/* A histogram's p50, p99 and max in milliseconds as extras "<prefix>_p50_ms", ... */
void bix_hist_report(const bench_hist *h, const char *prefix, bench_run *run);

/* put.c, lag.c, backfill.c: the workloads, each with the contract of bench_index_run. The
 * database is open (and the table there unless the workload is fresh); they close nothing. */
kura_status bix_run_put(kura_db *db, const bench_config *cfg, uint32_t ngsis, bench_run *run);
kura_status bix_run_query(kura_db *db, const bench_config *cfg, bool gsi, uint64_t seed,
                          bench_run *run);
kura_status bix_run_lag(kura_db *db, const bench_config *cfg, bench_run *run);
kura_status bix_run_backfill(kura_db *db, const bench_config *cfg, uint64_t seed, bench_run *run);

#endif
