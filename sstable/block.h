/*
 * block.h - reading one decoded block: the restart array and a cursor over the entries.
 *
 * This file contains the reader side of the block format of docs/format/sstable.md section 3
 * (see block_builder.h). A block is immutable bytes owned elsewhere (a block-cache entry, an
 * iterator or the table reader); the cursor borrows them and must not outlive them.
 *
 * The cursor (sst_block_iter) is a plain struct, not a kv_iter: the table reader embeds it in
 * its own iterator and puts one on the stack for point lookups, so the hot paths allocate
 * nothing (keys up to SST_KEY_INLINE bytes live inside the struct; longer keys use a heap
 * buffer kept until sst_block_iter_destroy).
 *
 * Every length read from the block is checked: malformed bytes make the cursor invalid with
 * `err` set to KURA_E_CORRUPTION (KURA_E_NOMEM if a long key cannot be buffered); it never
 * reads outside the block. The caller turns `err` into a message with the file and offset.
 * Not thread-safe: one cursor, one thread; many cursors may share a block.
 */
#ifndef KURA_SSTABLE_BLOCK_H
#define KURA_SSTABLE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

/* A parsed block: `size` bytes at `data`, entries in [0, restarts_off). */
typedef struct sst_block {
    const uint8_t *data;
    size_t size;
    uint32_t restarts_off; /* offset of the restart array */
    uint32_t num_restarts; /* >= 1 */
} sst_block;

/* Reads the restart array at the end of data[0..size). Returns false if it cannot be a block
 * (too short, too large, or a restart count that does not fit). */
bool sst_block_parse(sst_block *b_out, const uint8_t *data, size_t size);

enum { SST_KEY_INLINE = 240 };

typedef struct sst_block_iter {
    const uint8_t *data;
    uint32_t restarts_off;
    uint32_t num_restarts;
    uint32_t cur;         /* offset of the current entry; >= restarts_off when invalid */
    uint32_t next;        /* offset just past the current entry */
    uint32_t restart_idx; /* the restart interval holding `cur` */
    uint32_t min_klen;    /* keys shorter than this are corruption (8 for internal keys) */
    kura_status err;      /* KURA_OK, or why the cursor stopped */
    const uint8_t *val;
    size_t vlen;
    size_t klen;
    size_t kcap;
    uint8_t *kheap; /* the key buffer once a key outgrew key_inline, else NULL */
    uint8_t key_inline[SST_KEY_INLINE];
} sst_block_iter;

/* Prepares a cursor with no block (invalid). min_klen: see above. */
void sst_block_iter_init(sst_block_iter *it, uint32_t min_klen);

/* Points the cursor at block b (borrowed), unpositioned (invalid), and clears err. */
void sst_block_iter_set(sst_block_iter *it, const sst_block *b);

/* Detaches from the block: invalid, err cleared. The key buffer is kept. */
void sst_block_iter_clear(sst_block_iter *it);

/* Frees the key buffer. The struct itself belongs to the caller. */
void sst_block_iter_destroy(sst_block_iter *it);

void sst_block_iter_seek_first(sst_block_iter *it);
void sst_block_iter_seek_last(sst_block_iter *it);
/* Positions at the first entry whose internal key is >= target (ikey_cmp order; the block's
 * keys must be internal keys, min_klen >= 8, and tlen >= 8). */
void sst_block_iter_seek(sst_block_iter *it, const uint8_t *target, size_t tlen);
void sst_block_iter_next(sst_block_iter *it); /* requires valid */
void sst_block_iter_prev(sst_block_iter *it); /* requires valid */

static inline bool sst_block_iter_valid(const sst_block_iter *it)
{
    return it->cur < it->restarts_off;
}

/* The current key/value, valid while the cursor stays on this entry and the block lives. */
static inline const uint8_t *sst_block_iter_key(const sst_block_iter *it, size_t *klen_out)
{
    *klen_out = it->klen;
    return it->kheap ? it->kheap : it->key_inline;
}
static inline const uint8_t *sst_block_iter_value(const sst_block_iter *it, size_t *vlen_out)
{
    *vlen_out = it->vlen;
    return it->val;
}

#endif
