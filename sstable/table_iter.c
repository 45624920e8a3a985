/*
 * table_iter.c - the kv_iter over one SSTable: a position in the in-memory index plus a
 * cursor in the data block it names (LevelDB's two-level iterator, specialised).
 *
 * The iterator pins exactly one data block at a time (a cache handle, or memory it owns when
 * the block was read without filling the cache), so a block evicted from the cache meanwhile
 * stays valid until the iterator moves off it. Moving onto the block already pinned reuses it.
 * Empty blocks do not exist in well-formed tables, but are skipped anyway.
 *
 * Errors are sticky: after an I/O error or corruption the iterator is invalid for good and
 * status() reports the error; its message is kept so status() can restore it.
 */
#include <stdlib.h>
#include <string.h>

#include "sstable/table_internal.h"
#include "util/ikey.h"
#include "util/status.h"

typedef struct sst_iter {
    kv_iter base;
    sst_reader *r;
    bool fill_cache;
    size_t bi;         /* the pinned block's number (meaningless when none is pinned) */
    sst_block_ref blk; /* blk.block == NULL: nothing pinned */
    sst_block_iter cur;
    kura_status status;
    char *err_msg; /* kura_last_error() when status was set */
} sst_iter;

static void set_error(sst_iter *t, kura_status s)
{
    if (t->status == KURA_OK) {
        t->status = s;
        t->err_msg = strdup(kura_last_error());
    }
    sst_block_iter_clear(&t->cur);
    sst_block_ref_release(t->r, &t->blk);
}

static void unpin(sst_iter *t)
{
    sst_block_iter_clear(&t->cur);
    sst_block_ref_release(t->r, &t->blk);
}

/* Pins block bi and attaches the cursor to it (unpositioned). false on error. */
static bool load_block(sst_iter *t, size_t bi)
{
    if (t->blk.block && t->bi == bi) {
        sst_block_iter_set(&t->cur, t->blk.block);
        return true;
    }
    unpin(t);
    kura_status s = sst_reader_block(t->r, bi, t->fill_cache, &t->blk);
    if (s != KURA_OK) {
        set_error(t, s);
        return false;
    }
    t->bi = bi;
    sst_block_iter_set(&t->cur, t->blk.block);
    return true;
}

/* After a cursor move: a cursor error becomes the iterator's; an exhausted cursor moves on to
 * the following blocks' first entries. */
static void skip_forward(sst_iter *t)
{
    while (!sst_block_iter_valid(&t->cur)) {
        if (t->cur.err != KURA_OK) {
            set_error(t, sst_block_error(t->r, t->bi, t->cur.err));
            return;
        }
        if (!t->blk.block || t->bi + 1 >= t->r->nblocks) {
            unpin(t);
            return;
        }
        if (!load_block(t, t->bi + 1))
            return;
        sst_block_iter_seek_first(&t->cur);
    }
}

static void skip_backward(sst_iter *t)
{
    while (!sst_block_iter_valid(&t->cur)) {
        if (t->cur.err != KURA_OK) {
            set_error(t, sst_block_error(t->r, t->bi, t->cur.err));
            return;
        }
        if (!t->blk.block || t->bi == 0) {
            unpin(t);
            return;
        }
        if (!load_block(t, t->bi - 1))
            return;
        sst_block_iter_seek_last(&t->cur);
    }
}

static bool it_valid(const kv_iter *it)
{
    const sst_iter *t = (const sst_iter *)it;
    return t->status == KURA_OK && sst_block_iter_valid(&t->cur);
}

static void it_seek_first(kv_iter *it)
{
    sst_iter *t = (sst_iter *)it;
    if (t->status != KURA_OK || t->r->nblocks == 0 || !load_block(t, 0))
        return;
    sst_block_iter_seek_first(&t->cur);
    skip_forward(t);
}

static void it_seek_last(kv_iter *it)
{
    sst_iter *t = (sst_iter *)it;
    if (t->status != KURA_OK || t->r->nblocks == 0 || !load_block(t, t->r->nblocks - 1))
        return;
    sst_block_iter_seek_last(&t->cur);
    skip_backward(t);
}

static void it_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    sst_iter *t = (sst_iter *)it;
    if (t->status != KURA_OK)
        return;
    if (klen < IKEY_TRAILER) { /* shorter than any internal key: before all of them */
        it_seek_first(it);
        return;
    }
    size_t bi = sst_index_lower_bound(t->r, key, klen);
    if (bi == t->r->nblocks) {
        unpin(t);
        return;
    }
    if (!load_block(t, bi))
        return;
    sst_block_iter_seek(&t->cur, key, klen);
    skip_forward(t);
}

static void it_next(kv_iter *it)
{
    sst_iter *t = (sst_iter *)it;
    if (!it_valid(it))
        return;
    sst_block_iter_next(&t->cur);
    skip_forward(t);
}

static void it_prev(kv_iter *it)
{
    sst_iter *t = (sst_iter *)it;
    if (!it_valid(it))
        return;
    sst_block_iter_prev(&t->cur);
    skip_backward(t);
}

static const uint8_t *it_key(const kv_iter *it, size_t *klen_out)
{
    return sst_block_iter_key(&((const sst_iter *)it)->cur, klen_out);
}

static const uint8_t *it_value(const kv_iter *it, size_t *vlen_out)
{
    return sst_block_iter_value(&((const sst_iter *)it)->cur, vlen_out);
}

static kura_status it_status(const kv_iter *it)
{
    const sst_iter *t = (const sst_iter *)it;
    if (t->status != KURA_OK)
        kura_err(t->status, "%s", t->err_msg ? t->err_msg : kura_status_str(t->status));
    return t->status;
}

static void it_destroy(kv_iter *it)
{
    sst_iter *t = (sst_iter *)it;
    unpin(t);
    sst_block_iter_destroy(&t->cur);
    free(t->err_msg);
    free(t);
}

static const kv_iter_ops sst_iter_ops = {it_valid, it_seek_first, it_seek_last, it_seek,
                                         it_next,  it_prev,       it_key,       it_value,
                                         it_status, it_destroy};

kv_iter *sst_reader_iter(sst_reader *r, bool fill_cache)
{
    sst_iter *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->base.ops = &sst_iter_ops;
    t->r = r;
    t->fill_cache = fill_cache;
    t->bi = 0;
    t->blk.block = NULL;
    t->blk.cache_h = NULL;
    t->blk.owned = NULL;
    sst_block_iter_init(&t->cur, IKEY_TRAILER);
    t->status = KURA_OK;
    t->err_msg = NULL;
    kura_status s = sst_reader_load(r);
    if (s != KURA_OK)
        set_error(t, s); /* an iterator that reports the error, as for a block read */
    return &t->base;
}
