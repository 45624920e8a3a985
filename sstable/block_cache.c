/*
 * block_cache.c - a sharded, reference-counted LRU cache (see block_cache.h).
 *
 * Each shard has a chained hash table of its entries and a doubly linked LRU list that holds
 * exactly the entries referenced by nothing but the cache (refs == 1): a pinned entry is off
 * the list, so eviction never has to skip over pinned ones, and it goes back to the newest end
 * of the list when its last handle is released (LevelDB's LRUCache does the same).
 *
 * Reference counts: the cache holds one reference while the entry is in the hash table
 * (in_cache), and every handle holds one. The entry and its value are freed when the count
 * reaches 0, under the shard lock.
 */
#include "sstable/block_cache.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/thread.h"

typedef struct bc_entry {
    struct bc_entry *next_hash;
    struct bc_entry *lru_prev, *lru_next;
    void *value;
    void (*free_value)(void *value);
    uint64_t id, off, hash;
    size_t charge; /* value charge + sizeof(bc_entry) */
    uint32_t refs;
    bool in_cache;
} bc_entry;

typedef struct bc_shard {
    kmutex mu;
    size_t capacity;
    size_t usage; /* written under mu, read without it (atomics) */
    bc_entry lru; /* list head: lru.lru_next is the oldest, lru.lru_prev the newest */
    bc_entry **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    block_cache_stats stats;
    char pad[64]; /* keep neighbouring shards' locks off one cache line */
} bc_shard;

struct block_cache {
    bc_shard *shards;
    unsigned nshards; /* power of two, 1..16 */
    size_t capacity;
    uint64_t next_id;
};

enum { MAX_SHARDS = 16, MIN_SHARD_BYTES = 256 * 1024, INITIAL_BUCKETS = 64 };

static inline uint64_t bc_hash(uint64_t id, uint64_t off)
{
    uint64_t h = id * UINT64_C(0x9e3779b97f4a7c15) ^ off; /* then the murmur3 finaliser */
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ (h >> 33);
}

static inline bc_shard *shard_of(block_cache *c, uint64_t h)
{
    return &c->shards[(h >> 59) & (c->nshards - 1)];
}

static void usage_add(bc_shard *s, size_t charge)
{
    __atomic_store_n(&s->usage, s->usage + charge, __ATOMIC_RELAXED);
}
static void usage_sub(bc_shard *s, size_t charge)
{
    __atomic_store_n(&s->usage, s->usage - charge, __ATOMIC_RELAXED);
}

block_cache *block_cache_new(size_t capacity_bytes)
{
    block_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    unsigned n = MAX_SHARDS;
    while (n > 1 && capacity_bytes / n < MIN_SHARD_BYTES)
        n /= 2;
    c->nshards = n;
    c->capacity = capacity_bytes;
    c->shards = calloc(n, sizeof *c->shards);
    if (!c->shards) {
        free(c);
        return NULL;
    }
    for (unsigned i = 0; i < n; i++) {
        bc_shard *s = &c->shards[i];
        s->buckets = calloc(INITIAL_BUCKETS, sizeof *s->buckets);
        if (!s->buckets) {
            c->nshards = i; /* free only the shards set up so far */
            block_cache_free(c);
            return NULL;
        }
        kmutex_init(&s->mu);
        s->nbuckets = INITIAL_BUCKETS;
        s->capacity = capacity_bytes / n + (i < capacity_bytes % n ? 1 : 0);
        s->lru.lru_next = s->lru.lru_prev = &s->lru;
    }
    return c;
}

void block_cache_free(block_cache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nshards; i++) {
        bc_shard *s = &c->shards[i];
        for (size_t b = 0; b < s->nbuckets; b++) {
            for (bc_entry *e = s->buckets[b], *next; e; e = next) {
                next = e->next_hash;
                assert(e->refs == 1 && "block_cache_free with a pinned handle");
                e->free_value(e->value);
                free(e);
            }
        }
        free(s->buckets);
        kmutex_destroy(&s->mu);
    }
    free(c->shards);
    free(c);
}

size_t block_cache_usage(const block_cache *c)
{
    size_t total = 0;
    for (unsigned i = 0; i < c->nshards; i++)
        total += __atomic_load_n(&c->shards[i].usage, __ATOMIC_RELAXED);
    return total;
}

size_t block_cache_capacity(const block_cache *c)
{
    return c->capacity;
}

uint64_t block_cache_new_id(block_cache *c)
{
    return __atomic_add_fetch(&c->next_id, 1, __ATOMIC_RELAXED);
}

