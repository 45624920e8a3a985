/*
 * lsm_index.c - what a partition offers the secondary-index layer (lsm.h, "Secondary
 * indexes"): the commit hook of a base partition, WAL retention by sequence and the replay of
 * retained segments, and the write side of trees without a WAL (inserts at given sequence
 * numbers, memtable switches that carry the owner's checkpoint into the manifest).
 *
 * Retention. A base partition normally deletes a WAL segment once its memtable is flushed.
 * A table's indexes are rebuilt at open from the base WALs, starting at each index's durable
 * checkpoint, so a segment must also stay until every index has flushed past all of its
 * records: the owner says how far that is (lsm_set_wal_retain) and the partition keeps the
 * highest sequence of each closed segment (from the append path, recovery and replay) to
 * decide. A segment whose highest sequence is unknown is kept.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"
#include "wal/reader.h"

void lsm_set_commit_hook(lsm_tree *t, lsm_commit_fn fn, void *arg)
{
    kmutex_lock(&t->mu);
    t->hook_arg = arg;
    __atomic_store_n(&t->hook, fn, __ATOMIC_RELEASE);
    kmutex_unlock(&t->mu);
}

void lsm_keep_tombstones(lsm_tree *t, bool keep)
{
    __atomic_store_n(&t->keep_tombstones, keep, __ATOMIC_RELEASE);
}

/* ---- Retention ---------------------------------------------------------------------------- */

void lsm_note_wal_seg(lsm_tree *t, uint64_t number, uint64_t max_seq, uint64_t min_txn)
{
    uint64_t now = lsm_now_ms(t->sh);
    kmutex_lock(&t->wal_mu);
    size_t i = 0;
    while (i < t->nwal_segs && t->wal_segs[i].number != number)
        i++;
    if (i == t->nwal_segs) {
        if (t->nwal_segs == t->wal_segs_cap) {
            size_t cap = t->wal_segs_cap ? 2 * t->wal_segs_cap : 8;
            lsm_wal_seg *v = realloc(t->wal_segs, cap * sizeof *v);
            if (!v) { /* unknown: the segment is kept, which is safe */
                t->wal_segs_lost = true;
                kmutex_unlock(&t->wal_mu);
                return;
            }
            t->wal_segs = v;
            t->wal_segs_cap = cap;
        }
        t->nwal_segs++;
        t->wal_segs[i].closed_ms = now;
    }
    t->wal_segs[i].number = number;
    t->wal_segs[i].max_seq = max_seq;
    t->wal_segs[i].min_txn = min_txn;
    kmutex_unlock(&t->wal_mu);
}

bool lsm_wal_seg_unneeded(lsm_tree *t, uint64_t number)
{
    uint64_t retain = __atomic_load_n(&t->wal_retain_seq, __ATOMIC_ACQUIRE);
    uint64_t age = __atomic_load_n(&t->wal_retain_ms, __ATOMIC_ACQUIRE);
    uint64_t now = age ? lsm_now_ms(t->sh) : 0;
    /* unknown to the tree: deleted only if nothing keeps segments */
    bool unneeded = retain == UINT64_MAX && age == 0;
    kmutex_lock(&t->wal_mu);
    for (size_t i = 0; i < t->nwal_segs; i++) {
        lsm_wal_seg *g = &t->wal_segs[i];
        if (g->number != number)
            continue;
        bool by_seq = retain == UINT64_MAX || g->max_seq <= retain;
        bool by_age = age == 0 || now >= g->closed_ms + age;
        unneeded = by_seq && by_age;
        if (unneeded) /* the caller deletes it */
            *g = t->wal_segs[--t->nwal_segs];
        break;
    }
    kmutex_unlock(&t->wal_mu);
    return unneeded;
}

void lsm_set_wal_retain(lsm_tree *t, uint64_t seq)
{
    __atomic_store_n(&t->wal_retain_seq, seq, __ATOMIC_RELEASE);
    kmutex_lock(&t->mu);
    lsm_delete_obsolete(t, false);
    kmutex_unlock(&t->mu);
}

/* Reads one segment, calling fn for the records past from_seq. */
static kura_status replay_seg(lsm_tree *t, uint64_t number, uint64_t from_seq, lsm_rep_fn fn,
                              void *arg)
{
    char path[4096], what[4200];
    snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)number);
    wal_reader *r = NULL;
    kura_status s = wal_reader_open(t->sh->io, path, IO_KIND_WAL, &r);
    if (s != KURA_OK)
        return s == KURA_E_NOT_FOUND ? KURA_OK : s; /* deleted meanwhile: not needed */
    int64_t recorded = vs_wal_end(&t->vs, number);
    const uint8_t *rec, *res;
    size_t len;
    uint64_t seg_max = 0, min_txn = UINT64_MAX, id = 0;
    kbuf scratch = KBUF_INIT;
    while ((recorded < 0 || wal_reader_end_offset(r) < (uint64_t)recorded) &&
           (s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        snprintf(what, sizeof what, "%s: record at offset %llu", path,
                 (unsigned long long)wal_reader_record_offset(r));
        if (len < BATCH_HEADER) {
            s = kura_err(KURA_E_CORRUPTION, "%s: batch of %zu bytes is too short", what, len);
            break;
        }
        /* a piece's sequences come from its commit record */
        bool apply = true;
        if ((s = lsm_rep_resolve(t, rec, len, what, &scratch, &apply, &res, &id)) != KURA_OK)
            break;
        if (id && id < min_txn)
            min_txn = id;
        uint32_t n = lsm_rep_count(res);
        uint64_t last = lsm_rep_seq(res) + (n ? n - 1 : 0);
        if (apply && last > seg_max)
            seg_max = last;
        if (n > 0 && last > from_seq && apply && (s = fn(arg, res, len)) != KURA_OK)
            break;
    }
    kbuf_free(&scratch);
    wal_reader_close(r);
    if (s == KURA_E_NOT_FOUND)
        s = KURA_OK; /* the end, or a torn tail: lsm_recover.c judged the newest segment */
    if (s == KURA_OK)
        lsm_note_wal_seg(t, number, seg_max, min_txn);
    return s;
}

