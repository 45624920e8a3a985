/*
 * oracle.c - the deterministic workload of the crash and fault tests: generating operation j
 * of writer t from the seed, issuing it to a tree, and the per-writer counters of the model
 * (oracle.h). The checker is oracle_check.c.
 */
#include "crash/oracle_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/coding.h"
#include "util/hash.h"

enum { VALUE_HEADER = 16 }; /* 'K' 'V' thread idx | opno fixed64 | length fixed32 */

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A generator state for (seed, t, j, idx): independent streams per operation and entry. */
static uint64_t stream(uint64_t seed, uint32_t t, uint64_t j, uint32_t idx)
{
    uint64_t s = seed ^ ((uint64_t)(t + 1) << 56) ^ ((uint64_t)idx << 40);
    splitmix(&s);
    s ^= j * 0xd6e8feb86659fd93ull;
    splitmix(&s);
    return s;
}

void oracle_config_init(oracle_config *c, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->seed = seed;
    c->nthreads = 1;
    c->keys_per_thread = 256;
    c->min_value = 16;
    c->max_value = 2048;
    c->delete_pct = 10;
    c->batch_pct = 10;
    c->max_batch = 6;
}

static bool config_ok(const oracle_config *c)
{
    return c->nthreads >= 1 && c->nthreads <= ORACLE_MAX_THREADS && c->keys_per_thread >= 1 &&
           c->keys_per_thread <= 99999 && c->min_value >= VALUE_HEADER &&
           c->min_value <= c->max_value && c->max_value <= ORACLE_MAX_VALUE &&
           c->delete_pct <= 100 && c->batch_pct + c->delete_pct <= 100 &&
           (c->batch_pct == 0 || (c->max_batch >= 2 && c->max_batch <= ORACLE_MAX_BATCH));
}

oracle *oracle_new(const oracle_config *c)
{
    if (!config_ok(c))
        return NULL;
    oracle *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->cfg = *c;
    for (uint32_t t = 0; t < c->nthreads; t++) {
        o->w[t].state = calloc(c->keys_per_thread, sizeof(oracle_cell));
        if (!o->w[t].state) {
            oracle_free(o);
            return NULL;
        }
    }
    return o;
}

void oracle_free(oracle *o)
{
    if (!o)
        return;
    for (uint32_t t = 0; t < ORACLE_MAX_THREADS; t++)
        free(o->w[t].state);
    free(o->part);
    free(o->part_keys);
    free(o->part_start);
    free(o);
}

static void *dup_mem(const void *p, size_t n)
{
    void *q = p && n ? malloc(n) : NULL;
    if (q)
        memcpy(q, p, n);
    return q;
}

oracle *oracle_clone(const oracle *src)
{
    oracle *o = oracle_new(&src->cfg);
    if (!o)
        return NULL;
    size_t nk = src->cfg.keys_per_thread, nt = src->cfg.nthreads;
    for (uint32_t t = 0; t < nt; t++) {
        oracle_cell *state = o->w[t].state;
        o->w[t] = src->w[t];
        o->w[t].state = state;
        memcpy(state, src->w[t].state, nk * sizeof *state);
    }
    if (src->part) {
        o->nparts = src->nparts;
        o->part = dup_mem(src->part, nt * nk * sizeof *o->part);
        o->part_keys = dup_mem(src->part_keys, nt * nk * sizeof *o->part_keys);
        o->part_start = dup_mem(src->part_start, nt * (src->nparts + 1) * sizeof(uint32_t));
        if (!o->part || !o->part_keys || !o->part_start) {
            oracle_free(o);
            return NULL;
        }
    }
    return o;
}

const oracle_config *oracle_cfg(const oracle *o)
{
    return &o->cfg;
}

void oracle_key(uint32_t t, uint32_t k, char out[ORACLE_KEY_LEN])
{
    char buf[ORACLE_KEY_LEN + 1];
    snprintf(buf, sizeof buf, "t%02u.k%05u", t % 100, k % 100000);
    memcpy(out, buf, ORACLE_KEY_LEN);
}

kura_status oracle_route(oracle *o, kura_tree *tree)
{
    uint32_t nt = o->cfg.nthreads, nk = o->cfg.keys_per_thread, np = kura_tree_partitions(tree);
    if (o->part && o->nparts == np)
        return KURA_OK;
    free(o->part);
    free(o->part_keys);
    free(o->part_start);
    o->nparts = np;
    o->part = malloc(sizeof(uint32_t) * nt * nk);
    o->part_keys = malloc(sizeof(uint32_t) * nt * nk);
    o->part_start = calloc((size_t)nt * (np + 1), sizeof(uint32_t));
    if (!o->part || !o->part_keys || !o->part_start)
        return KURA_E_NOMEM;
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t *part = o->part + (size_t)t * nk, *start = o->part_start + (size_t)t * (np + 1);
        uint32_t *keys = o->part_keys + (size_t)t * nk;
        char key[ORACLE_KEY_LEN];
        for (uint32_t k = 0; k < nk; k++) {
            oracle_key(t, k, key);
            part[k] = kura_tree_partition_of(tree, key, sizeof key);
            start[part[k] + 1]++;
        }
        for (uint32_t p = 0; p < np; p++)
            start[p + 1] += start[p];
        uint32_t fill[256 + 1];
        memcpy(fill, start, sizeof(uint32_t) * (np + 1));
        for (uint32_t k = 0; k < nk; k++)
            keys[fill[part[k]]++] = k;
    }
    return KURA_OK;
}

