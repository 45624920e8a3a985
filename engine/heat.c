/*
 * This file contains the capacity accumulator (engine/heat.h): stripes, each a mutex over a
 * totals window and a space-saving sketch; records go to the stripe of their key's hash, and
 * queries visit every stripe in turn and merge.
 */
#include "engine/heat.h"

#include <stdlib.h>
#include <string.h>

#include "engine/heat_stripe.h"
#include "util/hash.h"

static bool pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

kura_status heat_acc_open(const heat_config *cfg, heat_acc **acc_out)
{
    heat_config c = cfg ? *cfg : (heat_config){0};
    if (!c.k)
        c.k = 1024;
    if (!c.stripes)
        c.stripes = 8;
    if (!c.key_max)
        c.key_max = HEAT_KEY_MAX_DEFAULT;
    if (!pow2(c.stripes))
        return KURA_E_INVALID;
    while (c.stripes > c.k)
        c.stripes >>= 1;
    heat_acc *a = calloc(1, sizeof(*a));
    heat_stripe *st = a ? aligned_alloc(64, c.stripes * sizeof(heat_stripe)) : NULL;
    if (!st) {
        free(a);
        return KURA_E_NOMEM;
    }
    memset(st, 0, c.stripes * sizeof(heat_stripe));
    a->stripe = st;
    a->nstripes = c.stripes;
    a->shift = 64;
    for (uint32_t s = c.stripes; s > 1; s >>= 1)
        a->shift--;
    uint32_t ks = (c.k + c.stripes - 1) / c.stripes;
    a->bytes = sizeof(*a) + c.stripes * sizeof(heat_stripe);
    for (uint32_t i = 0; i < c.stripes; i++) {
        kura_status rc = heat_sketch_init(&st[i].sk, ks, c.key_max);
        if (rc == KURA_OK && c.filter_buckets)
            rc = heat_sketch_set_filter(&st[i].sk, c.filter_buckets / c.stripes);
        if (rc == KURA_OK && c.pair)
            rc = heat_sketch_init(&st[i].sk2, ks, c.key_max);
        if (rc == KURA_OK && c.pair && c.filter_buckets)
            rc = heat_sketch_set_filter(&st[i].sk2, c.filter_buckets / c.stripes);
        if (rc != KURA_OK) {
            heat_sketch_free(&st[i].sk);
            heat_sketch_free(&st[i].sk2);
            for (uint32_t j = 0; j < i; j++) {
                heat_sketch_free(&st[j].sk);
                heat_sketch_free(&st[j].sk2);
                kmutex_destroy(&st[j].mu);
            }
            free(st);
            free(a);
            return rc;
        }
        kmutex_init(&st[i].mu);
        heat_window_init(&st[i].total);
        size_t fb = c.filter_buckets / c.stripes * sizeof(uint64_t);
        a->bytes += heat_sketch_bytes(ks, c.key_max) + fb;
        if (c.pair)
            a->bytes += heat_sketch_bytes(ks, c.key_max) + fb;
    }
    *acc_out = a;
    return KURA_OK;
}

void heat_acc_close(heat_acc *acc)
{
    if (!acc)
        return;
    for (uint32_t i = 0; i < acc->nstripes; i++) {
        heat_sketch_free(&acc->stripe[i].sk);
        heat_sketch_free(&acc->stripe[i].sk2);
        kmutex_destroy(&acc->stripe[i].mu);
    }
    free(acc->stripe);
    free(acc);
}

size_t heat_acc_bytes(const heat_acc *acc)
{
    return acc->bytes;
}

static heat_stripe *stripe_of(heat_acc *acc, uint64_t hash)
{
    return &acc->stripe[acc->shift >= 64 ? 0 : hash >> acc->shift];
}

void heat_acc_record(heat_acc *acc, const void *key, size_t len, int64_t now_ms, uint64_t rd,
                     uint64_t wr)
{
    uint64_t h = kura_hash64(key, len);
    heat_stripe *s = stripe_of(acc, h);
    kmutex_lock(&s->mu);
    heat_window_add(&s->total, now_ms, rd, wr);
    heat_sketch_record(&s->sk, h, key, len, now_ms, rd, wr);
    kmutex_unlock(&s->mu);
}

void heat_acc_record_pair(heat_acc *acc, const void *key, size_t first_len, size_t len,
                          int64_t now_ms, uint64_t rd, uint64_t wr)
{
    uint64_t h = kura_hash64(key, first_len);
    heat_stripe *s = stripe_of(acc, h);
    uint64_t h2 = len > first_len && s->sk2.k ? kura_hash64(key, len) : 0;
    kmutex_lock(&s->mu);
    heat_window_add(&s->total, now_ms, rd, wr);
    heat_sketch_record(&s->sk, h, key, first_len, now_ms, rd, wr);
    if (len > first_len && s->sk2.k)
        heat_sketch_record(&s->sk2, h2, key, len, now_ms, rd, wr);
    kmutex_unlock(&s->mu);
}

void heat_acc_total(heat_acc *acc, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                    uint64_t *wr_out)
{
    uint64_t rd = 0, wr = 0;
    for (uint32_t i = 0; i < acc->nstripes; i++) {
        uint64_t r, w;
        kmutex_lock(&acc->stripe[i].mu);
        heat_window_sum(&acc->stripe[i].total, now_ms, secs, &r, &w);
        kmutex_unlock(&acc->stripe[i].mu);
        rd += r;
        wr += w;
    }
    *rd_out = rd;
    *wr_out = wr;
}
