/*
 * lsm_int.h - the partition struct shared by lsm.c, lsm_write.c, lsm_bg.c and lsm_recover.c.
 * Not for use outside engine/lsm.
 *
 * Locking: `mu` protects mem, imm, the version set, the scheduling flags and bg_error. `wal_mu`
 * protects the wal pointer against the background syncer (the group-commit leader, the only
 * appender, reads it without the lock; it swaps it holding both locks). Inserts into `mem` are
 * serialised by `apply_mu`: the leader's, and those of transactions applying their pieces
 * after they let go of the lead (lsm_txn.c). Lock order: apply_mu, mu, wal_mu; hook_mu alone.
 */
#ifndef KURA_LSM_INT_H
#define KURA_LSM_INT_H

#include "engine/lsm/lsm.h"
#include "engine/lsm/memtable.h"
#include "engine/lsm/version_set.h"
#include "wal/commit_queue.h"
#include "wal/writer.h"

struct compaction;

/* A WAL segment, the highest sequence it holds (0: none; UINT64_MAX: unknown), the lowest
 * transaction id of the pieces it holds (UINT64_MAX: none) and when it was noted closed (ms,
 * lsm_now_ms: its age for wal_retain_ms). */
typedef struct lsm_wal_seg {
    uint64_t number, max_seq, min_txn, closed_ms;
} lsm_wal_seg;

/* Records the highest sequence and lowest transaction id of segment `number` (its closing
 * time is the first noting's). */
void lsm_note_wal_seg(lsm_tree *t, uint64_t number, uint64_t max_seq, uint64_t min_txn);
/* At open: notes the WAL segments below the log number that nothing noted, their highest
 * sequence and lowest transaction id unknown (UINT64_MAX, 0: kept for the indexes, and their
 * commit records kept), closed now (lsm_stream.c). */
void lsm_note_old_wals(lsm_tree *t);
/* lsm_flush of a no_wal tree (lsm_index.c): the checkpoint stays the last one recorded. */
kura_status lsm_flush_no_wal(lsm_tree *t);
/* Whether WAL segment `number` (below the log number) may be deleted: no index needs it.
 * mu held. */
bool lsm_wal_seg_unneeded(lsm_tree *t, uint64_t number);

struct lsm_tree {
    lsm_shared *sh;
    lsm_options opts;
    char *dir;

    kmutex mu;
    kcond bg_cv;           /* background work finished / room made */
    memtable *mem, *imm;
    uint64_t imm_log_end;  /* WALs numbered below this hold only imm's (or older) data */
    version_set vs;
    kbuf compact_pointer[LSM_LEVELS];
    bool flush_scheduled, compact_scheduled;
    bool compacting;       /* a compaction (automatic or manual) is running */
    bool pushdown_flush;   /* a flush may place its table below level 0 */
    bool closing;
    kura_status bg_error;  /* sticky; KURA_OK while healthy; written under mu, read atomically */
    uint32_t l0_files;     /* level-0 files of the current version, for the write fast path */
    char bg_msg[256];

    kmutex wal_mu;
    kmutex wal_sync_mu; /* pins `wal` for a sync made outside wal_mu (lsm_sync_wal, lsm_new_wal):
                         * appenders and stream readers never wait for an fdatasync; order
                         * mu -> wal_sync_mu -> wal_mu */
    wal_writer *wal;
    uint64_t wal_number;
    wal_cq *cq;
    uint64_t wal_bytes_live; /* WAL segments not yet deleted (approximate) */

    /* Secondary indexes (lsm_index.c). The commit hook runs on the group's leader after the
     * memtable insert and before the group's sequences are published. */
    lsm_commit_fn hook;        /* atomic pointer; NULL: none */
    void *hook_arg;
    uint64_t wal_last_seq;     /* the last sequence appended to the current segment (leader) */
    uint64_t wal_retain_seq;   /* atomic: segments holding a later sequence are kept */
    uint64_t wal_retain_ms;    /* atomic: closed segments younger than this are kept */
    lsm_wal_seg *wal_segs;     /* closed segments' highest sequences (wal_mu) */
    size_t nwal_segs, wal_segs_cap;
    uint64_t wal_min_txn;      /* the current segment's lowest transaction id (leader) */
    bool wal_segs_lost;        /* a segment could not be noted (memory): lsm_min_txn is 0 */
    /* Inserts into mem are serialised by apply_mu (taken before mu): a no_wal tree's
     * appliers; a WAL tree's leader and transactions applying their pieces. no_wal trees: the
     * checkpoint recorded with the flush of imm. */
    kmutex apply_mu;
    kbuf imm_meta;
    bool has_imm_meta;
    bool keep_tombstones; /* atomic: compactions keep every tombstone (lsm_keep_tombstones) */

