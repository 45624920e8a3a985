/*
 * workloads.h - the workloads of kura-bench and how one of them runs against one engine.
 *
 * A workload list runs in order on one directory per (repeat, engine): the fills that are
 * marked `fresh` start on an empty directory, every other workload works on what the
 * previous one left (overwrite rewrites the keys of the fill before it; the reads read
 * them). Each workload opens the engine, runs its operations under the clock, and closes
 * the engine; opening and closing are not timed (except by `recover`, whose figure is the
 * time to reopen).
 *
 *   fillseq      --num puts, indexes 0..num-1 in order (fresh, one thread)
 *   fillrandom   --num puts of uniformly random indexes in [0, num) (fresh, --threads)
 *   overwrite    the same, on the existing data (--threads)
 *   readrandom   --num gets of random indexes in [0, num); reports how many were found
 *   readmissing  --num gets of keys that cannot exist (keys.h)
 *   seekrandom   max(num/10, 1000) seeks to random keys, each followed by 10 nexts
 *   readseq      one full scan from the first key (ops = entries read, one thread)
 *   compact      one full compaction (ops = 1; figure in seconds)
 *   fillsync     --sync-num durable puts of random keys (fresh, --threads)
 *   recover      seconds to reopen after a SIGKILL with ~64 MiB in the WAL (recover.c)
 *   putitem, getitem, query, updateitem: item level, see bench/items.h
 *   putitem_gsi0, putitem_gsi2, putitem_gsi5, query_base, query_gsi, gsi_lag, backfill:
 *                secondary indexes, see bench/index/index.h
 *   pairs_put, pairs_txn, batch25[_sync], txn25[_sync], put_solo[_sync], put_mixed[_sync],
 *   txn_hot:     transactions, see bench/txn/txn.h
 *   ttl_sweep[_sync], ttl_put_solo, ttl_put_sweep: Time to Live, see bench/txn/ttl.c
 *   stream_put_solo[_sync], stream_put[_sync], stream_read, stream_lag: the change stream,
 *                see bench/txn/stream.c
 */
#ifndef KURA_BENCH_WORKLOADS_H
#define KURA_BENCH_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/bench.h"
#include "bench/engine.h"

#define BENCH_MAX_KEY_SIZE 1024
#define BENCH_SEEK_NEXTS 10

typedef enum bench_wl_kind {
    BENCH_WL_FILL_SEQ,
    BENCH_WL_FILL_RANDOM,
    BENCH_WL_READ,
    BENCH_WL_READ_MISSING,
    BENCH_WL_SEEK,
    BENCH_WL_SCAN,
    BENCH_WL_COMPACT,
    BENCH_WL_RECOVER,
    /* item level (bench/items.h): only the kura-raw, kura-capi and kura-json engines */
    BENCH_WL_ITEM_PUT,
    BENCH_WL_ITEM_GET,
    BENCH_WL_ITEM_QUERY,
    BENCH_WL_ITEM_UPDATE,
    BENCH_WL_ITEM_HEAT, /* kura_heat_report after --num distinct partition keys */
    /* secondary indexes (bench/index.h): only the kura-capi engine */
    BENCH_WL_IDX_PUT,
    BENCH_WL_IDX_QUERY_BASE,
    BENCH_WL_IDX_QUERY_GSI,
    BENCH_WL_IDX_LAG,
    BENCH_WL_IDX_BACKFILL,
    /* transactions (bench/txn/txn.h): only the kura-capi engine */
    BENCH_WL_TXN_PAIRS_PUT,
    BENCH_WL_TXN_PAIRS_TXN,
    BENCH_WL_TXN_BATCH,
    BENCH_WL_TXN_BATCH_TXN,
    BENCH_WL_TXN_MIX_SOLO,
    BENCH_WL_TXN_MIX_TXN,
    BENCH_WL_TXN_HOT,
    BENCH_WL_TTL_SWEEP,     /* the Time to Live workloads run with the transaction ones */
    BENCH_WL_TTL_PUT_SOLO,
    BENCH_WL_TTL_PUT_SWEEP,
    BENCH_WL_STREAM_PUT_SOLO, /* the change stream's, too (bench/txn/stream.c) */
    BENCH_WL_STREAM_PUT,
    BENCH_WL_STREAM_READ,
    BENCH_WL_STREAM_LAG,
    BENCH_WL_STREAM_OVER_SOLO,
    BENCH_WL_STREAM_OVER,
} bench_wl_kind;

static inline bool bench_wl_is_item(int kind)
{
    return kind >= BENCH_WL_ITEM_PUT;
}

static inline bool bench_wl_is_index(int kind)
{
    return kind >= BENCH_WL_IDX_PUT && kind < BENCH_WL_TXN_PAIRS_PUT;
}

static inline bool bench_wl_is_txn(int kind)
{
    return kind >= BENCH_WL_TXN_PAIRS_PUT;
}

typedef struct bench_workload {
    const char *name;
    bench_wl_kind kind;
    bool fresh;       /* starts on an empty directory */
    bool sync;        /* every write durable before it returns */
    bool threaded;    /* runs on --threads threads (else on one) */
    const char *help; /* one line for --help */
    uint32_t gsis;    /* putitem_gsiN: the GSIs of its table */
} bench_workload;

extern const bench_workload bench_workloads[];
extern const size_t bench_nworkloads;

/* The workload called `name`, or NULL. */
const bench_workload *bench_workload_find(const char *name);

/* Why `wl` does not apply to `e` (e.g. LMDB has no WAL to recover), or NULL if it does. */
const char *bench_workload_skip_reason(const bench_workload *wl, const bench_engine *e);

/* The options `wl` opens engines with, from the command line. */
void bench_workload_engine_opts(const bench_config *cfg, const bench_workload *wl,
                                bench_engine_opts *o_out);

/*
 * Runs `wl` with engine `e` on directory `dir` (existing; empty if wl->fresh) in the calling
 * process, as run number `repeat` (which picks the random keys). On success fills *run_out
 * with everything but bytes_on_disk and peak_rss_bytes, which the caller measures after the
 * engine is closed. recover forks, so the caller must be single-threaded.
 */
kura_status bench_workload_run(const bench_workload *wl, const bench_engine *e,
                               const bench_config *cfg, uint32_t repeat, const char *dir,
                               bench_run *run_out);

/* recover.c: the `recover` workload, with the contract of bench_workload_run. */
kura_status bench_recover_run(const bench_workload *wl, const bench_engine *e,
                              const bench_config *cfg, const char *dir, bench_run *run_out);

/* Fills the rate figures of *run from ops, bytes and seconds. */
void bench_run_finish(bench_run *run);

/* Appends the figure (name, value) to run's extras (bench.h); past BENCH_MAX_EXTRAS it is
 * dropped (a programmer error: assert). `name` is cut to 31 bytes. */
void bench_run_extra(bench_run *run, const char *name, double value);

#endif
