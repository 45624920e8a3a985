/*
 * hash.h - the hash functions of kura (xxHash from Debian's libxxhash).
 *
 * kura_hash64 routes keys to partitions and builds the storage-key prefix (DESIGN.md section
 * 3); it is part of the on-disk format: changing it changes where existing keys live.
 */
#ifndef KURA_UTIL_HASH_H
#define KURA_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t kura_hash64(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* Maps a 64-bit hash onto [0, n) by its high bits (multiply-shift), so that partition i owns
 * the contiguous hash range [i * 2^64 / n, (i + 1) * 2^64 / n): scans in hash order visit the
 * partitions in order. */
static inline uint32_t kura_hash_bucket(uint64_t h, uint32_t n)
{
    return (uint32_t)(((unsigned __int128)h * n) >> 64);
}

#endif
