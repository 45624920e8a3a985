/*
 * mixed.c - put_solo[_sync] and put_mixed[_sync] (txn.h): the PutItem rate of --threads/2
 * threads writing items of their own, alone and while --threads/2 other threads run 2-item
 * transactions on other items.
 *
 * No item is shared between a PutItem thread and a transaction thread, so what the puts feel
 * is not the transactions' item locks but what the transactions hold beyond them: the lead of
 * their partitions' write queues through the prepare syncs and the commit record
 * (docs/architecture.md, "Transactions"), and the CPU and the disk. The transaction threads
 * start MIX_SETTLE_MS before the PutItem threads and stop after them, so the whole PutItem
 * window has transactions running; each cycles over MIX_TXN_PAIRS pairs of its own.
 */
#include <stdlib.h>

#include "bench/item_fields.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

#define MIX_SETTLE_MS 200
#define MIX_GROUP_RANGE 100000000ull /* partition keys of one thread's own items */
#define MIX_TXN_PAIRS 400
#define MIX_TXN_FIRST_THREAD 64 /* the transaction threads' ranges come after the PutItems' */

static kura_status txn_work(btx_worker *w)
{
    const btx_pair *pairs = w->arg;
    while (!atomic_load(w->stop)) {
        uint64_t t0 = btx_call_begin(w);
        kura_status s = btx_txn_pair(w->c->db, &pairs[w->ops % MIX_TXN_PAIRS]);
        btx_call_end(w, t0);
        if (s != KURA_OK) return s;
        w->ops++;
        w->items += 2;
    }
    return KURA_OK;
}

/* Every item written, partition by partition: the PutItems' and the distinct pairs'. */
static kura_status mixed_check(btx_ctx *c, const btx_worker *ws, uint32_t nput, uint32_t ntxn,
                               btx_pair *const *pairs)
{
    uint64_t *want = calloc(c->parts, sizeof *want);
    if (!want) return kura_err(KURA_E_NOMEM, "counts");
    for (uint32_t t = 0; t < nput; t++)
        btx_count_range(btx_put_first(t), ws[t].items, c->parts, want);
    for (uint32_t k = 0; k < ntxn; k++) {
        uint64_t n = ws[nput + k].ops < MIX_TXN_PAIRS ? ws[nput + k].ops : MIX_TXN_PAIRS;
        for (uint64_t i = 0; i < n; i++) {
            want[btx_part_of(pairs[k][i].a / BENCH_ITEMS_PER_PK, c->parts)]++;
            want[btx_part_of(pairs[k][i].b / BENCH_ITEMS_PER_PK, c->parts)]++;
        }
    }
    kura_status s = btx_check_parts(c, want);
    free(want);
    for (uint32_t k = 0; k < ntxn && s == KURA_OK; k++) {
        uint64_t idx[2] = {pairs[k][0].a, pairs[k][0].b};
        s = btx_check_items(c->db, idx, 2);
    }
    return s;
}

/* The transaction threads' figures. */
static void txn_report(const btx_worker *ws, uint32_t n, uint64_t begin, uint64_t end,
                       bench_run *run)
{
    bench_hist *h = malloc(sizeof *h);
    if (!h) return;
    bench_hist_init(h);
    uint64_t txns = 0;
    for (uint32_t k = 0; k < n; k++) {
        txns += ws[k].ops;
        bench_hist_merge(h, &ws[k].hist);
    }
    double s = end > begin ? (double)(end - begin) / 1e9 : 0;
    bench_run_extra(run, "txn_per_sec", s > 0 ? (double)txns / s : 0);
    bench_run_extra(run, "txn_p50_ms", bench_hist_percentile_us(h, 50) / 1000.0);
    bench_run_extra(run, "txn_p99_ms", bench_hist_percentile_us(h, 99) / 1000.0);
    free(h);
}

kura_status btx_run_mixed(btx_ctx *c, bool txn, bench_run *run)
{
    const bench_config *cfg = c->cfg;
    uint32_t nput = cfg->threads / 2 ? cfg->threads / 2 : 1;
    uint32_t ntxn = txn ? nput : 0;
    btx_worker *ws = calloc(nput + ntxn, sizeof *ws);
    btx_pair **pairs = calloc(ntxn ? ntxn : 1, sizeof *pairs);
    kura_status s = ws && pairs ? KURA_OK : kura_err(KURA_E_NOMEM, "workers");
    for (uint32_t k = 0; k < ntxn && s == KURA_OK; k++)
        s = btx_make_pairs(c->parts, (uint64_t)(MIX_TXN_FIRST_THREAD + k) * MIX_GROUP_RANGE,
                           MIX_TXN_PAIRS, &pairs[k]);
    atomic_bool stop_put = false, stop_txn = false;
    for (uint32_t t = 0; t < nput && s == KURA_OK; t++)
        ws[t] = (btx_worker){
            .c = c, .fn = btx_put_work, .id = t, .slot = 1 + t, .nthreads = nput, .stop = &stop_put};
    for (uint32_t k = 0; k < ntxn && s == KURA_OK; k++)
        ws[nput + k] = (btx_worker){.c = c,
                                    .fn = txn_work,
                                    .id = k,
                                    .slot = 1 + nput + k,
                                    .nthreads = ntxn,
                                    .stop = &stop_txn,
                                    .arg = pairs[k]};
    btx_io_counts io0, io1;
    uint64_t tx0 = know_ns(), t0 = tx0, t1 = tx0, tx1 = tx0;
    if (s == KURA_OK) {
        btx_io_read(c->io, &io0);
        s = btx_workers_start(ws + nput, ntxn);
        if (s == KURA_OK && ntxn) btx_sleep_ms(MIX_SETTLE_MS);
        t0 = know_ns();
        if (s == KURA_OK) s = btx_workers_start(ws, nput);
        if (s == KURA_OK) btx_sleep_ms((uint64_t)cfg->txn_seconds * 1000u);
        atomic_store(&stop_put, true);
        s = btx_workers_join(ws, nput, s);
        t1 = know_ns();
        atomic_store(&stop_txn, true);
        s = btx_workers_join(ws + nput, ntxn, s);
        tx1 = know_ns();
        btx_io_read(c->io, &io1);
        uint64_t calls = 0;
        for (uint32_t t = 0; t < nput + ntxn; t++)
            calls += ws[t].ops;
        for (uint32_t t = 0; t < nput; t++)
            run->ops += ws[t].ops;
        run->threads = nput;
        run->seconds = (double)(t1 - t0) / 1e9;
        btx_hist_report(ws, nput, run);
        txn_report(ws + nput, ntxn, tx0, tx1, run);
        btx_io_report(&io0, &io1, calls, (double)(tx1 - tx0) / 1e9, run);
    }
    if (s == KURA_OK) s = mixed_check(c, ws, nput, ntxn, pairs);
    for (uint32_t k = 0; k < ntxn && pairs; k++)
        free(pairs[k]);
    free(pairs);
    free(ws);
    return s;
}