void oracle_gen(const oracle *o, uint32_t t, uint64_t j, oracle_op *op)
{
    const oracle_config *c = &o->cfg;
    uint64_t st = stream(c->seed, t, j, 0xffff);
    uint32_t nk = c->keys_per_thread, pct = (uint32_t)(splitmix(&st) % 100);
    memset(op, 0, sizeof *op);
    op->thread = t;
    op->opno = j;
    op->n = 1;
    op->e[0].key = (uint32_t)(splitmix(&st) % nk);
    if (pct < c->batch_pct) {
        /* a batch: more keys of the partition of the first one */
        uint32_t p = o->part[(size_t)t * nk + op->e[0].key];
        const uint32_t *start = o->part_start + (size_t)t * (o->nparts + 1);
        const uint32_t *keys = o->part_keys + (size_t)t * nk;
        uint32_t have = start[p + 1] - start[p];
        op->batch = true;
        op->n = 2 + (uint32_t)(splitmix(&st) % (c->max_batch - 1));
        op->e[0].del = splitmix(&st) % 100 < c->delete_pct;
        for (uint32_t i = 1; i < op->n; i++) {
            op->e[i].key = keys[start[p] + splitmix(&st) % have];
            op->e[i].del = splitmix(&st) % 100 < c->delete_pct;
        }
    } else {
        op->e[0].del = pct < c->batch_pct + c->delete_pct;
    }
}

size_t oracle_value(const oracle *o, uint32_t t, uint64_t j, uint32_t idx, uint8_t *buf)
{
    const oracle_config *c = &o->cfg;
    uint64_t st = stream(c->seed, t, j, idx);
    size_t len = c->min_value + splitmix(&st) % (c->max_value - c->min_value + 1);
    buf[0] = 'K';
    buf[1] = 'V';
    buf[2] = (uint8_t)t;
    buf[3] = (uint8_t)idx;
    enc_fixed64(buf + 4, j);
    enc_fixed32(buf + 12, (uint32_t)len);
    for (size_t i = VALUE_HEADER; i < len; i += 8) {
        uint64_t x = splitmix(&st);
        memcpy(buf + i, &x, len - i < 8 ? len - i : 8);
    }
    return len;
}

static uint64_t hash_entry(uint64_t h, const char *key, bool del, const uint8_t *val, size_t n)
{
    h = h * 0x9e3779b97f4a7c15ull ^ kura_hash64(key, ORACLE_KEY_LEN);
    h = h * 0x9e3779b97f4a7c15ull ^ (del ? 1 : kura_hash64(val, n) | 2);
    return h;
}

uint64_t oracle_op_hash(const oracle *o, uint32_t t, uint64_t j)
{
    oracle_op op;
    oracle_gen(o, t, j, &op);
    uint8_t val[ORACLE_MAX_VALUE];
    uint64_t h = j;
    for (uint32_t i = 0; i < op.n; i++) {
        char key[ORACLE_KEY_LEN];
        oracle_key(t, op.e[i].key, key);
        size_t n = op.e[i].del ? 0 : oracle_value(o, t, j, i, val);
        h = hash_entry(h, key, op.e[i].del, val, n);
    }
    return h;
}

kura_status oracle_exec(const oracle *o, kura_tree *tree, uint32_t t, uint64_t j,
                        const kura_write_options *wo, uint64_t *hash_out)
{
    oracle_op op;
    oracle_gen(o, t, j, &op);
    uint8_t val[ORACLE_MAX_VALUE];
    char key[ORACLE_KEY_LEN];
    uint64_t h = j;
    kura_batch *b = op.batch ? kura_batch_new() : NULL;
    kura_status s = op.batch && !b ? KURA_E_NOMEM : KURA_OK;
    for (uint32_t i = 0; i < op.n && s == KURA_OK; i++) {
        oracle_key(t, op.e[i].key, key);
        size_t n = op.e[i].del ? 0 : oracle_value(o, t, j, i, val);
        h = hash_entry(h, key, op.e[i].del, val, n);
        if (b)
            s = op.e[i].del ? kura_batch_delete(b, key, sizeof key)
                            : kura_batch_put(b, key, sizeof key, val, n);
        else
            s = op.e[i].del ? kura_delete(tree, wo, key, sizeof key)
                            : kura_put(tree, wo, key, sizeof key, val, n);
    }
    if (b && s == KURA_OK)
        s = kura_write(tree, wo, b);
    kura_batch_free(b);
    if (hash_out)
        *hash_out = h;
    return s;
}

kura_status oracle_run(oracle *o, kura_tree *tree, uint32_t t, const kura_write_options *wo)
{
    oracle_writer *w = &o->w[t];
    uint64_t j = w->attempted + 1;
    w->attempted = j;
    kura_status s = oracle_exec(o, tree, t, j, wo, NULL);
    if (s == KURA_OK)
        w->acked = j;
    return s;
}

uint64_t oracle_committed(const oracle *o, uint32_t t)
{
    return o->w[t].committed;
}

uint64_t oracle_acked(const oracle *o, uint32_t t)
{
    return o->w[t].acked;
}

uint64_t oracle_attempted(const oracle *o, uint32_t t)
{
    return o->w[t].attempted;
}

bool oracle_ack(oracle *o, uint32_t t, uint64_t j)
{
    oracle_writer *w = &o->w[t];
    if (t >= o->cfg.nthreads || j != w->acked + 1)
        return false;
    w->acked = j;
    if (w->attempted < j)
        w->attempted = j;
    return true;
}

void oracle_set_attempted(oracle *o, uint32_t t, uint64_t j)
{
    if (o->w[t].attempted < j)
        o->w[t].attempted = j;
}
