/*
 * merge_iter.c - the merging iterator (after LevelDB's table/merger.cc).
 *
 * This file contains a k-way merge of sorted internal-key iterators. Entries are ordered by
 * (internal key, child index); going backward visits exactly the reverse order. The child
 * holding the current entry is `cur`; all other valid children are positioned at their first
 * entry after the current one in the direction of travel (the LevelDB invariant). Changing
 * direction re-seeks every other child around the current key.
 *
 * Each child's current key is cached next to it, so comparisons do not go through the
 * child's vtable; only the child that moved refreshes its cache. With more than
 * MERGE_LINEAR_MAX children the valid ones sit in a binary heap ordered for the current
 * direction (min-heap forward, max-heap backward) and a step costs O(log n) comparisons;
 * with few children a linear scan is cheaper than heap maintenance.
 */
#include "engine/lsm/merge_iter.h"

#include <stdbool.h>
#include <stdlib.h>

#include "util/ikey.h"
#include "util/status.h"

enum { MERGE_LINEAR_MAX = 4 };

typedef struct merge_child {
    kv_iter *it;
    const uint8_t *key; /* it's current key while valid (cached) */
    size_t klen;
    size_t idx;
    bool valid;
} merge_child;

typedef struct merge_iter {
    kv_iter base;
    size_t n;
    merge_child *kids;   /* n children */
    merge_child **heap;  /* the valid children, heap-ordered (used when n > linear max) */
    size_t heap_len;
    merge_child *cur;    /* NULL when invalid */
    int dir;             /* +1 forward, -1 backward */
    kura_status err;     /* a child failed: the merge is invalid until the next seek */
} merge_iter;

/* Does a come before b when travelling in direction dir? */
static inline bool before(const merge_child *a, const merge_child *b, int dir)
{
    int c = ikey_cmp(a->key, a->klen, b->key, b->klen);
    if (c == 0)
        c = a->idx < b->idx ? -1 : 1;
    return dir > 0 ? c < 0 : c > 0;
}

/* Refreshes a child's cache after it moved; records its error if it failed. */
static void child_sync(merge_iter *mi, merge_child *c)
{
    c->valid = kv_iter_valid(c->it);
    if (c->valid) {
        c->key = kv_iter_key(c->it, &c->klen);
        if (c->klen >= IKEY_TRAILER)
            return;
        c->valid = false; /* ikey_cmp needs the 8-byte trailer */
        if (mi->err == KURA_OK)
            mi->err = kura_err(KURA_E_CORRUPTION, "merging iterator: input %zu has an "
                               "internal key of %zu bytes", c->idx, c->klen);
        return;
    }
    kura_status s = kv_iter_status(c->it);
    if (s != KURA_OK && mi->err == KURA_OK)
        mi->err = s;
}

static void sift_down(merge_iter *mi, size_t i)
{
    merge_child **h = mi->heap;
    size_t n = mi->heap_len;
    merge_child *x = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        size_t best = l;
        if (l + 1 < n && before(h[l + 1], h[l], mi->dir))
            best = l + 1;
        if (!before(h[best], x, mi->dir))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = x;
}

/* Chooses the current child after every child was repositioned (and synced). */
static void choose_all(merge_iter *mi)
{
    mi->cur = NULL;
    if (mi->err != KURA_OK)
        return;
    if (mi->n > MERGE_LINEAR_MAX) {
        mi->heap_len = 0;
        for (size_t i = 0; i < mi->n; i++) {
            if (mi->kids[i].valid)
                mi->heap[mi->heap_len++] = &mi->kids[i];
        }
        for (size_t i = mi->heap_len / 2; i-- > 0;)
            sift_down(mi, i);
        mi->cur = mi->heap_len ? mi->heap[0] : NULL;
        return;
    }
    for (size_t i = 0; i < mi->n; i++) {
        merge_child *c = &mi->kids[i];
        if (c->valid && (!mi->cur || before(c, mi->cur, mi->dir)))
            mi->cur = c;
    }
}

/* Chooses the current child after only the current one moved. */
static void choose_after_step(merge_iter *mi)
{
    if (mi->err != KURA_OK) {
        mi->cur = NULL;
        return;
    }
    if (mi->n > MERGE_LINEAR_MAX) {
        if (!mi->heap[0]->valid)
            mi->heap[0] = mi->heap[--mi->heap_len];
        if (mi->heap_len)
            sift_down(mi, 0);
        mi->cur = mi->heap_len ? mi->heap[0] : NULL;
        return;
    }
    choose_all(mi);
}

static void mi_seek_first(kv_iter *it)
{
    merge_iter *mi = (merge_iter *)it;
    mi->err = KURA_OK;
    mi->dir = 1;
    for (size_t i = 0; i < mi->n; i++) {
        kv_iter_seek_first(mi->kids[i].it);
        child_sync(mi, &mi->kids[i]);
    }
    choose_all(mi);
}

static void mi_seek_last(kv_iter *it)
{
    merge_iter *mi = (merge_iter *)it;
    mi->err = KURA_OK;
    mi->dir = -1;
    for (size_t i = 0; i < mi->n; i++) {
        kv_iter_seek_last(mi->kids[i].it);
        child_sync(mi, &mi->kids[i]);
    }
    choose_all(mi);
}

