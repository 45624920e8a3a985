/*
 * table_collection.c - This file contains the item collections of tables with a local
 * secondary index: what an item adds to its collection, the scan that measures a collection
 * the cache does not hold, the step every write takes through the cache
 * (engine/collection.h) and the ItemCollectionMetrics it returns.
 *
 * A collection is named in the cache by hash64(enc(pk)) || enc(pk), the prefix of the storage
 * keys of its items (docs/format/keys.md), so the scan is one seek in the partition that
 * prefix routes to and a walk while keys start with it (the encoding is prefix-free: no other
 * partition key value's keys start with it). The scan reads the table only: an item's LSI
 * entries are derived from the item (index/project.c) and an LSI is written in the same step
 * as its table, so measuring the projection is measuring the entry.
 */
#include "engine/table_collection.h"

#include <stdlib.h>
#include <string.h>

#include "engine/item_int.h"
#include "util/coding.h"
#include "util/status.h"

/* The big-endian hash64 in front of every storage key (docs/format/keys.md). */
#define COLL_HASH_LEN 8

kura_status table_coll_item_size(const kura_table *t, const kura_value *item, uint64_t *size_out)
{
    uint64_t size = 0;
    if (item)
        size = val_item_size(item);
    for (uint32_t i = 0; item && i < t->nlsi; i++) {
        const idx_def *d = &t->lsi[i];
        size_t n = 0;
        if (!idx_has_entry(d, item) || !idx_indexable(d, item))
            continue; /* no entry in this LSI (sparse, or written before with another type) */
        kura_status s = idx_projected_size(d, &t->ks, item, &n);
        if (s != KURA_OK)
            return s;
        size += n;
    }
    *size_out = size;
    return KURA_OK;
}

/* The length of the collection prefix of a storage key, and (pk_out not NULL) the partition
 * key value it holds. */
static kura_status coll_prefix(const kura_table *t, const uint8_t *skey, size_t klen,
                               size_t *len_out, kura_value *pk_out)
{
    kura_value pk = {0};
    size_t used = 0;
    kura_status s = klen > COLL_HASH_LEN
                        ? key_dec_value(skey + COLL_HASH_LEN, klen - COLL_HASH_LEN,
                                        t->ks.pk_type, &pk, &used)
                        : KURA_E_CORRUPTION;
    if (s == KURA_E_CORRUPTION)
        return kura_err(s, "table %s: a storage key that does not parse", t->name);
    if (s != KURA_OK)
        return s;
    *len_out = COLL_HASH_LEN + used;
    if (pk_out)
        val_move(pk_out, &pk);
    val_clear(&pk);
    return KURA_OK;
}

typedef struct coll_scan_arg {
    kura_table *t;
    const uint8_t *prefix;
    size_t len;
} coll_scan_arg;

