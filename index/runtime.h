/*
 * runtime.h - the indexes of one table at run time: the narrow interface through which the
 * engine owns them (docs/architecture.md, "Secondary indexes").
 *
 * The engine opens a table's base partitions with retain_wals and its index trees with no_wal
 * (engine/lsm/lsm.h), writes every item change as a batch [put|delete, image of the old item],
 * and hands the runtime the partitions. The runtime then
 *   - at open, replays every base partition's WAL from the indexes' durable checkpoints into
 *     the index trees (an index tree holds only what its flushes made durable);
 *   - on every committed base batch (the partition's commit hook, in its commit order, before
 *     the batch is visible) applies the LSI changes at once, so an LSI read after a write
 *     sees it, and queues the batch for the GSI applier thread, which applies it later: GSI
 *     reads are eventually consistent, as in DynamoDB. A full queue blocks the base writers
 *     (back-pressure: the queue, the retained WAL and the memory stay bounded);
 *   - switches an index's memtables all at once, recording in every partition's manifest
 *     the vector of base sequences applied so far (its checkpoint), and tells each base
 *     partition which WAL segments the indexes no longer need.
 * Every index entry carries the sequence number of the base write it comes from.
 *
 * Thread safety: all functions may be called from any thread once idx_rt_open returned;
 * idx_rt_close must not race with the others.
 */
#ifndef KURA_INDEX_RUNTIME_H
#define KURA_INDEX_RUNTIME_H

#include "engine/lsm/lsm.h"
#include "index/index.h"

typedef struct idx_runtime idx_runtime;

/* One index: its definition and its tree's partitions (both borrowed: they must outlive the
 * runtime). */
typedef struct idx_rt_index {
    const idx_def *def;
    lsm_tree **parts;
    uint32_t nparts;
    bool building; /* a GSI whose backfill has not completed: no recovery, no retention */
} idx_rt_index;

typedef struct idx_rt_args {
    const char *table_name;   /* for messages; copied */
    key_schema ks;            /* the table's key; names copied */
    lsm_shared *sh;
    bool sync;                /* base WALs are synced before their batches are applied */
    lsm_tree **base;          /* the table's partitions, borrowed */
    uint32_t nbase;
    const idx_rt_index *indexes;
    uint32_t nindexes;
    size_t queue_bytes;       /* GSI backlog that blocks writers; 0: 32 MiB */
    size_t switch_bytes;      /* base bytes applied to an index before a checkpoint; 0: 64 MiB */
    /* Called for every index entry an applier writes or deletes (the LSI hooks and the GSI
     * applier; not recovery, not a rebuild's shadow), with DynamoDB's write units of it: the
     * capacity accounting (engine/tcap.h). NULL: none. Runs on the applier's thread. */
    void (*charge)(void *arg, const idx_def *d, const uint8_t *key, size_t klen, double units);
    void *charge_arg;
} idx_rt_args;

/* Recovers the indexes from the base WALs, installs the commit hooks, starts the GSI applier.
 * Errors: storage errors of the replay (with the file and offset for corruption). */
kura_status idx_rt_open(const idx_rt_args *a, idx_runtime **rt_out);

/* Applies what is queued, records a checkpoint of every index (memtables flushed), releases
 * the WAL they no longer need, removes the hooks and stops the applier. NULL ok. */
kura_status idx_rt_close(idx_runtime *rt);

/* What a crash leaves: removes the hooks, stops the applier without applying what is queued,
 * records no checkpoint, frees the runtime (crash tests). NULL ok. */
void idx_rt_drop(idx_runtime *rt);

/* Blocks until index `i` has applied every base write committed before the call, or
 * `timeout_ms` passed (KURA_E_BUSY). For an LSI it returns at once. After the GSI applier
 * stopped on an error, returns that error (the index lacks writes until the next open). */
kura_status idx_rt_wait(idx_runtime *rt, uint32_t i, uint64_t timeout_ms);

