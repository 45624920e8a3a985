/*
 * items.c - the database, table and items of the transaction workloads (txn.h), the pairs of
 * items in two partitions, the checks, the worker threads, and the dispatch of bench_txn_run
 * (txn_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/item_fields.h"
#include "bench/items.h"
#include "bench/keys.h"
#include "bench/txn/txn.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/hash.h"
#include "util/status.h"

kura_status btx_fail(kura_status s, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kura_last_error());
    return kura_err(s, "%s: %s: %s", what, kura_status_str(s), msg);
}

void btx_sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ; /* EINTR: the rest */
}

static kura_status btx_open(const char *dir, const bench_config *cfg, bool sync, btx_io *io,
                            kura_db **db_out)
{
    kura_options ko;
    kura_options_init(&ko);
    ko.durability = sync ? KURA_SYNC : KURA_RELAXED;
    ko.memtable_budget_bytes = (size_t)cfg->memtable_mb << 20;
    ko.block_cache_bytes = (size_t)cfg->cache_mb << 20;
    ko.default_partitions = cfg->partitions;
    ko.io = btx_io_env(io);
    ko.ttl_sweep_interval_ms = 3600000; /* the TTL workloads sweep on demand (ttl.c) */
    kura_status s = kura_open(dir, &ko, db_out);
    return s == KURA_OK ? s : btx_fail(s, "open");
}

