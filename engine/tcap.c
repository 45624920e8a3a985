/*
 * tcap.c - This file contains a table's capacity state (engine/tcap.h): its targets, the
 * settings the throttle follows, and the accounting every read and write records.
 *
 * The record path is what every PutItem and GetItem pays with throttling off: one atomic load
 * of the target's accumulators, one length scan of the partition key's encoding (only with a
 * sort key), and heat_acc_record once or twice (a hash and a striped, mostly uncontended
 * lock). Nothing allocates after a target's first record.
 */
#include "engine/tcap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/model/number.h"
#include "engine/table.h"
#include "util/status.h"

tcap *tcap_new(void)
{
    tcap *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    kmutex_init(&c->mu);
    for (int i = 0; i < TCAP_TARGETS; i++)
        atomic_init(&c->tg[i], NULL);
    return c;
}

void tcap_free(tcap *c)
{
    if (!c) return;
    for (int i = 0; i < TCAP_TARGETS; i++) {
        tcap_target *tg = atomic_load(&c->tg[i]);
        if (!tg) continue;
        heat_acc_close(atomic_load(&tg->keys));
        heat_acc_close(atomic_load(&tg->thr));
        free(tg->slots);
        free(tg);
    }
    free(c->gsi);
    kmutex_destroy(&c->mu);
    free(c);
}

void tcap_bind(tcap *c, const kura_options *o)
{
    c->throttle = o->throttle;
    c->off = o->capacity_accounting_off && !o->throttle;
    c->clock = o->capacity_clock;
    c->clock_arg = o->capacity_clock_arg;
}

bool tcap_throttling(const tcap *c)
{
    return c->throttle;
}

bool tcap_accounting(const tcap *c)
{
    return c && !c->off;
}

static int64_t clock_ms(int64_t (*clock)(void *arg), void *arg)
{
    if (clock) return clock(arg);
    struct timespec ts; /* the coarse clock (a few ms): every window here is a second */
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tcap_now(const tcap *c)
{
    return clock_ms(c->clock, c->clock_arg);
}

int64_t tcap_clock_now(const kura_options *o)
{
    return clock_ms(o->capacity_clock, o->capacity_clock_arg);
}

/* ---- Settings ------------------------------------------------------------------------------ */

static void cfg_of_table(const kura_table *t, tcap_cfg *o)
{
    o->provisioned = t->billing == KURA_BILLING_PROVISIONED;
    o->rcu = (int64_t)t->rcu;
    o->wcu = (int64_t)t->wcu;
    o->od_read = t->od_read;
    o->od_write = t->od_write;
    o->warm_read = t->warm_read;
    o->warm_write = t->warm_write;
}

void tcap_configure(const kura_table *t)
{
    tcap *c = t->cap;
    if (!c) return;
    kmutex_lock(&c->mu);
    cfg_of_table(t, &c->cfg);
    c->ngsi = 0;
    tcap_gsi *gsi = t->ngsi ? realloc(c->gsi, t->ngsi * sizeof *gsi) : c->gsi;
    if (gsi) c->gsi = gsi; /* out of memory: its GSIs are not throttled (nothing else) */
    for (uint32_t i = 0; gsi && i < t->ngsi && c->ngsi < IDX_MAX_GSI; i++) {
        const idx_def *d = &t->gsi[i];
        if (d->status == IDX_DELETING || d->status == IDX_DELETED) continue;
        tcap_gsi *g = &c->gsi[c->ngsi++];
        memset(g, 0, sizeof *g);
        g->id = d->id;
        snprintf(g->name, sizeof g->name, "%s", d->name);
        g->nhash = d->nhash;
        for (uint32_t h = 0; h < d->nhash; h++) {
            snprintf(g->hash[h], sizeof g->hash[h], "%s", d->hash[h].name);
            g->type[h] = d->hash[h].type;
        }
        g->cfg = c->cfg; /* a GSI bills as its table; its own throughput when provisioned */
        g->cfg.rcu = (int64_t)d->rcu;
        g->cfg.wcu = (int64_t)d->wcu;
        g->cfg.od_read = d->od_read;
        g->cfg.od_write = d->od_write;
        g->cfg.warm_read = d->warm_read;
        g->cfg.warm_write = d->warm_write;
    }
    /* throttle states already made follow the change from now on (a raised throughput
     * serves at its new rate from the UpdateTable, not from the next request) */
    int64_t now = tcap_now(c);
    tcap_target *table = tcap_target_of_locked(c, 0, false);
    if (table && table->ready) tcap_target_ready(table, &c->cfg, now);
    for (uint32_t i = 0; i < c->ngsi; i++) {
        tcap_target *tg = tcap_target_of_locked(c, c->gsi[i].id, false);
        if (tg && tg->ready) tcap_target_ready(tg, &c->gsi[i].cfg, now);
    }
    kmutex_unlock(&c->mu);
}

/* ---- Targets ---------------------------------------------------------------------------- */

/* The target of index_id, made when `create`; c->mu held. */
tcap_target *tcap_target_of_locked(tcap *c, uint32_t index_id, bool create)
{
    for (int i = 0; i < TCAP_TARGETS; i++) {
        tcap_target *tg = atomic_load_explicit(&c->tg[i], memory_order_acquire);
        if (tg && tg->index_id == index_id) return tg;
    }
    for (int i = 0; i < TCAP_TARGETS && create; i++) {
        if (atomic_load(&c->tg[i])) continue;
        tcap_target *tg = calloc(1, sizeof *tg);
        if (!tg) return NULL; /* not accounted: nothing else */
        tg->index_id = index_id;
        heat_window_init(&tg->throttled);
        atomic_store_explicit(&c->tg[i], tg, memory_order_release);
        return tg;
    }
    return NULL;
}

tcap_target *tcap_target_of(tcap *c, uint32_t index_id, bool create)
{
    for (int i = 0; i < TCAP_TARGETS; i++) {
        tcap_target *tg = atomic_load_explicit(&c->tg[i], memory_order_acquire);
        if (tg && tg->index_id == index_id) return tg;
    }
    if (!create) return NULL;
    kmutex_lock(&c->mu);
    tcap_target *found = tcap_target_of_locked(c, index_id, true);
    kmutex_unlock(&c->mu);
    return found;
}

heat_acc *tcap_acc(_Atomic(heat_acc *) *slot, bool pair)
{
    heat_acc *a = atomic_load_explicit(slot, memory_order_acquire);
    if (a) return a;
    heat_config cfg = {.k = TCAP_HEAT_K,
                       .stripes = 4,
                       .key_max = TCAP_KEY_MAX,
                       .filter_buckets = TCAP_FILTER_BUCKETS,
                       .pair = pair};
    heat_acc *mine = NULL;
    if (heat_acc_open(&cfg, &mine) != KURA_OK) return NULL;
    if (atomic_compare_exchange_strong(slot, &a, mine)) return mine;
    heat_acc_close(mine); /* another thread's came first */
    return a;
}

/* ---- Accounting ----------------------------------------------------------------------------- */

size_t tcap_prefix_len(const uint8_t *p, size_t len, const kura_type *types, uint32_t n)
{
    size_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (types[i] == KURA_N) {
            kura_num num;
            size_t used;
            if (num_key_decode(p + off, len - off, &num, &used) != KURA_OK) return 0;
            off += used;
            continue;
        }
        for (;;) { /* S and B: escaped bytes up to the terminator 0x00 0x01 */
            const uint8_t *z = off < len ? memchr(p + off, 0, len - off) : NULL;
            if (!z || (size_t)(z - p) + 1 >= len) return 0;
            off = (size_t)(z - p) + 2;
            if (z[1] == 0x01) break;
        }
    }
    return off;
}

