/*
 * block_cache.h - the shared LRU cache of decoded SSTable blocks.
 *
 * This file contains the block cache of DESIGN.md section 3: one per database, shared by every
 * open table, with a byte budget. Entries are keyed by (table id, block offset); each open
 * table takes a unique id from block_cache_new_id(), so ids are never reused and a stale entry
 * of a closed table can never be mistaken for another table's block (it just ages out).
 *
 * Entries are reference counted. A lookup or insert returns a pinned handle; the entry's value
 * stays valid until the handle is released, even if the entry is evicted or replaced in the
 * meantime (it is then freed by the last release). Only unpinned entries are evicted, oldest
 * first, so usage can exceed the budget while more than the budget is pinned.
 *
 * The cache is split into up to 16 shards by key hash, each with its own mutex and LRU list;
 * small caches use fewer shards so that a shard can still hold several blocks. Thread-safe.
 */
#ifndef KURA_SSTABLE_BLOCK_CACHE_H
#define KURA_SSTABLE_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct block_cache block_cache;
typedef struct block_cache_handle block_cache_handle;

/* A cache holding up to capacity_bytes of charge (0 = cache nothing). NULL on OOM. */
block_cache *block_cache_new(size_t capacity_bytes);

/* Frees the cache and every value in it. No handle may still be pinned. NULL is a no-op. */
void block_cache_free(block_cache *c);

/* Total charge of the entries in the cache (including per-entry overhead). Thread-safe,
 * without locking; exact when no other thread is using the cache. */
size_t block_cache_usage(const block_cache *c);
size_t block_cache_capacity(const block_cache *c);

/* A fresh id for a newly opened table (never 0, never repeated). */
uint64_t block_cache_new_id(block_cache *c);

/* The pinned entry for (id, off), or NULL if absent. Release with block_cache_release(). */
block_cache_handle *block_cache_lookup(block_cache *c, uint64_t id, uint64_t off);

/*
 * Inserts value under (id, off), replacing any entry with the same key, and returns it
 * pinned. On success the cache owns value and frees it with free_value(value) once the entry
 * is neither cached nor pinned. charge is the value's memory; the cache adds its own entry
 * overhead. Returns NULL on OOM, in which case value still belongs to the caller.
 */
block_cache_handle *block_cache_insert(block_cache *c, uint64_t id, uint64_t off, void *value,
                                       size_t charge, void (*free_value)(void *value));

/* Drops every entry no handle pins (their values are freed now); pinned entries stay. Not
 * counted as evictions. */
void block_cache_prune(block_cache *c);

/* The value of a pinned entry. */
void *block_cache_value(const block_cache_handle *h);

/* Unpins h (from lookup or insert); h must not be used afterwards. */
void block_cache_release(block_cache *c, block_cache_handle *h);

typedef struct block_cache_stats {
    uint64_t hits, misses, inserts, evictions;
} block_cache_stats;

/* Counters since the cache was created (locks each shard briefly). */
void block_cache_get_stats(block_cache *c, block_cache_stats *stats_out);

#endif
