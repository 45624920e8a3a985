/*
 * changes.c - This file contains the turn of one base-item write (old image, new image) into
 * the deletes and puts of one index, and their cost in write units.
 *
 * The base key ends every entry key, so an item has at most one entry per index and the old
 * entry key names exactly the entry to delete. Deletes are reported before the put so that a
 * caller applying them in order to one tree never deletes what it has just put (the keys
 * differ whenever both happen, but the order costs nothing and keeps appliers simple).
 *
 * Write units follow DynamoDB's billing of index writes: a put costs ceil(projected size /
 * 1 KB), at least 1, a delete 1, and a write that leaves both the entry key and the projected
 * attributes as they were costs nothing. The arithmetic is engine/capacity.c's
 * capacity_write_units, repeated here because index/ does not link engine/.
 */
#include "index/index_int.h"

#include <string.h>

static double idx_write_units(size_t nbytes)
{
    uint64_t units = ((uint64_t)nbytes + 1023) / 1024;
    return units ? (double)units : 1.0;
}

kura_status idx_changes(const idx_def *d, const key_schema *table, const kura_value *old,
                        const kura_value *new_item, idx_change_fn fn, void *arg, double *units_out)
{
    kbuf old_key = KBUF_INIT, new_key = KBUF_INIT, value = KBUF_INIT;
    bool old_has = false, new_has = false;
    double units = 0;
    kura_status st = KURA_OK;

    if (old != NULL) st = idx_entry_key(d, table, old, &old_key, &old_has);
    if (st == KURA_OK && new_item != NULL)
        st = idx_entry_key(d, table, new_item, &new_key, &new_has);
    bool same_key = old_has && new_has && old_key.len == new_key.len &&
                    memcmp(old_key.data, new_key.data, old_key.len) == 0;

    if (st == KURA_OK && old_has && !same_key) {
        st = fn(arg, IDX_CHANGE_DELETE, old_key.data, old_key.len, NULL, 0);
        units += 1;
    }
    if (st == KURA_OK && new_has && !(same_key && idx_projection_equal(d, table, old, new_item))) {
        size_t nbytes = 0;
        st = idx_entry_value(d, table, new_item, &value);
        if (st == KURA_OK) st = idx_projected_size(d, table, new_item, &nbytes);
        if (st == KURA_OK)
            st = fn(arg, IDX_CHANGE_PUT, new_key.data, new_key.len, value.data, value.len);
        units += idx_write_units(nbytes);
    }
    kbuf_free(&old_key);
    kbuf_free(&new_key);
    kbuf_free(&value);
    if (st == KURA_OK && units_out != NULL) *units_out = units;
    return st;
}
