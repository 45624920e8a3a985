/*
 * ttl.c - the Time to Live workloads (txn.h; docs/architecture.md, "Time to Live"), on the
 * transaction suite's table, items and threads:
 *
 *   ttl_sweep[_sync]  --num (_sync: --sync-num) items whose "exp" expired a minute ago are
 *                     loaded (BatchWriteItem, 25 at a time), TTL is enabled, and one
 *                     kura_ttl_sweep deletes them on the calling thread. ops = items deleted;
 *                     seconds = the sweep.
 *   ttl_put_solo      the same --num expired items, TTL left disabled; --threads/2 threads
 *                     PutItem items of their own (bench/txn/mixed.c's) for --txn-seconds.
 *                     ops = PutItems.
 *   ttl_put_sweep     the same, with TTL enabled: the PutItem threads run exactly while one
 *                     kura_ttl_sweep deletes the --num expired items. ops = PutItems; seconds =
 *                     the sweep; extras: sweep_items_per_sec, the sweep's rate beside them.
 *
 * ttl_put_sweep / ttl_put_solo is what a sweep costs foreground writers. The background
 * sweeper thread is kept out of the measurements (btx_open sets a one-hour interval): the
 * sweeps here are kura_ttl_sweep calls, the very function the thread runs.
 *
 * What they check: the sweep deleted every expired item (its count, and a Scan per partition
 * finds only the PutItems' items), and every PutItem's item is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/item_fields.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

#define TTL_ATTR "exp"

/* Loads items 0 .. n-1, each with "exp" a minute in the past, 25 per BatchWriteItem. */
static kura_status load_expired(kura_db *db, uint64_t n)
{
    char exp[32];
    snprintf(exp, sizeof exp, "%lld", (long long)time(NULL) - 60);
    kura_status s = KURA_OK;
    for (uint64_t i = 0; i < n && s == KURA_OK; i += BTX_BATCH) {
        kura_value *items[BTX_BATCH] = {0};
        kura_write_request reqs[BTX_BATCH];
        size_t m = 0;
        for (; m < BTX_BATCH && i + m < n && s == KURA_OK; m++) {
            items[m] = btx_item(i + m, "0");
            if (!items[m] || kura_value_map_put(items[m], TTL_ATTR, strlen(TTL_ATTR),
                                                kura_value_n(exp, strlen(exp))) != KURA_OK)
                s = kura_err(KURA_E_NOMEM, "items");
            reqs[m] = (kura_write_request){.table_name = BTX_TABLE, .item = items[m]};
        }
        if (s == KURA_OK) {
            kura_batch_write_req req = {.requests = reqs, .request_count = m};
            kura_batch_write_res res = {0};
            if ((s = kura_batch_write_item(db, &req, &res)) != KURA_OK)
                s = btx_fail(s, "BatchWriteItem");
            kura_batch_write_res_free(&res);
        }
        for (size_t k = 0; k < BTX_BATCH; k++)
            kura_value_free(items[k]);
    }
    return s;
}

static kura_status enable_ttl(kura_db *db)
{
    kura_update_time_to_live_req req = {BTX_TABLE, true, TTL_ATTR};
    kura_status s = kura_update_time_to_live(db, &req);
    return s == KURA_OK ? s : btx_fail(s, "UpdateTimeToLive");
}

/* One sweep on this thread of the n expired items: *deleted_out and its seconds into
 * *sec_out. */
static kura_status sweep(btx_ctx *c, uint64_t n, uint64_t *deleted_out, double *sec_out)
{
    uint64_t t0 = know_ns();
    kura_status s = kura_ttl_sweep(c->db, deleted_out);
    *sec_out = (double)(know_ns() - t0) / 1e9;
    if (s != KURA_OK) return btx_fail(s, "kura_ttl_sweep");
    if (*deleted_out != n)
        return kura_err(KURA_E_CORRUPTION, "the sweep deleted %llu items of %llu expired",
                        (unsigned long long)*deleted_out, (unsigned long long)n);
    return KURA_OK;
}

kura_status btx_run_ttl_sweep(btx_ctx *c, bench_run *run)
{
    uint64_t deleted = 0, n = c->sync ? c->cfg->sync_num : c->cfg->num;
    double sec = 0;
    kura_status s = load_expired(c->db, n); /* (sync: each put is synced, hence fewer) */
    if (s == KURA_OK) s = enable_ttl(c->db);
    btx_io_counts io0, io1;
    btx_io_read(c->io, &io0);
    if (s == KURA_OK) s = sweep(c, n, &deleted, &sec);
    btx_io_read(c->io, &io1);
    if (s != KURA_OK) return s;
    run->ops = deleted;
    run->threads = 1;
    run->seconds = sec;
    btx_io_report(&io0, &io1, deleted, sec, run);
    uint64_t *want = calloc(c->parts, sizeof *want); /* all gone */
    if (!want) return kura_err(KURA_E_NOMEM, "counts");
    s = btx_check_parts(c, want);
    free(want);
    return s;
}

kura_status btx_run_ttl_put(btx_ctx *c, bool sweeping, bench_run *run)
{
    const bench_config *cfg = c->cfg;
    uint32_t nput = cfg->threads / 2 ? cfg->threads / 2 : 1;
    btx_worker *ws = calloc(nput, sizeof *ws);
    kura_status s = ws ? load_expired(c->db, cfg->num) : kura_err(KURA_E_NOMEM, "workers");
    if (s == KURA_OK && sweeping) s = enable_ttl(c->db);
    atomic_bool stop = false;
    for (uint32_t t = 0; t < nput && s == KURA_OK; t++)
        ws[t] = (btx_worker){
            .c = c, .fn = btx_put_work, .id = t, .slot = 1 + t, .nthreads = nput, .stop = &stop};
    uint64_t deleted = 0;
    double sec = 0;
    if (s == KURA_OK) {
        uint64_t t0 = know_ns();
        s = btx_workers_start(ws, nput);
        if (s == KURA_OK && sweeping)
            s = sweep(c, cfg->num, &deleted, &sec);
        else if (s == KURA_OK)
            btx_sleep_ms((uint64_t)cfg->txn_seconds * 1000u);
        atomic_store(&stop, true);
        s = btx_workers_join(ws, nput, s);
        uint64_t t1 = know_ns();
        for (uint32_t t = 0; t < nput; t++)
            run->ops += ws[t].ops;
        run->threads = nput;
        run->seconds = (double)(t1 - t0) / 1e9;
        btx_hist_report(ws, nput, run);
        if (sweeping) bench_run_extra(run, "sweep_items_per_sec", sec > 0 ? deleted / sec : 0);
    }
    uint64_t *want = s == KURA_OK ? calloc(c->parts, sizeof *want) : NULL;
    if (s == KURA_OK && !want) s = kura_err(KURA_E_NOMEM, "counts");
    if (s == KURA_OK) {
        for (uint32_t t = 0; t < nput; t++)
            btx_count_range(btx_put_first(t), ws[t].items, c->parts, want);
        if (!sweeping) btx_count_range(0, cfg->num, c->parts, want);
        s = btx_check_parts(c, want);
    }
    free(want);
    free(ws);
    return s;
}
