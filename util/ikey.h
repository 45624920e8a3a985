/*
 * ikey.h - internal keys: the keys the memtable and SSTables store.
 *
 * An internal key is `user_key || trailer`, the trailer a little-endian fixed64 holding
 * (seq << 8) | type. Order: user keys by memcmp (a prefix sorts first), then trailers
 * descending, so the newest version of a key comes first. To find the newest version of
 * `k` visible at snapshot `s`, seek to ikey(k, s, IKEY_TYPE_SEEK).
 *
 * Sequence numbers are 56 bits (database-wide, DESIGN.md section 3).
 */
#ifndef KURA_UTIL_IKEY_H
#define KURA_UTIL_IKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/coding.h"

enum {
    IKEY_TYPE_DELETE = 0,
    IKEY_TYPE_VALUE = 1,
    IKEY_TYPE_SEEK = 1, /* the highest type: sorts first among equal sequence numbers */
    IKEY_TRAILER = 8,
};

#define IKEY_MAX_SEQ ((UINT64_C(1) << 56) - 1)

static inline uint64_t ikey_pack(uint64_t seq, unsigned type)
{
    return (seq << 8) | type;
}

/* Writes key || trailer into out (klen + 8 bytes). */
static inline void ikey_encode(uint8_t *out, const void *key, size_t klen, uint64_t seq,
                               unsigned type)
{
    memcpy(out, key, klen);
    enc_fixed64(out + klen, ikey_pack(seq, type));
}

static inline uint64_t ikey_trailer(const uint8_t *ik, size_t iklen)
{
    return dec_fixed64(ik + iklen - IKEY_TRAILER);
}
static inline uint64_t ikey_seq(const uint8_t *ik, size_t iklen)
{
    return ikey_trailer(ik, iklen) >> 8;
}
static inline unsigned ikey_type(const uint8_t *ik, size_t iklen)
{
    return (unsigned)(ikey_trailer(ik, iklen) & 0xff);
}
static inline size_t ikey_user_len(size_t iklen)
{
    return iklen - IKEY_TRAILER;
}

/* memcmp order, a prefix first. Compares 8 bytes at a time (byte-swapped words) instead of
 * calling memcmp: keys are short, and this sits under every skiplist and block search. */
static inline int ukey_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) {
            x = __builtin_bswap64(x);
            y = __builtin_bswap64(y);
            return x < y ? -1 : 1;
        }
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return alen < blen ? -1 : alen > blen;
}

/* Compares two internal keys (both at least 8 bytes). */
static inline int ikey_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    int c = ukey_cmp(a, alen - IKEY_TRAILER, b, blen - IKEY_TRAILER);
    if (c)
        return c;
    uint64_t ta = ikey_trailer(a, alen), tb = ikey_trailer(b, blen);
    return ta > tb ? -1 : ta < tb;
}

#endif
