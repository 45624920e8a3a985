/*
 * lsm_write.c - the write path: group commit, making room in the memtable, WAL segments.
 *
 * A writer joins the partition's commit queue. The leader (the writer at the front) makes room
 * (switching to a new memtable and WAL segment when the memtable is full, delaying when level 0
 * has too many files), takes the group queued behind it, allocates one sequence range, appends
 * every batch to the WAL with one write, fdatasyncs once if any member asked for durability,
 * inserts into the memtable, publishes the range and wakes the group. Writers arriving during the
 * sync queue up and form the next group: that is what makes N concurrent writers cost far fewer
 * than N fsyncs, and partitions sync in parallel with each other.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/ikey.h"
#include "util/status.h"

enum {
    GROUP_MAX = 128,
    GROUP_MAX_BYTES = 1 << 20,
    WAL_PREALLOC_BYTES = 1 << 20,
};

kura_status lsm_new_wal(lsm_tree *t)
{
    /* The old segment is made durable before the new one exists: only the newest segment
     * may ever end in a torn record (lsm_recover.c relies on it). */
    kura_status s = KURA_OK;
    kmutex_lock(&t->wal_sync_mu);
    kmutex_lock(&t->wal_mu);
    wal_writer *old = t->wal;
    kmutex_unlock(&t->wal_mu);
    if (old && !wal_writer_failed(old) && wal_writer_synced(old) < wal_writer_size(old))
        s = wal_writer_sync(old);
    if (s != KURA_OK) {
        kmutex_unlock(&t->wal_sync_mu);
        return s;
    }
    char path[4096];
    uint64_t number = vs_new_file_number(&t->vs);
    snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)number);
    wal_writer *w = NULL;
    s = wal_writer_open(t->sh->io, path, IO_KIND_WAL, &w);
    /* relaxed, if asked: records reach the OS in buffer-sized writes (see kura.h) */
    if (s == KURA_OK && t->opts.durability == KURA_RELAXED && t->opts.wal_buffer_bytes)
        wal_writer_set_buffer(w, t->opts.wal_buffer_bytes);
    /* sync: durable zeros ahead of the appends make each fdatasync a data-only write */
    if (s == KURA_OK && t->opts.durability == KURA_SYNC)
        wal_writer_set_prealloc(w, WAL_PREALLOC_BYTES);
    if (s == KURA_OK)
        s = io_sync_dir(t->sh->io, t->dir); /* the segment's name must survive a crash */
    if (s != KURA_OK) {
        wal_writer_close(w);
        kmutex_unlock(&t->wal_sync_mu);
        return s;
    }
    kmutex_lock(&t->wal_mu);
    if (old)
        t->wal_bytes_live += wal_writer_size(old);
    uint64_t old_number = t->wal_number;
    t->wal = w;
    t->wal_number = number;
    kmutex_unlock(&t->wal_mu);
    if (old)
        lsm_note_wal_seg(t, old_number, t->wal_last_seq, t->wal_min_txn);
    kmutex_lock(&t->wal_mu);
    t->wal_min_txn = UINT64_MAX; /* the new segment holds no piece yet */
    kmutex_unlock(&t->wal_mu);
    wal_writer_close(old);
    kmutex_unlock(&t->wal_sync_mu);
    return KURA_OK;
}

static void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* LevelDB's MakeRoomForWrite, with a delay that grows with the level-0 backlog. mu held. */
kura_status lsm_make_room(lsm_tree *t)
{
    bool delayed = false;
    for (;;) {
        version *v = t->vs.current;
        uint32_t l0 = (uint32_t)v->nfiles[0];
        if (t->bg_error != KURA_OK) {
            return kura_err(KURA_E_READONLY, "%s is read-only after an error: %s", t->dir,
                            t->bg_msg);
        } else if (!delayed && l0 >= t->opts.l0_slowdown_trigger) {
            /* 0.25 ms at the slowdown trigger, growing to ~2 ms near the stop trigger */
            uint32_t over = l0 - t->opts.l0_slowdown_trigger + 1;
            kmutex_unlock(&t->mu);
            sleep_us(250u * over);
            kmutex_lock(&t->mu);
            __atomic_add_fetch(&t->sh->write_slowdowns, 1, __ATOMIC_RELAXED);
            delayed = true;
        } else if (mt_usage(t->mem) < t->opts.write_buffer_bytes) {
            return KURA_OK;
        } else if (t->imm) {
            kcond_wait(&t->bg_cv, &t->mu); /* the previous memtable is still being flushed */
        } else if (l0 >= t->opts.l0_stop_trigger) {
            lsm_maybe_schedule(t);
            kcond_wait(&t->bg_cv, &t->mu);
        } else if (t->txn_inflight > 0) {
            kcond_wait(&t->bg_cv, &t->mu); /* transaction pieces still to apply (lsm_txn.c) */
        } else {
            kura_status s = lsm_new_wal(t);
            if (s != KURA_OK) {
                lsm_set_error(t, s);
                return s;
            }
            memtable *m = mt_new_sized(t->opts.write_buffer_bytes);
            if (!m)
                return kura_err(KURA_E_NOMEM, "%s: out of memory for a memtable", t->dir);
            t->imm = t->mem;
            t->imm_log_end = t->wal_number;
            t->mem = m;
            lsm_maybe_schedule(t);
        }
    }
}

static size_t payload_bytes(void *payload)
{
    return ((lsm_batch *)payload)->rep.len;
}

