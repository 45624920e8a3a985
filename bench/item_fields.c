/*
 * item_fields.c - the fields of the benchmark items (item_fields.h).
 */
#include "bench/item_fields.h"

#include <stdio.h>
#include <string.h>

#include "bench/keys.h"

void bench_item_key_make(uint64_t index, bench_item_fields *f)
{
    uint64_t pk = index / BENCH_ITEMS_PER_PK;
    snprintf(f->pk, sizeof f->pk, "user%012llu", (unsigned long long)(pk % 1000000000000ull));
    snprintf(f->sk, sizeof f->sk, "order#%05llu",
             (unsigned long long)(index % BENCH_ITEMS_PER_PK % 100000));
}

void bench_item_fields_make(uint64_t index, bench_item_fields *f)
{
    bench_item_key_make(index, f);
    snprintf(f->name, sizeof f->name, "Customer Name %010llu", (unsigned long long)index);
    snprintf(f->email, sizeof f->email, "customer%010llu@example.com",
             (unsigned long long)index);
    snprintf(f->city, sizeof f->city, "City %06llu", (unsigned long long)(index % 997));
    snprintf(f->zip, sizeof f->zip, "%07llu", (unsigned long long)(index * 7919 % 10000000));
    for (int i = 0; i < 3; i++)
        snprintf(f->tag[i], sizeof f->tag[i], "tag-%c%05llu", 'a' + i,
                 (unsigned long long)((index + (uint64_t)i * 31) % 100000));
    snprintf(f->price, sizeof f->price, "%llu.%02llu", (unsigned long long)(index % 100000),
             (unsigned long long)(index % 100));
    bench_rng r;
    bench_rng_seed(&r, index);
    for (size_t i = 0; i < sizeof f->data; i += 8) {
        uint64_t x = bench_rng_next(&r);
        memcpy(f->data + i, &x, 8);
    }
    f->active = index % 3 != 0;
}
