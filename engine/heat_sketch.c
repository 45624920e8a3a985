/*
 * This file contains the space-saving sketch (engine/heat_sketch.h): counters found by a
 * chained hash table, the least one kept at the root of a min-heap by count so that a new
 * key replaces it in O(log k), all in arrays allocated once.
 */
#include "engine/heat_sketch.h"

#include <stdlib.h>
#include <string.h>

static uint32_t buckets_for(uint32_t k)
{
    uint32_t n = 2;
    while (n < 2 * (uint64_t)k && n < (1u << 31))
        n <<= 1;
    return n;
}

size_t heat_sketch_bytes(uint32_t k, uint32_t key_max)
{
    return (size_t)k * sizeof(heat_counter) + (size_t)k * key_max +
           (size_t)buckets_for(k) * sizeof(int32_t) + (size_t)k * sizeof(uint32_t);
}

kura_status heat_sketch_init(heat_sketch *s, uint32_t k, uint32_t key_max)
{
    memset(s, 0, sizeof(*s));
    if (k == 0 || key_max == 0)
        return KURA_E_INVALID;
    uint32_t nb = buckets_for(k);
    s->ctr = calloc(k, sizeof(heat_counter));
    s->keys = malloc((size_t)k * key_max);
    s->bucket = malloc((size_t)nb * sizeof(int32_t));
    s->heap = malloc((size_t)k * sizeof(uint32_t));
    if (!s->ctr || !s->keys || !s->bucket || !s->heap) {
        heat_sketch_free(s);
        return KURA_E_NOMEM;
    }
    memset(s->bucket, 0xff, (size_t)nb * sizeof(int32_t)); /* all -1 */
    s->k = k;
    s->key_max = key_max;
    s->bucket_mask = nb - 1;
    s->newest_ms = INT64_MIN;
    return KURA_OK;
}

void heat_sketch_free(heat_sketch *s)
{
    free(s->ctr);
    free(s->keys);
    free(s->bucket);
    free(s->heap);
    free(s->filter);
    memset(s, 0, sizeof(*s));
}

kura_status heat_sketch_set_filter(heat_sketch *s, uint32_t buckets)
{
    if (buckets < 2 || (buckets & (buckets - 1)))
        return KURA_E_INVALID;
    uint64_t *f = calloc(buckets, sizeof(uint64_t));
    if (!f)
        return KURA_E_NOMEM;
    free(s->filter);
    s->filter = f;
    s->filter_mask = buckets - 1;
    return KURA_OK;
}

/* The filter's bucket of a hash: bits the buckets' chains and the stripes do not use. */
static uint64_t *filter_of(const heat_sketch *s, uint64_t hash)
{
    return &s->filter[(hash >> 24) & s->filter_mask];
}

static bool key_is(const heat_sketch *s, const heat_counter *c, uint64_t hash, const void *key,
                   size_t len)
{
    if (c->hash != hash || c->key_len != len)
        return false;
    size_t stored = len < s->key_max ? len : s->key_max;
    return memcmp(heat_sketch_key(s, c), key, stored) == 0;
}

static int32_t find_index(const heat_sketch *s, uint64_t hash, const void *key, size_t len)
{
    for (int32_t i = s->bucket[hash & s->bucket_mask]; i >= 0; i = s->ctr[i].next)
        if (key_is(s, &s->ctr[i], hash, key, len))
            return i;
    return -1;
}

const heat_counter *heat_sketch_find(const heat_sketch *s, uint64_t hash, const void *key,
                                     size_t len)
{
    int32_t i = find_index(s, hash, key, len);
    return i < 0 ? NULL : &s->ctr[i];
}

uint64_t heat_sketch_min_count(const heat_sketch *s)
{
    return s->used < s->k ? 0 : s->ctr[s->heap[0]].count;
}

static void heap_swap(heat_sketch *s, uint32_t a, uint32_t b)
{
    uint32_t ca = s->heap[a], cb = s->heap[b];
    s->heap[a] = cb;
    s->heap[b] = ca;
    s->ctr[cb].heap_pos = a;
    s->ctr[ca].heap_pos = b;
}

