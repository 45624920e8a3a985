/*
 * stream_consumer.c - the change stream's consumer of the stream workloads (txn_int.h,
 * "The change stream's consumer"): one thread, every shard, GetRecords with Limit BST_LIMIT,
 * the iterator of each page kept for the next pass, and the checks of what it reads.
 *
 * What a record costs the consumer is part of what stream_read measures, so the per-record
 * work is what a real consumer does and no more: the key attributes parsed back to the item
 * (two string attributes, their digits), the event and the images looked at. The bookkeeping
 * of the check is a counter and a last index per (writer, shard).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/item_fields.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

/* btx_put_first(t) is (1 + t) * BST_WRITER_ITEMS: writer t's items are below the next. */
#define BST_WRITER_ITEMS (btx_put_first(1) - btx_put_first(0))

struct bst_consumer {
    btx_ctx *c;
    uint32_t nshards, nwriters, slot;
    char **iters;          /* [nshards]: where each shard's next pass reads */
    uint64_t *last;        /* [nwriters * nshards]: the last index + 1 read (0: none) */
    uint64_t *count;       /* [nwriters] */
    uint64_t *base, *want; /* [nwriters]: what the check expects (bst_consumer_expect) */
    uint64_t records, calls, empty_calls;
    uint64_t early;        /* records of items below base: written before a LATEST iterator
                            * was taken, durable (so in the stream) only after it */
    uint64_t *began;       /* [nshards]: when the shard's last GetRecords began (0: none) */
    bench_hist calls_hist; /* GetRecords' times */
    bench_hist period;     /* a call's return - the start of the shard's call before it: how
                            * stale a record can be when it comes back, from polling alone */
};

double bst_thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bst_consumer_free(bst_consumer *k)
{
    if (!k) return;
    for (uint32_t i = 0; k->iters && i < k->nshards; i++)
        kura_free(k->iters[i]);
    free(k->iters);
    free(k->last);
    free(k->count);
    free(k->base);
    free(k->want);
    free(k->began);
    free(k);
}

kura_status bst_consumer_open(btx_ctx *c, kura_shard_iterator_type type, uint32_t nwriters,
                              uint32_t slot, bst_consumer **k_out)
{
    if (!c->stream_arn[0]) return kura_err(KURA_E_INVALID, "the table has no stream");
    kura_stream_description d;
    kura_status s = kura_describe_stream(c->db, c->stream_arn, 0, NULL, &d);
    if (s != KURA_OK) return btx_fail(s, "DescribeStream");
    bst_consumer *k = calloc(1, sizeof *k);
    uint32_t n = (uint32_t)d.shards_count;
    if (k) {
        *k = (bst_consumer){.c = c, .nshards = n, .nwriters = nwriters, .slot = slot};
        k->iters = calloc(n, sizeof *k->iters);
        k->last = calloc((size_t)n * nwriters, sizeof *k->last);
        k->count = calloc(nwriters, sizeof *k->count);
        k->base = calloc(nwriters, sizeof *k->base);
        k->want = calloc(nwriters, sizeof *k->want);
        k->began = calloc(n ? n : 1, sizeof *k->began);
        bench_hist_init(&k->calls_hist);
        bench_hist_init(&k->period);
    }
    if (!k || !k->iters || !k->last || !k->count || !k->base || !k->want || !k->began)
        s = kura_err(KURA_E_NOMEM, "consumer");
    if (s == KURA_OK && n != c->parts)
        s = kura_err(KURA_E_CORRUPTION, "the stream has %u shards, the table %u partitions", n,
                     c->parts);
    for (uint32_t i = 0; i < n && s == KURA_OK; i++)
        if ((s = kura_get_shard_iterator(c->db, c->stream_arn, d.shards[i].shard_id, type, NULL,
                                         &k->iters[i])) != KURA_OK)
            s = btx_fail(s, "GetShardIterator");
    kura_stream_description_free(&d);
    if (s != KURA_OK) {
        bst_consumer_free(k);
        return s;
    }
    *k_out = k;
    return KURA_OK;
}

