/*
 * apply.c - base batches turned into index entries, and the checkpoints of an index.
 *
 * This file contains rt_apply_batch: a base batch is a sequence of item changes, each a write
 * entry (put or delete under the item's storage key) followed by the item's old image
 * (engine/lsm/batch.h). Each change is decoded once, turned into deletes and puts per index by
 * idx_changes() (index/changes.c), and every one is inserted into the index partition its
 * entry key's hash routes it to, at the sequence number of the base write. And rt_maybe_
 * checkpoint / rt_release_wals: the checkpoint of an index is the vector of base sequences it
 * has applied; it is recorded in every partition's manifest with the flush of the memtables
 * that hold those entries, and the base WAL segments below the smallest durable checkpoint
 * of every index are released.
 *
 * An index being rebuilt has a shadow (shadow.c): every change applied to the index after the
 * shadow's s0 is applied to the shadow too, in the same step under the same lock, so the two
 * never differ by a batch when the shadow is swapped in.
 */
#include "index/runtime_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/coding.h"
#include "util/hash.h"
#include "util/ikey.h"
#include "util/status.h"

/* ---- Decoding a base batch into changes --------------------------------------------------- */

typedef struct rt_change {
    uint64_t seq;
    const uint8_t *key;
    size_t klen;
    const uint8_t *new_enc; /* NULL: deleted */
    size_t new_len;
    const uint8_t *old_enc; /* NULL: there was none */
    size_t old_len;
} rt_change;

typedef struct apply_ctx {
    idx_runtime *rt;
    uint32_t b;
    int kind;
    rt_change pending;
    bool has_pending;
    lsm_batch scratch;
    uint64_t seq; /* of the change being applied */
    rt_index *x;
    bool charge;  /* report the entries to rt->charge (not in recovery, not to a shadow) */
} apply_ctx;

/* One index change into the partition of its entry key, at the base write's sequence. */
static kura_status put_entry(void *arg, idx_change_kind kind, const uint8_t *key, size_t klen,
                             const uint8_t *value, size_t vlen)
{
    apply_ctx *c = arg;
    rt_index *x = c->x;
    lsm_batch_clear(&c->scratch);
    kura_status s = kind == IDX_CHANGE_PUT ? lsm_batch_put(&c->scratch, key, klen, value, vlen)
                                           : lsm_batch_delete(&c->scratch, key, klen);
    if (s != KURA_OK)
        return s;
    lsm_rep_set_seq(c->scratch.rep.data, c->seq);
    uint32_t part = x->nparts == 1 ? 0 : kura_hash_bucket(dec_fixed64_be(key), x->nparts);
    s = lsm_apply(x->parts[part], c->scratch.rep.data, c->scratch.rep.len);
    /* the capacity accounting: a delete is 1 unit, a put its projection's 1 KB units (by
     * the entry's encoded size, which stands for DynamoDB's item size here) */
    if (s == KURA_OK && c->charge)
        c->rt->charge(c->rt->charge_arg, x->def, key, klen,
                      kind == IDX_CHANGE_PUT && vlen > 1024 ? (double)((vlen + 1023) / 1024) : 1);
    if (s == KURA_OK && lsm_mem_full(x->parts[part]))
        __atomic_store_n(&x->full, true, __ATOMIC_RELAXED);
    return s;
}

static bool wants(const apply_ctx *c, const rt_index *x)
{
    if (x->removed)
        return false;
    if (x->building && c->pending.seq <= x->s0)
        return false; /* in the backfill's snapshot */
    if (c->kind != RT_REPLAY)
        return (int)x->def->kind == c->kind;
    /* The replay compares each change with the durable checkpoint, never with what it has
     * applied itself: a WAL holds a transaction's piece before records of lower sequences
     * (the piece is appended before its range is allocated). */
    return x->replay_from && x->replay_from[c->b] < c->pending.seq;
}

/* Whether the change goes to x's shadow too: x has it (a hook or the applier, never the replay
 * at open, which runs before any rebuild) and the change is not in the shadow's snapshot. */
static rt_index *wants_shadow(const apply_ctx *c, const rt_index *x)
{
    rt_index *sh = c->kind != RT_REPLAY ? rt_shadow_of(x) : NULL;
    return sh && !(sh->building && c->pending.seq <= sh->s0) ? sh : NULL;
}

/* Applies one change to every index it concerns. */
static kura_status apply_change(apply_ctx *c)
{
    idx_runtime *rt = c->rt;
    const rt_change *ch = &c->pending;
    kura_value old = {0}, neu = {0};
    kura_status s = KURA_OK;
    if (ch->old_enc && (s = val_decode(ch->old_enc, ch->old_len, &old)) != KURA_OK)
        return kura_err(s, "index of table %s: the old image at sequence %llu: %s",
                        rt->table_name, (unsigned long long)ch->seq, kura_last_error());
    if (ch->new_enc && (s = val_decode(ch->new_enc, ch->new_len, &neu)) != KURA_OK) {
        val_clear(&old);
        return kura_err(s, "index of table %s: the item at sequence %llu: %s", rt->table_name,
                        (unsigned long long)ch->seq, kura_last_error());
    }
    c->seq = ch->seq;
    for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++) {
        rt_index *x = &rt->ix[i];
        if (!wants(c, x))
            continue;
        rt_index *sh = wants_shadow(c, x);
        for (rt_index *to = x; to && s == KURA_OK; to = to == x ? sh : NULL) {
            c->x = to;
            c->charge = to == x && c->kind != RT_REPLAY && rt->charge;
            s = idx_changes(x->def, &rt->ks, idx_indexed_before(x->def, ch->old_enc ? &old : NULL),
                            idx_indexable(x->def, ch->new_enc ? &neu : NULL), put_entry, c,
                            NULL);
        }
    }
    val_clear(&old);
    val_clear(&neu);
    return s;
}

