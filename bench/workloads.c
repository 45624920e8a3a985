/*
 * workloads.c - the workload table and the timed loops that run a workload on an engine.
 *
 * A threaded workload splits its operations evenly over --threads worker threads. Each
 * worker has its own engine session (opened before the clock starts), random generator,
 * value walker and histogram; the figure is all operations over the wall time from the
 * first thread's start to the last thread's end. Each operation is timed with one read of
 * the monotonic clock: the end of one operation is the start of the next.
 *
 * The loops check what they read: found values must have --value-size bytes, a missing
 * key must not be found, a seek must land on a key >= its target, a scan must return
 * strictly increasing keys. A violation fails the run (KURA_E_CORRUPTION).
 */
#include "bench/workloads.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/hist.h"
#include "bench/items.h"
#include "bench/keys.h"
#include "bench/sys.h"
#include "util/status.h"
#include "util/thread.h"

const bench_workload bench_workloads[] = {
    {"fillseq", BENCH_WL_FILL_SEQ, true, false, false, "--num puts in key order, fresh db", 0},
    {"fillrandom", BENCH_WL_FILL_RANDOM, true, false, true, "--num random puts, fresh db", 0},
    {"overwrite", BENCH_WL_FILL_RANDOM, false, false, true, "--num random puts, existing db", 0},
    {"readrandom", BENCH_WL_READ, false, false, true, "--num gets of random keys", 0},
    {"readmissing", BENCH_WL_READ_MISSING, false, false, true, "--num gets of absent keys", 0},
    {"seekrandom", BENCH_WL_SEEK, false, false, true, "max(num/10,1000) seeks + 10 nexts", 0},
    {"readseq", BENCH_WL_SCAN, false, false, false, "one full scan from the first key", 0},
    {"compact", BENCH_WL_COMPACT, false, false, false, "one full compaction", 0},
    {"fillsync", BENCH_WL_FILL_RANDOM, true, true, true, "--sync-num durable puts, fresh db", 0},
    {"recover", BENCH_WL_RECOVER, true, false, false, "reopen after SIGKILL, 64 MiB in WAL", 0},
    {"putitem", BENCH_WL_ITEM_PUT, true, false, false, "--num PutItems of ~400-byte items", 0},
    {"getitem", BENCH_WL_ITEM_GET, false, false, false, "--num GetItems of random items", 0},
    {"query", BENCH_WL_ITEM_QUERY, false, false, false, "num/20 Queries of 20 items", 0},
    {"updateitem", BENCH_WL_ITEM_UPDATE, false, false, false, "--num SET n = n + :one", 0},
    {"heatreport", BENCH_WL_ITEM_HEAT, true, false, false, "1,000 heat reports, --num keys seen", 0},
    {"putitem_gsi0", BENCH_WL_IDX_PUT, true, false, false, "--num PutItems, table, no GSI", 0},
    {"putitem_gsi2", BENCH_WL_IDX_PUT, true, false, false, "the same with 2 GSIs", 2},
    {"putitem_gsi5", BENCH_WL_IDX_PUT, true, false, false, "the same with 5 GSIs", 5},
    {"query_base", BENCH_WL_IDX_QUERY_BASE, false, false, false, "num/20 Queries of the table", 0},
    {"query_gsi", BENCH_WL_IDX_QUERY_GSI, false, false, false, "num/20 Queries of GSI by_grp", 0},
    {"gsi_lag", BENCH_WL_IDX_LAG, true, false, false, "GSI lag at 50%/90% of max writes", 0},
    {"backfill", BENCH_WL_IDX_BACKFILL, true, false, false, "new GSI on --backfill-num items", 0},
    {"pairs_put", BENCH_WL_TXN_PAIRS_PUT, true, true, true, "--sync-num PutItems, pairs, sync", 0},
    {"pairs_txn", BENCH_WL_TXN_PAIRS_TXN, true, true, true, "the pairs as 2-partition txns", 0},
    {"batch25_sync", BENCH_WL_TXN_BATCH, true, true, false, "--sync-num items, 25 a BatchWrite", 0},
    {"txn25_sync", BENCH_WL_TXN_BATCH_TXN, true, true, false, "the same 25 a transaction", 0},
    {"batch25", BENCH_WL_TXN_BATCH, true, false, false, "--num items, 25 a BatchWrite, relaxed", 0},
    {"txn25", BENCH_WL_TXN_BATCH_TXN, true, false, false, "the same 25 a transaction", 0},
    {"put_solo_sync", BENCH_WL_TXN_MIX_SOLO, true, true, true, "PutItems, threads/2, sync", 0},
    {"put_mixed_sync", BENCH_WL_TXN_MIX_TXN, true, true, true, "the same beside 2-item txns", 0},
    {"put_solo", BENCH_WL_TXN_MIX_SOLO, true, false, true, "PutItems, threads/2, relaxed", 0},
    {"put_mixed", BENCH_WL_TXN_MIX_TXN, true, false, true, "the same beside 2-item txns", 0},
    {"txn_hot", BENCH_WL_TXN_HOT, true, true, true, "txns moving n among 100 hot items", 0},
    {"ttl_sweep", BENCH_WL_TTL_SWEEP, true, false, false, "one TTL sweep of --num expired items", 0},
    {"ttl_sweep_sync", BENCH_WL_TTL_SWEEP, true, true, false, "the same, --sync-num, sync", 0},
    {"ttl_put_solo", BENCH_WL_TTL_PUT_SOLO, true, false, true, "PutItems, threads/2, no sweep", 0},
    {"ttl_put_sweep", BENCH_WL_TTL_PUT_SWEEP, true, false, true, "the same during a TTL sweep", 0},
    {"stream_put_solo", BENCH_WL_STREAM_PUT_SOLO, true, false, true, "PutItems, no stream, relaxed", 0},
    {"stream_put", BENCH_WL_STREAM_PUT, true, false, true, "the same with a stream", 0},
    {"stream_put_solo_sync", BENCH_WL_STREAM_PUT_SOLO, true, true, true, "PutItems, no stream, sync", 0},
    {"stream_put_sync", BENCH_WL_STREAM_PUT, true, true, true, "the same with a stream", 0},
    {"stream_read", BENCH_WL_STREAM_READ, true, false, true, "GetRecords beside PutItems", 0},
    {"stream_lag", BENCH_WL_STREAM_LAG, true, false, true, "write->record at 50% of max", 0},
    {"stream_lag_sync", BENCH_WL_STREAM_LAG, true, true, true, "the same, sync", 0},
    {"stream_over_solo", BENCH_WL_STREAM_OVER_SOLO, true, false, true, "overwrites, no stream, relaxed", 0},
    {"stream_over", BENCH_WL_STREAM_OVER, true, false, true, "the same with a stream", 0},
};
const size_t bench_nworkloads = sizeof bench_workloads / sizeof bench_workloads[0];

