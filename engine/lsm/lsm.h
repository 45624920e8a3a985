/*
 * lsm.h - one LSM tree over bytes: the storage of one partition (DESIGN.md section 3).
 *
 * A tree owns a directory with its WAL segments (NNNNNN.log), SSTables (NNNNNN.sst), MANIFEST
 * and CURRENT; one active memtable and at most one immutable memtable being flushed; a version
 * set. Writers go through a group-commit queue: one leader writes a whole group of batches with
 * one WAL append (and one fdatasync in sync mode), applies them to the memtable and publishes
 * their sequence numbers. Flushes and compactions run on the shared background pool.
 *
 * Errors: a failed WAL or MANIFEST write or sync, or a failed flush or compaction, makes the
 * tree read-only for the rest of its life (writes return KURA_E_READONLY with the original
 * error in the message); reads keep working. Nothing is retried: after a failed fsync the kernel
 * may have dropped the dirty pages, so retrying could report durability that is not there.
 *
 * Thread safety: every function may be called from any thread, concurrently, except
 * lsm_open/lsm_close.
 */
#ifndef KURA_LSM_LSM_H
#define KURA_LSM_LSM_H

#include "engine/lsm/batch.h"
#include "engine/lsm/shared.h"
#include "wal/commit_queue.h"
#include "util/iter.h"

typedef struct lsm_tree lsm_tree;

/* Opens (creating with `create`) the tree in `dir` (which must exist), replaying its WALs.
 * *max_seq_out is the highest sequence number found; the caller sets the shared sequence once
 * every tree is open (lsm_seq_reset). `opts` is copied. */
kura_status lsm_open(lsm_shared *sh, const lsm_options *opts, const char *dir, bool create,
                     lsm_tree **t_out, uint64_t *max_seq_out);
/* Waits for this tree's background work, syncs and closes the WAL. Memtables are not flushed:
 * their WAL segments are kept and replayed at the next open. NULL ok. */
kura_status lsm_close(lsm_tree *t);

/* Applies the batch atomically. The sequence fields of b->rep are overwritten. sync: return
 * only once the batch is durable. */
kura_status lsm_write(lsm_tree *t, lsm_batch *b, bool sync);
/* As lsm_write, but returns once the batch is committed without waiting until its sequence
 * is visible (a transaction's commit record, written while the transaction's own range is
 * not yet complete). */
kura_status lsm_write_nowait(lsm_tree *t, lsm_batch *b, bool sync);

/* Reads key at snapshot (0 = latest visible). KURA_E_NOT_FOUND if missing or deleted. */
kura_status lsm_get(lsm_tree *t, const uint8_t *key, size_t klen, uint64_t snapshot,
                    bool fill_cache, kbuf *val_out);

/* Pins the tree's current memtables and version and appends internal iterators over them to
 * *its. *pin_out must be released with lsm_unpin after the iterators are freed. */
kura_status lsm_pin_iters(lsm_tree *t, bool fill_cache, kv_iter ***its, size_t *n, size_t *cap,
                          void **pin_out);
void lsm_unpin(void *pin);

/* Switches the memtable and waits until everything written before is in SSTables. */
kura_status lsm_flush(lsm_tree *t);
/* Flushes, then compacts level by level until all data is one sorted run. */
kura_status lsm_compact_all(lsm_tree *t);
/* fdatasyncs the WAL (relaxed durability's periodic sync; kura_sync). */
kura_status lsm_sync_wal(lsm_tree *t);

/* For a process going idle: frees the in-memory index and filters of every SSTable no
 * reader, iterator, flush or compaction is using (sst_reader_unload); they are read again
 * when next used. Tables in use keep theirs: nothing waits. */
void lsm_unload_tables(lsm_tree *t);

