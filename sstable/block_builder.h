/*
 * block_builder.h - building one prefix-compressed block (data, index and properties blocks).
 *
 * This file contains the writer side of the block format of docs/format/sstable.md section 3
 * (LevelDB's): each entry is `shared varint | non_shared varint | value_len varint |
 * key[shared..] | value`, where `shared` is the length of the prefix common with the previous
 * key; every `interval` entries a restart point stores the key whole (shared = 0) and its
 * offset goes to the restart array that ends the block: `fixed32 offsets... | fixed32 count`.
 *
 * The builder does not compare keys: the caller adds them in the order the reader expects.
 * Not thread-safe. Memory is owned by the builder and reused across reset().
 */
#ifndef KURA_SSTABLE_BLOCK_BUILDER_H
#define KURA_SSTABLE_BLOCK_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct sst_block_builder {
    kbuf buf;      /* entries; the restart array is appended by finish() */
    kbuf restarts; /* fixed32 offsets of the restart points (the first is 0) */
    kbuf last_key; /* the previous key, for prefix compression */
    int interval;  /* entries per restart point, >= 1 */
    int counter;   /* entries since the last restart point */
    size_t entries;
    bool finished;
} sst_block_builder;

/* Prepares an empty builder. interval < 1 is treated as 1. Never fails (allocates lazily). */
void sst_block_builder_init(sst_block_builder *bb, int interval);

/* Frees the builder's buffers (the struct itself belongs to the caller). */
void sst_block_builder_free(sst_block_builder *bb);

/* Empties the builder for a new block, keeping its buffers. */
void sst_block_builder_reset(sst_block_builder *bb);

/* Appends an entry. Returns false on allocation failure (the builder is then unchanged).
 * Must not be called after finish() without a reset(). */
bool sst_block_builder_add(sst_block_builder *bb, const uint8_t *key, size_t klen,
                           const uint8_t *val, size_t vlen);

/* Appends the restart array and returns the block's bytes (*len_out of them), owned by the
 * builder and valid until the next reset/free. NULL on allocation failure. */
const uint8_t *sst_block_builder_finish(sst_block_builder *bb, size_t *len_out);

/* The size the block would have if finished now (meaningful before finish()). */
static inline size_t sst_block_builder_size(const sst_block_builder *bb)
{
    return bb->buf.len + bb->restarts.len + 4;
}

static inline bool sst_block_builder_empty(const sst_block_builder *bb)
{
    return bb->entries == 0;
}

#endif