static kura_status flush_pending(apply_ctx *c)
{
    if (!c->has_pending)
        return KURA_OK;
    c->has_pending = false;
    return apply_change(c);
}

static kura_status batch_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                               size_t klen, const uint8_t *val, size_t vlen)
{
    apply_ctx *c = arg;
    if (type == LSM_BATCH_TXN || type == LSM_BATCH_META)
        return KURA_OK; /* a transaction's marker, the writes' time: the writes follow */
    if (type == LSM_BATCH_IMAGE) {
        if (!c->has_pending || c->pending.klen != klen || memcmp(c->pending.key, key, klen))
            return kura_err(KURA_E_CORRUPTION, "index of table %s: an image at sequence %llu "
                                               "follows no write of its item",
                            c->rt->table_name, (unsigned long long)seq);
        c->pending.old_enc = vlen ? val : NULL;
        c->pending.old_len = vlen;
        return flush_pending(c);
    }
    /* a write without an image (none is written today) counts as an insert */
    kura_status s = flush_pending(c);
    if (s != KURA_OK)
        return s;
    c->pending = (rt_change){.seq = seq, .key = key, .klen = klen,
                             .new_enc = type == IKEY_TYPE_VALUE ? val : NULL,
                             .new_len = type == IKEY_TYPE_VALUE ? vlen : 0};
    c->has_pending = true;
    return KURA_OK;
}

kura_status rt_apply_batch(idx_runtime *rt, uint32_t b, const uint8_t *rep, size_t len, int kind)
{
    apply_ctx c = {.rt = rt, .b = b, .kind = kind};
    lsm_batch_init(&c.scratch);
    pthread_rwlock_rdlock(&rt->lock);
    kura_status s = lsm_rep_iterate(rep, len, batch_entry, &c, rt->table_name);
    if (s == KURA_OK)
        s = flush_pending(&c);
    uint32_t n = lsm_rep_count(rep);
    uint64_t last = lsm_rep_seq(rep) + (n ? n - 1 : 0);
    for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++) {
        rt_index *x = &rt->ix[i];
        bool mine = x->removed ? false
                    : kind != RT_REPLAY ? (int)x->def->kind == kind
                                        : x->replay_from && x->replay_from[b] < last;
        rt_index *sh = mine && kind != RT_REPLAY ? rt_shadow_of(x) : NULL;
        for (rt_index *to = mine ? x : NULL; to; to = to == x ? sh : NULL) {
            if (to->building && last <= to->s0)
                continue;
            /* live, batches come in sequence order (the commit hook's slots); replayed, in
             * WAL order, which is not: applied[b] only grows */
            if (__atomic_load_n(&to->applied[b], __ATOMIC_ACQUIRE) < last)
                __atomic_store_n(&to->applied[b], last, __ATOMIC_RELEASE);
            __atomic_add_fetch(&to->since_switch, len, __ATOMIC_RELAXED);
        }
    }
    pthread_rwlock_unlock(&rt->lock);
    lsm_batch_free(&c.scratch);
    return s;
}

/* ---- Checkpoints -------------------------------------------------------------------------- */

/* meta = varint nbase, then nbase fixed64 sequences */
static kura_status encode_meta(idx_runtime *rt, const rt_index *x, kbuf *out)
{
    out->len = 0;
    bool ok = kbuf_put_varint(out, rt->nbase);
    for (uint32_t b = 0; ok && b < rt->nbase; b++) {
        uint8_t v[8];
        enc_fixed64(v, __atomic_load_n(&x->applied[b], __ATOMIC_ACQUIRE));
        ok = kbuf_append(out, v, 8);
    }
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "index checkpoint: out of memory");
}

kura_status rt_durable(idx_runtime *rt, const rt_index *x, uint64_t *out)
{
    kbuf m = KBUF_INIT;
    for (uint32_t b = 0; b < rt->nbase; b++)
        out[b] = UINT64_MAX;
    kura_status s = KURA_OK;
    for (uint32_t p = 0; p < x->nparts && s == KURA_OK; p++) {
        if ((s = lsm_user_meta(x->parts[p], &m)) != KURA_OK)
            break;
        uint64_t n = 0;
        const uint8_t *q = m.len ? dec_varint64(m.data, m.data + m.len, &n) : NULL;
        bool ok = q && n == rt->nbase && (size_t)(m.data + m.len - q) == 8 * n;
        for (uint32_t b = 0; b < rt->nbase; b++) {
            uint64_t v = ok ? dec_fixed64(q + 8 * b) : 0;
            if (v < out[b])
                out[b] = v;
        }
    }
    for (uint32_t b = 0; b < rt->nbase; b++)
        if (out[b] == UINT64_MAX)
            out[b] = 0;
    kbuf_free(&m);
    return s;
}

