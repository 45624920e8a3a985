/*
 * coding.h - fixed-width and varint encodings used by every on-disk format.
 *
 * Fixed-width integers are little-endian unless the name says _be (big-endian is used where
 * memcmp order must equal numeric order, e.g. the hash prefix of storage keys). Varints are
 * LEB128 (7 bits per byte, low group first), as in LevelDB and protobuf.
 */
#ifndef KURA_UTIL_CODING_H
#define KURA_UTIL_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void enc_fixed32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4); /* x86-64 and aarch64 Linux are little-endian */
}
static inline void enc_fixed64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static inline uint32_t dec_fixed32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t dec_fixed64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline void enc_fixed64_be(uint8_t *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}
static inline uint64_t dec_fixed64_be(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

enum { VARINT32_MAX = 5, VARINT64_MAX = 10 };

/* Writes v at p, returns the number of bytes written (1..10). */
static inline size_t enc_varint64(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static inline size_t enc_varint32(uint8_t *p, uint32_t v)
{
    return enc_varint64(p, v);
}
static inline size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Decodes a varint from [p, end). Returns the pointer past it, or NULL if the input is
 * truncated or the value overflows 64 (32) bits. */
static inline const uint8_t *dec_varint64(const uint8_t *p, const uint8_t *end, uint64_t *v_out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift <= 63 && p < end; shift += 7) {
        uint64_t byte = *p++;
        if (shift == 63 && byte > 1)
            return NULL;
        v |= (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v_out = v;
            return p;
        }
    }
    return NULL;
}
static inline const uint8_t *dec_varint32(const uint8_t *p, const uint8_t *end, uint32_t *v_out)
{
    uint64_t v;
    const uint8_t *q = dec_varint64(p, end, &v);
    if (!q || v > UINT32_MAX)
        return NULL;
    *v_out = (uint32_t)v;
    return q;
}

#endif