typedef struct idx_rt_stats {
    uint64_t lag_writes;   /* base batches committed but not yet applied to the index */
    uint64_t lag_ms;       /* age of the oldest of them (0 when none) */
    uint64_t applied;      /* base batches applied since open */
    uint64_t queue_bytes;  /* the GSI backlog's size */
    uint64_t checkpoints;  /* checkpoints recorded since open */
    kura_status error;     /* KURA_OK, or what stopped the applier */
} idx_rt_stats;
void idx_rt_stats_get(idx_runtime *rt, uint32_t i, idx_rt_stats *st);

/* Records a checkpoint of every index now and waits for it to be durable; then lets the base
 * partitions drop the WAL segments no index needs. (kura_close, tests of WAL retention.) */
kura_status idx_rt_checkpoint(idx_runtime *rt);

/* ---- GSIs added and removed while the table is open (UpdateTable) --------------------------
 *
 * A new GSI is added "building": from then on every base batch committed is applied to it
 * too, and the caller backfills it from a snapshot: it waits until lsm_visible() reaches the
 * sequence *s0_out, reads the table at a snapshot taken then, and inserts each item's entry
 * at sequence s0 (idx_rt_backfill_put). Every batch committed after s0 reaches the index
 * through the runtime with a higher sequence, so whatever the order of the inserts, the
 * newest change of each entry wins. idx_rt_built then records its first checkpoint; until
 * then it plays no part in recovery or WAL retention (after a restart it is built again). */
kura_status idx_rt_add(idx_runtime *rt, const idx_rt_index *ix, uint32_t *pos_out,
                       uint64_t *s0_out);
/* Inserts the entry (key, value) of the index at `pos` at sequence s0 (backfill). */
kura_status idx_rt_backfill_put(idx_runtime *rt, uint32_t pos, uint64_t s0, const uint8_t *key,
                                size_t klen, const uint8_t *value, size_t vlen);
/* The backfill of the index at `pos` is complete: a durable checkpoint, then it counts. */
kura_status idx_rt_built(idx_runtime *rt, uint32_t pos, uint64_t s0);
/* Stops maintaining the index at `pos` (its trees may be dropped once no reader uses them);
 * its WAL needs are released. */
void idx_rt_remove(idx_runtime *rt, uint32_t pos);
/* The highest sequence handed out so far (a building index's s0 at open). */
uint64_t idx_rt_seq_now(idx_runtime *rt);
uint64_t idx_rt_s0(idx_runtime *rt, uint32_t pos);

/* ---- Rebuilding an index under new trees (shadow.c) ---------------------------------------
 *
 * A rebuild makes a copy of index `pos` from the table's items while the index stays in use:
 * idx_rt_shadow_begin attaches the new trees as the index's shadow, which from then on is
 * applied every change the index is applied (in the same step: the LSI's commit hook, the
 * GSI applier) for batches allocated after the sequence *s0_out, as a GSI being added is. The
 * caller backfills it from a snapshot at s0 (idx_rt_shadow_put, as idx_rt_backfill_put), then
 * idx_rt_shadow_built records its first durable checkpoint (from then on the shadow's needs
 * hold the base WALs too), and idx_rt_shadow_swap makes the new trees the index's: from the
 * swap on nothing is written to the old trees, which the caller may drop once no reader
 * uses them. idx_rt_shadow_abort detaches a shadow instead (the caller drops its trees).
 * One shadow per index at a time; `parts` is borrowed and must outlive the runtime or the
 * abort. Errors of begin: KURA_E_INVALID (no such position, an index being built or
 * removed), KURA_E_RESOURCE_IN_USE (a shadow is attached), KURA_E_NOMEM. */
kura_status idx_rt_shadow_begin(idx_runtime *rt, uint32_t pos, lsm_tree **parts, uint32_t nparts,
                                uint64_t *s0_out);
kura_status idx_rt_shadow_put(idx_runtime *rt, uint32_t pos, uint64_t s0, const uint8_t *key,
                              size_t klen, const uint8_t *value, size_t vlen);
kura_status idx_rt_shadow_built(idx_runtime *rt, uint32_t pos, uint64_t s0);
void idx_rt_shadow_swap(idx_runtime *rt, uint32_t pos);
void idx_rt_shadow_abort(idx_runtime *rt, uint32_t pos);

/* Stops (true) or resumes (false) the GSI applier: tests of lag, retention and
 * back-pressure. */
void idx_rt_pause(idx_runtime *rt, bool paused);

#endif
