/*
 * txn_int.h - what the transaction workloads (txn.h) share: the database and its table, the
 * items and their partitions, the pairs of items in two partitions, the checks, the worker
 * threads, the watchdog (watch.c) and the fsync counter (io_count.c).
 */
#ifndef KURA_BENCH_TXN_INT_H
#define KURA_BENCH_TXN_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/bench.h"
#include "bench/hist.h"
#include "kura.h"
#include "util/thread.h"

#define BTX_TABLE "bench"
#define BTX_BATCH 25         /* items of batch25* / txn25* */
#define BTX_HOT_ITEMS 100    /* txn_hot: the hot items */
#define BTX_HOT_START 100    /* txn_hot: every hot item's n at the start */
#define BTX_HOT_MAX_MOVE 50  /* txn_hot: a move is 1..this */
#define BTX_HOT_CHECK_MS 100 /* txn_hot: the reader's period */
#define BTX_STUCK_S 30       /* a call that has not returned by then: a deadlock */
#define BTX_MAIN_STUCK_S 600 /* the setup, the checks and the close */
#define BTX_MAX_WORKERS (BENCH_MAX_THREADS + 2)

/* ---- The fsync counter (io_count.c) ---------------------------------------------------------
 *
 * An io_env over POSIX that counts and times the fdatasyncs of the files the engine writes,
 * by class: the tables' WALs, the transaction log's WAL (its path holds "#txn"), and the rest
 * (SSTables, manifests, directories). Preallocations (zeros + fdatasync, util/io.h) are
 * counted apart. Thread-safe; the cost is a clock read per sync. */
typedef struct btx_io_counts {
    uint64_t wal_syncs, wal_sync_ns;
    uint64_t log_syncs, log_sync_ns;
    uint64_t other_syncs, preallocs;
} btx_io_counts;

typedef struct btx_io btx_io;
btx_io *btx_io_new(void); /* NULL when out of memory */
void btx_io_free(btx_io *io);
struct io_env *btx_io_env(btx_io *io); /* for kura_options.io; lives as long as io */
void btx_io_read(btx_io *io, btx_io_counts *out);
/* Adds the extras of the syncs between `a` and `b`: per call (of `calls`: PutItems,
 * transactions, batches) and over `seconds`. */
void btx_io_report(const btx_io_counts *a, const btx_io_counts *b, uint64_t calls, double seconds,
                   bench_run *run);

/* ---- The watchdog (watch.c) -----------------------------------------------------------------
 *
 * Slot 0 is the main thread (setup, checks, close: BTX_MAIN_STUCK_S), slots 1.. the workers
 * (BTX_STUCK_S). A slot that stays entered past its limit ends the process (exit status 3)
 * with a message on stderr naming the workload and the slot: kura-bench reports the run as
 * failed. */
typedef struct btx_watch btx_watch;
kura_status btx_watch_start(const char *workload, btx_watch **w_out);
void btx_watch_enter(btx_watch *w, uint32_t slot);
void btx_watch_leave(btx_watch *w, uint32_t slot);
void btx_watch_stop(btx_watch *w); /* joins the thread and frees w; NULL is a no-op */

/* ---- The database, the table, the items (items.c) ------------------------------------------- */

/* What a workload runs with. */
typedef struct btx_ctx {
    kura_db *db;
    const bench_config *cfg;
    bool sync;      /* KURA_SYNC, else KURA_RELAXED */
    uint32_t parts; /* the table's partitions (--partitions) */
    uint64_t seed;  /* of this (round, workload) */
    btx_io *io;
    btx_watch *watch;
    char stream_arn[512]; /* the table's stream (the stream workloads, stream.c), else "" */
} btx_ctx;

/* kura_status with "what: status: message" for a failed kura call. */
kura_status btx_fail(kura_status s, const char *what);

/* The partition the items of partition key `group` (items group*20 .. group*20+19) route to
 * in a table of `parts` partitions (docs/format/keys.md, "Storage keys"). */
uint32_t btx_part_of(uint64_t group, uint32_t parts);

/* Item `index` (bench/item_fields.h) with n = `n` (a number), or its key; the caller frees.
 * NULL when out of memory. */
kura_value *btx_item(uint64_t index, const char *n);
kura_value *btx_key(uint64_t index);