/* The table, with a stream of `view` when it is not UNSET (its ARN into arn_out[512]). */
static kura_status btx_create_table(kura_db *db, kura_stream_view_type view, char *arn_out)
{
    kura_attribute_definition defs[] = {{"pk", KURA_S}, {"sk", KURA_S}};
    kura_key_schema_element ks[] = {{"pk", false}, {"sk", true}};
    kura_create_table_req req = {.table_name = BTX_TABLE,
                                 .attribute_definitions = defs,
                                 .attribute_definitions_count = 2,
                                 .key_schema = ks,
                                 .key_schema_count = 2,
                                 .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    if (view != KURA_STREAM_VIEW_UNSET)
        req.stream_specification = (kura_stream_specification){true, true, view};
    kura_table_description desc;
    kura_status s = kura_create_table(db, &req, &desc);
    if (s != KURA_OK) return btx_fail(s, "CreateTable");
    if (view != KURA_STREAM_VIEW_UNSET)
        snprintf(arn_out, 512, "%s", desc.latest_stream_arn ? desc.latest_stream_arn : "");
    kura_table_description_free(&desc);
    return KURA_OK;
}

/* ---- Items and their partitions ------------------------------------------------------------- */

uint32_t btx_part_of(uint64_t group, uint32_t parts)
{
    bench_item_fields f;
    bench_item_key_make(group * BENCH_ITEMS_PER_PK, &f);
    /* the key encoding of an S value without 0x00 bytes: its bytes, then 00 01 */
    uint8_t enc[64]; /* (larger than needed: GCC's bounds check follows XXH3's long paths) */
    size_t n = strlen(f.pk);
    memcpy(enc, f.pk, n);
    enc[n] = 0x00;
    enc[n + 1] = 0x01;
    return parts <= 1 ? 0 : kura_hash_bucket(kura_hash64(enc, n + 2), parts);
}

static bool put_s(kura_value *m, const char *name, const char *s)
{
    return kura_value_map_put(m, name, strlen(name), kura_value_s(s, strlen(s))) == KURA_OK;
}

kura_value *btx_item(uint64_t index, const char *n)
{
    bench_item_fields f;
    bench_item_fields_make(index, &f);
    return bench_item_value(&f, n, true);
}

kura_value *btx_key(uint64_t index)
{
    bench_item_fields f;
    bench_item_key_make(index, &f);
    kura_value *m = kura_value_map();
    if (m && put_s(m, "pk", f.pk) && put_s(m, "sk", f.sk)) return m;
    kura_value_free(m);
    return NULL;
}

kura_status btx_put(kura_db *db, uint64_t index)
{
    return btx_put_n(db, index, "0");
}

kura_status btx_put_n(kura_db *db, uint64_t index, const char *n)
{
    kura_value *item = btx_item(index, n);
    if (!item) return kura_err(KURA_E_NOMEM, "item %llu", (unsigned long long)index);
    kura_put_item_req req = {.table_name = BTX_TABLE, .item = item};
    kura_write_result res = {0};
    kura_status s = kura_put_item(db, &req, &res);
    kura_write_result_free(&res);
    kura_value_free(item);
    return s == KURA_OK ? s : btx_fail(s, "PutItem");
}

/* Partition keys of one PutItem thread's own items. */
#define BTX_PUT_RANGE 100000000ull

uint64_t btx_put_first(uint32_t t)
{
    return (uint64_t)(1 + t) * BTX_PUT_RANGE * BENCH_ITEMS_PER_PK;
}

kura_status btx_put_work(btx_worker *w)
{
    uint64_t first = btx_put_first(w->id);
    while (!atomic_load(w->stop)) {
        uint64_t t0 = btx_call_begin(w);
        kura_status s = btx_put(w->c->db, first + w->items);
        btx_call_end(w, t0);
        if (s != KURA_OK) return s;
        w->ops++;
        w->items++;
    }
    return KURA_OK;
}

kura_status btx_make_pairs(uint32_t parts, uint64_t first_group, uint64_t npairs, btx_pair **out)
{
    if (parts < 2)
        return kura_err(KURA_E_INVALID, "pairs of items in two partitions need --partitions of "
                                        "2 or more");
    uint64_t ngp = (npairs + BENCH_ITEMS_PER_PK - 1) / BENCH_ITEMS_PER_PK;
    uint64_t *ga = malloc(ngp * sizeof *ga), *gb = malloc(ngp * sizeof *gb);
    uint64_t *stash = malloc(ngp * 2 * sizeof *stash); /* partition keys of one partition */
    btx_pair *pairs = malloc(npairs * sizeof *pairs);
    if (!ga || !gb || !stash || !pairs) {
        free(ga);
        free(gb);
        free(stash);
        free(pairs);
        return kura_err(KURA_E_NOMEM, "pairs");
    }
    /* greedy: a partition key waits in the stash until one of another partition comes; the
     * stash only ever holds keys of one partition (any other would have been paired) */
    uint64_t made = 0, nstash = 0, g = first_group;
    uint32_t stash_part = 0;
    while (made < ngp) {
        uint32_t p = btx_part_of(g, parts);
        if (nstash > 0 && p != stash_part) {
            ga[made] = stash[--nstash];
            gb[made++] = g;
        } else if (nstash < ngp * 2) {
            stash[nstash++] = g;
            stash_part = p;
        } /* else: a run of 2 x ngp keys in one partition; skip it (never seen) */
        g++;
    }
    for (uint64_t i = 0; i < npairs; i++) {
        uint64_t gp = i % ngp, k = i / ngp;
        pairs[i] = (btx_pair){ga[gp] * BENCH_ITEMS_PER_PK + k, gb[gp] * BENCH_ITEMS_PER_PK + k};
    }
    free(ga);
    free(gb);
    free(stash);
    *out = pairs;
    return KURA_OK;
}

kura_status btx_txn_pair(kura_db *db, const btx_pair *p)
{
    kura_value *a = btx_item(p->a, "0"), *b = btx_item(p->b, "0");
    kura_status s = KURA_OK;
    if (!a || !b) s = kura_err(KURA_E_NOMEM, "items");
    if (s == KURA_OK) {
        kura_transact_write_item acts[2] = {
            {.op = KURA_TXN_PUT, .table_name = BTX_TABLE, .item = a},
            {.op = KURA_TXN_PUT, .table_name = BTX_TABLE, .item = b}};
        kura_transact_write_req req = {.items = acts, .item_count = 2};
        kura_transact_write_res res = {0};
        s = kura_transact_write_items(db, &req, &res);
        kura_transact_write_res_free(&res);
        if (s != KURA_OK) s = btx_fail(s, "TransactWriteItems");
    }
    kura_value_free(a);
    kura_value_free(b);
    return s;
}

void btx_count_range(uint64_t first, uint64_t n, uint32_t parts, uint64_t *counts)
{
    uint64_t i = first, end = first + n;
    while (i < end) {
        uint64_t g = i / BENCH_ITEMS_PER_PK, next = (g + 1) * BENCH_ITEMS_PER_PK;
        if (next > end) next = end;
        counts[btx_part_of(g, parts)] += next - i;
        i = next;
    }
}

/* ---- Checks --------------------------------------------------------------------------------- */

/* The items of segment `seg` of `total` (Select COUNT, page by page). */
static kura_status count_segment(kura_db *db, uint32_t seg, uint32_t total, uint64_t *n_out)
{
    kura_value *start = NULL;
    uint64_t n = 0;
    kura_status s = KURA_OK;
    do {
        kura_scan_req req = {.table_name = BTX_TABLE,
                             .select = KURA_SELECT_COUNT,
                             .exclusive_start_key = start,
                             .has_segment = true,
                             .segment = seg,
                             .total_segments = total};
        kura_page page = {0};
        s = kura_scan(db, &req, &page);
        kura_value_free(start);
        start = NULL;
        if (s == KURA_OK) {
            n += page.count;
            if (page.last_evaluated_key && !(start = kura_value_clone(page.last_evaluated_key)))
                s = kura_err(KURA_E_NOMEM, "scan key");
        } else {
            s = btx_fail(s, "Scan");
        }
        kura_page_free(&page);
    } while (s == KURA_OK && start);
    kura_value_free(start);
    if (s == KURA_OK) *n_out = n;
    return s;
}

kura_status btx_check_parts(btx_ctx *c, const uint64_t *want)
{
    for (uint32_t p = 0; p < c->parts; p++) {
        uint64_t n = 0;
        kura_status s = count_segment(c->db, p, c->parts, &n);
        if (s == KURA_OK && n != want[p])
            s = kura_err(KURA_E_CORRUPTION,
                         "partition %u of %u holds %llu items, %llu were "
                         "written to it",
                         p, c->parts, (unsigned long long)n, (unsigned long long)want[p]);
        if (s != KURA_OK) return s;
    }
    return KURA_OK;
}

/* Whether attribute `name` of item m is the string s. */
static bool attr_is(const kura_value *m, const char *name, const char *s)
{
    const kura_value *v = kura_value_get(m, name, strlen(name));
    size_t len = 0;
    const char *b = v ? kura_value_bytes(v, &len) : NULL;
    return b && len == strlen(s) && !memcmp(b, s, len);
}

kura_status btx_check_items(kura_db *db, const uint64_t *idx, size_t n)
{
    kura_transact_get_item gets[100];
    kura_value *keys[100] = {0};
    kura_status s = n <= 100 ? KURA_OK : kura_err(KURA_E_INVALID, "%zu items to check", n);
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        if (!(keys[i] = btx_key(idx[i]))) s = kura_err(KURA_E_NOMEM, "keys");
        gets[i] = (kura_transact_get_item){.table_name = BTX_TABLE, .key = keys[i]};
    }
    kura_transact_get_res res = {0};
    if (s == KURA_OK) {
        kura_transact_get_req req = {.items = gets, .item_count = n};
        if ((s = kura_transact_get_items(db, &req, &res)) != KURA_OK)
            s = btx_fail(s, "TransactGetItems");
    }
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        bench_item_fields f;
        bench_item_fields_make(idx[i], &f);
        const kura_value *it = i < res.item_count ? res.items[i] : NULL;
        char num[200] = "";
        const kura_value *nv = it ? kura_value_get(it, "n", 1) : NULL;
        if (nv) kura_value_num(nv, num, sizeof num);
        if (!it || !attr_is(it, "pk", f.pk) || !attr_is(it, "sk", f.sk) ||
            !attr_is(it, "name", f.name) || !attr_is(it, "email", f.email) || strcmp(num, "0"))
            s = kura_err(KURA_E_CORRUPTION, "item %llu (%s, %s) is %s", (unsigned long long)idx[i],
                         f.pk, f.sk, it ? "not the item written" : "missing");
    }
    kura_transact_get_res_free(&res);
    for (size_t i = 0; i < n; i++)
        kura_value_free(keys[i]);
    return s;
}