/* ---- Secondary indexes (lsm_index.c) --------------------------------------------------------
 *
 * A table with indexes writes each item change as one batch holding the write and the item's
 * old image (lsm_batch_image); its indexes are trees opened with no_wal, whose entries are
 * derived from those batches. The hook below hands every committed batch to the index layer
 * in the partition's commit order; the index trees record, with each flush, how far they have
 * applied every base partition (lsm_switch_memtable's checkpoint); the base partitions keep
 * their WAL segments until every index has flushed past them (lsm_set_wal_retain), and at
 * open the index layer replays them from its checkpoints (lsm_wal_replay). */

/* Called by a partition's group-commit leader for every batch it committed, in sequence
 * order, after the batch is in the WAL (and durable, when the group synced) and the memtable,
 * before its sequence numbers are visible. A failure makes the partition read-only: the batch
 * is in the WAL, and the next open lets the index layer catch up from it. */
typedef kura_status (*lsm_commit_fn)(void *arg, lsm_tree *t, const uint8_t *rep, size_t len);
void lsm_set_commit_hook(lsm_tree *t, lsm_commit_fn fn, void *arg);

/* no_wal trees: inserts the entries of `rep` with the sequence numbers stamped in it (image
 * entries skipped). Never switches the memtable (see lsm_switch_memtable); never waits for
 * visibility. KURA_E_READONLY after a background error. */
kura_status lsm_apply(lsm_tree *t, const uint8_t *rep, size_t len);
/* Whether the memtable has reached its budget (the owner should switch it). */
bool lsm_mem_full(lsm_tree *t);
/* no_wal trees: makes the memtable immutable and schedules its flush, which records `meta` as
 * the tree's checkpoint once its table is durable; waits while the previous flush runs. An
 * empty memtable is not flushed: `meta` is recorded at once. */
kura_status lsm_switch_memtable(lsm_tree *t, const uint8_t *meta, size_t mlen);
/* The last durable checkpoint (empty if none) into *out (replacing its contents). */
kura_status lsm_user_meta(lsm_tree *t, kbuf *out);
/* Waits until no flush is pending or running. */
kura_status lsm_wait_flushed(lsm_tree *t);

/* While on, compactions keep every tombstone, also at the bottom level: an index being
 * backfilled receives puts at an older sequence than deletes already applied, which a
 * tombstone must still shadow when they arrive. */
void lsm_keep_tombstones(lsm_tree *t, bool keep);

/* WAL segments holding a sequence above `seq` are kept (retain_wals trees); deletes those no
 * longer needed. */
void lsm_set_wal_retain(lsm_tree *t, uint64_t seq);
/* Calls fn for every batch in the tree's WAL segments (oldest first) whose last sequence is
 * above `from_seq`, the current segment excepted; the pieces of transactions that did not
 * commit are left out. Torn tails end a segment; corruption fails
 * with the file and offset. */
typedef kura_status (*lsm_rep_fn)(void *arg, const uint8_t *rep, size_t len);
kura_status lsm_wal_replay(lsm_tree *t, uint64_t from_seq, lsm_rep_fn fn, void *arg);

/* ---- The WAL as a change log (lsm_stream.c) --------------------------------------------------
 *
 * A partition's WAL records, in the order they were appended, by position: the segment's
 * number and the record's offset in it. Positions only grow in WAL order, also where
 * sequence numbers do not (a transaction's piece is appended before its range is allocated),
 * so a change stream can resume after any record it has read. Segments are kept for a
 * stream by age (lsm_options.wal_retain_ms, lsm_set_wal_retain_ms), beside what the indexes
 * keep by sequence. */
typedef struct lsm_wal_pos {
    uint64_t segment, offset;
} lsm_wal_pos;
/* Called with each record read and its position. KURA_E_BUSY stops the reading before this
 * record (not an error: the caller's frontier); any other error stops it and is returned. */
typedef kura_status (*lsm_wal_rec_fn)(void *arg, const uint8_t *rec, size_t len,
                                      lsm_wal_pos at);
/* Where the next record appended to the current segment will be: a stream's start and end. */
lsm_wal_pos lsm_wal_tail(lsm_tree *t);
/* How far the WAL is durable: the tail of its last sync (LATEST). lsm_wal_read reads no
 * further. */
