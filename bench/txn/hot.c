/*
 * hot.c - txn_hot (txn.h): --threads threads move amounts between two of 100 hot items with
 * TransactWriteItems for --txn-seconds, while a reader checks the total with TransactGetItems.
 *
 * Hot item i is the first item of partition key i, so the 100 spread over the partitions and
 * most pairs span two (cross_part_pct). A move of a from x to y is two Updates, "SET n = n -
 * :a" under "n >= :a" on x and "SET n = n + :a" on y: a transaction that finds x short is
 * cancelled with ConditionalCheckFailed on x and None on y. kura blocks a transaction on an
 * item another holds rather than cancelling it (docs/architecture.md, "Transactions"), so a
 * TransactionConflict is counted but not expected; any other outcome fails the run, and a
 * transaction that never returns trips the watchdog (txn_int.h).
 *
 * The checks: every TransactGetItems of the 100 items (one snapshot) sums to 100 x
 * BTX_HOT_START; at the end each item holds BTX_HOT_START plus what the committed moves
 * brought it minus what they took (every thread keeps its own account of the moves it
 * committed, summed at the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

/* One mover's account. */
typedef struct hot_acct {
    int64_t delta[BTX_HOT_ITEMS];
    uint64_t committed, ccf, conflict, cross;
    bench_hist commit_hist;
} hot_acct;

typedef struct hot_shared {
    kura_value *keys[BTX_HOT_ITEMS]; /* read-only once built */
    uint32_t part[BTX_HOT_ITEMS];
    hot_acct *accts; /* one per mover */
    uint64_t snapshots;
} hot_shared;

static uint64_t hot_item(uint32_t i)
{
    return (uint64_t)i * BENCH_ITEMS_PER_PK;
}

static kura_status decimal(uint64_t v, char *buf, size_t cap, kura_value **vals_out)
{
    snprintf(buf, cap, "%llu", (unsigned long long)v);
    kura_value *vals = kura_value_map();
    if (!vals || kura_value_map_put(vals, ":a", 2, kura_value_n(buf, strlen(buf))) != KURA_OK) {
        kura_value_free(vals);
        return kura_err(KURA_E_NOMEM, "values");
    }
    *vals_out = vals;
    return KURA_OK;
}

/* The outcome of a cancelled move: the reasons must be ConditionalCheckFailed (or
 * TransactionConflict) on the debit and None (or TransactionConflict) on the credit. */
static kura_status cancelled(const kura_transact_write_res *res, hot_acct *acct)
{
    const kura_cancellation_reason *r = res->cancellation_reasons;
    if (res->cancellation_reason_count != 2)
        return kura_err(KURA_E_CORRUPTION, "a cancelled move has %zu reasons, not 2",
                        res->cancellation_reason_count);
    bool conflict =
        !strcmp(r[0].code, "TransactionConflict") || !strcmp(r[1].code, "TransactionConflict");
    if (conflict) {
        acct->conflict++;
        return KURA_OK;
    }
    if (!strcmp(r[0].code, "ConditionalCheckFailed") && !strcmp(r[1].code, "None")) {
        acct->ccf++;
        return KURA_OK;
    }
    return kura_err(KURA_E_CORRUPTION, "a move cancelled for [%s, %s]: %s", r[0].code, r[1].code,
                    r[0].message   ? r[0].message
                    : r[1].message ? r[1].message
                                   : "");
}

/* One move of `amount` from hot item x to y. */
static kura_status move(btx_worker *w, hot_shared *h, uint32_t x, uint32_t y, uint64_t amount)
{
    hot_acct *acct = &h->accts[w->id];
    char buf[24];
    kura_value *vals = NULL;
    kura_status s = decimal(amount, buf, sizeof buf, &vals);
    if (s != KURA_OK) return s;
    kura_transact_write_item acts[2] = {{.op = KURA_TXN_UPDATE,
                                         .table_name = BTX_TABLE,
                                         .key = h->keys[x],
                                         .update_expression = "SET n = n - :a",
                                         .condition_expression = "n >= :a",
                                         .expr = {.values = vals}},
                                        {.op = KURA_TXN_UPDATE,
                                         .table_name = BTX_TABLE,
                                         .key = h->keys[y],
                                         .update_expression = "SET n = n + :a",
                                         .expr = {.values = vals}}};
    kura_transact_write_req req = {.items = acts, .item_count = 2};
    kura_transact_write_res res = {0};
    uint64_t t0 = btx_call_begin(w);
    s = kura_transact_write_items(w->c->db, &req, &res);
    uint64_t t1 = know_ns();
    btx_call_end(w, t0);
    if (s == KURA_OK) {
        acct->committed++;
        acct->delta[x] -= (int64_t)amount;
        acct->delta[y] += (int64_t)amount;
        bench_hist_add(&acct->commit_hist, t1 - t0);
    } else if (s == KURA_E_TXN_CANCELED) {
        s = cancelled(&res, acct);
    } else {
        s = btx_fail(s, "TransactWriteItems");
    }
    acct->cross += h->part[x] != h->part[y];
    kura_transact_write_res_free(&res);
    kura_value_free(vals);
    return s;
}

