/*
 * txn.h - kura-bench's transaction workloads (issue 16): what TransactWriteItems costs
 * against the same writes made as single PutItems or as a BatchWriteItem, what transactions
 * cost the single-item writers beside them, and how transactions behave on a few hot items.
 * They run through the C API on the kura-capi engine only (`--engines=kura-capi`), each on a
 * fresh table "bench" (S pk HASH, S sk RANGE) with --partitions partitions, --memtable-mb,
 * --cache-mb, and the durability the workload names: KURA_SYNC ("_sync", and pairs_* and
 * txn_hot) or KURA_RELAXED.
 *
 * Items: the item workloads' items (bench/item_fields.h, ~400 bytes, 20 per partition key).
 * An item's partition is computed as the engine routes it (docs/format/keys.md: the XXH3
 * hash of the encoded partition key, floor(h * P / 2^64)), so that a "2-partition"
 * transaction really spans two partitions; every workload checks that routing at the end by
 * counting the items of each partition with a parallel Scan of P segments (segment i of P
 * is exactly partition i's hash range), against the counts the routing predicts.
 *
 * Every workload runs under a watchdog (watch.c): a call that has not returned after
 * BTX_STUCK_S seconds (the setup, checks and close: BTX_MAIN_STUCK_S) ends the process with a
 * message, so a deadlock fails the run instead of hanging it. Every workload counts the
 * fsyncs the engine makes (io_count.c: an io_env over POSIX that counts, kura_options.io) and
 * reports them per call (PutItem, BatchWriteItem, transaction; put_mixed*: PutItems and
 * transactions together): wal_syncs_per_call (the tables' WALs), txnlog_syncs_per_call (the
 * transaction log), wal_sync_us and txnlog_sync_us (mean fdatasync time), syncs_in_flight
 * (fdatasync time / wall time: how many ran at once, on average), other_syncs (SSTables,
 * manifests, directories), preallocs (WAL preallocations); and max_ms, the longest call.
 * kura-capi's settings line in the report says KURA_RELAXED (the item workloads'); these
 * workloads use the durability above.
 *
 *   pairs_put     KURA_SYNC, --threads threads: --sync-num items as PutItems, two at a
 *                 time (a pair: two items in two different partitions). ops = items
 *   pairs_txn     the same pairs, each pair one TransactWriteItems of two Puts (so two
 *                 partitions: prepare both, commit record, apply). ops = items; p50/p99 per
 *                 transaction (pairs_put: per PutItem); extras: calls_per_sec
 *   batch25_sync  KURA_SYNC, one thread: --sync-num items, 25 per BatchWriteItem, the 25
 *                 items of 25 different partition keys (so over every partition). ops = items,
 *                 p50/p99 per call
 *   txn25_sync    the same 25 items per TransactWriteItems of 25 Puts. extras: parts_per_txn
 *   batch25, txn25  the same with KURA_RELAXED and --num items
 *   put_solo_sync KURA_SYNC: --threads/2 threads PutItem items of their own (new ones) for
 *                 --txn-seconds. ops = PutItems; p50/p99 per PutItem
 *   put_mixed_sync the same PutItem threads while --threads/2 other threads run 2-item
 *                 TransactWriteItems (two partitions) on items of their own, from before the
 *                 PutItem threads start until after they stop. extras: txn_per_sec
 *   put_solo, put_mixed  the same with KURA_RELAXED
 *   txn_hot       KURA_SYNC: 100 hot items (of 100 partition keys, so over every
 *                 partition) start with n = BTX_HOT_START; --threads threads for
 *                 --txn-seconds each pick two of them at random and move 1..BTX_HOT_MAX_MOVE
 *                 from one to the other: one TransactWriteItems of two Updates, "SET n = n -
 *                 :a" under "n >= :a" and "SET n = n + :a". A reader takes a TransactGetItems
 *                 of all 100 every BTX_HOT_CHECK_MS. ops = transactions (committed or
 *                 cancelled); p50/p99 of every one; extras: committed per second, the
 *                 cancellations by reason, the longest transaction, the share of the pairs
 *                 that spanned two partitions
 *
 *   ttl_sweep, ttl_sweep_sync, ttl_put_solo, ttl_put_sweep  Time to Live (bench/txn/ttl.c):
 *                 one kura_ttl_sweep of --num expired items, alone and beside --threads/2
 *                 PutItem threads, against the same PutItems without a sweep
 *
 *   stream_put_solo[_sync], stream_put[_sync], stream_read, stream_lag  the change stream
 *                 (bench/txn/stream.c): --threads PutItem threads into a table without and
 *                 with a NEW_AND_OLD_IMAGES stream; one GetRecords consumer beside them at
 *                 full speed, and a drain; write -> record at 50% of the maximum write rate
 *
 * What they check: every item written is there (the per-partition counts above; pairs_*,
 * *25*: a sample of pairs or batches read back with TransactGetItems, attribute by
 * attribute); txn_hot: every TransactGetItems snapshot and the end hold the total 100 x
 * BTX_HOT_START, and every item ends at its start plus what the committed transactions moved
 * to and from it (each thread keeps its own account); a cancellation must name
 * ConditionalCheckFailed on the debited item (or TransactionConflict) and None on the other.
 * Any other failure of a call fails the run.
 */
#ifndef KURA_BENCH_TXN_H
#define KURA_BENCH_TXN_H

#include <stdint.h>

#include "bench/bench.h"
#include "kura.h"

struct bench_workload;

/* Runs transaction workload `wl` in directory `dir` (empty: every one is fresh), with the
 * contract of bench_workload_run (bench/workloads.h). */
kura_status bench_txn_run(const struct bench_workload *wl, const bench_config *cfg, uint32_t repeat,
                          const char *dir, bench_run *run_out);

#endif