lsm_wal_pos lsm_wal_durable(lsm_tree *t);
/* The first record still on disk (TRIM_HORIZON): the oldest segment's start, or the tail. */
kura_status lsm_wal_head(lsm_tree *t, lsm_wal_pos *out);
/*
 * Reads up to max_records records from `from` on: the rest of its segment, then the later
 * ones, the current one up to what is durable (lsm_wal_durable). *next_out: where to go on
 * (after the last record passed to fn, or at the one fn stopped at). Errors: KURA_E_NOT_FOUND
 * if from's segment is gone (trimmed: deleted for its age, or never retained);
 * KURA_E_INVALID for a position past the log's end; those of the reader (KURA_E_CORRUPTION
 * names the file and offset).
 */
kura_status lsm_wal_read(lsm_tree *t, lsm_wal_pos from, size_t max_records, lsm_wal_rec_fn fn,
                         void *arg, lsm_wal_pos *next_out);
/* Sets how long closed segments are kept for their age (0: not), deleting those no longer
 * needed. */
void lsm_set_wal_retain_ms(lsm_tree *t, uint64_t ms);
/* Deletes the closed segments nothing keeps any more (for their age: call it now and then). */
void lsm_trim_wals(lsm_tree *t);

/* ---- Transactions (lsm_txn.c) ----------------------------------------------------------------
 *
 * Writes to several partitions (of any trees) that become visible together and survive a
 * crash together (docs/architecture.md, "Transactions"). The caller (engine/txn_log.c):
 *
 *   1. takes a transaction id (a sequence number of its own, published at once) and marks
 *      each piece with it (lsm_batch_txn_marker), the piece's sequences relative to the
 *      transaction's range (the first piece's start at 0);
 *   2. leads every participant without ever waiting for one while it leads another
 *      (lsm_txn_lead for one, lsm_txn_try_lead for the rest; on a busy one it lets go of all
 *      and waits for that one first): no deadlock, and no convoy of transactions each holding
 *      a partition the next one needs;
 *   3. lsm_txn_append() every piece to its WAL and lsm_txn_release() every lead: the
 *      partitions' other writers go on at once;
 *   4. lsm_txn_sync() every piece (in parallel, sharing the partitions' syncs);
 *   5. lsm_txn_alloc() the range, only now, so that readers wait for the transaction only
 *      while its commit record is written; stamps the pieces with it;
 *   6. makes the commit record (id -> the range's first) durable: the commit point;
 *   7. lsm_txn_apply() every piece: memtable and commit hook, without the lead;
 *   8. lsm_seq_complete() the range, lsm_seq_wait().
 *
 * A piece is in flight from its append until its apply or, if the transaction fails before,
 * lsm_txn_end(): meanwhile the partition switches no memtable. A replay applies a piece only
 * if its transaction's commit record exists (presumed abort), with the sequences the record
 * gives it (lsm_rep_resolve). On failure the caller ends every piece it appended (the
 * partition is read-only after a failed append or sync) and completes its range, if it has
 * one, as a hole. */
typedef struct lsm_txn_hold {
    wal_cq_waiter w;
    wal_cq_waiter *group[1];
    lsm_batch empty;
} lsm_txn_hold;
/* A write's place in the order of a partition's commit hook (lsm_txn.c). */
typedef struct lsm_hook_slot {
    struct lsm_hook_slot *prev, *next;
    uint64_t seq;
    bool queued;
} lsm_hook_slot;
/* Becomes the leader of t's commit queue and makes room in its memtable. On failure nothing
 * is held. */
kura_status lsm_txn_lead(lsm_tree *t, lsm_txn_hold *h);
/* As lsm_txn_lead, but only if nobody leads or waits for the partition now: KURA_E_BUSY
 * (no message) otherwise, nothing held. */
kura_status lsm_txn_try_lead(lsm_tree *t, lsm_txn_hold *h);
/* Leader: appends the piece to the WAL; it is in flight from here on (if this fails, it is
 * not). *end_out: the WAL's size after it, for lsm_txn_sync. */