/* PutItem of item `index` (n = 0); btx_put_n: with n = `n`, a number. */
kura_status btx_put(kura_db *db, uint64_t index);
kura_status btx_put_n(kura_db *db, uint64_t index, const char *n);

/* Two items in two different partitions. */
typedef struct btx_pair {
    uint64_t a, b;
} btx_pair;

/* npairs pairs of items from partition keys first_group, first_group + 1, ...: the partition
 * keys are paired greedily with one of another partition, and pair i takes item i / G of
 * group pair i % G (G group pairs), so that consecutive pairs fall on different partition
 * keys. *out is malloc'ed (caller frees). KURA_E_INVALID with one partition. */
kura_status btx_make_pairs(uint32_t parts, uint64_t first_group, uint64_t npairs, btx_pair **out);

/* One TransactWriteItems of two Puts: items p->a and p->b (n = 0). */
kura_status btx_txn_pair(kura_db *db, const btx_pair *p);

/* Adds the partition of every item in [first, first + n) to counts[parts]. */
void btx_count_range(uint64_t first, uint64_t n, uint32_t parts, uint64_t *counts);

/* Counts the table's items partition by partition (a Scan, Select COUNT, of segment i of
 * `parts` for each i) and compares with want[parts]: the routing and the presence check. */
kura_status btx_check_parts(btx_ctx *c, const uint64_t *want);

/* TransactGetItems of items idx[0..n) (n <= 100): each must be there, with its own name and
 * email and n = 0. */
kura_status btx_check_items(kura_db *db, const uint64_t *idx, size_t n);

/* ---- Worker threads (items.c) ---------------------------------------------------------------- */

typedef struct btx_worker btx_worker;
typedef kura_status (*btx_work_fn)(btx_worker *w);
struct btx_worker {
    btx_ctx *c;
    btx_work_fn fn;
    uint32_t id;       /* 0.. within its group of threads */
    uint32_t slot;     /* its watchdog slot */
    uint32_t nthreads; /* of its group */
    atomic_bool *stop; /* the time-based loops end when it is set */
    void *arg;         /* the workload's */
    uint64_t ops, items;
    uint64_t begin_ns, end_ns;
    bench_hist hist; /* per call */
    kura_status st;
    char err[256];
    kthread tid;
    bool started;
};

/* Starts n workers (fields c, fn, id, slot, nthreads, stop, arg set by the caller; the rest
 * zero). KURA_E_NOMEM when a thread could not be created: the ones started are running
 * (btx_workers_join them all the same). */
kura_status btx_workers_start(btx_worker *ws, uint32_t n);
/* Joins the started ones; returns `s` if it is a failure, else the first worker's failure
 * ("thread i: message"), else KURA_OK. */
kura_status btx_workers_join(btx_worker *ws, uint32_t n, kura_status s);
/* Times one call of worker w: enters its watchdog slot; btx_call_end leaves it and adds the
 * time to its histogram. */
uint64_t btx_call_begin(btx_worker *w);
void btx_call_end(btx_worker *w, uint64_t t0);
/* PutItem threads beside other work (put_mixed*, ttl_put_*): thread t writes new items of its
 * own, from btx_put_first(t) on (a range of partition keys per thread); btx_put_work is their
 * loop, until *stop, counting items. */
uint64_t btx_put_first(uint32_t t);
kura_status btx_put_work(btx_worker *w);
/* The workers' histograms merged: p50/p99 into run, the maximum as extra "max_ms". */
void btx_hist_report(btx_worker *ws, uint32_t n, bench_run *run);

/* Sleeps for ms milliseconds. */
void btx_sleep_ms(uint64_t ms);

/* ---- The workloads (pairs.c, batch.c, mixed.c, hot.c, ttl.c, stream.c, stream_lag.c) --------
 * Each with the contract of bench_txn_run; the table exists, the database is open. */