static void heap_down(heat_sketch *s, uint32_t pos)
{
    for (;;) {
        uint32_t l = 2 * pos + 1, r = l + 1, m = pos;
        if (l < s->used && s->ctr[s->heap[l]].count < s->ctr[s->heap[m]].count)
            m = l;
        if (r < s->used && s->ctr[s->heap[r]].count < s->ctr[s->heap[m]].count)
            m = r;
        if (m == pos)
            return;
        heap_swap(s, pos, m);
        pos = m;
    }
}

static void heap_up(heat_sketch *s, uint32_t pos)
{
    while (pos > 0) {
        uint32_t p = (pos - 1) / 2;
        if (s->ctr[s->heap[p]].count <= s->ctr[s->heap[pos]].count)
            return;
        heap_swap(s, pos, p);
        pos = p;
    }
}

static void unlink_bucket(heat_sketch *s, int32_t idx)
{
    int32_t *link = &s->bucket[s->ctr[idx].hash & s->bucket_mask];
    while (*link != idx)
        link = &s->ctr[*link].next;
    *link = s->ctr[idx].next;
}

/* Gives counter idx to the key, with count and err, linked into its bucket. */
static void take_counter(heat_sketch *s, int32_t idx, uint64_t hash, const void *key,
                         size_t len, uint64_t err, int64_t now_ms)
{
    heat_counter *c = &s->ctr[idx];
    c->hash = hash;
    c->key_len = (uint32_t)len;
    c->count = err;
    c->err = err;
    if (idx >= (int32_t)s->used) {
        heat_window_init(&c->win); /* a counter never used: nothing to hide */
    } else {
        /* From the newest second the sketch has seen: the counter's previous key may have
         * units in a second later than this (late) record's, not to be counted as the new
         * key's. */
        heat_window_restart(&c->win, now_ms > s->newest_ms ? now_ms : s->newest_ms);
    }
    memcpy(s->keys + (size_t)idx * s->key_max, key, len < s->key_max ? len : s->key_max);
    int32_t *head = &s->bucket[hash & s->bucket_mask];
    c->next = *head;
    *head = idx;
}

void heat_sketch_record(heat_sketch *s, uint64_t hash, const void *key, size_t len,
                        int64_t now_ms, uint64_t rd, uint64_t wr)
{
    uint64_t u = rd + wr;
    if (u == 0)
        return;
    s->total += u;
    if (now_ms > s->newest_ms)
        s->newest_ms = now_ms;
    int32_t idx = find_index(s, hash, key, len);
    if (idx < 0 && s->used < s->k) {
        idx = (int32_t)s->used;
        take_counter(s, idx, hash, key, len, 0, now_ms);
        s->ctr[idx].heap_pos = s->used;
        s->heap[s->used++] = (uint32_t)idx;
        heap_up(s, s->ctr[idx].heap_pos);
    } else if (idx < 0 && s->filter) {
        /* Filtered space-saving: the key's bucket collects its weight until it reaches the
         * least count; then the key takes that counter with the bucket as its count. */
        uint64_t *b = filter_of(s, hash);
        *b += u;
        idx = (int32_t)s->heap[0];
        if (*b < s->ctr[idx].count) {
            s->filtered += u;
            return;
        }
        uint64_t *eb = filter_of(s, s->ctr[idx].hash); /* the evicted key's bound, kept */
        if (*eb < s->ctr[idx].count)
            *eb = s->ctr[idx].count;
        unlink_bucket(s, idx);
        take_counter(s, idx, hash, key, len, *b - u, now_ms); /* count: + u below = *b */
    } else if (idx < 0) {
        /* Space-saving: the new key inherits the least count as its error. */
        idx = (int32_t)s->heap[0];
        unlink_bucket(s, idx);
        take_counter(s, idx, hash, key, len, s->ctr[idx].count, now_ms);
    }
    heat_counter *c = &s->ctr[idx];
    c->count += u;
    /* Units the window drops (a record older than it or than the admission) count as
     * error, so that the window's truth stays within [window, window + err]. */
    if (!heat_window_add(&c->win, now_ms, rd, wr))
        c->err += u;
    heap_down(s, c->heap_pos);
}
