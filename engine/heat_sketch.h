/*
 * heat_sketch.h - the space-saving top-k sketch of keys (capacity accounting, issue 24;
 * docs/architecture.md, "Capacity accounting").
 *
 * Metwally, Agrawal and El Abbadi's space-saving algorithm with k counters over weighted
 * records: a record of weight u (half units, read + write) on a key adds u to the key's
 * counter when it has one; otherwise the key takes a free counter (count u, error 0) or,
 * when all k are taken, the counter of least count m (count m + u, error m). Its guarantees,
 * with N the total weight recorded so far:
 *   - a counter's count overestimates the key's true weight since the start by at most its
 *     error: count - err <= true <= count;
 *   - the least count is at most N / k, so every key whose true weight exceeds N / k holds a
 *     counter.
 * Each counter also keeps a heat_window of the read and write units recorded on it since it
 * was taken, so the rates the sketch reports are exact for the units seen since admission
 * and low by at most err (units of the key recorded before admission may fall in the window).
 *
 * Keys are byte strings (a partition-key value, or a partition and sort key the caller
 * encodes into one string), identified by XXH3-64 of the whole key with the length and the
 * stored bytes. A key is stored whole up to key_max bytes; a longer key keeps its first
 * key_max bytes with the hash of the whole (two longer keys with one prefix, one length and
 * one 64-bit hash would share a counter: ~2^-64).
 *
 * Memory: everything is allocated by heat_sketch_init and nothing after, whatever the number
 * of distinct keys: heat_sketch_bytes(k, key_max) bytes, O(k). Not thread-safe: the owner
 * serializes (engine/heat.c, one sketch per stripe under its mutex).
 */
#ifndef KURA_ENGINE_HEAT_SKETCH_H
#define KURA_ENGINE_HEAT_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/heat_window.h"
#include "kura.h"

typedef struct heat_counter {
    uint64_t hash;       /* XXH3-64 of the whole key */
    uint64_t count, err; /* space-saving's count and overestimation, half units */
    uint32_t key_len;    /* the whole key's length (stored: min(key_len, key_max)) */
    int32_t next;        /* the next counter in this hash bucket, -1 at the end */
    uint32_t heap_pos;   /* where this counter sits in the min-heap */
    heat_window win;     /* read and write units since this key took the counter */
} heat_counter;

typedef struct heat_sketch {
    uint32_t k, used, key_max;
    uint32_t bucket_mask; /* buckets: a power of two >= 2k */
    heat_counter *ctr;    /* k counters */
    uint8_t *keys;        /* k * key_max bytes: counter i's key at keys + i * key_max */
    int32_t *bucket;      /* chains of counters by hash */
    uint32_t *heap;       /* counter indexes, a min-heap by count */
    uint64_t total;       /* N: the weight recorded */
    int64_t newest_ms;    /* the latest now_ms recorded */
    uint64_t *filter;     /* the admission filter (heat_sketch_set_filter), NULL: none */
    uint32_t filter_mask; /* its buckets - 1 */
    uint64_t filtered;    /* weight of records the filter kept out of the counters */
} heat_sketch;

/* The bytes a sketch of k counters and keys of key_max bytes allocates. */
size_t heat_sketch_bytes(uint32_t k, uint32_t key_max);

/* A sketch of k >= 1 counters storing up to key_max >= 1 bytes of each key. KURA_E_NOMEM,
 * KURA_E_INVALID for k or key_max 0. Freed by heat_sketch_free. */
kura_status heat_sketch_init(heat_sketch *s, uint32_t k, uint32_t key_max);
void heat_sketch_free(heat_sketch *s);

/* Records rd and wr half units on key[0..len) (hash: XXH3-64 of the key, kura_hash64) at
 * now_ms. A record of no units changes nothing. Never allocates. */
void heat_sketch_record(heat_sketch *s, uint64_t hash, const void *key, size_t len,
                        int64_t now_ms, uint64_t rd, uint64_t wr);

/* Gives the sketch an admission filter of `buckets` counts (a power of two >= 2; KURA_E_INVALID,
 * else KURA_E_NOMEM): Homem and Carvalho's filtered space-saving. Once every counter is taken,
 * a record on a key without one adds its weight to the key's bucket (by hash) instead, and
 * the key takes the least counter (count m) only when its bucket reaches m: then with count
 * = its bucket and err = bucket - weight; an evicted counter's count is kept in its key's
 * bucket (the larger of the two). A bucket holds at least the weight of every key that
 * hashes to it while without a counter, so the guarantees above still hold (count - err <=
 * true <= count, and a key over N / k holds a counter), and on a stream of many keys of even
 * weight (no hot key: random reads of many items) records stop evicting counters, which is
 * most of space-saving's cost there. Freed with the sketch. */
kura_status heat_sketch_set_filter(heat_sketch *s, uint32_t buckets);

/* The counter of key, or NULL when the key holds none. */
const heat_counter *heat_sketch_find(const heat_sketch *s, uint64_t hash, const void *key,
                                     size_t len);

/* The stored bytes of counter c (min(c->key_len, key_max) of them). */
static inline const uint8_t *heat_sketch_key(const heat_sketch *s, const heat_counter *c)
{
    return s->keys + (size_t)(c - s->ctr) * s->key_max;
}

/* The least count (0 while a counter is free): space-saving's bound on a missing key. */
uint64_t heat_sketch_min_count(const heat_sketch *s);

#endif