const bench_workload *bench_workload_find(const char *name)
{
    for (size_t i = 0; i < bench_nworkloads; i++)
        if (strcmp(bench_workloads[i].name, name) == 0)
            return &bench_workloads[i];
    return NULL;
}

const char *bench_workload_skip_reason(const bench_workload *wl, const bench_engine *e)
{
    if (bench_wl_is_txn(wl->kind) && e->txn_run == NULL)
        return "transaction workloads run on kura-capi (the C API)";
    if (bench_wl_is_index(wl->kind) && e->index_run == NULL)
        return "index workloads run on kura-capi (the C API)";
    if (bench_wl_is_item(wl->kind) && e->items == NULL)
        return "item workloads run on kura-raw, kura-capi, kura-json, kura-partiql and kura-json-partiql";
    if (!bench_wl_is_item(wl->kind) && e->items != NULL)
        return "an item-level engine runs only the item workloads";
    if (wl->kind == BENCH_WL_COMPACT && e->compact == NULL)
        return "the engine has no compaction";
    if (wl->kind == BENCH_WL_RECOVER && !e->has_wal)
        return "the engine has no WAL to recover";
    return NULL;
}

void bench_workload_engine_opts(const bench_config *cfg, const bench_workload *wl,
                                bench_engine_opts *o_out)
{
    bench_engine_opts o = {
        .memtable_bytes = (uint64_t)cfg->memtable_mb << 20,
        .cache_bytes = (uint64_t)cfg->cache_mb << 20,
        .partitions = cfg->partitions,
        .threads = wl->threaded ? cfg->threads : 1,
        .sync_writes = wl->sync,
        .hold_writes_in_wal = wl->kind == BENCH_WL_RECOVER,
    };
    if (wl->kind == BENCH_WL_RECOVER)
        o.memtable_bytes = BENCH_RECOVER_MEMTABLE_BYTES;
    *o_out = o;
}

void bench_run_finish(bench_run *run)
{
    double s = run->seconds > 0 ? run->seconds : 1e-9;
    run->ops_per_sec = (double)run->ops / s;
    run->mb_per_sec = (double)run->bytes / s / (1024.0 * 1024.0);
}

