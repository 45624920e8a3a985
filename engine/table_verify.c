/*
 * table_verify.c - This file contains table_verify_index (check_int.h): one secondary index
 * compared with its table, as multisets, at one snapshot (docs/architecture.md, "Integrity
 * check"). The integrity check (`kura check`) and the crash, fault and unit tests
 * (tests/crash/index_check.c) share it.
 *
 * Why one snapshot is exact: every index entry is inserted at the sequence number of the base
 * write it comes from (index/apply.c), so once an index has applied everything committed up
 * to a snapshot S, its tree read at S is the index of the table at S, whatever writes run
 * meanwhile. The expected entries are idx_entry_key / idx_entry_value of every item of the
 * table at S that the index takes (idx_indexable, as the appliers and the backfill do). Only
 * their keys are kept, in an arena, with a 64-bit hash of the value (XXH3): the memory is that
 * of the index's keys, not of its projections. They are sorted and merged with the index tree
 * read in key order: a key only expected is a missing entry, a key only in the tree an extra
 * one (a deleted item's, an old version's beside the current one's), a key in both with
 * another value hash a stale one (right key, other projected attributes; two values with one
 * hash, probability 2^-64, pass). An extra entry's item is looked up to say which case it is.
 */
#include "engine/check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_index.h"
#include "util/arena.h"
#include "util/hash.h"

typedef struct ve_entry {
    const uint8_t *key;
    size_t klen;
    uint64_t vhash;
} ve_entry;

/* The expected entries: keys in an arena, sorted. */
typedef struct ve_set {
    arena *keys;
    ve_entry *v;
    size_t n, cap;
} ve_set;

typedef struct ve_ctx {
    kura_table *t;
    const idx_def *d;
    kura_tree *tree; /* the index's */
    kura_read_options ro;
    uint32_t examples;
    table_verify_fn fn;
    void *arg;
    table_verify_counts *n;
} ve_ctx;

static int ve_cmp_keys(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static int ve_cmp(const void *a, const void *b)
{
    const ve_entry *x = a, *y = b;
    return ve_cmp_keys(x->key, x->klen, y->key, y->klen);
}

static kura_status ve_add(ve_set *s, const kbuf *key, const kbuf *val)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        ve_entry *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return kura_err(KURA_E_NOMEM, "index check: out of memory");
        s->v = v;
        s->cap = cap;
    }
    uint8_t *k = arena_alloc(s->keys, key->len ? key->len : 1);
    if (!k)
        return kura_err(KURA_E_NOMEM, "index check: out of memory");
    memcpy(k, key->data, key->len);
    s->v[s->n++] = (ve_entry){k, key->len, kura_hash64(val->data, val->len)};
    return KURA_OK;
}

/* The entry of one stored item, if the index takes it. Items that do not decode are left to
 * table_verify_items, which reports them. */
static kura_status ve_item(ve_ctx *c, const uint8_t *v, size_t vlen, kbuf *k, kbuf *e,
                           ve_set *out)
{
    kura_value item = {0};
    if (val_decode(v, vlen, &item) != KURA_OK) {
        val_clear(&item);
        return KURA_OK;
    }
    bool present = false;
    k->len = e->len = 0;
    kura_status s = KURA_OK;
    if (idx_indexable(c->d, &item))
        s = idx_entry_key(c->d, &c->t->ks, &item, k, &present);
    if (s == KURA_OK && present)
        s = idx_entry_value(c->d, &c->t->ks, &item, e);
    val_clear(&item);
    if (s == KURA_OK && present)
        s = ve_add(out, k, e);
    return s;
}