kura_status lsm_insert_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                             size_t klen, const uint8_t *val, size_t vlen)
{
    if (type == LSM_BATCH_IMAGE || type == LSM_BATCH_TXN || type == LSM_BATCH_META)
        return KURA_OK; /* for the WAL's readers only */
    return mt_add(arg, seq, type, key, klen, val, vlen);
}

/* Leader: write the group to the WAL and the memtable. Returns the group's status. */
static kura_status commit_group(lsm_tree *t, wal_cq_waiter **group, size_t n)
{
    const void *recs[GROUP_MAX];
    size_t lens[GROUP_MAX];
    uint64_t total = 0;
    bool sync = false;
    for (size_t i = 0; i < n; i++)
        total += lsm_batch_count(group[i]->payload);
    uint64_t count = total ? total : 1;
    /* with a commit hook, the group takes its place in the hook's order (lsm_txn.c) */
    lsm_commit_fn hook = __atomic_load_n(&t->hook, __ATOMIC_ACQUIRE);
    lsm_hook_slot slot = {0};
    uint64_t first = hook ? lsm_hook_alloc(t, count, &slot) : lsm_seq_alloc(t->sh, count);
    uint64_t seq = first;
    for (size_t i = 0; i < n; i++) {
        lsm_batch *b = group[i]->payload;
        lsm_rep_set_seq(b->rep.data, seq);
        seq += lsm_batch_count(b);
        recs[i] = b->rep.data;
        lens[i] = b->rep.len;
        sync |= group[i]->sync;
    }
    kura_status s = wal_writer_addv(t->wal, recs, lens, n);
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "wal.after_append");
    if (s == KURA_OK && sync)
        s = wal_writer_sync(t->wal);
    if (s == KURA_OK && sync)
        s = io_crash_point(t->sh->io, "wal.after_sync");
    kmutex_lock(&t->apply_mu); /* transactions apply their pieces outside the lead */
    if (s == KURA_OK && first + count - 1 > t->wal_last_seq)
        t->wal_last_seq = first + count - 1;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        lsm_batch *b = group[i]->payload;
        s = lsm_rep_iterate(b->rep.data, b->rep.len, lsm_insert_entry, t->mem, t->dir);
    }
    kmutex_unlock(&t->apply_mu);
    /* the index layer sees the batches before anyone can read them (lsm.h), in sequence
     * order: after the transaction pieces before them */
    if (s == KURA_OK && hook)
        lsm_hook_turn(t, &slot);
    for (size_t i = 0; i < n && s == KURA_OK && hook; i++) {
        lsm_batch *b = group[i]->payload;
        if (lsm_batch_count(b) > 0)
            s = hook(t->hook_arg, t, b->rep.data, b->rep.len);
    }
    lsm_hook_done(t, &slot);
    /* complete even on failure (a hole), so later sequences are not blocked forever */
    lsm_seq_complete(t->sh, first, first + count - 1);
    return s;
}

/* The last sequence number stamped into a committed batch. */
static uint64_t batch_last_seq(const lsm_batch *b)
{
    uint32_t n = lsm_batch_count(b);
    return lsm_rep_seq(b->rep.data) + (n ? n - 1 : 0);
}

static kura_status write_batch(lsm_tree *t, lsm_batch *b, bool sync, bool wait);

kura_status lsm_write(lsm_tree *t, lsm_batch *b, bool sync)
{
    return write_batch(t, b, sync, true);
}

kura_status lsm_write_nowait(lsm_tree *t, lsm_batch *b, bool sync)
{
    return write_batch(t, b, sync, false);
}

static kura_status write_batch(lsm_tree *t, lsm_batch *b, bool sync, bool wait)
{
    if (t->opts.no_wal)
        return kura_err(KURA_E_INVALID, "%s: an index tree is written by its index only", t->dir);
    wal_cq_waiter w = {.payload = b, .sync = sync};
    if (!wal_cq_join(t->cq, &w)) {
        if (w.status != KURA_OK) { /* the leader's message is on the leader's thread */
            kmutex_lock(&t->mu);
            kura_err(w.status, "%s: group commit failed: %s", t->dir, t->bg_msg);
            kmutex_unlock(&t->mu);
        } else if (wait) {
            lsm_seq_wait(t->sh, batch_last_seq(b)); /* read-your-writes before returning */
        }
        return w.status;
    }
    kura_status s = KURA_OK;
    /* Fast path without the partition lock: only the leader switches `mem`, and the level-0
     * count and error state are published atomically. */
    if (__atomic_load_n(&t->bg_error, __ATOMIC_ACQUIRE) != KURA_OK ||
        mt_usage(t->mem) >= t->opts.write_buffer_bytes ||
        __atomic_load_n(&t->l0_files, __ATOMIC_ACQUIRE) >= t->opts.l0_slowdown_trigger) {
        kmutex_lock(&t->mu);
        s = lsm_make_room(t);
        kmutex_unlock(&t->mu);
    }
    wal_cq_waiter *group[GROUP_MAX];
    size_t n = wal_cq_group(t->cq, &w, group, GROUP_MAX, GROUP_MAX_BYTES, payload_bytes);
    if (s == KURA_OK) {
        s = commit_group(t, group, n);
        if (s != KURA_OK) {
            kmutex_lock(&t->mu);
            lsm_set_error(t, s); /* the WAL may end in a torn record: stop writing to it */
            kmutex_unlock(&t->mu);
        }
    }
    wal_cq_finish(t->cq, group, n, s); /* the next group may start now */
    if (s == KURA_OK && wait)
        lsm_seq_wait(t->sh, batch_last_seq(b));
    return s;
}