void bench_run_extra(bench_run *run, const char *name, double value)
{
    assert(run->nextras < BENCH_MAX_EXTRAS);
    if (run->nextras >= BENCH_MAX_EXTRAS)
        return;
    bench_extra *x = &run->extras[run->nextras++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->value = value;
}

/* One worker thread's inputs and results. */
typedef struct wl_worker {
    const bench_workload *wl;
    const bench_engine *e;
    const bench_config *cfg;
    const bench_values *vals;
    bench_sess *sess;
    uint64_t first, nops; /* fillseq: indexes first..first+nops-1; others: nops ops */
    uint64_t seed;
    size_t vpos; /* value walker */
    bench_hist hist;
    uint64_t ops, found;
    kura_status st;
    char err[256];
} wl_worker;

static kura_status wl_writes(wl_worker *w)
{
    uint8_t key[BENCH_MAX_KEY_SIZE];
    uint32_t ks = w->cfg->key_size, vs = w->cfg->value_size;
    bench_rng rng;
    bench_rng_seed(&rng, w->seed);
    bool seq = w->wl->kind == BENCH_WL_FILL_SEQ;
    uint64_t t0 = know_ns();
    for (uint64_t i = 0; i < w->nops; i++) {
        bench_key_format(key, ks, seq ? w->first + i : bench_rng_below(&rng, w->cfg->num));
        const uint8_t *val = bench_values_next(w->vals, &w->vpos);
        kura_status s = w->e->put(w->sess, key, ks, val, vs);
        if (s != KURA_OK)
            return s;
        uint64_t t1 = know_ns();
        bench_hist_add(&w->hist, t1 - t0);
        t0 = t1;
        w->ops++;
    }
    return KURA_OK;
}

static kura_status wl_reads(wl_worker *w)
{
    uint8_t key[BENCH_MAX_KEY_SIZE];
    uint32_t ks = w->cfg->key_size;
    bool missing = w->wl->kind == BENCH_WL_READ_MISSING;
    bench_rng rng;
    bench_rng_seed(&rng, w->seed);
    kbuf val = KBUF_INIT;
    kura_status s = KURA_OK;
    uint64_t t0 = know_ns();
    for (uint64_t i = 0; i < w->nops && s == KURA_OK; i++) {
        uint64_t index = bench_rng_below(&rng, w->cfg->num);
        if (missing)
            bench_key_missing(key, ks, index);
        else
            bench_key_format(key, ks, index);
        bool found = false;
        if ((s = w->e->get(w->sess, key, ks, &val, &found)) != KURA_OK)
            break;
        uint64_t t1 = know_ns();
        bench_hist_add(&w->hist, t1 - t0);
        t0 = t1;
        w->ops++;
        w->found += found;
        if (found && missing)
            s = kura_err(KURA_E_CORRUPTION, "found key %.*s, which was never written",
                         (int)ks, (const char *)key);
        else if (found && val.len != w->cfg->value_size)
            s = kura_err(KURA_E_CORRUPTION, "key %.*s: value of %zu bytes, expected %u",
                         (int)ks, (const char *)key, val.len, w->cfg->value_size);
    }
    free(val.data);
    return s;
}

/* memcmp order with the shorter key first on a tie, as every engine orders keys. */
static int wl_key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c != 0 ? c : (alen > blen) - (alen < blen);
}

/* Seeks to `key`, then reads the entry and up to BENCH_SEEK_NEXTS more. */
static kura_status wl_seek_one(wl_worker *w, bench_it *it, const uint8_t *key, uint32_t ks)
{
    kura_status s = w->e->iter_seek(it, key, ks);
    if (s != KURA_OK || !w->e->iter_valid(it))
        return s;
    w->found++;
    size_t klen, vlen;
    const void *k = w->e->iter_key(it, &klen);
    if (wl_key_cmp(k, klen, key, ks) < 0)
        return kura_err(KURA_E_CORRUPTION, "seek to %.*s landed on a smaller key %.*s",
                        (int)ks, (const char *)key, (int)klen, (const char *)k);
    w->e->iter_value(it, &vlen);
    for (int j = 0; j < BENCH_SEEK_NEXTS && w->e->iter_valid(it); j++) {
        if ((s = w->e->iter_next(it)) != KURA_OK)
            return s;
        if (w->e->iter_valid(it)) {
            w->e->iter_key(it, &klen);
            w->e->iter_value(it, &vlen);
        }
    }
    return KURA_OK;
}