kura_status lsm_txn_append(lsm_tree *t, const uint8_t *rep, size_t len, uint64_t *end_out);
/* Ends the lead; `s` is what the transaction came to (a failure is kept by the partition
 * only if lsm_txn_append/sync/apply reported it). */
void lsm_txn_release(lsm_tree *t, lsm_txn_hold *h, kura_status s);
/* Any thread, after the release: makes the WAL durable up to `end`, sharing a sync that
 * covers it. */
kura_status lsm_txn_sync(lsm_tree *t, uint64_t end);
/* Allocates the transaction's `total` sequences and queues piece i (first sequence: the
 * range's first + offs[i]) in slots[i] for the commit hook of parts[i], if it has one. parts
 * sorted by address, their pieces in flight. Returns the range's first. */
uint64_t lsm_txn_alloc(lsm_shared *sh, lsm_tree *const *parts, const uint64_t *offs,
                       lsm_hook_slot *slots, size_t n, uint64_t total);
/* Any thread, after the commit point: inserts the piece (stamped with its sequences) into
 * the memtable, hands it to the commit hook after the writes before it, and ends it. */
kura_status lsm_txn_apply(lsm_tree *t, const uint8_t *rep, size_t len, lsm_hook_slot *slot);
/* Ends a piece that will not be applied (its transaction failed); `slot` as lsm_txn_alloc
 * left it, or zeroed. */
void lsm_txn_end(lsm_tree *t, lsm_hook_slot *slot);
/* The lowest id of the transactions whose pieces the partition's WAL segments still hold
 * (UINT64_MAX: none): their commit records must stay (engine/txn_log.c's collection). Every
 * segment a replay or the index layer read at open is counted; 0 when one could not be. */
uint64_t lsm_min_txn(lsm_tree *t);

/* ---- Integrity check (lsm_check.c; `kura check`) ---------------------------------------------
 *
 * Reads every file of the partition while it stays in use: CURRENT and the MANIFEST (every
 * live table present with its recorded size, the same set as the open partition's), every
 * block of every live SSTable from the file (sst_reader_verify), every record of every WAL
 * segment (the current one up to what is durable; a torn tail only where recovery allows it).
 * Each finding is one line through fn: problem true for damage (with the file and the byte
 * offset), false for a note (something accepted, and why). *st counts what was read and the
 * problems (zeroed by the caller; added to). Returns KURA_OK when the check ran, whatever it
 * found; KURA_E_NOMEM when it could not. */
typedef void (*lsm_check_fn)(void *arg, bool problem, const char *line);
typedef struct lsm_check_stats {
    uint64_t manifests, sstables, blocks, entries, wal_segments, wal_records, problems;
} lsm_check_stats;
kura_status lsm_check_files(lsm_tree *t, lsm_check_fn fn, void *arg, lsm_check_stats *st);

/* Where a change stream position (lsm_wal_read's) stands in the partition's WAL, for the
 * integrity check: OK (a record boundary of a segment still there, the tail, a segment's
 * start, or a part of the current segment not yet durable, which cannot be read yet);
 * PAST_END (after the tail); TRIMMED (its segment is gone and older than every segment left:
 * deleted for its age); MISSING (its segment is gone but older ones remain: a hole);
 * NOT_BOUNDARY (inside a record, or after the segment's last record); UNREADABLE (damage in
 * the segment before it: lsm_check_files reports it). KURA_E_NOMEM, KURA_E_IO. */
typedef enum lsm_wal_pos_state {
    LSM_POS_OK,
    LSM_POS_PAST_END,
    LSM_POS_TRIMMED,
    LSM_POS_MISSING,
    LSM_POS_NOT_BOUNDARY,
    LSM_POS_UNREADABLE,
} lsm_wal_pos_state;
kura_status lsm_wal_pos_check(lsm_tree *t, lsm_wal_pos pos, lsm_wal_pos_state *out);

/* Adds this tree's figures to *st. */
void lsm_add_stats(lsm_tree *t, kura_stats *st);
/* KURA_OK, or the error that made the tree read-only. */
kura_status lsm_error(lsm_tree *t);

#endif