/* The decimal digits of attribute `name` of m after its `prefix`, into *v. */
static bool attr_digits(const kura_value *m, const char *name, const char *prefix, uint64_t *v)
{
    const kura_value *a = kura_value_get(m, name, strlen(name));
    size_t len = 0, plen = strlen(prefix);
    const char *p = a ? kura_value_bytes(a, &len) : NULL;
    if (!p || len <= plen || memcmp(p, prefix, plen) != 0) return false;
    uint64_t x = 0;
    for (size_t i = plen; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        x = x * 10 + (uint64_t)(p[i] - '0');
    }
    *v = x;
    return true;
}

/* Record r of shard `shard`: its item and writer, checked (the header's rules). *early_out:
 * an item written before the range expected (bst_consumer_expect), which a LATEST iterator
 * may see: LATEST starts after the stream's newest record, and a relaxed write is in the
 * stream only once durable (kura.h, "Change streams"). */
static kura_status take(bst_consumer *k, uint32_t shard, const kura_stream_record *r,
                        uint64_t *index_out, uint32_t *writer_out, bool *early_out)
{
    uint64_t pk = 0, sk = 0;
    if (!r->keys || !attr_digits(r->keys, "pk", "user", &pk) ||
        !attr_digits(r->keys, "sk", "order#", &sk) || sk >= BENCH_ITEMS_PER_PK)
        return kura_err(KURA_E_CORRUPTION, "shard %u, record %s: keys not of a bench item", shard,
                        r->sequence_number);
    uint64_t index = pk * BENCH_ITEMS_PER_PK + sk;
    uint64_t w = index / BST_WRITER_ITEMS;
    if (w < 1 || w > k->nwriters)
        return kura_err(KURA_E_CORRUPTION, "shard %u: item %llu is no writer's", shard,
                        (unsigned long long)index);
    uint32_t t = (uint32_t)(w - 1);
    if (strcmp(r->event_name, "INSERT") != 0 || !r->new_image || r->old_image)
        return kura_err(KURA_E_CORRUPTION,
                        "shard %u: item %llu: a %s with%s a new image and with%s an old one, "
                        "where an INSERT with a new image only was written",
                        shard, (unsigned long long)index, r->event_name, r->new_image ? "" : "out",
                        r->old_image ? "" : "out");
    uint64_t *last = &k->last[(size_t)t * k->nshards + shard];
    if (index + 1 <= *last)
        return kura_err(KURA_E_CORRUPTION,
                        "shard %u: writer %u's item %llu read after its item %llu (out of order, "
                        "or twice)",
                        shard, t, (unsigned long long)index, (unsigned long long)(*last - 1));
    *last = index + 1;
    *early_out = index < k->base[t];
    k->early += *early_out;
    k->count[t] += !*early_out;
    *index_out = index;
    *writer_out = t;
    return KURA_OK;
}

kura_status bst_consumer_pass(bst_consumer *k, bst_record_fn fn, void *arg, uint64_t *got_out)
{
    uint64_t got = 0;
    for (uint32_t i = 0; i < k->nshards; i++) {
        kura_stream_record *recs = NULL;
        size_t n = 0, n0_early = 0;
        char *next = NULL;
        btx_watch_enter(k->c->watch, k->slot);
        uint64_t t0 = know_ns();
        kura_status s = kura_get_records(k->c->db, k->iters[i], BST_LIMIT, &recs, &n, &next);
        uint64_t t1 = know_ns();
        btx_watch_leave(k->c->watch, k->slot);
        if (s != KURA_OK) return btx_fail(s, "GetRecords");
        bench_hist_add(&k->calls_hist, t1 - t0);
        if (k->began[i]) bench_hist_add(&k->period, t1 - k->began[i]);
        k->began[i] = t0;
        k->calls++;
        k->empty_calls += n == 0;
        kura_free(k->iters[i]);
        k->iters[i] = next; /* (NULL only for a closed shard: these stay open) */
        for (size_t j = 0; j < n && s == KURA_OK; j++) {
            uint64_t index = 0;
            uint32_t t = 0;
            bool early = false;
            s = take(k, i, &recs[j], &index, &t, &early);
            if (s == KURA_OK && early) n0_early++;
            else if (s == KURA_OK && fn) s = fn(arg, index, t, &recs[j], t1);
        }
        kura_stream_records_free(recs, n);
        if (s != KURA_OK) return s;
        if (!next) return kura_err(KURA_E_CORRUPTION, "shard %u closed", i);
        got += n - n0_early;
    }
    k->records += got;
    *got_out = got;
    return KURA_OK;
}