/* Every expected entry of the index, from the table at the snapshot, sorted. */
static kura_status ve_expected(ve_ctx *c, ve_set *out)
{
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(c->t->tree, &c->ro, &it);
    kbuf k = KBUF_INIT, e = KBUF_INIT;
    uint64_t n = 0;
    if (s == KURA_OK)
        kura_iter_seek_first(it);
    for (; s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        size_t vlen;
        const uint8_t *v = kura_iter_value(it, &vlen);
        if ((++n & 1023) == 0 && atomic_load(&c->t->dropped)) /* DeleteTable waits for us */
            s = kura_err(KURA_E_CLOSED, "table %s was deleted", c->t->name);
        else
            s = ve_item(c, v, vlen, &k, &e, out);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    kbuf_free(&k);
    kbuf_free(&e);
    if (s == KURA_OK && out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, ve_cmp);
    return s;
}

/* ---- Reporting ------------------------------------------------------------------------------ */

/* Why an extra entry of the item `tkey` is extra: the item at the snapshot, looked up. */
static void ve_why_extra(ve_ctx *c, const kura_value *tkey, char *out, size_t cap)
{
    kbuf skey = KBUF_INIT, k = KBUF_INIT;
    kura_value item = {0};
    bool found = false, present = false;
    out[0] = '\0'; /* the lookup failed: no reason given */
    if (key_build(&c->t->ks, tkey, KEY_FROM_KEY, &skey) == KURA_OK &&
        table_read(c->t, &c->ro, skey.data, skey.len, &item, &found) == KURA_OK) {
        if (found && idx_indexable(c->d, &item))
            idx_entry_key(c->d, &c->t->ks, &item, &k, &present);
        snprintf(out, cap, "%s",
                 !found     ? " (no such item: a deleted item's entry)"
                 : present  ? " (the item's entry has another key: an old version's entry)"
                            : " (the item has no entry in this index)");
    }
    val_clear(&item);
    kbuf_free(&skey);
    kbuf_free(&k);
}

static void ve_report(ve_ctx *c, const char *kind, const uint8_t *key, size_t klen)
{
    kura_value ikey = {0}, tkey = {0};
    char json[2048], why[128] = "", line[3000];
    kura_status s = idx_entry_parse(c->d, &c->t->ks, key, klen, &ikey, &tkey);
    if (s == KURA_OK) {
        check_key_json(&tkey, json, sizeof json);
        if (strcmp(kind, "extra") == 0)
            ve_why_extra(c, &tkey, why, sizeof why);
        else if (strcmp(kind, "stale") == 0)
            snprintf(why, sizeof why, " (its projected attributes differ from the item's)");
        snprintf(line, sizeof line, "table %s index %s: %s entry of item %s%s", c->t->name,
                 c->d->name, kind, json, why);
    } else {
        size_t o = 0;
        for (size_t i = 0; i < klen && o + 3 < sizeof json; i++)
            o += (size_t)snprintf(json + o, sizeof json - o, "%02x", key[i]);
        snprintf(line, sizeof line, "table %s index %s: %s entry with a key that does not "
                                    "parse (%s): %s",
                 c->t->name, c->d->name, kind, kura_last_error(), json);
    }
    val_clear(&ikey);
    val_clear(&tkey);
    c->fn(c->arg, line);
}

static void ve_found(ve_ctx *c, uint64_t *count, const char *kind, const uint8_t *key,
                     size_t klen)
{
    if ((*count)++ < c->examples && c->fn)
        ve_report(c, kind, key, klen);
}

/* ---- The merge ------------------------------------------------------------------------------ */

/* Merges the sorted expected entries with the index tree read at the snapshot. */
static kura_status ve_merge(ve_ctx *c, const ve_set *want)
{
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(c->tree, &c->ro, &it);
    size_t at = 0;
    table_verify_counts *n = c->n;
    if (s == KURA_OK)
        kura_iter_seek_first(it);
    for (; s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        size_t klen, vlen;
        const uint8_t *k = kura_iter_key(it, &klen);
        const uint8_t *v = kura_iter_value(it, &vlen);
        n->found++;
        int cmp = -1;
        while (at < want->n &&
               (cmp = ve_cmp_keys(want->v[at].key, want->v[at].klen, k, klen)) < 0) {
            ve_found(c, &n->missing, "missing", want->v[at].key, want->v[at].klen);
            at++;
        }
        if (at == want->n || cmp > 0) {
            ve_found(c, &n->extra, "extra", k, klen);
            continue;
        }
        if (want->v[at].vhash != kura_hash64(v, vlen))
            ve_found(c, &n->stale, "stale", k, klen);
        at++;
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    for (; s == KURA_OK && at < want->n; at++)
        ve_found(c, &n->missing, "missing", want->v[at].key, want->v[at].klen);
    kura_iter_free(it);
    return s;
}

kura_status table_verify_index(kura_table *t, uint32_t i, kura_tree *tree,
                               const kura_snapshot *snap,
                               uint32_t examples, table_verify_fn fn, void *arg,
                               table_verify_counts *out)
{
    memset(out, 0, sizeof *out);
    ve_ctx c = {.t = t, .d = table_index_def(t, i), .tree = tree,
                .examples = examples, .fn = fn, .arg = arg, .n = out};
    kura_read_options_init(&c.ro);
    c.ro.snapshot = snap;
    c.ro.fill_cache = false;
    ve_set want = {.keys = arena_new(1 << 20)};
    if (!want.keys)
        return kura_err(KURA_E_NOMEM, "index check: out of memory");
    kura_status s = ve_expected(&c, &want);
    out->expected = want.n;
    if (s == KURA_OK)
        s = ve_merge(&c, &want);
    free(want.v);
    arena_free(want.keys);
    return s;
}