static kura_status wl_seeks(wl_worker *w)
{
    uint8_t key[BENCH_MAX_KEY_SIZE];
    uint32_t ks = w->cfg->key_size;
    bench_rng rng;
    bench_rng_seed(&rng, w->seed);
    bench_it *it = NULL;
    kura_status s = w->e->iter_open(w->sess, &it);
    uint64_t t0 = know_ns();
    for (uint64_t i = 0; i < w->nops && s == KURA_OK; i++) {
        bench_key_format(key, ks, bench_rng_below(&rng, w->cfg->num));
        if ((s = wl_seek_one(w, it, key, ks)) != KURA_OK)
            break;
        uint64_t t1 = know_ns();
        bench_hist_add(&w->hist, t1 - t0);
        t0 = t1;
        w->ops++;
    }
    w->e->iter_close(it);
    return s;
}

/* readseq: every entry from the first; keys must come in strictly increasing order. */
static kura_status wl_scan(wl_worker *w)
{
    uint8_t prev[BENCH_MAX_KEY_SIZE];
    size_t prev_len = 0;
    bench_it *it = NULL;
    kura_status s = w->e->iter_open(w->sess, &it);
    uint64_t t0 = know_ns();
    if (s == KURA_OK)
        s = w->e->iter_seek(it, NULL, 0);
    while (s == KURA_OK && w->e->iter_valid(it)) {
        size_t klen, vlen;
        const void *k = w->e->iter_key(it, &klen);
        w->e->iter_value(it, &vlen);
        if (klen != w->cfg->key_size) {
            s = kura_err(KURA_E_CORRUPTION, "scan: key of %zu bytes, expected %u", klen,
                         w->cfg->key_size);
            break;
        }
        if (w->ops > 0 && wl_key_cmp(prev, prev_len, k, klen) >= 0) {
            s = kura_err(KURA_E_CORRUPTION, "scan: key %.*s after %.*s", (int)klen,
                         (const char *)k, (int)prev_len, (const char *)prev);
            break;
        }
        memcpy(prev, k, klen); /* klen == key_size <= sizeof prev */
        prev_len = klen;
        w->ops++;
        s = w->e->iter_next(it);
        uint64_t t1 = know_ns();
        bench_hist_add(&w->hist, t1 - t0);
        t0 = t1;
    }
    w->e->iter_close(it);
    return s;
}

static void *wl_worker_main(void *arg)
{
    wl_worker *w = arg;
    switch (w->wl->kind) {
    case BENCH_WL_FILL_SEQ:
    case BENCH_WL_FILL_RANDOM:
        w->st = wl_writes(w);
        break;
    case BENCH_WL_READ:
    case BENCH_WL_READ_MISSING:
        w->st = wl_reads(w);
        break;
    case BENCH_WL_SEEK:
        w->st = wl_seeks(w);
        break;
    case BENCH_WL_SCAN:
        w->st = wl_scan(w);
        break;
    default:
        w->st = kura_err(KURA_E_INVALID, "%s is not a loop workload", w->wl->name);
    }
    if (w->st != KURA_OK) /* the message is per thread: keep it for the caller */
        snprintf(w->err, sizeof w->err, "%s", kura_last_error());
    return NULL;
}

static uint64_t wl_total_ops(const bench_workload *wl, const bench_config *cfg)
{
    if (wl->sync)
        return cfg->sync_num;
    if (wl->kind == BENCH_WL_SEEK)
        return cfg->num / 10 > 1000 ? cfg->num / 10 : 1000;
    return cfg->num; /* readseq: an upper bound it does not use */
}

