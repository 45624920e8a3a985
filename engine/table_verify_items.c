/*
 * table_verify_items.c - This file contains the integrity check of a table's items and item
 * collections (check_int.h):
 *
 *  - table_verify_items reads the table at the check's snapshot: every stored item must decode
 *    and lie under the storage key its own key attributes make (key_build). On a table with
 *    a local secondary index it also sums each item collection's size as the 10 GB limit
 *    counts it (table_coll_item_size: the items and their LSI projections; engine/
 *    table_collection.h) and reports those over the limit. A collection's items are
 *    contiguous in the table (its storage keys share the prefix hash64(enc(pk)) || enc(pk)),
 *    so this is one running sum, no memory per collection.
 *  - table_verify_collections compares every size the collection cache holds with a recount
 *    made while that collection's writes wait (table_coll_verify): a cached size that
 *    drifted (a write that bypassed the accounting) makes the limit wrong.
 */
#include "engine/check_int.h"

#include <stdio.h>
#include <string.h>

#include "engine/table_collection.h"

typedef struct items_ctx {
    check_ctx *c;
    kura_table *t;
    bool lsi;
    kbuf coll;      /* the current collection's prefix (empty: none yet) */
    uint64_t coll_size, limit;
    kbuf kb;        /* scratch: the storage key an item's attributes make */
} items_ctx;

/* The partition key of a collection prefix as DynamoDB JSON. */
static void prefix_json(const kura_table *t, const uint8_t *prefix, size_t len, char *out,
                        size_t cap)
{
    kura_value pk = {0}, key = {0};
    size_t used = 0;
    snprintf(out, cap, "<a collection key that does not parse>");
    if (len > 8 && key_dec_value(prefix + 8, len - 8, t->ks.pk_type, &pk, &used) == KURA_OK) {
        val_init_container(&key, KURA_M);
        if (val_map_put(&key, t->ks.pk_name, strlen(t->ks.pk_name), &pk) == KURA_OK)
            check_key_json(&key, out, cap);
    }
    val_clear(&pk);
    val_clear(&key);
}

/* The collection that ended: over the limit? */
static void coll_close(items_ctx *x)
{
    if (x->coll.len && x->coll_size > x->limit) {
        char json[1024];
        prefix_json(x->t, x->coll.data, x->coll.len, json, sizeof json);
        check_problem(x->c, "table %s: item collection %s holds %llu bytes, over the limit of "
                            "%llu",
                      x->t->name, json, (unsigned long long)x->coll_size,
                      (unsigned long long)x->limit);
    }
    x->coll.len = 0;
    x->coll_size = 0;
}

/* Adds the item stored under k to its collection's running size. */
static kura_status coll_add(items_ctx *x, const uint8_t *k, size_t klen, const kura_value *item)
{
    size_t plen = 0;
    uint64_t size = 0;
    if (table_coll_prefix_len(x->t, k, klen, &plen) != KURA_OK)
        return KURA_OK; /* reported by the key check */
    if (x->coll.len != plen || memcmp(x->coll.data, k, plen) != 0) {
        coll_close(x);
        if (!kbuf_append(&x->coll, k, plen))
            return kura_err(KURA_E_NOMEM, "out of memory");
    }
    kura_status s = table_coll_item_size(x->t, item, &size);
    x->coll_size += size;
    return s;
}

static kura_status check_item(items_ctx *x, const uint8_t *k, size_t klen, const uint8_t *v,
                              size_t vlen)
{
    char json[2048];
    kura_value item = {0};
    kura_status s = val_decode(v, vlen, &item);
    if (s != KURA_OK) {
        val_clear(&item);
        if (s == KURA_E_NOMEM)
            return s;
        check_skey_json(x->t, k, klen, json, sizeof json);
        check_problem(x->c, "table %s: the item stored under %s does not decode: %s",
                      x->t->name, json, kura_last_error());
        return KURA_OK;
    }
    x->kb.len = 0;
    s = key_build(&x->t->ks, &item, KEY_FROM_ITEM, &x->kb);
    if (s == KURA_E_NOMEM) {
        val_clear(&item);
        return s;
    }
    if (s != KURA_OK || x->kb.len != klen || memcmp(x->kb.data, k, klen) != 0) {
        check_skey_json(x->t, k, klen, json, sizeof json);
        check_problem(x->c, "table %s: the item stored under %s does not have that key%s%s",
                      x->t->name, json, s != KURA_OK ? ": " : "",
                      s != KURA_OK ? kura_last_error() : "");
        s = KURA_OK;
    } else if (x->lsi) {
        s = coll_add(x, k, klen, &item);
    }
    val_clear(&item);
    return s;
}

kura_status table_verify_items(check_ctx *c, kura_table *t, const kura_snapshot *snap)
{
    items_ctx x = {.c = c, .t = t, .lsi = table_has_lsi(t), .coll = KBUF_INIT,
                   .limit = table_coll_limit(t), .kb = KBUF_INIT};
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.snapshot = snap;
    ro.fill_cache = false;
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(t->tree, &ro, &it);
    if (s == KURA_OK)
        kura_iter_seek_first(it);
    for (; s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        size_t klen, vlen;
        const uint8_t *k = kura_iter_key(it, &klen);
        const uint8_t *v = kura_iter_value(it, &vlen);
        if ((++c->sum->items & 1023) == 0 && atomic_load(&t->dropped)) /* DeleteTable waits */
            s = kura_err(KURA_E_CLOSED, "table %s was deleted", t->name);
        else
            s = check_item(&x, k, klen, v, vlen);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    if (s == KURA_OK)
        coll_close(&x);
    kbuf_free(&x.coll);
    kbuf_free(&x.kb);
    return s;
}

static void coll_mismatch(void *arg, const uint8_t *prefix, size_t len, uint64_t cached,
                          uint64_t counted)
{
    void **a = arg;
    check_ctx *c = a[0];
    const kura_table *t = a[1];
    char json[1024];
    prefix_json(t, prefix, len, json, sizeof json);
    check_problem(c, "table %s: item collection %s: the cache holds %llu bytes, a recount finds "
                     "%llu",
                  t->name, json, (unsigned long long)cached, (unsigned long long)counted);
}

kura_status table_verify_collections(check_ctx *c, kura_table *t)
{
    void *arg[2] = {c, t};
    uint64_t n = 0;
    kura_status s = table_coll_verify(t, coll_mismatch, arg, &n);
    c->sum->collections += n;
    return s;
}