static void lru_remove(bc_entry *e)
{
    e->lru_prev->lru_next = e->lru_next;
    e->lru_next->lru_prev = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_append(bc_shard *s, bc_entry *e)
{
    e->lru_next = &s->lru;
    e->lru_prev = s->lru.lru_prev;
    e->lru_prev->lru_next = e;
    s->lru.lru_prev = e;
}

/* The slot that points at (id, off)'s entry, or at the NULL ending its chain. */
static bc_entry **table_slot(bc_shard *s, uint64_t id, uint64_t off, uint64_t h)
{
    bc_entry **slot = &s->buckets[h & (s->nbuckets - 1)];
    while (*slot && ((*slot)->id != id || (*slot)->off != off))
        slot = &(*slot)->next_hash;
    return slot;
}

/* Doubles the bucket array; on allocation failure the table just stays more loaded. */
static void table_grow(bc_shard *s)
{
    size_t n = s->nbuckets * 2;
    bc_entry **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (bc_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next_hash;
            bc_entry **slot = &b[e->hash & (n - 1)];
            e->next_hash = *slot;
            *slot = e;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

static void unref(bc_shard *s, bc_entry *e)
{
    assert(e->refs > 0);
    if (--e->refs == 0) {
        e->free_value(e->value);
        free(e);
    } else if (e->refs == 1 && e->in_cache) {
        lru_append(s, e);
    }
}

/* Drops the cache's reference to e, already unlinked from the hash table. */
static void finish_erase(bc_shard *s, bc_entry *e)
{
    e->in_cache = false;
    usage_sub(s, e->charge);
    s->count--;
    if (e->refs == 1)
        lru_remove(e);
    unref(s, e);
}

static void evict(bc_shard *s)
{
    while (s->usage > s->capacity && s->lru.lru_next != &s->lru) {
        bc_entry *e = s->lru.lru_next;
        bc_entry **slot = table_slot(s, e->id, e->off, e->hash);
        assert(*slot == e);
        *slot = e->next_hash;
        finish_erase(s, e);
        s->stats.evictions++;
    }
}

block_cache_handle *block_cache_lookup(block_cache *c, uint64_t id, uint64_t off)
{
    uint64_t h = bc_hash(id, off);
    bc_shard *s = shard_of(c, h);
    kmutex_lock(&s->mu);
    bc_entry *e = *table_slot(s, id, off, h);
    if (e) {
        if (e->refs == 1)
            lru_remove(e);
        e->refs++;
        s->stats.hits++;
    } else {
        s->stats.misses++;
    }
    kmutex_unlock(&s->mu);
    return (block_cache_handle *)e;
}

block_cache_handle *block_cache_insert(block_cache *c, uint64_t id, uint64_t off, void *value,
                                       size_t charge, void (*free_value)(void *value))
{
    bc_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    uint64_t h = bc_hash(id, off);
    e->id = id;
    e->off = off;
    e->hash = h;
    e->value = value;
    e->free_value = free_value;
    e->charge = charge + sizeof *e;
    e->refs = 2; /* the cache's and the returned handle's */
    e->in_cache = true;
    e->lru_prev = e->lru_next = NULL;
    bc_shard *s = shard_of(c, h);
    kmutex_lock(&s->mu);
    bc_entry **slot = table_slot(s, id, off, h);
    bc_entry *old = *slot;
    e->next_hash = old ? old->next_hash : NULL;
    *slot = e;
    s->count++;
    usage_add(s, e->charge);
    s->stats.inserts++;
    if (old)
        finish_erase(s, old);
    else if (s->count > s->nbuckets)
        table_grow(s);
    evict(s);
    kmutex_unlock(&s->mu);
    return (block_cache_handle *)e;
}

void block_cache_prune(block_cache *c)
{
    for (unsigned i = 0; i < c->nshards; i++) {
        bc_shard *s = &c->shards[i];
        kmutex_lock(&s->mu);
        /* the LRU list holds exactly the entries nothing but the cache references */
        while (s->lru.lru_next != &s->lru) {
            bc_entry *e = s->lru.lru_next;
            bc_entry **slot = table_slot(s, e->id, e->off, e->hash);
            assert(*slot == e);
            *slot = e->next_hash;
            finish_erase(s, e);
        }
        kmutex_unlock(&s->mu);
    }
}

void *block_cache_value(const block_cache_handle *h)
{
    return ((const bc_entry *)h)->value;
}

void block_cache_release(block_cache *c, block_cache_handle *h)
{
    bc_entry *e = (bc_entry *)h;
    bc_shard *s = shard_of(c, e->hash);
    kmutex_lock(&s->mu);
    unref(s, e);
    evict(s);
    kmutex_unlock(&s->mu);
}

void block_cache_get_stats(block_cache *c, block_cache_stats *stats_out)
{
    block_cache_stats t = {0, 0, 0, 0};
    for (unsigned i = 0; i < c->nshards; i++) {
        bc_shard *s = &c->shards[i];
        kmutex_lock(&s->mu);
        t.hits += s->stats.hits;
        t.misses += s->stats.misses;
        t.inserts += s->stats.inserts;
        t.evictions += s->stats.evictions;
        kmutex_unlock(&s->mu);
    }
    *stats_out = t;
}