void rt_release_wals(idx_runtime *rt)
{
    uint64_t *min = malloc(rt->nbase * sizeof *min), *d = malloc(rt->nbase * sizeof *d);
    if (!min || !d) {
        free(min);
        free(d);
        return; /* retried at the next checkpoint; keeping segments is safe */
    }
    for (uint32_t b = 0; b < rt->nbase; b++)
        min[b] = UINT64_MAX;
    pthread_rwlock_rdlock(&rt->lock); /* the set of indexes */
    bool ok = true;
    for (uint32_t i = 0; i < rt->nix && ok; i++) {
        /* a built shadow counts: it is named by the definition once swapped in */
        rt_index *sh = rt_shadow_of(&rt->ix[i]);
        for (rt_index *x = &rt->ix[i]; x && ok; x = x == &rt->ix[i] ? sh : NULL) {
            if (x->building || x->removed)
                continue; /* rebuilt from scratch after a restart / gone */
            ok = rt_durable(rt, x, d) == KURA_OK;
            for (uint32_t b = 0; ok && b < rt->nbase; b++)
                if (d[b] < min[b])
                    min[b] = d[b];
        }
    }
    pthread_rwlock_unlock(&rt->lock);
    if (!ok) {
        free(min);
        free(d);
        return;
    }
    for (uint32_t b = 0; b < rt->nbase; b++)
        lsm_set_wal_retain(rt->base[b], min[b] == UINT64_MAX ? 0 : min[b]);
    free(min);
    free(d);
}

/* Under the lock (x's partitions are only read there: a rebuild drops the trees it swapped
 * out once no lock holder can see them). */
static bool any_full(const rt_index *x)
{
    for (uint32_t p = 0; p < x->nparts; p++)
        if (lsm_mem_full(x->parts[p]))
            return true;
    return false;
}

kura_status rt_maybe_checkpoint(idx_runtime *rt, rt_index *x, bool force)
{
    if (!force && !__atomic_load_n(&x->full, __ATOMIC_RELAXED) &&
        __atomic_load_n(&x->since_switch, __ATOMIC_RELAXED) < rt->switch_bytes)
        return KURA_OK;
    pthread_rwlock_wrlock(&rt->lock);
    kura_status s = KURA_OK;
    /* someone else may have just done it; or the index was removed meanwhile (no more
     * checks of it: its trees may be dropped) */
    if (x->removed) {
        __atomic_store_n(&x->full, false, __ATOMIC_RELAXED);
        __atomic_store_n(&x->since_switch, 0, __ATOMIC_RELAXED);
    } else if (force || any_full(x) ||
        __atomic_load_n(&x->since_switch, __ATOMIC_RELAXED) >= rt->switch_bytes) {
        /* relaxed durability: what the memtables hold must not outlive the base writes it
         * comes from, so the base WALs are made durable first (no insert runs meanwhile) */
        for (uint32_t b = 0; b < rt->nbase && s == KURA_OK && !rt->sync; b++)
            s = lsm_sync_wal(rt->base[b]);
        kbuf meta = KBUF_INIT;
        if (s == KURA_OK)
            s = encode_meta(rt, x, &meta);
        for (uint32_t p = 0; p < x->nparts && s == KURA_OK; p++)
            s = lsm_switch_memtable(x->parts[p], meta.data, meta.len);
        kbuf_free(&meta);
        if (s == KURA_OK) {
            __atomic_store_n(&x->since_switch, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&x->full, false, __ATOMIC_RELAXED);
            __atomic_add_fetch(&x->checkpoints, 1, __ATOMIC_RELAXED);
        }
    } else { /* a hint set after the switch that emptied them: the next full insert sets it */
        __atomic_store_n(&x->full, false, __ATOMIC_RELAXED);
    }
    pthread_rwlock_unlock(&rt->lock);
    /* the previous checkpoint's flushes have finished (a switch waits for them) */
    if (s == KURA_OK)
        rt_release_wals(rt);
    return s;
}

kura_status rt_checkpoint_kind(idx_runtime *rt, idx_kind kind)
{
    kura_status s = KURA_OK;
    uint32_t n = __atomic_load_n(&rt->nix, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && s == KURA_OK; i++) {
        rt_index *x = &rt->ix[i];
        if (x->def->kind != kind || __atomic_load_n(&x->removed, __ATOMIC_RELAXED))
            continue;
        s = rt_maybe_checkpoint(rt, x, false);
        rt_index *sh = __atomic_load_n(&x->shadow, __ATOMIC_ACQUIRE);
        if (s == KURA_OK && sh) /* a detached one: checked under the lock, skipped there */
            s = rt_maybe_checkpoint(rt, sh, false);
    }
    return s;
}
