/*
 * lsm_txn.c - a partition's side of a transaction (lsm.h, "Transactions"): taking its write
 * leadership, appending a piece to its WAL, syncing and applying it after the lead, ordering
 * the commit hook, and deciding at replay whether a piece found in a WAL belongs to a
 * committed transaction and at which sequences.
 *
 * Leading. A transaction joins the partition's commit queue like any writer, with an empty
 * batch, until it is the queue's leader; it then takes a group of one (itself) and keeps the
 * lead until lsm_txn_release, only while it appends its piece. Another leader may take the
 * empty batch into its own group (writing a harmless empty record); the transaction then
 * queues again, as lsm_flush does.
 *
 * In flight. From its append to its apply (or its end, if the transaction fails) a piece is
 * counted in txn_inflight, which holds back memtable switches: its WAL record and its entries
 * land in the same segment and memtable, and its segment stays open for its sync.
 *
 * The hook's order. On a partition with a commit hook (a table with indexes) every write
 * takes a slot when it allocates its sequences (lsm_hook_alloc for a group, lsm_txn_alloc for
 * the pieces of a transaction, under every participant's hook_mu, so each queue is sorted)
 * and calls the hook when its slot is at the head (lsm_hook_turn): the index layer's applied
 * vectors and checkpoints rely on sequence order. A group allocated after a transaction's
 * range waits for that transaction's commit record.
 *
 * Replay. A piece's sequences are relative to its transaction's range; lsm_rep_resolve asks
 * the transaction log whether it committed and where its range starts.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

static size_t batch_bytes(void *payload)
{
    return ((lsm_batch *)payload)->rep.len;
}

kura_status lsm_txn_lead(lsm_tree *t, lsm_txn_hold *h)
{
    if (t->opts.no_wal)
        return kura_err(KURA_E_INVALID, "%s: an index tree is written by its index only", t->dir);
    lsm_batch_init(&h->empty);
    for (;;) {
        h->w = (wal_cq_waiter){.payload = &h->empty, .sync = false};
        if (wal_cq_join(t->cq, &h->w))
            break;
        if (h->w.status != KURA_OK) {
            lsm_batch_free(&h->empty);
            return h->w.status;
        }
    }
    wal_cq_group(t->cq, &h->w, h->group, 1, SIZE_MAX, batch_bytes);
    kmutex_lock(&t->mu);
    kura_status s = lsm_make_room(t);
    kmutex_unlock(&t->mu);
    if (s != KURA_OK)
        lsm_txn_release(t, h, s);
    return s;
}

kura_status lsm_txn_try_lead(lsm_tree *t, lsm_txn_hold *h)
{
    if (t->opts.no_wal)
        return kura_err(KURA_E_INVALID, "%s: an index tree is written by its index only", t->dir);
    lsm_batch_init(&h->empty);
    h->w = (wal_cq_waiter){.payload = &h->empty, .sync = false};
    if (!wal_cq_try_join(t->cq, &h->w)) {
        lsm_batch_free(&h->empty);
        return KURA_E_BUSY;
    }
    wal_cq_group(t->cq, &h->w, h->group, 1, SIZE_MAX, batch_bytes);
    kmutex_lock(&t->mu);
    kura_status s = lsm_make_room(t);
    kmutex_unlock(&t->mu);
    if (s != KURA_OK)
        lsm_txn_release(t, h, s);
    return s;
}

void lsm_txn_release(lsm_tree *t, lsm_txn_hold *h, kura_status s)
{
    wal_cq_finish(t->cq, h->group, 1, s);
    lsm_batch_free(&h->empty);
}

static kura_status fail(lsm_tree *t, kura_status s)
{
    kmutex_lock(&t->mu);
    lsm_set_error(t, s); /* the WAL may end in a torn record: stop writing to it */
    kmutex_unlock(&t->mu);
    return s;
}

/* ---- The commit hook's order ---------------------------------------------------------------- */

/* hook_mu held: queues the slot of sequence `seq`, the highest so far (allocated under it). */
static void hook_queue(lsm_tree *t, lsm_hook_slot *slot, uint64_t seq)
{
    *slot = (lsm_hook_slot){.prev = t->hook_tail, .seq = seq, .queued = true};
    if (t->hook_tail)
        t->hook_tail->next = slot;
    else
        t->hook_head = slot;
    t->hook_tail = slot;
}

uint64_t lsm_hook_alloc(lsm_tree *t, uint64_t n, lsm_hook_slot *slot)
{
    kmutex_lock(&t->hook_mu);
    uint64_t first = lsm_seq_alloc(t->sh, n);
    hook_queue(t, slot, first);
    kmutex_unlock(&t->hook_mu);
    return first;
}

void lsm_hook_turn(lsm_tree *t, const lsm_hook_slot *slot)
{
    kmutex_lock(&t->hook_mu);
    while (t->hook_head != slot) /* every slot before it is an earlier write */
        kcond_wait(&t->hook_cv, &t->hook_mu);
    kmutex_unlock(&t->hook_mu);
}

void lsm_hook_done(lsm_tree *t, lsm_hook_slot *slot)
{
    if (!slot->queued)
        return;
    kmutex_lock(&t->hook_mu);
    if (slot->prev)
        slot->prev->next = slot->next;
    else
        t->hook_head = slot->next;
    if (slot->next)
        slot->next->prev = slot->prev;
    else
        t->hook_tail = slot->prev;
    slot->queued = false;
    kcond_broadcast(&t->hook_cv);
    kmutex_unlock(&t->hook_mu);
}

