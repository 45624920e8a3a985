/*
 * backfill.c - backfill (index.h): a GSI created on a loaded table, timed from UpdateTable to
 * ACTIVE, against the rate at which PutItem wrote the same items, while the table keeps
 * taking writes.
 *
 * The fill writes --backfill-num items in a random order (a permutation: every item once),
 * one thread, no index: kura's own fill rate of these items. The writer that runs during the
 * backfill puts new items on a fixed schedule at BG_WRITE_PCT% of that rate; its latency is
 * measured from each write's scheduled time (p50/p99 of the run: a stall shows in full, and
 * so does a writer that cannot catch up with its schedule afterwards) and, apart, per call
 * (bg_call_*: how long one PutItem took).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/index/index_int.h"
#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

#define BG_WRITE_PCT 10
#define SETTLE_NS 200000000ull /* the writer runs this long before and after */
#define DESCRIBE_EVERY_NS 10000000ull
#define ACTIVE_TIMEOUT_NS 600000000000ull

typedef struct bg_writer {
    kura_db *db;
    double rate;
    uint64_t first; /* its first item */
    atomic_bool stop;
    uint64_t written;
    uint64_t begin_ns, end_ns;
    bench_hist lat; /* from the scheduled time */
    bench_hist svc; /* from the call (the PutItem alone) */
    kura_status st;
    char err[256];
} bg_writer;

