/*
 * block.c - the block cursor: binary search over restart points, then a linear scan that
 * rebuilds each key from its shared prefix (docs/format/sstable.md section 3).
 *
 * prev() follows LevelDB: go back to the restart point before the current entry and scan
 * forward to the entry just before it, so blocks need no backward links. Restart offsets are
 * checked when they are used, not when the block is loaded, so a cache miss costs no pass
 * over the restart array.
 */
#include "sstable/block.h"

#include <stdlib.h>
#include <string.h>

#include "util/coding.h"
#include "util/ikey.h"

bool sst_block_parse(sst_block *b_out, const uint8_t *data, size_t size)
{
    if (size < 4 || size > UINT32_MAX)
        return false;
    uint32_t n = dec_fixed32(data + size - 4);
    if (n == 0 || n > (size - 4) / 4)
        return false;
    b_out->data = data;
    b_out->size = size;
    b_out->num_restarts = n;
    b_out->restarts_off = (uint32_t)(size - 4 - 4 * (size_t)n);
    return true;
}

void sst_block_iter_init(sst_block_iter *it, uint32_t min_klen)
{
    it->kheap = NULL;
    it->kcap = SST_KEY_INLINE;
    it->min_klen = min_klen;
    sst_block_iter_clear(it);
}

void sst_block_iter_clear(sst_block_iter *it)
{
    it->data = NULL;
    it->restarts_off = it->num_restarts = 0;
    it->cur = it->next = it->restart_idx = 0;
    it->err = KURA_OK;
    it->val = NULL;
    it->vlen = it->klen = 0;
}

void sst_block_iter_set(sst_block_iter *it, const sst_block *b)
{
    sst_block_iter_clear(it);
    it->data = b->data;
    it->restarts_off = b->restarts_off;
    it->num_restarts = b->num_restarts;
    it->cur = it->next = b->restarts_off; /* unpositioned */
    it->restart_idx = b->num_restarts;
}

void sst_block_iter_destroy(sst_block_iter *it)
{
    free(it->kheap);
    it->kheap = NULL;
    it->kcap = SST_KEY_INLINE;
}

static inline uint32_t restart_at(const sst_block_iter *it, uint32_t i)
{
    return dec_fixed32(it->data + it->restarts_off + 4 * (size_t)i);
}

static void mark_end(sst_block_iter *it)
{
    it->cur = it->next = it->restarts_off;
    it->restart_idx = it->num_restarts;
}

static void fail(sst_block_iter *it, kura_status s)
{
    it->err = s;
    mark_end(it);
}

/* Decodes an entry header at p; NULL if it is malformed or its bytes pass `limit`. */
static inline const uint8_t *decode_entry(const uint8_t *p, const uint8_t *limit,
                                          uint32_t *shared, uint32_t *non_shared, uint32_t *vlen)
{
    if (limit - p < 3)
        return NULL;
    *shared = p[0];
    *non_shared = p[1];
    *vlen = p[2];
    if ((*shared | *non_shared | *vlen) < 128) {
        p += 3; /* the common case: three one-byte varints */
    } else if (!(p = dec_varint32(p, limit, shared)) || !(p = dec_varint32(p, limit, non_shared)) ||
               !(p = dec_varint32(p, limit, vlen))) {
        return NULL;
    }
    if ((size_t)(limit - p) < (size_t)*non_shared + *vlen)
        return NULL;
    return p;
}

/* Makes room for a key of `need` bytes, keeping the first `keep` bytes. */
static bool key_reserve(sst_block_iter *it, size_t need, size_t keep)
{
    if (need <= it->kcap)
        return true;
    size_t cap = it->kcap * 2 > need ? it->kcap * 2 : need;
    uint8_t *p = realloc(it->kheap, cap);
    if (!p)
        return false;
    if (!it->kheap && keep)
        memcpy(p, it->key_inline, keep);
    it->kheap = p;
    it->kcap = cap;
    return true;
}