static void mi_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    merge_iter *mi = (merge_iter *)it;
    mi->err = KURA_OK;
    mi->dir = 1;
    for (size_t i = 0; i < mi->n; i++) {
        kv_iter_seek(mi->kids[i].it, key, klen);
        child_sync(mi, &mi->kids[i]);
    }
    choose_all(mi);
}

/* Positions child c at its first entry >= key, or > key if it sorts before the child at idx
 * `cur_idx` (its entries equal to key were already visited going forward). */
static void seek_around(merge_child *c, const uint8_t *key, size_t klen, size_t cur_idx)
{
    kv_iter_seek(c->it, key, klen);
    if (c->idx > cur_idx)
        return;
    while (kv_iter_valid(c->it)) {
        size_t n;
        const uint8_t *k = kv_iter_key(c->it, &n);
        if (ikey_cmp(k, n, key, klen) != 0)
            break;
        kv_iter_next(c->it);
    }
}

/* Makes every child other than cur point after the current entry, going forward. */
static void switch_forward(merge_iter *mi)
{
    merge_child *cur = mi->cur;
    for (size_t i = 0; i < mi->n; i++) {
        merge_child *c = &mi->kids[i];
        if (c == cur)
            continue;
        seek_around(c, cur->key, cur->klen, cur->idx);
        child_sync(mi, c);
    }
    mi->dir = 1;
}

/* Makes every child other than cur point before the current entry, going backward. */
static void switch_backward(merge_iter *mi)
{
    merge_child *cur = mi->cur;
    for (size_t i = 0; i < mi->n; i++) {
        merge_child *c = &mi->kids[i];
        if (c == cur)
            continue;
        seek_around(c, cur->key, cur->klen, cur->idx);
        if (kv_iter_valid(c->it))
            kv_iter_prev(c->it); /* the last entry before (key, cur->idx) */
        else if (kv_iter_status(c->it) == KURA_OK)
            kv_iter_seek_last(c->it); /* everything in c sorts before the current entry */
        child_sync(mi, c);
    }
    mi->dir = -1;
}

static void mi_next(kv_iter *it)
{
    merge_iter *mi = (merge_iter *)it;
    merge_child *cur = mi->cur;
    if (mi->dir < 0) {
        switch_forward(mi);
        kv_iter_next(cur->it);
        child_sync(mi, cur);
        choose_all(mi);
        return;
    }
    kv_iter_next(cur->it);
    child_sync(mi, cur);
    choose_after_step(mi);
}

static void mi_prev(kv_iter *it)
{
    merge_iter *mi = (merge_iter *)it;
    merge_child *cur = mi->cur;
    if (mi->dir > 0) {
        switch_backward(mi);
        kv_iter_prev(cur->it);
        child_sync(mi, cur);
        choose_all(mi);
        return;
    }
    kv_iter_prev(cur->it);
    child_sync(mi, cur);
    choose_after_step(mi);
}

static bool mi_valid(const kv_iter *it)
{
    return ((const merge_iter *)it)->cur != NULL;
}

static const uint8_t *mi_key(const kv_iter *it, size_t *klen_out)
{
    const merge_child *c = ((const merge_iter *)it)->cur;
    *klen_out = c->klen;
    return c->key;
}

static const uint8_t *mi_value(const kv_iter *it, size_t *vlen_out)
{
    return kv_iter_value(((const merge_iter *)it)->cur->it, vlen_out);
}

static kura_status mi_status(const kv_iter *it)
{
    const merge_iter *mi = (const merge_iter *)it;
    if (mi->err != KURA_OK)
        return mi->err;
    for (size_t i = 0; i < mi->n; i++) {
        kura_status s = kv_iter_status(mi->kids[i].it);
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

static void mi_destroy(kv_iter *it)
{
    merge_iter *mi = (merge_iter *)it;
    for (size_t i = 0; i < mi->n; i++)
        kv_iter_free(mi->kids[i].it);
    free(mi);
}

static const kv_iter_ops merge_iter_ops = {
    mi_valid, mi_seek_first, mi_seek_last, mi_seek,   mi_next,
    mi_prev,  mi_key,        mi_value,     mi_status, mi_destroy,
};

kv_iter *merge_iter_new(kv_iter **children, size_t n)
{
    if (n == 0)
        return kv_iter_empty(KURA_OK);
    if (n == 1)
        return children[0];
    /* one allocation: the iterator, then the children, then the heap */
    merge_iter *mi = malloc(sizeof *mi + n * (sizeof(merge_child) + sizeof(merge_child *)));
    if (!mi) {
        for (size_t i = 0; i < n; i++)
            kv_iter_free(children[i]);
        return NULL;
    }
    mi->base.ops = &merge_iter_ops;
    mi->n = n;
    mi->kids = (merge_child *)(mi + 1);
    mi->heap = (merge_child **)(mi->kids + n);
    mi->heap_len = 0;
    mi->cur = NULL;
    mi->dir = 1;
    mi->err = KURA_OK;
    for (size_t i = 0; i < n; i++)
        mi->kids[i] = (merge_child){children[i], NULL, 0, i, false};
    return &mi->base;
}