void tcap_record(tcap *c, uint32_t index_id, bool sorted, const uint8_t *enc, size_t pk_len,
                 size_t len, uint64_t rd, uint64_t wr, int64_t now_ms)
{
    tcap_target *tg = tcap_target_of(c, index_id, true);
    if (!tg || (!rd && !wr)) return;
    heat_acc *keys = tcap_acc(&tg->keys, sorted); /* partition keys, and items beside them */
    if (keys) heat_acc_record_pair(keys, enc, pk_len, len, now_ms, rd, wr);
}

uint64_t tcap_read_half(uint64_t bytes, bool consistent)
{
    uint64_t units = (bytes + 4095) / 4096;
    if (!units) units = 1;
    return consistent ? units * HEAT_UNIT_SCALE : units * HEAT_UNIT_SCALE / 2;
}

uint64_t tcap_write_half(uint64_t bytes, bool txn)
{
    uint64_t units = (bytes + 1023) / 1024;
    if (!units) units = 1;
    return units * HEAT_UNIT_SCALE * (txn ? 2 : 1);
}

void tcap_index_charge(void *arg, const idx_def *d, const uint8_t *key, size_t klen, double units)
{
    tcap *c = arg;
    if (!c || c->off || klen <= 8) return;
    kura_type types[2 * IDX_MAX_KEY_ATTRS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->nhash; i++)
        types[n++] = d->hash[i].type;
    for (uint32_t i = 0; i < d->nrange; i++)
        types[n++] = d->range[i].type;
    const uint8_t *enc = key + 8;
    size_t pk_len = tcap_prefix_len(enc, klen - 8, types, d->nhash);
    size_t item_len = d->nrange ? tcap_prefix_len(enc, klen - 8, types, n) : pk_len;
    if (!pk_len || !item_len) return;
    tcap_record(c, d->id, d->nrange > 0, enc, pk_len, item_len, 0,
                (uint64_t)(units * HEAT_UNIT_SCALE), tcap_now(c));
}

size_t tcap_bytes(tcap *c)
{
    kmutex_lock(&c->mu);
    size_t n = sizeof *c + c->ngsi * sizeof *c->gsi;
    for (int i = 0; i < TCAP_TARGETS; i++) {
        tcap_target *tg = atomic_load(&c->tg[i]);
        if (!tg) continue;
        heat_acc *a[2] = {atomic_load(&tg->keys), atomic_load(&tg->thr)};
        n += sizeof *tg;
        for (int j = 0; j < 2; j++)
            n += a[j] ? heat_acc_bytes(a[j]) : 0;
        n += tg->slots ? TCAP_KEY_SLOTS * sizeof(tcap_slot) : 0;
    }
    kmutex_unlock(&c->mu);
    return n;
}