/* ---- Pieces ---------------------------------------------------------------------------------- */

kura_status lsm_txn_append(lsm_tree *t, const uint8_t *rep, size_t len, uint64_t *end_out)
{
    if (__atomic_load_n(&t->bg_error, __ATOMIC_ACQUIRE) != KURA_OK) {
        kmutex_lock(&t->mu);
        kura_status s = kura_err(KURA_E_READONLY, "%s is read-only after an error: %s", t->dir,
                                 t->bg_msg);
        kmutex_unlock(&t->mu);
        return s;
    }
    const void *recs[1] = {rep};
    size_t lens[1] = {len};
    kura_status s = wal_writer_addv(t->wal, recs, lens, 1);
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "txn.after_prepare");
    if (s != KURA_OK)
        return fail(t, s);
    kmutex_lock(&t->mu);
    t->txn_inflight++;
    kmutex_unlock(&t->mu);
    *end_out = wal_writer_size(t->wal);
    uint64_t id;
    if (lsm_rep_txn_id(rep, len, &id)) {
        kmutex_lock(&t->wal_mu); /* lsm_min_txn reads it */
        if (id < t->wal_min_txn)
            t->wal_min_txn = id;
        kmutex_unlock(&t->wal_mu);
    }
    return KURA_OK;
}

kura_status lsm_txn_sync(lsm_tree *t, uint64_t end)
{
    /* no switch while the piece is in flight: t->wal is the segment it was appended to */
    kura_status s = wal_writer_sync_to(t->wal, end);
    return s == KURA_OK ? KURA_OK : fail(t, s);
}

uint64_t lsm_txn_alloc(lsm_shared *sh, lsm_tree *const *parts, const uint64_t *offs,
                       lsm_hook_slot *slots, size_t n, uint64_t total)
{
    /* under every participant's hook_mu, so that each queue stays in sequence order */
    for (size_t i = 0; i < n; i++)
        kmutex_lock(&parts[i]->hook_mu);
    uint64_t first = lsm_seq_alloc(sh, total);
    for (size_t i = 0; i < n; i++) {
        slots[i] = (lsm_hook_slot){0};
        if (__atomic_load_n(&parts[i]->hook, __ATOMIC_ACQUIRE))
            hook_queue(parts[i], &slots[i], first + offs[i]);
    }
    for (size_t i = n; i-- > 0;)
        kmutex_unlock(&parts[i]->hook_mu);
    return first;
}

void lsm_txn_end(lsm_tree *t, lsm_hook_slot *slot)
{
    lsm_hook_done(t, slot);
    kmutex_lock(&t->mu);
    t->txn_inflight--;
    kcond_broadcast(&t->bg_cv); /* a memtable switch may wait for it */
    kmutex_unlock(&t->mu);
}

kura_status lsm_txn_apply(lsm_tree *t, const uint8_t *rep, size_t len, lsm_hook_slot *slot)
{
    uint32_t n = lsm_rep_count(rep);
    uint64_t last = lsm_rep_seq(rep) + (n ? n - 1 : 0);
    kmutex_lock(&t->apply_mu);
    kura_status s = lsm_rep_iterate(rep, len, lsm_insert_entry, t->mem, t->dir);
    if (last > t->wal_last_seq) /* the segment's highest, for WAL retention */
        t->wal_last_seq = last;
    kmutex_unlock(&t->apply_mu);
    lsm_commit_fn hook = __atomic_load_n(&t->hook, __ATOMIC_ACQUIRE);
    if (s == KURA_OK && hook) {
        if (slot->queued)
            lsm_hook_turn(t, slot);
        s = hook(t->hook_arg, t, rep, len);
    }
    lsm_txn_end(t, slot);
    return s == KURA_OK ? KURA_OK : fail(t, s);
}

kura_status lsm_rep_resolve(lsm_tree *t, const uint8_t *rep, size_t len, const char *what,
                            kbuf *scratch, bool *apply_out, const uint8_t **rep_out,
                            uint64_t *id_out)
{
    uint64_t id = 0, base = 0;
    *apply_out = true;
    *rep_out = rep;
    *id_out = 0;
    if (!lsm_rep_txn_id(rep, len, &id))
        return KURA_OK;
    *id_out = id;
    lsm_shared *sh = t->sh;
    if (!sh->txn_committed)
        return kura_err(KURA_E_CORRUPTION, "%s: a transaction's piece (id %llu), but the database "
                                           "has no transaction log",
                        what, (unsigned long long)id);
    kura_status s = sh->txn_committed(sh->txn_arg, id, apply_out, &base);
    if (s != KURA_OK || !*apply_out || base == 0)
        return s; /* (base 0: a piece of the first format, its sequences its own) */
    scratch->len = 0;
    if (!kbuf_append(scratch, rep, len))
        return kura_err(KURA_E_NOMEM, "%s: out of memory", what);
    lsm_rep_set_seq(scratch->data, base + lsm_rep_seq(rep));
    *rep_out = scratch->data;
    return KURA_OK;
}

uint64_t lsm_min_txn(lsm_tree *t)
{
    kmutex_lock(&t->wal_mu);
    uint64_t min = t->wal_segs_lost ? 0 : t->wal_min_txn;
    for (size_t i = 0; i < t->nwal_segs; i++)
        if (t->wal_segs[i].min_txn < min)
            min = t->wal_segs[i].min_txn;
    kmutex_unlock(&t->wal_mu);
    return min;
}