/* Moves to the entry at it->next. Returns false at the end or on an error. */
static bool parse_next(sst_block_iter *it)
{
    it->cur = it->next;
    if (it->cur >= it->restarts_off) {
        mark_end(it);
        return false;
    }
    const uint8_t *limit = it->data + it->restarts_off;
    uint32_t shared, non_shared, vlen;
    const uint8_t *p = decode_entry(it->data + it->cur, limit, &shared, &non_shared, &vlen);
    if (!p || shared > it->klen || (size_t)shared + non_shared < it->min_klen) {
        fail(it, KURA_E_CORRUPTION);
        return false;
    }
    size_t klen = (size_t)shared + non_shared;
    if (!key_reserve(it, klen, shared)) {
        fail(it, KURA_E_NOMEM);
        return false;
    }
    uint8_t *k = it->kheap ? it->kheap : it->key_inline;
    memcpy(k + shared, p, non_shared);
    it->klen = klen;
    it->val = p + non_shared;
    it->vlen = vlen;
    it->next = (uint32_t)(it->val + vlen - it->data);
    while (it->restart_idx + 1 < it->num_restarts && restart_at(it, it->restart_idx + 1) < it->cur)
        it->restart_idx++;
    return true;
}

/* Prepares to parse from restart point i (the next parse_next lands on it). */
static bool seek_to_restart(sst_block_iter *it, uint32_t i)
{
    uint32_t off = restart_at(it, i);
    if (off >= it->restarts_off) {
        fail(it, KURA_E_CORRUPTION);
        return false;
    }
    it->klen = 0;
    it->restart_idx = i;
    it->next = off;
    return true;
}

void sst_block_iter_seek_first(sst_block_iter *it)
{
    if (it->restarts_off == 0) {
        mark_end(it); /* empty block (or none) */
        return;
    }
    if (seek_to_restart(it, 0))
        parse_next(it);
}

void sst_block_iter_seek_last(sst_block_iter *it)
{
    if (it->restarts_off == 0) {
        mark_end(it);
        return;
    }
    if (!seek_to_restart(it, it->num_restarts - 1))
        return;
    while (parse_next(it) && it->next < it->restarts_off) {
    }
}

/* The key stored whole at restart point i, or NULL if malformed. */
static const uint8_t *restart_key(sst_block_iter *it, uint32_t i, size_t *klen_out)
{
    uint32_t off = restart_at(it, i), shared, non_shared, vlen;
    if (off >= it->restarts_off)
        return NULL;
    const uint8_t *p =
        decode_entry(it->data + off, it->data + it->restarts_off, &shared, &non_shared, &vlen);
    if (!p || shared != 0 || non_shared < it->min_klen)
        return NULL;
    *klen_out = non_shared;
    return p;
}

void sst_block_iter_seek(sst_block_iter *it, const uint8_t *target, size_t tlen)
{
    if (it->restarts_off == 0) {
        mark_end(it);
        return;
    }
    /* The last restart point whose key is < target: the first key >= target follows it. */
    uint32_t left = 0, right = it->num_restarts - 1;
    while (left < right) {
        uint32_t mid = left + (right - left + 1) / 2;
        size_t klen;
        const uint8_t *k = restart_key(it, mid, &klen);
        if (!k) {
            fail(it, KURA_E_CORRUPTION);
            return;
        }
        if (ikey_cmp(k, klen, target, tlen) < 0)
            left = mid;
        else
            right = mid - 1;
    }
    if (!seek_to_restart(it, left))
        return;
    while (parse_next(it)) {
        const uint8_t *k = it->kheap ? it->kheap : it->key_inline;
        if (ikey_cmp(k, it->klen, target, tlen) >= 0)
            return;
    }
}

void sst_block_iter_next(sst_block_iter *it)
{
    parse_next(it);
}

void sst_block_iter_prev(sst_block_iter *it)
{
    uint32_t original = it->cur;
    while (restart_at(it, it->restart_idx) >= original) {
        if (it->restart_idx == 0) {
            mark_end(it); /* before the first entry */
            return;
        }
        it->restart_idx--;
    }
    if (!seek_to_restart(it, it->restart_idx))
        return;
    while (parse_next(it) && it->next < original) {
    }
}
