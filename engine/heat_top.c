/*
 * This file contains the top-n query of the capacity accumulator (engine/heat.h): each
 * stripe, under its mutex, ranks its counters by the window's units and copies its best n;
 * the stripes' lists are then merged into the n best of all.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/heat.h"
#include "engine/heat_sketch.h"
#include "engine/heat_stripe.h"

/* A counter of a stripe with its window's units, while ranking. */
typedef struct ranked {
    uint64_t units, rd, wr;
    const heat_counter *c;
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->units != b->units)
        return a->units < b->units ? 1 : -1;
    return a->c->hash < b->c->hash ? -1 : a->c->hash > b->c->hash;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const heat_entry *a = pa, *b = pb;
    if (a->units != b->units)
        return a->units < b->units ? 1 : -1;
    uint32_t la = a->key_len, lb = b->key_len;
    int c = memcmp(a->key, b->key, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* Appends stripe s's best n (at most) to out[*m..], *m advanced. Caller holds s->mu. */
static kura_status stripe_best(const heat_sketch *sk, int64_t now_ms, uint32_t secs,
                               heat_kind kind, size_t n, ranked *tmp, heat_entry *out,
                               size_t *m)
{
    size_t cnt = 0;
    for (uint32_t i = 0; i < sk->used; i++) {
        ranked r = {.c = &sk->ctr[i]};
        heat_window_sum(&sk->ctr[i].win, now_ms, secs, &r.rd, &r.wr);
        r.units = kind == HEAT_READ ? r.rd : r.wr;
        if (r.units)
            tmp[cnt++] = r;
    }
    qsort(tmp, cnt, sizeof(ranked), cmp_ranked);
    for (size_t i = 0; i < cnt && i < n; i++) {
        const heat_counter *c = tmp[i].c;
        size_t stored = c->key_len < sk->key_max ? c->key_len : sk->key_max;
        heat_entry *e = &out[(*m)++];
        *e = (heat_entry){.key = malloc(stored ? stored : 1), .key_len = c->key_len,
                          .units = tmp[i].units, .rd = tmp[i].rd, .wr = tmp[i].wr,
                          .err = c->err};
        heat_window_peak(&c->win, now_ms, secs, &e->peak_rd, &e->peak_wr);
        if (!e->key)
            return KURA_E_NOMEM;
        memcpy(e->key, heat_sketch_key(sk, c), stored);
    }
    return KURA_OK;
}

static kura_status acc_top(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                           size_t n, bool second, heat_top *top_out);

kura_status heat_acc_top(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                         size_t n, heat_top *top_out)
{
    return acc_top(acc, now_ms, secs, kind, n, false, top_out);
}

kura_status heat_acc_top_second(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                                size_t n, heat_top *top_out)
{
    return acc_top(acc, now_ms, secs, kind, n, true, top_out);
}

static kura_status acc_top(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                           size_t n, bool second, heat_top *top_out)
{
    memset(top_out, 0, sizeof(*top_out));
    top_out->secs = secs < 1 ? 1 : secs > HEAT_WINDOW_S ? HEAT_WINDOW_S : secs;
    uint32_t ns = heat_acc_nstripes(acc);
    uint32_t per = acc_stripe(acc, 0)->sk.k;
    size_t cap = (size_t)ns * (n < per ? n : per);
    ranked *tmp = malloc((size_t)per * sizeof(ranked));
    heat_entry *all = calloc(cap ? cap : 1, sizeof(heat_entry));
    kura_status rc = tmp && all ? KURA_OK : KURA_E_NOMEM;
    size_t m = 0;
    for (uint32_t i = 0; i < ns && rc == KURA_OK; i++) {
        heat_stripe *s = acc_stripe(acc, i);
        kmutex_lock(&s->mu);
        if (!second || s->sk2.k)
            rc = stripe_best(second ? &s->sk2 : &s->sk, now_ms, secs, kind, n, tmp, all, &m);
        kmutex_unlock(&s->mu);
    }
    free(tmp);
    top_out->e = all;
    top_out->n = m;
    if (rc != KURA_OK) {
        heat_top_free(top_out);
        return rc;
    }
    qsort(all, m, sizeof(heat_entry), entry_cmp);
    for (size_t i = n; i < m; i++)
        free(all[i].key);
    top_out->n = m < n ? m : n;
    return KURA_OK;
}

void heat_top_free(heat_top *top)
{
    if (top->e)
        for (size_t i = 0; i < top->n; i++)
            free(top->e[i].key);
    free(top->e);
    memset(top, 0, sizeof(*top));
}