kura_status btx_run_pairs(btx_ctx *c, bool txn, bench_run *run);
kura_status btx_run_batch(btx_ctx *c, bool txn, bench_run *run);
kura_status btx_run_mixed(btx_ctx *c, bool txn, bench_run *run);
kura_status btx_run_hot(btx_ctx *c, bench_run *run);
/* ttl.c: ttl_sweep[_sync]; ttl_put_solo (sweeping false) and ttl_put_sweep. */
kura_status btx_run_ttl_sweep(btx_ctx *c, bench_run *run);
kura_status btx_run_ttl_put(btx_ctx *c, bool sweeping, bench_run *run);
/* stream.c: stream_put_solo[_sync] (no stream: c->stream_arn empty) and stream_put[_sync];
 * stream_read. stream_lag.c: stream_lag. */
/* stream_put*, and with `over` stream_over*: the PutItem threads overwrite BTX_OVER_ITEMS
 * items of their own, written first (bench/txn/stream.c). */
enum { BTX_OVER_ITEMS = 10000 };
kura_status btx_run_stream_put(btx_ctx *c, bool over, bench_run *run);
kura_status btx_run_stream_read(btx_ctx *c, bench_run *run);
kura_status btx_run_stream_lag(btx_ctx *c, bench_run *run);

/* ---- The change stream's consumer (stream_consumer.c) ---------------------------------------
 *
 * One thread reading every shard of c->stream_arn with GetRecords (Limit BST_LIMIT), as a
 * real consumer does: a pass calls GetRecords once on each shard in turn and goes on with
 * the iterator it returns. The records must be the PutItem threads' (btx_put_first): INSERTs
 * of new items with a new image and no old one. Each record's key is parsed back to the item
 * index and its writer; the check at the end wants, writer by writer, exactly the items
 * base[t] .. base[t] + want[t] - 1, each once (the indexes a writer puts into one shard must
 * come in increasing order, so with the count right none is missing or read twice). */
#define BST_LIMIT 1000
#define BST_IDLE_US 200 /* the consumers' sleep after a pass that read nothing */

typedef struct bst_consumer bst_consumer;
/* What a pass hands over for each record (after the checks above): the item index, its
 * writer, the record, and got_ns: when the GetRecords call that brought it returned. */
typedef kura_status (*bst_record_fn)(void *arg, uint64_t index, uint32_t writer,
                                     const kura_stream_record *r, uint64_t got_ns);

/* A consumer of `nwriters` writers' records, with an iterator of `type` (TRIM_HORIZON or
 * LATEST) on every shard; the caller sets base/want through bst_consumer_expect before
 * bst_consumer_check. GetRecords calls are timed on watchdog slot `slot`. */
kura_status bst_consumer_open(btx_ctx *c, kura_shard_iterator_type type, uint32_t nwriters,
                              uint32_t slot, bst_consumer **k_out);
void bst_consumer_free(bst_consumer *k); /* NULL is a no-op */
/* One pass over every shard; fn (may be NULL) for each record. *got_out: records read. */
kura_status bst_consumer_pass(bst_consumer *k, bst_record_fn fn, void *arg, uint64_t *got_out);
/* Where a consumer is, shared with the thread that runs the writers. */
typedef struct bst_progress {
    atomic_bool writers_done;   /* set after total */
    atomic_uint_fast64_t total; /* the records to read, once writers_done */
    atomic_uint_fast64_t read;  /* records read so far */
    uint64_t caught_ns;         /* when the last one was read */
} bst_progress;
/* Passes until p->read reaches p->total once p->writers_done, sleeping BST_IDLE_US after a
 * pass that read nothing (fn as for bst_consumer_pass). KURA_E_BUSY after BST_STUCK_S
 * seconds without a record. */
#define BST_STUCK_S 60
kura_status bst_consumer_read_all(bst_consumer *k, bst_record_fn fn, void *arg, bst_progress *p);
void bst_consumer_expect(bst_consumer *k, uint32_t writer, uint64_t base, uint64_t want);
kura_status bst_consumer_check(const bst_consumer *k);
/* Extras "<prefix>_calls_per_sec" (GetRecords calls over `seconds`), "_empty_pct" (those
 * that returned nothing), "_recs_per_call", "_call_p50_us", "_call_p99_us", "_call_max_ms",
 * and "_period_p99_ms", "_period_max_ms": a call's return - the start of the same shard's
 * call before it, the longest a record can wait for the consumer from polling alone. */
void bst_consumer_report(const bst_consumer *k, const char *prefix, double seconds, bench_run *run);
/* The calling thread's CPU time in seconds. */
double bst_thread_cpu_s(void);

#endif
