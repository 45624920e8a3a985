/*
 * batch.c - kura_batch: the public write batch, a thin wrapper of engine/lsm/batch.h that
 * checks, at write time, that every key routes to one partition.
 */
#include "engine/db_int.h"

#include <stdlib.h>

#include "engine/lsm/batch.h"
#include "engine/txn.h"
#include "util/ikey.h"
#include "util/status.h"

struct kura_batch {
    lsm_batch b;
};

kura_batch *kura_batch_new(void)
{
    kura_batch *b = malloc(sizeof *b);
    if (b)
        lsm_batch_init(&b->b);
    return b;
}

void kura_batch_free(kura_batch *b)
{
    if (!b)
        return;
    lsm_batch_free(&b->b);
    free(b);
}

void kura_batch_clear(kura_batch *b)
{
    lsm_batch_clear(&b->b);
}

kura_status kura_batch_put(kura_batch *b, const void *key, size_t klen, const void *val,
                           size_t vlen)
{
    if (klen == 0 || klen > 65535)
        return kura_err(KURA_E_INVALID, "key of %zu bytes: keys are 1..65535 bytes", klen);
    return lsm_batch_put(&b->b, key, klen, val, vlen);
}

kura_status kura_batch_delete(kura_batch *b, const void *key, size_t klen)
{
    if (klen == 0 || klen > 65535)
        return kura_err(KURA_E_INVALID, "key of %zu bytes: keys are 1..65535 bytes", klen);
    return lsm_batch_delete(&b->b, key, klen);
}

size_t kura_batch_count(const kura_batch *b)
{
    return lsm_batch_count(&b->b);
}

typedef struct route_check {
    const kura_tree *t;
    int64_t part; /* -1 until the first key */
} route_check;

static kura_status check_route(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                               size_t klen, const uint8_t *val, size_t vlen)
{
    route_check *rc = arg;
    if (rc->t->hash_prefixed && klen < 8)
        return kura_err(KURA_E_INVALID, "batch key of %zu bytes: this tree's keys start with an "
                                        "8-byte hash", klen);
    int64_t p = kura_tree_partition_of(rc->t, key, klen);
    if (rc->part >= 0 && p != rc->part)
        return kura_err(KURA_E_INVALID, "batch keys route to partitions %lld and %lld: a batch "
                                        "must stay in one partition",
                        (long long)rc->part, (long long)p);
    rc->part = p;
    return KURA_OK;
}

kura_status kura_write(kura_tree *t, const kura_write_options *wo, const kura_batch *b)
{
    route_check rc = {t, -1};
    kura_status s = lsm_rep_iterate(b->b.rep.data, b->b.rep.len, check_route, &rc, "batch");
    if (s != KURA_OK)
        return s;
    if (rc.part < 0)
        return KURA_OK; /* empty batch */
    int d = wo && wo->durability >= 0 ? wo->durability : (int)t->db->opts.durability;
    /* lsm_write stamps sequence numbers into the rep; the caller's batch stays logically const */
    return lsm_write(t->parts[rc.part], (lsm_batch *)&b->b, d == KURA_SYNC);
}

/* ---- kura_write_atomic: batches split into one piece per partition --------------------------- */

typedef struct split_ctx {
    kura_tree *t;
    txn_piece *pieces;
    size_t n, cap;
} split_ctx;

static kura_status split_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                               size_t klen, const uint8_t *val, size_t vlen)
{
    (void)seq;
    split_ctx *c = arg;
    if (c->t->hash_prefixed && klen < 8)
        return kura_err(KURA_E_INVALID, "batch key of %zu bytes: this tree's keys start with an "
                                        "8-byte hash", klen);
    lsm_tree *part = c->t->parts[kura_tree_partition_of(c->t, key, klen)];
    size_t i = 0;
    while (i < c->n && c->pieces[i].part != part)
        i++;
    if (i == c->n) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 8;
            txn_piece *v = realloc(c->pieces, cap * sizeof *v);
            if (!v)
                return kura_err(KURA_E_NOMEM, "kura_write_atomic: out of memory");
            c->pieces = v;
            c->cap = cap;
        }
        c->pieces[i].part = part;
        lsm_batch_init(&c->pieces[i].batch);
        c->n++;
    }
    if (type == IKEY_TYPE_DELETE)
        return lsm_batch_delete(&c->pieces[i].batch, key, klen);
    return lsm_batch_put(&c->pieces[i].batch, key, klen, val, vlen);
}

kura_status kura_write_atomic(kura_db *db, const kura_write_options *wo, size_t n,
                              kura_tree *const trees[], const kura_batch *const batches[])
{
    split_ctx c = {0};
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        if (!trees[i] || trees[i]->db != db || (trees[i]->flags & TREE_NO_WAL))
            s = kura_err(KURA_E_INVALID, "kura_write_atomic: batch %zu names no writable tree "
                                         "of this database", i);
        else if (!batches[i])
            s = kura_err(KURA_E_INVALID, "kura_write_atomic: batch %zu is NULL", i);
        if (s != KURA_OK)
            break;
        c.t = trees[i];
        s = lsm_rep_iterate(batches[i]->b.rep.data, batches[i]->b.rep.len, split_entry, &c,
                            "batch");
    }
    int d = wo && wo->durability >= 0 ? wo->durability : (int)db->opts.durability;
    if (s == KURA_OK)
        s = txn_commit(db, c.pieces, c.n, d == KURA_SYNC, NULL);
    for (size_t i = 0; i < c.n; i++)
        lsm_batch_free(&c.pieces[i].batch);
    free(c.pieces);
    return s;
}