/* ---- Worker threads ------------------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    btx_worker *w = arg;
    w->begin_ns = know_ns();
    w->st = w->fn(w);
    w->end_ns = know_ns();
    if (w->st != KURA_OK) /* the message is per thread: keep it for the caller */
        snprintf(w->err, sizeof w->err, "%s", kura_last_error());
    return NULL;
}

kura_status btx_workers_start(btx_worker *ws, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        bench_hist_init(&ws[i].hist);
        if (!(ws[i].started = kthread_start(&ws[i].tid, worker_main, &ws[i])))
            return kura_err(KURA_E_NOMEM, "cannot start worker thread %u", i);
    }
    return KURA_OK;
}

kura_status btx_workers_join(btx_worker *ws, uint32_t n, kura_status s)
{
    for (uint32_t i = 0; i < n; i++)
        if (ws[i].started) kthread_join(ws[i].tid);
    for (uint32_t i = 0; i < n && s == KURA_OK; i++)
        if (ws[i].started && ws[i].st != KURA_OK)
            s = kura_err(ws[i].st, "thread %u: %s", i, ws[i].err);
    return s;
}

uint64_t btx_call_begin(btx_worker *w)
{
    btx_watch_enter(w->c->watch, w->slot);
    return know_ns();
}

void btx_call_end(btx_worker *w, uint64_t t0)
{
    bench_hist_add(&w->hist, know_ns() - t0);
    btx_watch_leave(w->c->watch, w->slot);
}

