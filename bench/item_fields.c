/*
 * item_fields.c - the fields of the benchmark items (item_fields.h).
 */
#include "bench/item_fields.h"

#include <string.h>

#include "bench/keys.h"

/* Writes v in decimal, zero-padded to at least `width` digits, at p; returns the end. The
 * fields are made without printf: kura-http-bench makes one item per PutItem on the client's
 * one thread, and its snprintf calls were 4% of the machine the server shares with it. */
static char *put_dec(char *p, uint64_t v, int width)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width--)
        *p++ = '0';
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

void bench_item_key_make(uint64_t index, bench_item_fields *f)
{
    uint64_t pk = index / BENCH_ITEMS_PER_PK;
    *put_dec(bench_put_str(f->pk, "user"), pk % 1000000000000ull, 12) = 0;
    *put_dec(bench_put_str(f->sk, "order#"), index % BENCH_ITEMS_PER_PK % 100000, 5) = 0;
}

void bench_item_fields_make(uint64_t index, bench_item_fields *f)
{
    bench_item_key_make(index, f);
    *put_dec(bench_put_str(f->name, "Customer Name "), index, 10) = 0;
    *bench_put_str(put_dec(bench_put_str(f->email, "customer"), index, 10),
             "@example.com") = 0;
    *put_dec(bench_put_str(f->city, "City "), index % 997, 6) = 0;
    *put_dec(f->zip, index * 7919 % 10000000, 7) = 0;
    for (int i = 0; i < 3; i++) {
        char *p = bench_put_str(f->tag[i], "tag-");
        *p++ = (char)('a' + i);
        *put_dec(p, (index + (uint64_t)i * 31) % 100000, 5) = 0;
    }
    char *p = put_dec(f->price, index % 100000, 1);
    *p++ = '.';
    *put_dec(p, index % 100, 2) = 0;
    bench_rng r;
    bench_rng_seed(&r, index);
    for (size_t i = 0; i < sizeof f->data; i += 8) {
        uint64_t x = bench_rng_next(&r);
        memcpy(f->data + i, &x, 8);
    }
    f->active = index % 3 != 0;
}
