/*
 * crc32c.c - CRC-32C with the SSE4.2 instruction and a slicing-by-8 fallback.
 *
 * The dispatch is decided once (first call) and cached in a function pointer.
 */
#include "util/crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t crc32c_extend_portable(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&table_once, table_init);
    const uint8_t *p = data;
    uint32_t c = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;
        c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
            table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
            table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return ~c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc32c_extend_hw(uint32_t crc, const void *data,
                                                                   size_t n)
{
    const uint8_t *p = data;
    uint64_t c = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static crc_fn choose(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_extend_hw;
#endif
    return crc32c_extend_portable;
}

uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n)
{
    static crc_fn fn; /* benign race: every thread computes the same pointer */
    crc_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f) {
        f = choose();
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    return f(crc, data, n);
}