static kura_status mover_work(btx_worker *w)
{
    hot_shared *h = w->arg;
    bench_rng rng;
    bench_rng_seed(&rng, bench_seed_mix(w->c->seed, w->id, 1));
    bench_hist_init(&h->accts[w->id].commit_hist);
    while (!atomic_load(w->stop)) {
        uint32_t x = (uint32_t)bench_rng_below(&rng, BTX_HOT_ITEMS);
        uint32_t y = (uint32_t)bench_rng_below(&rng, BTX_HOT_ITEMS - 1);
        y += y >= x;
        kura_status s = move(w, h, x, y, 1 + bench_rng_below(&rng, BTX_HOT_MAX_MOVE));
        if (s != KURA_OK) return s;
        w->ops++;
    }
    return KURA_OK;
}

/* Reads the 100 items at one snapshot into n_out[]. */
static kura_status read_all(kura_db *db, hot_shared *h, int64_t n_out[BTX_HOT_ITEMS])
{
    kura_transact_get_item gets[BTX_HOT_ITEMS];
    for (uint32_t i = 0; i < BTX_HOT_ITEMS; i++)
        gets[i] = (kura_transact_get_item){
            .table_name = BTX_TABLE, .key = h->keys[i], .projection_expression = "n"};
    kura_transact_get_req req = {.items = gets, .item_count = BTX_HOT_ITEMS};
    kura_transact_get_res res = {0};
    kura_status s = kura_transact_get_items(db, &req, &res);
    if (s != KURA_OK) s = btx_fail(s, "TransactGetItems");
    for (uint32_t i = 0; i < BTX_HOT_ITEMS && s == KURA_OK; i++) {
        const kura_value *it = i < res.item_count ? res.items[i] : NULL;
        const kura_value *n = it ? kura_value_get(it, "n", 1) : NULL;
        char buf[200];
        if (!n || !kura_value_num(n, buf, sizeof buf))
            s = kura_err(KURA_E_CORRUPTION, "hot item %u has no n", i);
        else
            n_out[i] = strtoll(buf, NULL, 10);
    }
    kura_transact_get_res_free(&res);
    return s;
}

static kura_status check_total(const int64_t n[BTX_HOT_ITEMS], const char *when)
{
    int64_t total = 0;
    for (uint32_t i = 0; i < BTX_HOT_ITEMS; i++)
        total += n[i];
    if (total != (int64_t)BTX_HOT_ITEMS * BTX_HOT_START)
        return kura_err(KURA_E_CORRUPTION, "%s: the hot items sum to %lld, not %lld", when,
                        (long long)total, (long long)BTX_HOT_ITEMS * BTX_HOT_START);
    return KURA_OK;
}

static kura_status reader_work(btx_worker *w)
{
    hot_shared *h = w->arg;
    while (!atomic_load(w->stop)) {
        int64_t n[BTX_HOT_ITEMS];
        uint64_t t0 = btx_call_begin(w);
        kura_status s = read_all(w->c->db, h, n);
        btx_call_end(w, t0);
        if (s == KURA_OK) s = check_total(n, "a TransactGetItems during the moves");
        if (s != KURA_OK) return s;
        h->snapshots++;
        btx_sleep_ms(BTX_HOT_CHECK_MS);
    }
    return KURA_OK;
}

/* The hot items, n = BTX_HOT_START each, and their keys. */
static kura_status hot_setup(btx_ctx *c, hot_shared *h)
{
    char start[24];
    snprintf(start, sizeof start, "%d", BTX_HOT_START);
    for (uint32_t i = 0; i < BTX_HOT_ITEMS; i++) {
        kura_value *item = btx_item(hot_item(i), start);
        h->keys[i] = btx_key(hot_item(i));
        h->part[i] = btx_part_of(i, c->parts);
        if (!item || !h->keys[i]) {
            kura_value_free(item);
            return kura_err(KURA_E_NOMEM, "hot items");
        }
        kura_put_item_req req = {.table_name = BTX_TABLE, .item = item};
        kura_write_result res = {0};
        kura_status s = kura_put_item(c->db, &req, &res);
        kura_write_result_free(&res);
        kura_value_free(item);
        if (s != KURA_OK) return btx_fail(s, "PutItem");
    }
    return KURA_OK;
}

