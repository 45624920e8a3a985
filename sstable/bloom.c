/*
 * bloom.c - building and probing bloom filters (docs/format/sstable.md section 4).
 *
 * Double hashing (Kirsch-Mitzenmacher) gets all k probes from one 64-bit hash: x_i = h + i*d
 * with d = rotl(h, 32). A probe maps x_i onto [0, nbits) by its high bits (multiply-shift,
 * "fastrange"), which avoids a division per probe; d's high bits are h's low bits, so the
 * probe sequence is as independent of the first position as two hashes would be.
 */
#include "sstable/bloom.h"

#include <stdlib.h>

static inline uint64_t probe_step(uint64_t h)
{
    return (h >> 32) | (h << 32);
}

static inline uint64_t probe_bit(uint64_t x, uint64_t nbits)
{
    return (uint64_t)(((unsigned __int128)x * nbits) >> 64);
}

unsigned sst_bloom_k(uint32_t bits_per_key)
{
    unsigned k = (unsigned)((double)bits_per_key * 0.69 + 0.5);
    return k < 1 ? 1 : k > 30 ? 30 : k;
}

void sst_bloom_builder_init(sst_bloom_builder *b, uint32_t bits_per_key)
{
    b->hashes = NULL;
    b->n = b->cap = 0;
    b->bits_per_key = bits_per_key;
}

void sst_bloom_builder_free(sst_bloom_builder *b)
{
    free(b->hashes);
    b->hashes = NULL;
    b->n = b->cap = 0;
}

bool sst_bloom_builder_add(sst_bloom_builder *b, const uint8_t *key, size_t len)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        uint64_t *p = realloc(b->hashes, cap * sizeof *p);
        if (!p)
            return false;
        b->hashes = p;
        b->cap = cap;
    }
    b->hashes[b->n++] = kura_hash64(key, len);
    return true;
}

bool sst_bloom_builder_finish(const sst_bloom_builder *b, kbuf *out)
{
    uint64_t nbits = (uint64_t)b->n * b->bits_per_key;
    if (nbits < 64)
        nbits = 64; /* tiny filters would have a high false-positive rate */
    size_t nbytes = (size_t)((nbits + 7) / 8);
    nbits = (uint64_t)nbytes * 8;
    unsigned k = sst_bloom_k(b->bits_per_key);
    if (!kbuf_reserve(out, nbytes + 1))
        return false;
    uint8_t *bits = out->data + out->len;
    memset(bits, 0, nbytes);
    for (size_t i = 0; i < b->n; i++) {
        uint64_t x = b->hashes[i], d = probe_step(x);
        for (unsigned j = 0; j < k; j++, x += d) {
            uint64_t bit = probe_bit(x, nbits);
            bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        }
    }
    bits[nbytes] = (uint8_t)k;
    out->len += nbytes + 1;
    return true;
}

bool sst_bloom_parse(sst_bloom *f_out, const uint8_t *data, size_t len)
{
    if (len < 2)
        return false;
    unsigned k = data[len - 1];
    if (k < 1 || k > 30)
        return false;
    f_out->bits = data;
    f_out->nbits = (uint64_t)(len - 1) * 8;
    f_out->k = k;
    return true;
}

bool sst_bloom_may_contain_hash(const sst_bloom *f, uint64_t h)
{
    uint64_t x = h, d = probe_step(h);
    for (unsigned j = 0; j < f->k; j++, x += d) {
        uint64_t bit = probe_bit(x, f->nbits);
        if (!(f->bits[bit >> 3] & (1u << (bit & 7))))
            return false;
    }
    return true;
}
