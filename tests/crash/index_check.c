/*
 * index_check.c - the index checker of the crash, fault and unit tests: recomputes every
 * secondary index of a table from a scan of its items and compares it with the index's tree.
 *
 * Expected entries are idx_entry_key / idx_entry_value of every item (index/index.h); the
 * index tree is read with an ordinary iterator, which visits its hash-prefixed keys in order.
 * The first difference is reported: a missing entry (an item the index lacks), an extra one
 * (an entry of no item: a delete that was lost), or a stale one (the right key with the value
 * of an older version of the item).
 */
#include "index_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_index.h"
#include "util/status.h"

typedef struct ic_entry {
    kbuf key, val;
} ic_entry;

static int ic_cmp(const void *a, const void *b)
{
    const ic_entry *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = memcmp(x->key.data, y->key.data, n);
    return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static void ic_hex(const kbuf *b, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < b->len && o + 3 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%02x", b->data[i]);
    out[o] = 0;
}

/* The expected entries of index d, sorted, from a scan of the table's tree. */
static kura_status ic_expected(kura_table *t, const idx_def *d, ic_entry **out, size_t *n_out)
{
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(t->tree, NULL, &it);
    ic_entry *v = NULL;
    size_t n = 0, cap = 0;
    for (kura_iter_seek_first(it); s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        size_t vlen;
        const void *val = kura_iter_value(it, &vlen);
        kura_value item = {0};
        if ((s = val_decode(val, vlen, &item)) != KURA_OK)
            break;
        kbuf k = KBUF_INIT, e = KBUF_INIT;
        bool present = false;
        s = idx_entry_key(d, &t->ks, &item, &k, &present);
        if (s == KURA_OK && present)
            s = idx_entry_value(d, &t->ks, &item, &e);
        val_clear(&item);
        if (s == KURA_OK && present) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                ic_entry *nv = realloc(v, cap * sizeof *nv);
                if (!nv)
                    abort();
                v = nv;
            }
            v[n++] = (ic_entry){k, e};
        } else {
            kbuf_free(&k);
            kbuf_free(&e);
        }
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    if (n)
        qsort(v, n, sizeof *v, ic_cmp);
    *out = v;
    *n_out = n;
    return s;
}

static kura_status ic_one(kura_table *t, uint32_t i)
{
    const idx_def *d = table_index_def(t, i);
    ic_entry *want = NULL;
    size_t nwant = 0, at = 0;
    kura_status s = ic_expected(t, d, &want, &nwant);
    kura_iter *it = NULL;
    if (s == KURA_OK)
        s = kura_iter_new(t->ix_trees[i], NULL, &it);
    char hex[200];
    if (s == KURA_OK)
        kura_iter_seek_first(it);
    for (; s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        size_t klen, vlen;
        const void *k = kura_iter_key(it, &klen);
        const void *v = kura_iter_value(it, &vlen);
        kbuf kb = {(uint8_t *)k, klen, klen};
        ic_entry probe = {kb, KBUF_INIT};
        if (at < nwant && ic_cmp(&want[at], &probe) < 0) {
            ic_hex(&want[at].key, hex, sizeof hex);
            s = kura_err(KURA_E_CORRUPTION, "table %s index %s: missing entry %s", t->name,
                         d->name, hex);
            break;
        }
        ic_hex(&kb, hex, sizeof hex);
        if (at == nwant || ic_cmp(&want[at], &probe) != 0)
            s = kura_err(KURA_E_CORRUPTION, "table %s index %s: extra entry %s", t->name,
                         d->name, hex);
        else if (want[at].val.len != vlen || memcmp(want[at].val.data, v, vlen))
            s = kura_err(KURA_E_CORRUPTION, "table %s index %s: stale entry %s", t->name,
                         d->name, hex);
        at++;
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    if (s == KURA_OK && at < nwant) {
        ic_hex(&want[at].key, hex, sizeof hex);
        s = kura_err(KURA_E_CORRUPTION, "table %s index %s: missing entry %s (%zu of %zu "
                                        "entries found)",
                     t->name, d->name, hex, at, nwant);
    }
    kura_iter_free(it);
    for (size_t j = 0; j < nwant; j++) {
        kbuf_free(&want[j].key);
        kbuf_free(&want[j].val);
    }
    free(want);
    return s;
}

kura_status index_check_table(kura_db *db, const char *table_name, uint64_t wait_ms)
{
    kura_table *t;
    kura_status s = table_acquire(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    for (uint32_t i = 0; i < table_nindexes(t) && s == KURA_OK; i++)
        s = table_index_wait(t, (int)i, wait_ms);
    for (uint32_t i = 0; i < table_nindexes(t) && s == KURA_OK; i++) {
        idx_status st = table_index_def(t, i)->status;
        if (st == IDX_ACTIVE) /* a CREATING one is complete only once ACTIVE */
            s = ic_one(t, i);
    }
    table_release(t);
    return s;
}
