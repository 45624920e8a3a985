/*
 * keys.h - the keys, values and random numbers of kura-bench's workloads.
 *
 * Keys are db_bench's: the decimal index, zero-padded to --key-size bytes ("%016d" for 16).
 * A missing key has the index in the first key_size-1 bytes and 'x' as the last byte; no
 * real key contains a letter, so it cannot exist, and it sorts among the real keys (so
 * bloom filters, not key ranges, must reject it).
 *
 * Values are db_bench's RandomGenerator: a buffer of 100-byte pieces, each 50 random
 * printable bytes written twice, so a value compresses to about half its size. A value is a
 * window of the buffer; every thread walks the buffer from its own position.
 */
#ifndef KURA_BENCH_KEYS_H
#define KURA_BENCH_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

/* splitmix64: fast, and good enough to pick uniform key indexes. */
typedef struct bench_rng {
    uint64_t state;
} bench_rng;

void bench_rng_seed(bench_rng *r, uint64_t seed);
uint64_t bench_rng_next(bench_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t bench_rng_below(bench_rng *r, uint64_t n);
/* Mixes a few numbers into one seed (run seed, workload, thread). */
uint64_t bench_seed_mix(uint64_t a, uint64_t b, uint64_t c);

/* Whether keys of key_size bytes can hold every index below num and its missing key. */
bool bench_key_fits(uint32_t key_size, uint64_t num);
/* Writes the key of `index` into key[0..key_size). */
void bench_key_format(uint8_t *key, uint32_t key_size, uint64_t index);
/* Writes the missing key of `index` into key[0..key_size). */
void bench_key_missing(uint8_t *key, uint32_t key_size, uint64_t index);

typedef struct bench_values {
    uint8_t *data; /* owned; len >= value_size */
    size_t len;
    uint32_t value_size;
} bench_values;

/* Builds the value buffer. KURA_E_NOMEM if it cannot be allocated. */
kura_status bench_values_init(bench_values *v, uint32_t value_size, uint64_t seed);
void bench_values_free(bench_values *v);
/* The next value (value_size bytes, pointing into v) for the walker at *pos. */
const uint8_t *bench_values_next(const bench_values *v, size_t *pos);

#endif