void btx_hist_report(btx_worker *ws, uint32_t n, bench_run *run)
{
    bench_hist *all = malloc(sizeof *all);
    if (!all) return;
    bench_hist_init(all);
    for (uint32_t i = 0; i < n; i++)
        bench_hist_merge(all, &ws[i].hist);
    run->p50_us = bench_hist_percentile_us(all, 50);
    run->p99_us = bench_hist_percentile_us(all, 99);
    bench_run_extra(run, "max_ms", all->count ? (double)all->max_ns / 1e6 : 0);
    free(all);
}

/* ---- bench_txn_run ----------------------------------------------------------------------------
 */

kura_status bench_txn_run(const bench_workload *wl, const bench_config *cfg, uint32_t repeat,
                          const char *dir, bench_run *run_out)
{
    btx_ctx c = {.cfg = cfg,
                 .sync = wl->sync,
                 .parts = cfg->partitions,
                 .seed = bench_seed_mix(cfg->seed, repeat, (uint64_t)(wl - bench_workloads))};
    if (!(c.io = btx_io_new())) return kura_err(KURA_E_NOMEM, "io counter");
    kura_status s = btx_watch_start(wl->name, &c.watch);
    if (s != KURA_OK) {
        btx_io_free(c.io);
        return s;
    }
    btx_watch_enter(c.watch, 0);
    bench_run run;
    memset(&run, 0, sizeof run);
    /* the stream workloads' table has a NEW_AND_OLD_IMAGES stream, but stream_put_solo's */
    bool stream = (wl->kind >= BENCH_WL_STREAM_PUT && wl->kind <= BENCH_WL_STREAM_LAG) ||
                  wl->kind == BENCH_WL_STREAM_OVER;
    kura_stream_view_type view = stream ? KURA_STREAM_NEW_AND_OLD_IMAGES : KURA_STREAM_VIEW_UNSET;
    s = btx_open(dir, cfg, c.sync, c.io, &c.db);
    if (s == KURA_OK && (s = btx_create_table(c.db, view, c.stream_arn)) == KURA_OK) {
        switch (wl->kind) {
        case BENCH_WL_TXN_PAIRS_PUT:
        case BENCH_WL_TXN_PAIRS_TXN:
            s = btx_run_pairs(&c, wl->kind == BENCH_WL_TXN_PAIRS_TXN, &run);
            break;
        case BENCH_WL_TXN_BATCH:
        case BENCH_WL_TXN_BATCH_TXN:
            s = btx_run_batch(&c, wl->kind == BENCH_WL_TXN_BATCH_TXN, &run);
            break;
        case BENCH_WL_TXN_MIX_SOLO:
        case BENCH_WL_TXN_MIX_TXN:
            s = btx_run_mixed(&c, wl->kind == BENCH_WL_TXN_MIX_TXN, &run);
            break;
        case BENCH_WL_TXN_HOT:
            s = btx_run_hot(&c, &run);
            break;
        case BENCH_WL_TTL_SWEEP:
            s = btx_run_ttl_sweep(&c, &run);
            break;
        case BENCH_WL_TTL_PUT_SOLO:
        case BENCH_WL_TTL_PUT_SWEEP:
            s = btx_run_ttl_put(&c, wl->kind == BENCH_WL_TTL_PUT_SWEEP, &run);
            break;
        case BENCH_WL_STREAM_PUT_SOLO:
        case BENCH_WL_STREAM_PUT:
            s = btx_run_stream_put(&c, false, &run);
            break;
        case BENCH_WL_STREAM_OVER_SOLO:
        case BENCH_WL_STREAM_OVER:
            s = btx_run_stream_put(&c, true, &run);
            break;
        case BENCH_WL_STREAM_READ:
            s = btx_run_stream_read(&c, &run);
            break;
        case BENCH_WL_STREAM_LAG:
            s = btx_run_stream_lag(&c, &run);
            break;
        default:
            s = kura_err(KURA_E_INVALID, "%s is not a transaction workload", wl->name);
        }
    }
    if (c.db) {
        kura_status cs = kura_close(c.db);
        if (s == KURA_OK && cs != KURA_OK) s = btx_fail(cs, "close");
    }
    btx_watch_leave(c.watch, 0);
    btx_watch_stop(c.watch);
    btx_io_free(c.io);
    if (s != KURA_OK) return s;
    bench_run_finish(&run);
    run.state = BENCH_RUN_OK;
    *run_out = run;
    return KURA_OK;
}