static void *bg_main(void *arg)
{
    bg_writer *w = arg;
    bix_precise_sleeps();
    w->begin_ns = know_ns();
    while (!atomic_load(&w->stop)) {
        uint64_t sched = w->begin_ns + (uint64_t)((double)w->written * 1e9 / w->rate);
        bix_pace(sched);
        uint64_t t0 = know_ns();
        kura_status s = bix_put(w->db, w->first + w->written, true);
        if (s != KURA_OK) {
            w->st = s;
            snprintf(w->err, sizeof w->err, "%s", kura_last_error());
            break;
        }
        uint64_t t1 = know_ns();
        bench_hist_add(&w->lat, t1 - sched);
        bench_hist_add(&w->svc, t1 - t0);
        w->written++;
    }
    w->end_ns = know_ns();
    return NULL;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The fill: items 0..n-1 in the order i -> (i * mult + off) mod n. */
static kura_status fill(kura_db *db, uint64_t n, uint64_t seed, double *seconds_out, bix_mem *mem)
{
    bench_rng rng;
    bench_rng_seed(&rng, seed);
    uint64_t mult = (bench_rng_next(&rng) % n) | 1, off = bench_rng_below(&rng, n);
    while (gcd(mult, n) != 1)
        mult += 2;
    kura_status s = KURA_OK;
    uint64_t start = know_ns();
    for (uint64_t i = 0; i < n && s == KURA_OK; i++) {
        uint64_t index = (uint64_t)((unsigned __int128)i * mult % n) + off;
        s = bix_put(db, index < n ? index : index - n, true);
        if ((i & 4095) == 4095) bix_mem_sample(db, 0, mem);
    }
    *seconds_out = (double)(know_ns() - start) / 1e9;
    return s;
}

/* DescribeTable until GSI `name` is ACTIVE. */
static kura_status wait_active(kura_db *db, const char *name, uint64_t *polls_out)
{
    uint64_t deadline = know_ns() + ACTIVE_TIMEOUT_NS, polls = 0;
    for (;;) {
        kura_table_description d;
        kura_status s = kura_describe_table(db, BIX_TABLE, &d);
        if (s != KURA_OK) return bix_fail(s, "DescribeTable");
        polls++;
        const char *status = NULL;
        for (size_t i = 0; i < d.global_secondary_indexes_count; i++)
            if (!strcmp(d.global_secondary_indexes[i].index_name, name))
                status = d.global_secondary_indexes[i].index_status;
        bool active = status && !strcmp(status, "ACTIVE");
        kura_table_description_free(&d);
        if (!status) return kura_err(KURA_E_CORRUPTION, "DescribeTable shows no GSI %s", name);
        if (active) break;
        if (know_ns() > deadline)
            return kura_err(KURA_E_BUSY, "GSI %s still %s after 10 minutes", name, status);
        bix_sleep_until(know_ns() + DESCRIBE_EVERY_NS);
    }
    *polls_out = polls;
    return KURA_OK;
}

kura_status bix_run_backfill(kura_db *db, const bench_config *cfg, uint64_t seed, bench_run *run)
{
    uint64_t n = cfg->backfill_num;
    bix_mem mem = {0};
    /* a client that created the table has described it (the SDK's waiter does) */
    kura_table_description d;
    kura_status s = kura_describe_table(db, BIX_TABLE, &d);
    if (s != KURA_OK) return bix_fail(s, "DescribeTable");
    kura_table_description_free(&d);
    double fill_s = 0;
    if ((s = fill(db, n, seed, &fill_s, &mem)) != KURA_OK) return s;
    double fill_rate = (double)n / fill_s;
    bg_writer *w = calloc(1, sizeof *w);
    if (!w) return kura_err(KURA_E_NOMEM, "writer");
    *w = (bg_writer){.db = db, .rate = fill_rate * BG_WRITE_PCT / 100.0, .first = n};
    bench_hist_init(&w->lat);
    bench_hist_init(&w->svc);
    kthread tid;
    if (!kthread_start(&tid, bg_main, w)) {
        free(w);
        return kura_err(KURA_E_NOMEM, "cannot start the writer thread");
    }
    bix_sleep_until(know_ns() + SETTLE_NS);
    uint64_t t0 = know_ns(), polls = 0;
    s = bix_create_gsi(db, 0, cfg->gsi_keys_only);
    uint64_t t_update = know_ns();
    if (s == KURA_OK) s = wait_active(db, bix_gsi_names[0], &polls);
    uint64_t t1 = know_ns();
    if (s == KURA_OK) bix_sleep_until(know_ns() + SETTLE_NS);
    atomic_store(&w->stop, true);
    kthread_join(tid);
    if (s == KURA_OK && w->st != KURA_OK)
        s = kura_err(w->st, "writer during the backfill: %s", w->err);
    uint64_t total = n + w->written;
    if (s == KURA_OK) s = bix_wait_gsis(db, 1);
    bench_rng rng;
    bench_rng_seed(&rng, total);
    uint64_t ngroups = (total + BENCH_ITEMS_PER_PK - 1) / BENCH_ITEMS_PER_PK;
    for (int k = 0; k < 32 && s == KURA_OK; k++) {
        uint64_t g = k == 0 ? ngroups - 1 : bench_rng_below(&rng, ngroups);
        uint64_t want = total - g * BENCH_ITEMS_PER_PK;
        s = bix_check_group(db, bix_gsi_names[0], g,
                            want > BENCH_ITEMS_PER_PK ? BENCH_ITEMS_PER_PK : want);
    }
    run->ops = n;
    run->seconds = (double)(t1 - t0) / 1e9;
    run->p50_us = bench_hist_percentile_us(&w->lat, 50);
    run->p99_us = bench_hist_percentile_us(&w->lat, 99);
    double bf_rate = run->seconds > 0 ? (double)n / run->seconds : 0;
    double bg_s = (double)(w->end_ns - w->begin_ns) / 1e9;
    bench_run_extra(run, "fill_per_sec", fill_rate);
    bench_run_extra(run, "backfill_vs_fill", bf_rate / fill_rate);
    bench_run_extra(run, "update_table_ms", (double)(t_update - t0) / 1e6);
    bench_run_extra(run, "describe_polls", (double)polls);
    bench_run_extra(run, "bg_offered_per_sec", w->rate);
    bench_run_extra(run, "bg_done_per_sec", bg_s > 0 ? (double)w->written / bg_s : 0);
    bench_run_extra(run, "bg_writes", (double)w->written);
    bench_run_extra(run, "bg_put_max_ms", (double)w->lat.max_ns / 1e6);
    bench_run_extra(run, "bg_call_p99_ms", bench_hist_percentile_us(&w->svc, 99) / 1000.0);
    bench_run_extra(run, "bg_call_max_ms", (double)w->svc.max_ns / 1e6);
    bix_mem_report(&mem, run);
    free(w);
    return s;
}
