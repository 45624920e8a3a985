/*
 * pairs.c - pairs_put and pairs_txn (txn.h): the same writes, pairs of items in two
 * partitions, as two PutItems or as one TransactWriteItems of two Puts, on --threads threads.
 *
 * Pair i goes to thread i mod T, so the threads write the pairs in the order of the list; the
 * list places consecutive pairs on different partition keys (btx_make_pairs), so that the
 * threads' transactions fall on random pairs of partitions rather than all on the same two.
 */
#include <stdlib.h>

#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

enum { CHECK_PAIRS = 50 }; /* pairs read back at the end, 2 items each */

typedef struct pairs_arg {
    const btx_pair *pairs;
    uint64_t npairs;
    bool txn;
} pairs_arg;

static kura_status pairs_work(btx_worker *w)
{
    const pairs_arg *a = w->arg;
    kura_db *db = w->c->db;
    for (uint64_t i = w->id; i < a->npairs; i += w->nthreads) {
        const btx_pair *p = &a->pairs[i];
        kura_status s;
        if (a->txn) {
            uint64_t t0 = btx_call_begin(w);
            s = btx_txn_pair(db, p);
            btx_call_end(w, t0);
        } else {
            uint64_t t0 = btx_call_begin(w);
            s = btx_put(db, p->a);
            btx_call_end(w, t0);
            if (s == KURA_OK) {
                t0 = btx_call_begin(w);
                s = btx_put(db, p->b);
                btx_call_end(w, t0);
            }
        }
        if (s != KURA_OK) return s;
        w->ops += a->txn ? 1 : 2;
        w->items += 2;
    }
    return KURA_OK;
}

/* Every item is in the partition the routing says, and a sample reads back whole. */
static kura_status pairs_check(btx_ctx *c, const btx_pair *pairs, uint64_t npairs)
{
    uint64_t *want = calloc(c->parts, sizeof *want);
    if (!want) return kura_err(KURA_E_NOMEM, "counts");
    for (uint64_t i = 0; i < npairs; i++) {
        want[btx_part_of(pairs[i].a / BENCH_ITEMS_PER_PK, c->parts)]++;
        want[btx_part_of(pairs[i].b / BENCH_ITEMS_PER_PK, c->parts)]++;
    }
    kura_status s = btx_check_parts(c, want);
    free(want);
    bench_rng rng;
    bench_rng_seed(&rng, c->seed);
    for (int k = 0; k < CHECK_PAIRS && s == KURA_OK; k++) {
        const btx_pair *p = &pairs[k == 0 ? npairs - 1 : bench_rng_below(&rng, npairs)];
        uint64_t idx[2] = {p->a, p->b};
        s = btx_check_items(c->db, idx, 2);
    }
    return s;
}

kura_status btx_run_pairs(btx_ctx *c, bool txn, bench_run *run)
{
    const bench_config *cfg = c->cfg;
    uint64_t nitems = c->sync ? cfg->sync_num : cfg->num;
    uint64_t npairs = nitems / 2 ? nitems / 2 : 1;
    uint32_t nthreads = cfg->threads;
    btx_pair *pairs = NULL;
    kura_status s = btx_make_pairs(c->parts, 0, npairs, &pairs);
    if (s != KURA_OK) return s;
    btx_worker *ws = calloc(nthreads, sizeof *ws);
    if (!ws) {
        free(pairs);
        return kura_err(KURA_E_NOMEM, "workers");
    }
    pairs_arg arg = {pairs, npairs, txn};
    for (uint32_t t = 0; t < nthreads; t++)
        ws[t] = (btx_worker){
            .c = c, .fn = pairs_work, .id = t, .slot = 1 + t, .nthreads = nthreads, .arg = &arg};
    btx_io_counts io0, io1;
    btx_io_read(c->io, &io0);
    uint64_t t0 = know_ns();
    s = btx_workers_start(ws, nthreads);
    s = btx_workers_join(ws, nthreads, s);
    uint64_t t1 = know_ns();
    btx_io_read(c->io, &io1);
    uint64_t calls = 0;
    for (uint32_t t = 0; t < nthreads; t++) {
        run->ops += ws[t].items;
        calls += ws[t].ops;
    }
    run->threads = nthreads;
    run->seconds = (double)(t1 - t0) / 1e9;
    btx_hist_report(ws, nthreads, run);
    bench_run_extra(run, "calls_per_sec", run->seconds > 0 ? (double)calls / run->seconds : 0);
    btx_io_report(&io0, &io1, calls, run->seconds, run);
    if (s == KURA_OK) s = pairs_check(c, pairs, npairs);
    free(ws);
    free(pairs);
    return s;
}