static void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0)
        ; /* EINTR: the rest */
}

kura_status bst_consumer_read_all(bst_consumer *k, bst_record_fn fn, void *arg, bst_progress *p)
{
    uint64_t moved = know_ns();
    for (;;) {
        uint64_t got = 0;
        kura_status s = bst_consumer_pass(k, fn, arg, &got);
        if (s != KURA_OK) return s;
        uint64_t r = atomic_fetch_add(&p->read, got) + got, now = know_ns();
        if (got) moved = now;
        if (atomic_load(&p->writers_done) && r >= atomic_load(&p->total)) break;
        if (now - moved > BST_STUCK_S * 1000000000ull)
            return kura_err(KURA_E_BUSY, "the consumer read nothing for %d s, at %llu records",
                            BST_STUCK_S, (unsigned long long)r);
        if (!got) sleep_us(BST_IDLE_US);
    }
    p->caught_ns = know_ns();
    return KURA_OK;
}

void bst_consumer_expect(bst_consumer *k, uint32_t writer, uint64_t base, uint64_t want)
{
    k->base[writer] = base;
    k->want[writer] = want;
}

kura_status bst_consumer_check(const bst_consumer *k)
{
    for (uint32_t t = 0; t < k->nwriters; t++) {
        if (k->count[t] != k->want[t])
            return kura_err(KURA_E_CORRUPTION, "writer %u: %llu records read, %llu items written",
                            t, (unsigned long long)k->count[t], (unsigned long long)k->want[t]);
        for (uint32_t i = 0; i < k->nshards; i++) {
            uint64_t last = k->last[(size_t)t * k->nshards + i];
            if (last && (last - 1 < k->base[t] || last - 1 >= k->base[t] + k->want[t]))
                return kura_err(KURA_E_CORRUPTION,
                                "writer %u: item %llu read, it wrote items %llu..%llu", t,
                                (unsigned long long)(last - 1), (unsigned long long)k->base[t],
                                (unsigned long long)(k->base[t] + k->want[t] - 1));
        }
    }
    return KURA_OK;
}

void bst_consumer_report(const bst_consumer *k, const char *prefix, double seconds, bench_run *run)
{
    char name[32];
#define CONSUMER_EXTRA(what, v)                                                                    \
    snprintf(name, sizeof name, "%s_%s", prefix, what);                                            \
    bench_run_extra(run, name, v)
    CONSUMER_EXTRA("calls_per_sec", seconds > 0 ? (double)k->calls / seconds : 0);
    CONSUMER_EXTRA("empty_pct", k->calls ? 100.0 * (double)k->empty_calls / (double)k->calls : 0);
    CONSUMER_EXTRA("recs_per_call", k->calls ? (double)k->records / (double)k->calls : 0);
    CONSUMER_EXTRA("call_p50_us", bench_hist_percentile_us(&k->calls_hist, 50));
    CONSUMER_EXTRA("call_p99_us", bench_hist_percentile_us(&k->calls_hist, 99));
    CONSUMER_EXTRA("call_max_ms", (double)k->calls_hist.max_ns / 1e6);
    CONSUMER_EXTRA("period_p99_ms", bench_hist_percentile_us(&k->period, 99) / 1000.0);
    CONSUMER_EXTRA("period_max_ms", (double)k->period.max_ns / 1e6);
    CONSUMER_EXTRA("early_records", (double)k->early);
#undef CONSUMER_EXTRA
}