/* Sets up nthreads workers (sessions opened, ops split), all fields but results. */
static kura_status wl_workers_init(wl_worker *ws, uint32_t nthreads, const bench_workload *wl,
                                   const bench_engine *e, const bench_config *cfg,
                                   const bench_values *vals, bench_db *db, uint64_t run_seed)
{
    uint64_t total = wl_total_ops(wl, cfg), first = 0;
    for (uint32_t t = 0; t < nthreads; t++) {
        wl_worker *w = &ws[t];
        w->wl = wl;
        w->e = e;
        w->cfg = cfg;
        w->vals = vals;
        w->nops = total / nthreads + (t < total % nthreads);
        w->first = first;
        first += w->nops;
        w->seed = bench_seed_mix(run_seed, t, 0);
        w->vpos = (vals->len / nthreads) * t;
        bench_hist_init(&w->hist);
        kura_status s = e->sess_open(db, &w->sess);
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

/* Runs the workers on their threads; fills run with the totals. */
static kura_status wl_workers_run(wl_worker *ws, uint32_t nthreads, bench_run *run)
{
    kthread tids[BENCH_MAX_THREADS];
    uint32_t started = 0;
    kura_status s = KURA_OK;
    uint64_t t0 = know_ns();
    for (; started < nthreads; started++)
        if (!kthread_start(&tids[started], wl_worker_main, &ws[started])) {
            s = kura_err(KURA_E_NOMEM, "cannot start worker thread %u", started);
            break;
        }
    for (uint32_t t = 0; t < started; t++)
        kthread_join(tids[t]);
    uint64_t t1 = know_ns();
    bench_hist *all = malloc(sizeof *all);
    if (all == NULL)
        return kura_err(KURA_E_NOMEM, "histogram");
    bench_hist_init(all);
    for (uint32_t t = 0; t < started; t++) {
        if (s == KURA_OK && ws[t].st != KURA_OK)
            s = kura_err(ws[t].st, "thread %u: %s", t, ws[t].err);
        bench_hist_merge(all, &ws[t].hist);
        run->ops += ws[t].ops;
        run->found += ws[t].found;
    }
    run->threads = nthreads;
    run->seconds = (double)(t1 - t0) / 1e9;
    run->p50_us = bench_hist_percentile_us(all, 50);
    run->p99_us = bench_hist_percentile_us(all, 99);
    free(all);
    return s;
}

static kura_status wl_run_loops(const bench_workload *wl, const bench_engine *e,
                                const bench_config *cfg, uint32_t repeat, bench_db *db,
                                bench_run *run)
{
    uint32_t nthreads = wl->threaded ? cfg->threads : 1;
    bench_values vals;
    kura_status s = bench_values_init(&vals, cfg->value_size, cfg->seed);
    if (s != KURA_OK)
        return s;
    wl_worker *ws = calloc(nthreads, sizeof *ws);
    if (ws == NULL) {
        bench_values_free(&vals);
        return kura_err(KURA_E_NOMEM, "workers");
    }
    uint64_t run_seed = bench_seed_mix(cfg->seed, repeat, (uint64_t)(wl - bench_workloads));
    s = wl_workers_init(ws, nthreads, wl, e, cfg, &vals, db, run_seed);
    if (s == KURA_OK)
        s = wl_workers_run(ws, nthreads, run);
    for (uint32_t t = 0; t < nthreads; t++)
        e->sess_close(ws[t].sess);
    free(ws);
    bench_values_free(&vals);
    run->bytes = run->ops * ((uint64_t)cfg->key_size + cfg->value_size);
    return s;
}

/* compact: one operation; MB/s is over the bytes on disk before it. */
static kura_status wl_run_compact(const bench_engine *e, bench_db *db, const char *dir,
                                  bench_run *run)
{
    kura_status s = bench_fs_du(dir, &run->bytes);
    if (s != KURA_OK)
        return s;
    uint64_t t0 = know_ns();
    if ((s = e->compact(db)) != KURA_OK)
        return s;
    run->seconds = (double)(know_ns() - t0) / 1e9;
    run->ops = 1;
    run->threads = 1;
    run->p50_us = run->p99_us = run->seconds * 1e6;
    return KURA_OK;
}

kura_status bench_workload_run(const bench_workload *wl, const bench_engine *e,
                               const bench_config *cfg, uint32_t repeat, const char *dir,
                               bench_run *run_out)
{
    if (wl->kind == BENCH_WL_RECOVER)
        return bench_recover_run(wl, e, cfg, dir, run_out);
    if (bench_wl_is_txn(wl->kind))
        return e->txn_run(wl, cfg, repeat, dir, run_out);
    if (bench_wl_is_index(wl->kind))
        return e->index_run(wl, cfg, repeat, dir, run_out);
    if (bench_wl_is_item(wl->kind))
        return bench_items_run(wl, e, cfg, repeat, dir, run_out);
    bench_engine_opts o;
    bench_workload_engine_opts(cfg, wl, &o);
    bench_db *db = NULL;
    kura_status s = e->open(dir, &o, &db);
    if (s != KURA_OK)
        return s;
    bench_run run;
    memset(&run, 0, sizeof run);
    if (wl->kind == BENCH_WL_COMPACT)
        s = wl_run_compact(e, db, dir, &run);
    else
        s = wl_run_loops(wl, e, cfg, repeat, db, &run);
    kura_status cs = e->close(db);
    if (s == KURA_OK)
        s = cs;
    if (s != KURA_OK)
        return s;
    bench_run_finish(&run);
    run.state = BENCH_RUN_OK;
    *run_out = run;
    return KURA_OK;
}
