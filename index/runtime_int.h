/*
 * runtime_int.h - what runtime.c (open, close, checkpoints), apply.c (base batches turned
 * into index entries), applier.c (the GSI queue and its thread) and shadow.c (an index's
 * rebuild under new trees) share.
 */
#ifndef KURA_INDEX_RUNTIME_INT_H
#define KURA_INDEX_RUNTIME_INT_H

#include <pthread.h>

#include "index/runtime.h"
#include "util/thread.h"

typedef struct rt_index {
    const idx_def *def;
    lsm_tree **parts;
    uint32_t nparts;
    uint64_t *applied;      /* [nbase], atomic: base partition b's batches up to this sequence
                             * are in the index's memtables (written by one thread per b) */
    uint64_t *replay_from;  /* [nbase], during the replay at open only: the durable checkpoint,
                             * the one bound a change's sequence is compared with (a WAL is not
                             * in sequence order: "Recovery" in docs/architecture.md) */
    uint64_t since_switch;  /* atomic: base bytes applied since the last checkpoint */
    uint64_t checkpoints;   /* atomic */
    bool full;              /* atomic: an insert found a memtable full (the next check of
                             * rt_maybe_checkpoint switches them; it reads no partition
                             * before it holds the lock, so trees may be dropped) */
    /* A GSI being backfilled (idx_rt_add): it applies every batch but recovery and WAL
     * retention ignore it (a restart builds it again); removed: idx_rt_remove. Both change
     * under the lock held exclusively. */
    bool building, removed;
    uint64_t s0; /* building: batches up to here are the backfill's */
    /* A rebuild's shadow (idx_rt_shadow_begin, shadow.c): the same index under new trees,
     * applied every change this one is applied after the shadow's s0, and swapped in when
     * built. Allocated by the first rebuild and kept until the runtime is freed (detached:
     * `removed`), so a thread that loaded the pointer never finds it freed. Set under the
     * lock held exclusively; loaded with acquire where the lock is not held. */
    struct rt_index *shadow;
} rt_index;

/* The attached shadow of x, or NULL. The lock held (shared or exclusively). */
static inline rt_index *rt_shadow_of(const rt_index *x)
{
    rt_index *sh = x->shadow;
    return sh && !sh->removed ? sh : NULL;
}

/* Indexes a runtime can hold: a table's LSIs and GSIs. */
enum { RT_MAX_INDEXES = IDX_MAX_LSI + IDX_MAX_GSI };

/* The commit hook's argument: which base partition. */
typedef struct rt_base {
    idx_runtime *rt;
    uint32_t b;
} rt_base;

/* A base batch waiting for the GSI applier. */
typedef struct rt_rec {
    struct rt_rec *next;
    uint32_t b;
    uint64_t t_ns; /* when it was queued */
    size_t len;
    uint8_t rep[];
} rt_rec;

struct idx_runtime {
    char *table_name;
    char *pk_name, *sk_name;
    key_schema ks;
    lsm_shared *sh;
    bool sync;
    lsm_tree **base;
    uint32_t nbase;
    rt_base *bctx;
    rt_index *ix;   /* RT_MAX_INDEXES entries; nix used (grows under the lock, exclusive) */
    uint32_t nix;
    bool has_lsi, has_gsi;
    size_t switch_bytes;
    void (*charge)(void *arg, const idx_def *d, const uint8_t *key, size_t klen, double units);
    void *charge_arg;
    /* Appliers (LSI hooks, the GSI applier, recovery) hold it shared while they insert; a
     * checkpoint holds it exclusively, so the memtables it switches hold nothing newer than
     * the applied vector it records. Writer-preferring. */
    pthread_rwlock_t lock;

    /* the GSI queue (qmu) */
    kmutex qmu;
    kcond qcv;            /* queue changed: a record, room, a record applied, stop */
    rt_rec *head, *tail;
    size_t qbytes, qmax;
    uint64_t enqueued, done; /* records queued / applied (or dropped after an error) */
    uint64_t cur_t_ns;       /* queue time of the record being applied, 0 if none */
    bool stop, paused, thread_started;
    kura_status error;       /* the applier's first failure; later records are dropped */
    char error_msg[256];
    uint64_t applied_count;
    kthread thread;
};

/* apply.c: applies the batch `rep` of base partition b to the indexes of the given kind
 * (IDX_LOCAL or IDX_GLOBAL; RT_REPLAY: the replay at open, each change to every index whose
 * replay_from[b] is below the change's sequence), holding the lock shared, and advances their
 * applied vectors (to the highest sequence applied: never backwards). */
enum { RT_REPLAY = -1 };
kura_status rt_apply_batch(idx_runtime *rt, uint32_t b, const uint8_t *rep, size_t len, int kind);
/* Records a checkpoint of index x if its memtables are full or it applied switch_bytes
 * since the last one (force: always). Takes the lock exclusively. */
kura_status rt_maybe_checkpoint(idx_runtime *rt, rt_index *x, bool force);
/* rt_maybe_checkpoint(force false) for every index of `kind` and its attached shadow: after
 * a batch was applied to them (the commit hook, the GSI applier). */
kura_status rt_checkpoint_kind(idx_runtime *rt, idx_kind kind);
/* Inserts the entry (key, value) into x at sequence s0 (a backfill's put). */
kura_status rt_put_at(idx_runtime *rt, rt_index *x, uint64_t s0, const uint8_t *key, size_t klen,
                      const uint8_t *value, size_t vlen);
/* x's backfill from the snapshot at s0 is complete: x counts for WAL retention from now on
 * (before its first durable checkpoint, which therefore releases nothing it needs), then that
 * checkpoint is recorded and made durable. On failure x is building again. */
kura_status rt_built(idx_runtime *rt, rt_index *x, uint64_t s0);
/* The durable checkpoint of x into out[nbase]: per base partition the smallest sequence its
 * partitions recorded (0 where one recorded none). */
kura_status rt_durable(idx_runtime *rt, const rt_index *x, uint64_t *out);
/* Lets every base partition drop the WAL segments that every index has durably applied. */
void rt_release_wals(idx_runtime *rt);

/* applier.c */
kura_status rt_applier_start(idx_runtime *rt);
/* Applies or drops what is queued, then stops the thread. */
void rt_applier_stop(idx_runtime *rt);
/* The commit hook's GSI half: queues a copy of the batch; blocks while the queue is full. */
kura_status rt_enqueue(idx_runtime *rt, uint32_t b, const uint8_t *rep, size_t len);

#endif