/* coll_fill_fn: the size of the collection whose keys start with a->prefix, from the table. */
static kura_status coll_scan(void *arg, uint64_t *size_out)
{
    const coll_scan_arg *a = arg;
    kura_table *t = a->t;
    kura_read_options ro;
    kura_read_options_init(&ro);
    uint32_t part = kura_tree_partition_of(t->tree, a->prefix, a->len);
    kura_iter *it = NULL;
    kura_status s = tree_iter_new(t->tree, &ro, part, part, &it);
    if (s != KURA_OK)
        return s;
    uint64_t total = 0;
    for (kura_iter_seek(it, a->prefix, a->len); s == KURA_OK && kura_iter_valid(it);
         kura_iter_next(it)) {
        size_t kl, vl;
        const uint8_t *k = kura_iter_key(it, &kl);
        if (kl < a->len || memcmp(k, a->prefix, a->len) != 0)
            break;
        const uint8_t *v = kura_iter_value(it, &vl);
        kura_value item = {0};
        uint64_t n = 0;
        if ((s = val_decode(v, vl, &item)) == KURA_E_CORRUPTION)
            s = kura_err(s, "table %s (tree tbl-%llu): stored item: %s", t->name,
                         (unsigned long long)t->id, kura_last_error());
        if (s == KURA_OK)
            s = table_coll_item_size(t, &item, &n);
        total += n;
        val_clear(&item);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    if (s == KURA_OK)
        *size_out = total;
    return s;
}

static uint64_t coll_limit(const kura_table *t)
{
    uint64_t lim = t->tree->db->opts.item_collection_limit_bytes;
    return lim ? lim : TABLE_COLL_DEFAULT_LIMIT;
}

/* What the write from `old` to `neu` adds to its collection, and the length of the
 * collection's key (the prefix of skey). */
static kura_status coll_delta(kura_table *t, const uint8_t *skey, size_t klen,
                              const kura_value *old, const kura_value *neu, int64_t *delta_out,
                              size_t *plen_out)
{
    uint64_t so = 0, sn = 0;
    kura_status s = table_coll_item_size(t, old, &so);
    if (s == KURA_OK)
        s = table_coll_item_size(t, neu, &sn);
    if (s == KURA_OK)
        s = coll_prefix(t, skey, klen, plen_out, NULL);
    if (s == KURA_OK)
        *delta_out = (int64_t)sn - (int64_t)so; /* items are at most 400 KB */
    return s;
}

/* table_coll_begin and table_coll_try_begin. */
static kura_status coll_begin_of(kura_table *t, const uint8_t *skey, size_t klen,
                                 const kura_value *old, const kura_value *neu, bool want,
                                 coll_ticket *tk, bool nowait)
{
    memset(tk, 0, sizeof *tk);
    if (!table_has_lsi(t))
        return KURA_OK;
    int64_t delta = 0;
    size_t plen = 0;
    kura_status s = coll_delta(t, skey, klen, old, neu, &delta, &plen);
    if (s != KURA_OK)
        return s;
    coll_scan_arg a = {t, skey, plen};
    return (nowait ? coll_try_begin : coll_begin)(t->colls, skey, plen, delta, want || delta > 0,
                                                  coll_limit(t), coll_scan, &a, tk);
}

kura_status table_coll_begin(kura_table *t, const uint8_t *skey, size_t klen,
                             const kura_value *old, const kura_value *neu, bool want,
                             coll_ticket *tk)
{
    return coll_begin_of(t, skey, klen, old, neu, want, tk, false);
}

kura_status table_coll_try_begin(kura_table *t, const uint8_t *skey, size_t klen,
                                 const kura_value *old, const kura_value *neu, bool want,
                                 coll_ticket *tk)
{
    return coll_begin_of(t, skey, klen, old, neu, want, tk, true);
}

kura_status table_coll_settle(kura_table *t, const uint8_t *skey, size_t klen,
                              const kura_value *old, const kura_value *neu, bool want)
{
    if (!table_has_lsi(t))
        return KURA_OK;
    int64_t delta = 0;
    size_t plen = 0;
    kura_status s = coll_delta(t, skey, klen, old, neu, &delta, &plen);
    if (s != KURA_OK)
        return s;
    coll_scan_arg a = {t, skey, plen};
    return coll_settle(t->colls, skey, plen, want || delta > 0, coll_scan, &a);
}

void table_coll_cancel(kura_table *t, coll_ticket *tk)
{
    if (table_has_lsi(t))
        coll_cancel(t->colls, tk);
    memset(tk, 0, sizeof *tk);
}

void table_coll_end(kura_table *t, coll_ticket *tk, bool written)
{
    if (table_has_lsi(t))
        coll_end(t->colls, tk, written);
    memset(tk, 0, sizeof *tk);
}

void table_coll_metrics_free(kura_item_collection_metrics *m)
{
    if (!m)
        return;
    free(m->table_name);
    kura_value_free(m->item_collection_key);
    memset(m, 0, sizeof *m);
}

kura_status table_coll_metrics(const kura_table *t, const uint8_t *skey, size_t klen,
                               uint64_t size_bytes, kura_item_collection_metrics *m)
{
    kura_value pk = {0}, key = {0};
    size_t plen;
    kura_status s = coll_prefix(t, skey, klen, &plen, &pk);
    if (s != KURA_OK)
        return s;
    val_init_container(&key, KURA_M);
    s = val_map_put(&key, t->ks.pk_name, strlen(t->ks.pk_name), &pk);
    kura_item_collection_metrics r = {.present = true, .size_bytes = size_bytes};
    if (s == KURA_OK && !(r.item_collection_key = item_value_take(&key)))
        s = kura_err(KURA_E_NOMEM, "out of memory");
    if (s == KURA_OK && !(r.table_name = strdup(t->name)))
        s = kura_err(KURA_E_NOMEM, "out of memory");
    val_clear(&key);
    if (s != KURA_OK) {
        table_coll_metrics_free(&r);
        return s;
    }
    double gb = (double)(size_bytes >> 30); /* whole GB below the size: floor */
    r.size_estimate_range_gb[0] = gb;
    r.size_estimate_range_gb[1] = gb + 1;
    *m = r;
    return KURA_OK;
}

/* ---- Test hooks ------------------------------------------------------------------------ */

/* The collection prefix of partition key value `pk` of t into *out. */
static kura_status coll_prefix_of(const kura_table *t, const kura_value *pk, kbuf *out)
{
    if (!pk || pk->type != t->ks.pk_type)
        return kura_err(KURA_E_INVALID, "table %s: not a partition key value", t->name);
    if (!kbuf_reserve(out, COLL_HASH_LEN))
        return kura_err(KURA_E_NOMEM, "out of memory");
    out->len = COLL_HASH_LEN;
    kura_status s = key_enc_value(pk, out);
    if (s == KURA_OK)
        enc_fixed64_be(out->data,
                       key_hash(out->data + COLL_HASH_LEN, out->len - COLL_HASH_LEN));
    return s;
}

kura_status table_coll_recount(kura_db *db, const char *table_name, const kura_value *pk,
                               uint64_t *size_out)
{
    kura_table *t;
    kura_status s = table_acquire(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    kbuf p = KBUF_INIT;
    s = coll_prefix_of(t, pk, &p);
    if (s == KURA_OK) {
        coll_scan_arg a = {t, p.data, p.len};
        s = coll_scan(&a, size_out);
    }
    kbuf_free(&p);
    table_release(t);
    return s;
}

kura_status table_coll_cached(kura_db *db, const char *table_name, const kura_value *pk,
                              bool *cached_out, uint64_t *size_out)
{
    kura_table *t;
    kura_status s = table_acquire(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    kbuf p = KBUF_INIT;
    s = coll_prefix_of(t, pk, &p);
    uint64_t size = 0;
    if (s == KURA_OK) {
        *cached_out = coll_peek(t->colls, p.data, p.len, &size);
        *size_out = size;
    }
    kbuf_free(&p);
    table_release(t);
    return s;
}

/* ---- The integrity check (`kura check`, engine/table_verify_items.c) ---------------------- */

kura_status table_coll_prefix_len(const kura_table *t, const uint8_t *skey, size_t klen,
                                  size_t *len_out)
{
    return coll_prefix(t, skey, klen, len_out, NULL);
}

uint64_t table_coll_limit(const kura_table *t)
{
    return coll_limit(t);
}

kura_status table_coll_verify(kura_table *t, table_coll_verify_fn fn, void *arg,
                              uint64_t *compared_out)
{
    *compared_out = 0;
    if (!table_has_lsi(t))
        return KURA_OK;
    kbuf keys = KBUF_INIT;
    size_t *lens = NULL, n = 0, off = 0;
    kura_status s = coll_cache_keys(t->colls, &keys, &lens, &n);
    for (size_t i = 0; i < n && s == KURA_OK; off += lens[i++]) {
        coll_scan_arg a = {t, keys.data + off, lens[i]};
        bool present = false;
        uint64_t cached = 0, counted = 0;
        s = coll_verify(t->colls, a.prefix, a.len, coll_scan, &a, &present, &cached, &counted);
        if (s == KURA_OK && present) {
            (*compared_out)++;
            if (cached != counted)
                fn(arg, a.prefix, a.len, cached, counted);
        }
    }
    free(lens);
    kbuf_free(&keys);
    return s;
}
