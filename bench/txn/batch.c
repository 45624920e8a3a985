/*
 * batch.c - batch25[_sync] and txn25[_sync] (txn.h): the same 25 items per call, written by
 * one BatchWriteItem or by one TransactWriteItems of 25 Puts, one thread.
 *
 * The items: G partition keys (G >= 25, 20 items each); slot s of the run is item s / G of
 * partition key s mod G, and call j writes slots 25j .. 25j + 24: 25 consecutive partition
 * keys, so each call spreads over the partitions as 25 random keys would (parts_per_txn says
 * how many on average), and the run writes every slot once.
 */
#include <stdlib.h>
#include <string.h>

#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

enum { CHECK_BATCHES = 8 }; /* calls read back at the end */

typedef struct batch_plan {
    uint64_t ncalls, ngroups;
    bool txn; /* TransactWriteItems, else BatchWriteItem */
} batch_plan;

static uint64_t slot_item(const batch_plan *p, uint64_t s)
{
    return s % p->ngroups * BENCH_ITEMS_PER_PK + s / p->ngroups;
}

/* The items of call j. */
static void call_items(const batch_plan *p, uint64_t j, uint64_t idx[BTX_BATCH])
{
    for (uint64_t m = 0; m < BTX_BATCH; m++)
        idx[m] = slot_item(p, j * BTX_BATCH + m);
}

/* One BatchWriteItem or TransactWriteItems of items idx[0..25). */
static kura_status write_call(kura_db *db, bool txn, const uint64_t idx[BTX_BATCH])
{
    kura_value *items[BTX_BATCH] = {0};
    kura_status s = KURA_OK;
    for (size_t m = 0; m < BTX_BATCH && s == KURA_OK; m++)
        if (!(items[m] = btx_item(idx[m], "0"))) s = kura_err(KURA_E_NOMEM, "items");
    if (s == KURA_OK && txn) {
        kura_transact_write_item acts[BTX_BATCH];
        for (size_t m = 0; m < BTX_BATCH; m++)
            acts[m] = (kura_transact_write_item){
                .op = KURA_TXN_PUT, .table_name = BTX_TABLE, .item = items[m]};
        kura_transact_write_req req = {.items = acts, .item_count = BTX_BATCH};
        kura_transact_write_res res = {0};
        if ((s = kura_transact_write_items(db, &req, &res)) != KURA_OK)
            s = btx_fail(s, "TransactWriteItems");
        kura_transact_write_res_free(&res);
    } else if (s == KURA_OK) {
        kura_write_request reqs[BTX_BATCH];
        for (size_t m = 0; m < BTX_BATCH; m++)
            reqs[m] = (kura_write_request){.table_name = BTX_TABLE, .item = items[m]};
        kura_batch_write_req req = {.requests = reqs, .request_count = BTX_BATCH};
        kura_batch_write_res res = {0};
        if ((s = kura_batch_write_item(db, &req, &res)) != KURA_OK)
            s = btx_fail(s, "BatchWriteItem");
        kura_batch_write_res_free(&res);
    }
    for (size_t m = 0; m < BTX_BATCH; m++)
        kura_value_free(items[m]);
    return s;
}

static kura_status batch_work(btx_worker *w)
{
    const batch_plan *p = w->arg;
    for (uint64_t j = 0; j < p->ncalls; j++) {
        uint64_t idx[BTX_BATCH];
        call_items(p, j, idx);
        uint64_t t0 = btx_call_begin(w);
        kura_status s = write_call(w->c->db, p->txn, idx);
        btx_call_end(w, t0);
        if (s != KURA_OK) return s;
        w->ops++;
        w->items += BTX_BATCH;
    }
    return KURA_OK;
}

static kura_status batch_check(btx_ctx *c, const batch_plan *p)
{
    uint64_t *want = calloc(c->parts, sizeof *want);
    if (!want) return kura_err(KURA_E_NOMEM, "counts");
    for (uint64_t s = 0; s < p->ncalls * BTX_BATCH; s++)
        want[btx_part_of(slot_item(p, s) / BENCH_ITEMS_PER_PK, c->parts)]++;
    kura_status s = btx_check_parts(c, want);
    free(want);
    bench_rng rng;
    bench_rng_seed(&rng, c->seed);
    for (int k = 0; k < CHECK_BATCHES && s == KURA_OK; k++) {
        uint64_t idx[BTX_BATCH];
        call_items(p, k == 0 ? p->ncalls - 1 : bench_rng_below(&rng, p->ncalls), idx);
        s = btx_check_items(c->db, idx, BTX_BATCH);
    }
    return s;
}

/* The mean number of partitions a call's 25 items span. */
static double parts_per_call(const btx_ctx *c, const batch_plan *p)
{
    uint64_t total = 0;
    for (uint64_t j = 0; j < p->ncalls; j++) {
        uint64_t idx[BTX_BATCH];
        bool seen[256] = {false};
        call_items(p, j, idx);
        for (size_t m = 0; m < BTX_BATCH; m++) {
            uint32_t part = btx_part_of(idx[m] / BENCH_ITEMS_PER_PK, c->parts);
            total += !seen[part];
            seen[part] = true;
        }
    }
    return p->ncalls ? (double)total / (double)p->ncalls : 0;
}

kura_status btx_run_batch(btx_ctx *c, bool txn, bench_run *run)
{
    uint64_t nitems = c->sync ? c->cfg->sync_num : c->cfg->num;
    batch_plan p = {.ncalls = nitems / BTX_BATCH ? nitems / BTX_BATCH : 1, .txn = txn};
    p.ngroups = (p.ncalls * BTX_BATCH + BENCH_ITEMS_PER_PK - 1) / BENCH_ITEMS_PER_PK;
    if (p.ngroups < BTX_BATCH) p.ngroups = BTX_BATCH;
    btx_worker w = {.c = c, .fn = batch_work, .slot = 1, .nthreads = 1, .arg = &p};
    btx_io_counts io0, io1;
    btx_io_read(c->io, &io0);
    uint64_t t0 = know_ns();
    kura_status s = btx_workers_start(&w, 1);
    s = btx_workers_join(&w, 1, s);
    uint64_t t1 = know_ns();
    btx_io_read(c->io, &io1);
    run->ops = w.items;
    run->threads = 1;
    run->seconds = (double)(t1 - t0) / 1e9;
    btx_hist_report(&w, 1, run);
    bench_run_extra(run, "calls_per_sec", run->seconds > 0 ? (double)w.ops / run->seconds : 0);
    bench_run_extra(run, "parts_per_txn", parts_per_call(c, &p));
    btx_io_report(&io0, &io1, w.ops, run->seconds, run);
    if (s == KURA_OK) s = batch_check(c, &p);
    return s;
}
