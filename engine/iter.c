/*
 * iter.c - kura_iter: one user-key iterator over every partition of a tree at one snapshot.
 *
 * All partitions' internal iterators (memtables and tables) feed one merging iterator, and one
 * db_iter on top resolves versions and tombstones at the snapshot. Keys of different
 * partitions never collide, so the merge yields the whole tree in key order.
 */
#include "engine/db_int.h"

#include <stdlib.h>

#include "engine/lsm/db_iter.h"
#include "engine/lsm/merge_iter.h"
#include "util/status.h"

struct kura_iter {
    kv_iter *it;
    kura_db *db;
    uint64_t snap_seq;
    bool own_snapshot;
    void **pins;
    uint32_t npins;
};

static void release_pins(void *arg)
{
    kura_iter *ki = arg;
    for (uint32_t i = 0; i < ki->npins; i++)
        lsm_unpin(ki->pins[i]);
    free(ki->pins);
    ki->pins = NULL;
    ki->npins = 0;
    if (ki->own_snapshot)
        lsm_snapshot_release(&ki->db->sh, ki->snap_seq);
    ki->own_snapshot = false;
}

kura_status kura_iter_new(kura_tree *t, const kura_read_options *ro, kura_iter **it_out)
{
    return tree_iter_new(t, ro, 0, t->nparts - 1, it_out);
}

kura_status tree_iter_new(kura_tree *t, const kura_read_options *ro, uint32_t part_lo,
                          uint32_t part_hi, kura_iter **it_out)
{
    if (part_lo > part_hi || part_hi >= t->nparts)
        return kura_err(KURA_E_INVALID, "iterator: partitions %u..%u of %u", part_lo, part_hi,
                        t->nparts);
    kura_iter *ki = calloc(1, sizeof *ki);
    kv_iter **its = NULL;
    size_t n = 0, cap = 0;
    kura_status s = KURA_OK;
    if (!ki || !(ki->pins = calloc(t->nparts, sizeof *ki->pins))) {
        free(ki);
        return kura_err(KURA_E_NOMEM, "iterator: out of memory");
    }
    ki->db = t->db;
    bool fill = ro ? ro->fill_cache : true;
    for (uint32_t p = part_lo; p <= part_hi && s == KURA_OK; p++) {
        s = lsm_pin_iters(t->parts[p], fill, &its, &n, &cap, &ki->pins[ki->npins]);
        ki->npins++;
    }
    /* the sequence is read after pinning (see engine/lsm/shared.h) and registered, so that
     * compactions keep every version this iterator may still reach */
    if (s == KURA_OK && ro && ro->snapshot) {
        ki->snap_seq = ro->snapshot->seq;
    } else if (s == KURA_OK) {
        s = lsm_snapshot_acquire(&t->db->sh, &ki->snap_seq);
        ki->own_snapshot = s == KURA_OK;
    }
    if (s != KURA_OK) {
        for (size_t i = 0; i < n; i++)
            kv_iter_free(its[i]);
        free(its);
        release_pins(ki);
        free(ki);
        return s;
    }
    kv_iter *m = merge_iter_new(its, n); /* owns the children, even on failure */
    free(its);
    ki->it = m ? db_iter_new(m, ki->snap_seq, release_pins, ki) : NULL;
    if (!ki->it) {
        if (!m)
            release_pins(ki);
        /* db_iter_new owns m and runs the cleanup on failure */
        free(ki);
        return kura_err(KURA_E_NOMEM, "iterator: out of memory");
    }
    *it_out = ki;
    return KURA_OK;
}

void kura_iter_free(kura_iter *ki)
{
    if (!ki)
        return;
    kv_iter_free(ki->it); /* runs release_pins */
    free(ki);
}

void kura_iter_seek_first(kura_iter *ki)
{
    kv_iter_seek_first(ki->it);
}

void kura_iter_seek_last(kura_iter *ki)
{
    kv_iter_seek_last(ki->it);
}

void kura_iter_seek(kura_iter *ki, const void *key, size_t klen)
{
    kv_iter_seek(ki->it, key, klen);
}

bool kura_iter_valid(const kura_iter *ki)
{
    return kv_iter_valid(ki->it);
}

void kura_iter_next(kura_iter *ki)
{
    kv_iter_next(ki->it);
}

void kura_iter_prev(kura_iter *ki)
{
    kv_iter_prev(ki->it);
}

const void *kura_iter_key(const kura_iter *ki, size_t *klen_out)
{
    return kv_iter_key(ki->it, klen_out);
}

const void *kura_iter_value(const kura_iter *ki, size_t *vlen_out)
{
    return kv_iter_value(ki->it, vlen_out);
}

kura_status kura_iter_status(const kura_iter *ki)
{
    return kv_iter_status(ki->it);
}
