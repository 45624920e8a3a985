/*
 * buf.h - a growable byte buffer (pointer, length, capacity) for building records and blocks.
 *
 * Appends may reallocate `data`: pointers into a buffer are invalidated by any append. On
 * allocation failure the append returns false and the buffer is unchanged.
 */
#ifndef KURA_UTIL_BUF_H
#define KURA_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/coding.h"

typedef struct kbuf {
    uint8_t *data;
    size_t len;
    size_t cap;
} kbuf;

#define KBUF_INIT {NULL, 0, 0}

bool kbuf_reserve_slow(kbuf *b, size_t need);

/* Ensures room for `extra` more bytes. */
static inline bool kbuf_reserve(kbuf *b, size_t extra)
{
    return b->len + extra <= b->cap || kbuf_reserve_slow(b, b->len + extra);
}
static inline bool kbuf_append(kbuf *b, const void *p, size_t n)
{
    if (!kbuf_reserve(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return true;
}
static inline bool kbuf_put_u8(kbuf *b, uint8_t v)
{
    return kbuf_append(b, &v, 1);
}
static inline bool kbuf_put_fixed32(kbuf *b, uint32_t v)
{
    if (!kbuf_reserve(b, 4))
        return false;
    enc_fixed32(b->data + b->len, v);
    b->len += 4;
    return true;
}
static inline bool kbuf_put_fixed64(kbuf *b, uint64_t v)
{
    if (!kbuf_reserve(b, 8))
        return false;
    enc_fixed64(b->data + b->len, v);
    b->len += 8;
    return true;
}
static inline bool kbuf_put_varint(kbuf *b, uint64_t v)
{
    if (!kbuf_reserve(b, VARINT64_MAX))
        return false;
    b->len += enc_varint64(b->data + b->len, v);
    return true;
}
/* varint length followed by the bytes */
static inline bool kbuf_put_lenbytes(kbuf *b, const void *p, size_t n)
{
    return kbuf_put_varint(b, n) && kbuf_append(b, p, n);
}
static inline void kbuf_clear(kbuf *b)
{
    b->len = 0;
}
static inline void kbuf_free(kbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