    /* Transactions (lsm_txn.c). A piece is appended under the lead and applied after it, with
     * sequences allocated in between, so: txn_inflight (mu) counts pieces appended and not yet
     * applied or dropped, and no memtable switch happens while it is not 0 (a piece's WAL
     * record and its entries stay in one segment and one memtable); the hook queue (hook_mu)
     * holds, in ascending order, the slots of the writes allocated and not yet through the
     * commit hook, which sees the partition's writes in sequence order (lsm_hook_turn). */
    uint32_t txn_inflight;
    kmutex hook_mu;
    kcond hook_cv;
    lsm_hook_slot *hook_head, *hook_tail;
};

/* The commit hook's order (lsm_txn.c). A writer of a partition with a hook allocates its
 * sequences with lsm_hook_alloc (which queues its slot), waits with lsm_hook_turn until no
 * write before it waits for the hook, calls the hook, then lsm_hook_done. */
uint64_t lsm_hook_alloc(lsm_tree *t, uint64_t n, lsm_hook_slot *slot);
void lsm_hook_turn(lsm_tree *t, const lsm_hook_slot *slot);
void lsm_hook_done(lsm_tree *t, lsm_hook_slot *slot);

/* LevelDB's MakeRoomForWrite (lsm_write.c): the leader switches a full memtable, delays when
 * level 0 backs up. mu held. */
kura_status lsm_make_room(lsm_tree *t);
/* Inserts the entries of a batch into `mem`, images and transaction markers skipped
 * (lsm_rep_iterate callback; arg is the memtable). */
kura_status lsm_insert_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                             size_t klen, const uint8_t *val, size_t vlen);
/*
 * A record read back from a WAL, as it is to be applied: *apply_out false for the piece of a
 * transaction that did not commit (shared.h txn_committed); else *rep_out is the record with
 * its sequences: `rep` itself, or, for a piece (which carries sequences relative to its
 * transaction's range), a copy in `scratch` stamped with the range the commit record holds.
 * *id_out: the transaction's id if it is a piece (0 if not). `what` names the record for
 * errors.
 */
kura_status lsm_rep_resolve(lsm_tree *t, const uint8_t *rep, size_t len, const char *what,
                            kbuf *scratch, bool *apply_out, const uint8_t **rep_out,
                            uint64_t *id_out);

/* vs_log_and_apply, keeping l0_files in step with the installed version. mu held. */
kura_status lsm_log_and_apply(lsm_tree *t, version_edit *e);
/* Records the first background/write error and makes the tree read-only. Call with mu held. */
void lsm_set_error(lsm_tree *t, kura_status s);
/* Schedules a flush or compaction if one is needed. Call with mu held. */
void lsm_maybe_schedule(lsm_tree *t);
/* Creates a new WAL segment and makes it current (mu and wal_mu held by the caller). */
kura_status lsm_new_wal(lsm_tree *t);
/* The numbers of the WAL segments numbered >= min (except `skip`, 0: none), sorted, in a
 * malloc'ed *nums_out. */
kura_status lsm_list_wals(lsm_tree *t, uint64_t min, uint64_t skip, uint64_t **nums_out,
                          size_t *n_out);
/* Replays WAL segments numbered >= the version set's log number into t->mem. */
kura_status lsm_replay_wals(lsm_tree *t, uint64_t *max_seq_out);
/* Deletes WAL segments numbered below `below` and SSTables not in the current version. */
void lsm_delete_obsolete(lsm_tree *t, bool tables_too);
/* The file-number allocator handed to build_tables (takes mu). */
uint64_t lsm_alloc_file(void *arg);
/* Runs one compaction c (trivial move or merge); mu held on entry and exit. */
kura_status lsm_run_compaction(lsm_tree *t, struct compaction *c);

#endif
