/*
 * shared.h - what every LSM tree (partition) of one database shares: options, the io env, the
 * block cache, the background pool, the database-wide sequence number with in-order
 * publication, live snapshots, and memory accounting.
 *
 * Sequence numbers (DESIGN.md section 3): a partition's group-commit leader allocates a range
 * [first, last] from `last_alloc`, writes and applies its group, and marks the range complete.
 * `visible` advances over completed ranges only while they are contiguous, so a reader, who
 * reads at `visible`, never sees a write before everything ordered before it is applied (and,
 * in sync mode, durable). The leader does not wait for the ranges before its own: it hands the
 * partition to the next group at once, so partitions sync in parallel; each writer then waits
 * (lsm_seq_wait) until its own sequence is visible before it returns, which keeps
 * read-your-writes. A leader whose write failed still completes its range (as a hole) so
 * others are never blocked.
 */
#ifndef KURA_LSM_SHARED_H
#define KURA_LSM_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/pool.h"
#include "sstable/block_cache.h"
#include "util/io.h"
#include "util/thread.h"

enum { LSM_LEVELS = 7 };

typedef struct lsm_options {
    kura_durability durability;
    size_t write_buffer_bytes; /* a partition's memtable is switched at this size */
    size_t wal_buffer_bytes;   /* relaxed: user-space WAL buffer (kura_options) */
    size_t block_size;
    uint32_t bloom_bits_per_key;
    kura_compression compression, bottom_compression;
    uint32_t l0_compaction_trigger, l0_slowdown_trigger, l0_stop_trigger;
    uint64_t level1_bytes;
    uint64_t sstable_target_bytes;
    size_t (*prefix_len)(const uint8_t *ukey, size_t len); /* table prefix filter, or NULL */
    /* A tree without a WAL of its own (a secondary index: lsm_apply, lsm_switch_memtable).
     * What its memtable held when the process stopped is rebuilt by its owner from the WALs
     * of other trees, from the checkpoint it recorded (lsm_user_meta). */
    bool no_wal;
    /* Keep WAL segments past the flush until lsm_set_wal_retain says they are not needed (a
     * table with secondary indexes: its indexes are rebuilt from these segments). */
    bool retain_wals;
    /* Keep closed WAL segments this long after they were closed, whatever else needs them
     * (0: not for their age): a table's change stream reads its records from them (lsm.h,
     * "The WAL as a change log"). lsm_set_wal_retain_ms changes it. */
    uint64_t wal_retain_ms;
} lsm_options;

typedef struct lsm_tree lsm_tree; /* (lsm.h) */

typedef struct lsm_seq_range {
    uint64_t first, last;
} lsm_seq_range;

typedef struct lsm_shared {
    io_env *io;
    block_cache *cache;
    kpool *pool;

    uint64_t last_alloc; /* atomic: highest sequence handed out */
    uint64_t visible;    /* atomic: highest published sequence */
    kmutex pub_mu;
    kcond pub_cv;
    lsm_seq_range *pending; /* completed ranges waiting for an earlier one (pub_mu) */
    size_t npending, pending_cap;
    size_t nwaiters; /* threads in lsm_seq_wait (pub_mu) */

    kmutex snap_mu;
    uint64_t *snaps; /* sorted live snapshot sequences (with repeats) */
    size_t nsnaps, snaps_cap;

    /* Transactions (lsm_txn.c): whether the transaction `txn_id` committed, i.e. its commit
     * record exists (engine/txn_log.c), and the first sequence of its range (*base_out; 0 for
     * a record of the first format, whose pieces carry their own sequences). Replays consult
     * it for every transaction piece they find; set before any tree that may hold pieces is
     * opened. NULL: a piece is corruption. */
    kura_status (*txn_committed)(void *arg, uint64_t txn_id, bool *committed_out,
                                 uint64_t *base_out);
    /* Makes every commit record written so far durable (a relaxed transaction's is written
     * without a sync). A flush of tree t calls it before its tables replace WAL records: no
     * table may hold a piece whose commit record a crash could still lose. NULL: none. */
    kura_status (*txn_sync)(void *arg, lsm_tree *t);
    void *txn_arg;

    /* The wall clock in ms since the epoch (WAL retention by age); NULL: CLOCK_REALTIME.
     * Tests set their own. */
    uint64_t (*clock_ms)(void);

    /* statistics, updated atomically */
    uint64_t flushes, compactions, write_slowdowns, table_unloads;
} lsm_shared;

void lsm_shared_init(lsm_shared *sh);
void lsm_shared_destroy(lsm_shared *sh);

static inline uint64_t lsm_visible(lsm_shared *sh)
{
    return __atomic_load_n(&sh->visible, __ATOMIC_ACQUIRE);
}
/* Returns the first of n new sequence numbers. Sequentially consistent: the index layer
 * orders its registration of a new GSI against it (index/runtime.c idx_rt_add). */
static inline uint64_t lsm_seq_alloc(lsm_shared *sh, uint64_t n)
{
    return __atomic_fetch_add(&sh->last_alloc, n, __ATOMIC_SEQ_CST) + 1;
}
/* Marks [first, last] as applied (or failed); visible advances over contiguous ranges. */
void lsm_seq_complete(lsm_shared *sh, uint64_t first, uint64_t last);
/* Blocks until visible >= seq. */
void lsm_seq_wait(lsm_shared *sh, uint64_t seq);
/* At open: all partitions recovered up to seq. */
void lsm_seq_reset(lsm_shared *sh, uint64_t seq);

/* sh->clock_ms(), or CLOCK_REALTIME in ms. */
uint64_t lsm_now_ms(lsm_shared *sh);

/* Pins the current visible sequence as a snapshot (compactions keep what it can see). */
kura_status lsm_snapshot_acquire(lsm_shared *sh, uint64_t *seq_out);
void lsm_snapshot_release(lsm_shared *sh, uint64_t seq);
/* The oldest sequence any reader may read at: the oldest snapshot, or `visible`. */
uint64_t lsm_oldest_snapshot(lsm_shared *sh);

#endif
