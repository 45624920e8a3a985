/*
 * bloom.h - whole-table bloom filters over keys (user keys, or routing prefixes of them).
 *
 * This file contains the filter of docs/format/sstable.md section 4: `bits[nbytes] | k`, a
 * plain bit array probed k times by double hashing of kura_hash64(key): probe i looks at bit
 * fastrange(h + i * rotl(h, 32), nbits). With bits_per_key = 10 and k = 7 the false-positive
 * rate is about 0.8%. There are no false negatives.
 *
 * The builder collects one 64-bit hash per added key and sizes the filter at finish, when the
 * number of keys is known. Callers deduplicate keys (the table builder sees them sorted).
 * Not thread-safe while building; a parsed filter is read-only and may be probed by any
 * number of threads.
 */
#ifndef KURA_SSTABLE_BLOOM_H
#define KURA_SSTABLE_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/hash.h"

typedef struct sst_bloom_builder {
    uint64_t *hashes;
    size_t n, cap;
    uint32_t bits_per_key;
} sst_bloom_builder;

/* The probe count for bits_per_key: round(bits * 0.69), clamped to 1..30. */
unsigned sst_bloom_k(uint32_t bits_per_key);

void sst_bloom_builder_init(sst_bloom_builder *b, uint32_t bits_per_key);
void sst_bloom_builder_free(sst_bloom_builder *b);

/* Records key's hash. false on allocation failure (nothing recorded). */
bool sst_bloom_builder_add(sst_bloom_builder *b, const uint8_t *key, size_t len);

/* Appends the filter for every key added (at least 64 bits) to out. false on allocation
 * failure. The builder keeps its keys. */
bool sst_bloom_builder_finish(const sst_bloom_builder *b, kbuf *out);

/* A filter over borrowed bytes (the table reader keeps them). */
typedef struct sst_bloom {
    const uint8_t *bits;
    uint64_t nbits;
    unsigned k;
} sst_bloom;

/* Reads a filter from data[0..len); false if malformed (no bits, or k outside 1..30). */
bool sst_bloom_parse(sst_bloom *f_out, const uint8_t *data, size_t len);

/* false: the key was certainly not added. true: it probably was. */
bool sst_bloom_may_contain_hash(const sst_bloom *f, uint64_t h);

static inline bool sst_bloom_may_contain(const sst_bloom *f, const uint8_t *key, size_t len)
{
    return sst_bloom_may_contain_hash(f, kura_hash64(key, len));
}

#endif
