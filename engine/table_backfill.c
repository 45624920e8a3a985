/*
 * table_backfill.c - This file contains the backfill of an index: every item of the table, read
 * at a snapshot, turned into its entry of the index (UpdateTable's Create, engine/
 * table_index.c; a rebuild, engine/table_rebuild.c).
 *
 * The caller has made the index receive every base batch allocated after the sequence s0
 * (idx_rt_add, idx_rt_shadow_begin); the backfill waits until s0 is visible, so that the
 * snapshot it reads holds every batch up to s0, and hands each entry to the caller, which
 * inserts it at sequence s0: below every change the runtime applies to the index, whatever
 * the order in which the two reach it.
 */
#include "engine/table_index.h"

#include "util/status.h"

kura_status table_backfill(kura_table *t, const idx_def *d, uint64_t s0, table_backfill_put_fn put,
                           table_backfill_stop_fn stop, void *arg)
{
    kura_db *db = t->tree->db;
    lsm_seq_wait(&db->sh, s0); /* every batch up to s0 is in the snapshot */
    const kura_snapshot *snap = kura_snapshot_new(db);
    if (!snap)
        return kura_err(KURA_E_NOMEM, "backfill: out of memory");
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.snapshot = snap;
    ro.fill_cache = false;
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(t->tree, &ro, &it);
    kbuf k = KBUF_INIT, v = KBUF_INIT;
    uint64_t n = 0;
    for (kura_iter_seek_first(it); s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        if ((++n & 1023) == 0 && stop(arg))
            s = kura_err(KURA_E_CLOSED, "backfill of index %s stopped", d->name);
        size_t vlen;
        const void *val = s == KURA_OK ? kura_iter_value(it, &vlen) : NULL;
        kura_value item = {0};
        if (s == KURA_OK && (s = val_decode(val, vlen, &item)) == KURA_E_CORRUPTION)
            s = kura_err(s, "table %s: stored item: %s", t->name, kura_last_error());
        bool present = false;
        k.len = v.len = 0;
        if (s == KURA_OK && idx_indexable(d, &item)) /* else not in the index, as in DynamoDB */
            s = idx_entry_key(d, &t->ks, &item, &k, &present);
        if (s == KURA_OK && present)
            s = idx_entry_value(d, &t->ks, &item, &v);
        val_clear(&item);
        if (s == KURA_OK && present)
            s = put(arg, k.data, k.len, v.data, v.len);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    kura_snapshot_free(db, snap);
    kbuf_free(&k);
    kbuf_free(&v);
    return s;
}