/* The end: every item at its start plus the committed moves, the total, the item count. */
static kura_status hot_check(btx_ctx *c, hot_shared *h, uint32_t nmovers)
{
    int64_t n[BTX_HOT_ITEMS];
    kura_status s = read_all(c->db, h, n);
    if (s == KURA_OK) s = check_total(n, "at the end");
    for (uint32_t i = 0; i < BTX_HOT_ITEMS && s == KURA_OK; i++) {
        int64_t want = BTX_HOT_START;
        for (uint32_t t = 0; t < nmovers; t++)
            want += h->accts[t].delta[i];
        if (n[i] != want)
            s = kura_err(KURA_E_CORRUPTION,
                         "hot item %u holds %lld; the committed moves make "
                         "it %lld",
                         i, (long long)n[i], (long long)want);
    }
    uint64_t *want = calloc(c->parts, sizeof *want);
    if (s == KURA_OK && !want) s = kura_err(KURA_E_NOMEM, "counts");
    for (uint32_t i = 0; i < BTX_HOT_ITEMS && s == KURA_OK; i++)
        want[h->part[i]]++;
    if (s == KURA_OK) s = btx_check_parts(c, want);
    free(want);
    return s;
}

static void hot_report(const hot_shared *h, const btx_worker *ws, uint32_t nmovers, double seconds,
                       bench_run *run)
{
    uint64_t committed = 0, ccf = 0, conflict = 0, cross = 0, ops = 0;
    bench_hist *ch = malloc(sizeof *ch);
    if (ch) bench_hist_init(ch);
    for (uint32_t t = 0; t < nmovers; t++) {
        const hot_acct *a = &h->accts[t];
        committed += a->committed;
        ccf += a->ccf;
        conflict += a->conflict;
        cross += a->cross;
        ops += ws[t].ops;
        if (ch) bench_hist_merge(ch, &a->commit_hist);
    }
    double o = ops ? (double)ops : 1;
    bench_run_extra(run, "committed_per_sec", seconds > 0 ? (double)committed / seconds : 0);
    bench_run_extra(run, "cancel_ccf", (double)ccf);
    bench_run_extra(run, "cancel_conflict", (double)conflict);
    bench_run_extra(run, "cancel_pct", 100.0 * (double)(ccf + conflict) / o);
    bench_run_extra(run, "cross_part_pct", 100.0 * (double)cross / o);
    bench_run_extra(run, "commit_p99_ms", ch ? bench_hist_percentile_us(ch, 99) / 1000.0 : 0);
    bench_run_extra(run, "snapshots", (double)h->snapshots);
    free(ch);
}

kura_status btx_run_hot(btx_ctx *c, bench_run *run)
{
    uint32_t nmovers = c->cfg->threads;
    hot_shared *h = calloc(1, sizeof *h);
    btx_worker *ws = calloc(nmovers + 1, sizeof *ws);
    kura_status s = h && ws ? KURA_OK : kura_err(KURA_E_NOMEM, "workers");
    if (s == KURA_OK && !(h->accts = calloc(nmovers, sizeof *h->accts)))
        s = kura_err(KURA_E_NOMEM, "accounts");
    if (s == KURA_OK) s = hot_setup(c, h);
    atomic_bool stop = false;
    for (uint32_t t = 0; t <= nmovers && s == KURA_OK; t++)
        ws[t] = (btx_worker){.c = c,
                             .fn = t < nmovers ? mover_work : reader_work,
                             .id = t,
                             .slot = 1 + t,
                             .nthreads = nmovers,
                             .stop = &stop,
                             .arg = h};
    if (s == KURA_OK) {
        btx_io_counts io0, io1;
        btx_io_read(c->io, &io0);
        uint64_t t0 = know_ns();
        s = btx_workers_start(ws, nmovers + 1);
        if (s == KURA_OK) btx_sleep_ms((uint64_t)c->cfg->txn_seconds * 1000u);
        atomic_store(&stop, true);
        s = btx_workers_join(ws, nmovers + 1, s);
        uint64_t t1 = know_ns();
        btx_io_read(c->io, &io1);
        for (uint32_t t = 0; t < nmovers; t++)
            run->ops += ws[t].ops;
        run->threads = nmovers;
        run->seconds = (double)(t1 - t0) / 1e9;
        btx_hist_report(ws, nmovers, run);
        hot_report(h, ws, nmovers, run->seconds, run);
        btx_io_report(&io0, &io1, run->ops, run->seconds, run);
    }
    if (s == KURA_OK) s = hot_check(c, h, nmovers);
    for (uint32_t i = 0; h && i < BTX_HOT_ITEMS; i++)
        kura_value_free(h->keys[i]);
    if (h) free(h->accts);
    free(h);
    free(ws);
    return s;
}
