/*
 * keys.c - key formatting, the compressible value generator and the random number
 * generator of kura-bench (see keys.h for the formats and why).
 */
#include "bench/keys.h"

#include <stdlib.h>
#include <string.h>

#include "util/status.h"

/* db_bench's generator: 1 MiB of data, pieces of 100 bytes at a compression ratio of 0.5. */
#define VALUES_MIN_BYTES (1u << 20)
#define VALUES_PIECE 100
#define VALUES_RAW (VALUES_PIECE / 2)

void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t bench_rng_below(bench_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift: uniform enough for n far below 2^64, and no division. */
    return (uint64_t)(((unsigned __int128)bench_rng_next(r) * n) >> 64);
}

uint64_t bench_seed_mix(uint64_t a, uint64_t b, uint64_t c)
{
    bench_rng r;
    bench_rng_seed(&r, a);
    uint64_t x = bench_rng_next(&r) ^ b;
    bench_rng_seed(&r, x);
    x = bench_rng_next(&r) ^ c;
    bench_rng_seed(&r, x);
    return bench_rng_next(&r);
}

static uint32_t decimal_digits(uint64_t v)
{
    uint32_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

bool bench_key_fits(uint32_t key_size, uint64_t num)
{
    uint64_t max_index = num > 0 ? num - 1 : 0;
    return key_size >= 2 && decimal_digits(max_index) <= key_size - 1;
}

/* Writes `index` in decimal, right-aligned and zero-padded, into p[0..len). */
static void put_decimal(uint8_t *p, uint32_t len, uint64_t index)
{
    for (uint32_t i = len; i > 0; i--) {
        p[i - 1] = (uint8_t)('0' + index % 10);
        index /= 10;
    }
}

void bench_key_format(uint8_t *key, uint32_t key_size, uint64_t index)
{
    put_decimal(key, key_size, index);
}

void bench_key_missing(uint8_t *key, uint32_t key_size, uint64_t index)
{
    put_decimal(key, key_size - 1, index);
    key[key_size - 1] = 'x';
}

kura_status bench_values_init(bench_values *v, uint32_t value_size, uint64_t seed)
{
    size_t len = value_size > VALUES_MIN_BYTES ? value_size : VALUES_MIN_BYTES;
    /* Round up to whole pieces so every piece is complete. */
    len = (len + VALUES_PIECE - 1) / VALUES_PIECE * VALUES_PIECE;
    uint8_t *data = malloc(len);
    if (data == NULL)
        return kura_err(KURA_E_NOMEM, "value buffer of %zu bytes", len);
    bench_rng r;
    bench_rng_seed(&r, seed);
    for (size_t off = 0; off < len; off += VALUES_PIECE) {
        uint8_t raw[VALUES_RAW];
        for (size_t i = 0; i < VALUES_RAW; i++)
            raw[i] = (uint8_t)(' ' + bench_rng_below(&r, 95)); /* printable, as db_bench */
        for (size_t i = 0; i < VALUES_PIECE; i++)
            data[off + i] = raw[i % VALUES_RAW];
    }
    v->data = data;
    v->len = len;
    v->value_size = value_size;
    return KURA_OK;
}

void bench_values_free(bench_values *v)
{
    free(v->data);
    v->data = NULL;
    v->len = 0;
}

const uint8_t *bench_values_next(const bench_values *v, size_t *pos)
{
    if (*pos + v->value_size > v->len)
        *pos = 0;
    const uint8_t *p = v->data + *pos;
    *pos += v->value_size;
    return p;
}
