/*
 * block_builder.c - prefix-compressed block writer (docs/format/sstable.md section 3).
 *
 * All room an entry needs is reserved before anything is written, so an allocation failure
 * leaves the block exactly as it was.
 */
#include "sstable/block_builder.h"

#include "util/coding.h"

void sst_block_builder_init(sst_block_builder *bb, int interval)
{
    kbuf empty = KBUF_INIT;
    bb->buf = empty;
    bb->restarts = empty;
    bb->last_key = empty;
    bb->interval = interval < 1 ? 1 : interval;
    sst_block_builder_reset(bb);
}

void sst_block_builder_free(sst_block_builder *bb)
{
    kbuf_free(&bb->buf);
    kbuf_free(&bb->restarts);
    kbuf_free(&bb->last_key);
}

void sst_block_builder_reset(sst_block_builder *bb)
{
    kbuf_clear(&bb->buf);
    kbuf_clear(&bb->last_key);
    /* The first restart point is offset 0; its 4 bytes are written when the first entry is
     * added (see add), so that an empty builder allocates nothing. */
    kbuf_clear(&bb->restarts);
    bb->counter = 0;
    bb->entries = 0;
    bb->finished = false;
}

static size_t common_prefix(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    while (i + 8 <= n) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return i + (size_t)__builtin_ctzll(x ^ y) / 8; /* little-endian: low byte first */
        i += 8;
    }
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

bool sst_block_builder_add(sst_block_builder *bb, const uint8_t *key, size_t klen,
                           const uint8_t *val, size_t vlen)
{
    size_t shared = 0;
    bool restart = bb->entries == 0 || bb->counter >= bb->interval;
    if (!restart)
        shared = common_prefix(bb->last_key.data, bb->last_key.len, key, klen);
    size_t non_shared = klen - shared;
    if (!kbuf_reserve(&bb->buf, 3 * VARINT64_MAX + non_shared + vlen) ||
        !kbuf_reserve(&bb->restarts, 4) || !kbuf_reserve(&bb->last_key, non_shared))
        return false;
    if (restart) {
        enc_fixed32(bb->restarts.data + bb->restarts.len, (uint32_t)bb->buf.len);
        bb->restarts.len += 4;
        bb->counter = 0;
    }
    uint8_t *p = bb->buf.data + bb->buf.len;
    p += enc_varint64(p, shared);
    p += enc_varint64(p, non_shared);
    p += enc_varint64(p, vlen);
    if (non_shared)
        memcpy(p, key + shared, non_shared);
    p += non_shared;
    if (vlen)
        memcpy(p, val, vlen);
    p += vlen;
    bb->buf.len = (size_t)(p - bb->buf.data);
    /* last_key keeps its first `shared` bytes, which equal the new key's */
    if (non_shared)
        memcpy(bb->last_key.data + shared, key + shared, non_shared);
    bb->last_key.len = klen;
    bb->counter++;
    bb->entries++;
    return true;
}

const uint8_t *sst_block_builder_finish(sst_block_builder *bb, size_t *len_out)
{
    if (!bb->finished) {
        if (bb->restarts.len == 0 && !kbuf_put_fixed32(&bb->restarts, 0))
            return NULL; /* an empty block still has the restart point 0 */
        size_t nrestarts = bb->restarts.len / 4;
        if (!kbuf_reserve(&bb->buf, bb->restarts.len + 4))
            return NULL;
        kbuf_append(&bb->buf, bb->restarts.data, bb->restarts.len);
        kbuf_put_fixed32(&bb->buf, (uint32_t)nrestarts);
        bb->finished = true;
    }
    *len_out = bb->buf.len;
    return bb->buf.data;
}