kura_status lsm_wal_replay(lsm_tree *t, uint64_t from_seq, lsm_rep_fn fn, void *arg)
{
    kmutex_lock(&t->wal_mu);
    uint64_t current = t->wal ? t->wal_number : 0;
    kmutex_unlock(&t->wal_mu);
    uint64_t *nums = NULL;
    size_t nn = 0;
    kura_status s = lsm_list_wals(t, 0, current, &nums, &nn);
    for (size_t i = 0; i < nn && s == KURA_OK; i++)
        s = replay_seg(t, nums[i], from_seq, fn, arg);
    free(nums);
    return s;
}

/* ---- Trees without a WAL ------------------------------------------------------------------ */

static kura_status apply_one(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                             size_t klen, const uint8_t *val, size_t vlen)
{
    return lsm_insert_entry(arg, seq, type, key, klen, val, vlen);
}

static kura_status readonly_error(lsm_tree *t)
{
    return kura_err(KURA_E_READONLY, "%s is read-only after an error: %s", t->dir, t->bg_msg);
}

kura_status lsm_apply(lsm_tree *t, const uint8_t *rep, size_t len)
{
    kmutex_lock(&t->apply_mu);
    kura_status s = KURA_OK;
    if (__atomic_load_n(&t->bg_error, __ATOMIC_ACQUIRE) != KURA_OK) {
        kmutex_lock(&t->mu);
        s = readonly_error(t);
        kmutex_unlock(&t->mu);
    } else {
        /* only the holder of apply_mu inserts into or switches `mem` */
        s = lsm_rep_iterate(rep, len, apply_one, t->mem, t->dir);
    }
    kmutex_unlock(&t->apply_mu);
    return s;
}

bool lsm_mem_full(lsm_tree *t)
{
    return mt_usage(t->mem) >= t->opts.write_buffer_bytes;
}

/* Waits for the running flush (mu held); KURA_OK, or the error that stopped the tree. */
static kura_status wait_imm(lsm_tree *t)
{
    while (t->imm && t->bg_error == KURA_OK)
        kcond_wait(&t->bg_cv, &t->mu);
    return t->bg_error == KURA_OK ? KURA_OK : readonly_error(t);
}

/* Switches mem (apply_mu and mu held) carrying `meta` (or none). */
static kura_status switch_mem(lsm_tree *t, const uint8_t *meta, size_t mlen, bool has_meta)
{
    kura_status s = wait_imm(t);
    if (s != KURA_OK)
        return s;
    if (mt_entries(t->mem) == 0) {
        if (!has_meta)
            return KURA_OK;
        version_edit e;
        edit_init(&e);
        s = edit_set_user_meta(&e, meta, mlen);
        if (s == KURA_OK && (s = lsm_log_and_apply(t, &e)) != KURA_OK)
            lsm_set_error(t, s);
        edit_free(&e);
        return s;
    }
    memtable *m = mt_new_sized(t->opts.write_buffer_bytes);
    if (!m)
        return kura_err(KURA_E_NOMEM, "%s: out of memory for a memtable", t->dir);
    t->imm_meta.len = 0;
    if (has_meta && !kbuf_append(&t->imm_meta, meta, mlen)) {
        mt_unref(m);
        return kura_err(KURA_E_NOMEM, "%s: out of memory", t->dir);
    }
    t->has_imm_meta = has_meta;
    t->imm = t->mem;
    t->mem = m;
    lsm_maybe_schedule(t);
    return KURA_OK;
}

kura_status lsm_switch_memtable(lsm_tree *t, const uint8_t *meta, size_t mlen)
{
    kmutex_lock(&t->apply_mu);
    kmutex_lock(&t->mu);
    kura_status s = switch_mem(t, meta, mlen, true);
    kmutex_unlock(&t->mu);
    kmutex_unlock(&t->apply_mu);
    return s;
}

kura_status lsm_wait_flushed(lsm_tree *t)
{
    kmutex_lock(&t->mu);
    kura_status s = wait_imm(t);
    kmutex_unlock(&t->mu);
    return s;
}

kura_status lsm_flush_no_wal(lsm_tree *t)
{
    kmutex_lock(&t->apply_mu);
    kmutex_lock(&t->mu);
    kura_status s = switch_mem(t, NULL, 0, false);
    if (s == KURA_OK)
        s = wait_imm(t);
    kmutex_unlock(&t->mu);
    kmutex_unlock(&t->apply_mu);
    return s;
}

kura_status lsm_user_meta(lsm_tree *t, kbuf *out)
{
    kmutex_lock(&t->mu);
    out->len = 0;
    bool ok = kbuf_append(out, t->vs.user_meta.data, t->vs.user_meta.len);
    kmutex_unlock(&t->mu);
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "%s: out of memory", t->dir);
}
