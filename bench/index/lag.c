/*
 * lag.c - gsi_lag (index.h): how long after a PutItem is acknowledged its GSI entries are in
 * the index, with the writes arriving on a fixed schedule at 50% and at 90% of the maximum
 * write rate.
 *
 * The GSI applier applies a table's queued writes in queue order, one queue record per base
 * batch, and counts them (kura_index_stats.applied). One writer thread puts one item per
 * batch, so write j of a phase is applied once the count has grown by j + 1 since the phase
 * began; the calibration checks that the count grows by exactly one per PutItem. A watcher
 * thread polls the count every BIX_POLL_US and stamps the writes it newly finds applied;
 * the writer stamps each acknowledgement. Lag = applied stamp - acknowledgement (0 when the
 * applier was faster than the return to the writer: the commit hook queues a write before
 * the write is acknowledged). The watcher's own cost (a short lock of the queue per poll)
 * is reported as its CPU time.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/index/index_int.h"
#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

#define STUCK_NS 60000000000ull /* a backlog that does not move for 60 s fails the run */

typedef struct lag_watch {
    kura_db *db;
    uint64_t a0;         /* the applier's count when the phase began */
    uint64_t n;          /* writes of the phase */
    uint64_t *t_applied; /* [n]: when the watcher found write j applied */
    atomic_bool abort;   /* the writer failed */
    uint64_t max_backlog, max_queue_bytes, polls;
    double cpu_s;
    kura_status st;
    char err[256];
} lag_watch;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *watch_main(void *arg)
{
    lag_watch *w = arg;
    bix_precise_sleeps();
    double cpu0 = thread_cpu_s();
    uint64_t seen = 0, moved = know_ns();
    while (seen < w->n && !atomic_load(&w->abort)) {
        kura_index_stats is;
        kura_status s = kura_index_stats_get(w->db, BIX_TABLE, bix_gsi_names[0], &is);
        uint64_t now = know_ns();
        if (s == KURA_OK && is.error != KURA_OK)
            s = kura_err(is.error, "the GSI applier stopped on an error");
        if (s != KURA_OK) {
            w->st = s;
            snprintf(w->err, sizeof w->err, "%s", kura_last_error());
            break;
        }
        uint64_t a = is.applied - w->a0;
        if (a > w->n) a = w->n;
        if (a > seen) moved = now;
        for (; seen < a; seen++)
            w->t_applied[seen] = now;
        if (is.lag_writes > w->max_backlog) w->max_backlog = is.lag_writes;
        if (is.queue_bytes > w->max_queue_bytes) w->max_queue_bytes = is.queue_bytes;
        w->polls++;
        if (is.lag_writes > 0 && now - moved > STUCK_NS) {
            w->st = kura_err(KURA_E_BUSY,
                             "the GSI applier applied nothing for 60 s with "
                             "%llu writes queued",
                             (unsigned long long)is.lag_writes);
            snprintf(w->err, sizeof w->err, "%s", kura_last_error());
            break;
        }
        bix_sleep_until(now + BIX_POLL_US * 1000u);
    }
    w->cpu_s = thread_cpu_s() - cpu0;
    return NULL;
}

/* The open-loop writes of one phase: items first.. at `rate` per second for --lag-seconds;
 * adds the phase's extras named "lagPCT_...". */
static kura_status lag_phase(kura_db *db, const bench_config *cfg, uint32_t pct, double rate,
                             uint64_t first, uint64_t *n_out, bench_run *run, bix_mem *mem)
{
    uint64_t n = (uint64_t)(rate * cfg->lag_seconds);
    n = n ? n : 1;
    lag_watch w = {.db = db, .n = n};
    uint64_t *t_ack = calloc(n, sizeof *t_ack);
    w.t_applied = calloc(n, sizeof *w.t_applied);
    bench_hist *wlat = malloc(sizeof *wlat), *lag = malloc(sizeof *lag), *svc = malloc(sizeof *svc);
    kura_index_stats is;
    kura_status s =
        t_ack && w.t_applied && wlat && lag && svc ? KURA_OK : kura_err(KURA_E_NOMEM, "lag arrays");
    if (s == KURA_OK && (s = kura_index_stats_get(db, BIX_TABLE, bix_gsi_names[0], &is)) != KURA_OK)
        s = bix_fail(s, "kura_index_stats_get");
    kthread tid;
    bool started = false;
    if (s == KURA_OK) {
        w.a0 = is.applied;
        bench_hist_init(wlat);
        bench_hist_init(lag);
        bench_hist_init(svc);
        started = kthread_start(&tid, watch_main, &w);
        if (!started) s = kura_err(KURA_E_NOMEM, "cannot start the watcher thread");
    }
    uint64_t start = know_ns() + 1000000u, j = 0;
    double cpu0 = thread_cpu_s();
    for (; j < n && s == KURA_OK; j++) {
        uint64_t sched = start + (uint64_t)((double)j * 1e9 / rate);
        bix_pace(sched);
        uint64_t t0 = know_ns();
        s = bix_put(db, first + j, false);
        uint64_t t = know_ns();
        t_ack[j] = t;
        bench_hist_add(wlat, t - sched);
        bench_hist_add(svc, t - t0);
        if ((j & 4095) == 4095) bix_mem_sample(db, cfg->lag_gsis, mem);
    }
    uint64_t end = j ? t_ack[j - 1] : start;
    double writer_cpu_s = thread_cpu_s() - cpu0;
    if (s != KURA_OK) atomic_store(&w.abort, true);
    if (started) kthread_join(tid);
    if (s == KURA_OK && w.st != KURA_OK) s = kura_err(w.st, "watcher: %s", w.err);
    if (s == KURA_OK) {
        for (uint64_t k = 0; k < n; k++)
            bench_hist_add(lag, w.t_applied[k] > t_ack[k] ? w.t_applied[k] - t_ack[k] : 0);
        char name[32], prefix[16];
        snprintf(prefix, sizeof prefix, "lag%u", pct);
#define PHASE_EXTRA(what, v)                                                                       \
    snprintf(name, sizeof name, "%s_%s", prefix, what);                                            \
    bench_run_extra(run, name, v)
        PHASE_EXTRA("offered_per_sec", rate);
        PHASE_EXTRA("done_per_sec", end > start ? (double)n / ((double)(end - start) / 1e9) : 0);
        bix_hist_report(lag, prefix, run);
        PHASE_EXTRA("put_p99_ms", bench_hist_percentile_us(wlat, 99) / 1000.0);
        PHASE_EXTRA("put_max_ms", (double)wlat->max_ns / 1e6);
        PHASE_EXTRA("call_max_ms", (double)svc->max_ns / 1e6);
        PHASE_EXTRA("max_backlog", (double)w.max_backlog);
        PHASE_EXTRA("max_queue_mib", (double)w.max_queue_bytes / 1048576.0);
        PHASE_EXTRA("watch_cpu_pct", 100.0 * w.cpu_s / ((double)(end - start) / 1e9 + 1e-9));
        PHASE_EXTRA("writer_cpu_pct", 100.0 * writer_cpu_s / ((double)(end - start) / 1e9 + 1e-9));
#undef PHASE_EXTRA
        *n_out = n;
    }
    free(t_ack);
    free(w.t_applied);
    free(wlat);
    free(lag);
    free(svc);
    return s;
}

/* The calibration: num/2 PutItems untimed (so that the table is past what its memtables
 * absorb and compactions run as they will during the phases), then num/2 more closed-loop
 * PutItems and the drain, timed: the maximum write rate. Fills the run's own figures. */
static kura_status lag_calibrate(kura_db *db, const bench_config *cfg, uint64_t *n_out,
                                 bench_run *run, bix_mem *mem)
{
    uint64_t half = cfg->num / 2 ? cfg->num / 2 : 1, n = 2 * half;
    bench_hist *h = malloc(sizeof *h);
    if (!h) return kura_err(KURA_E_NOMEM, "histogram");
    bench_hist_init(h);
    kura_status s = KURA_OK;
    for (uint64_t i = 0; i < half && s == KURA_OK; i++)
        s = bix_put(db, i, false);
    if (s == KURA_OK) s = bix_wait_gsis(db, cfg->lag_gsis);
    uint64_t start = know_ns(), t0 = start;
    for (uint64_t i = half; i < n && s == KURA_OK; i++) {
        s = bix_put(db, i, false);
        uint64_t t1 = know_ns();
        bench_hist_add(h, t1 - t0);
        t0 = t1;
        if ((i & 4095) == 4095) bix_mem_sample(db, cfg->lag_gsis, mem);
    }
    uint64_t acked = t0;
    if (s == KURA_OK) s = bix_wait_gsis(db, cfg->lag_gsis);
    uint64_t end = know_ns();
    kura_index_stats is;
    if (s == KURA_OK && (s = kura_index_stats_get(db, BIX_TABLE, bix_gsi_names[0], &is)) != KURA_OK)
        s = bix_fail(s, "kura_index_stats_get");
    if (s == KURA_OK && is.applied != n)
        s = kura_err(KURA_E_CORRUPTION,
                     "the GSI applier counts %llu batches applied after %llu "
                     "PutItems: the lag cannot be told write by write",
                     (unsigned long long)is.applied, (unsigned long long)n);
    run->ops = n - half;
    run->seconds = (double)(end - start) / 1e9;
    run->p50_us = bench_hist_percentile_us(h, 50);
    run->p99_us = bench_hist_percentile_us(h, 99);
    free(h);
    double ack_s = (double)(acked - start) / 1e9;
    bench_run_extra(run, "ack_ops_per_sec", ack_s > 0 ? (double)(n - half) / ack_s : 0);
    bench_run_extra(run, "drain_s", (double)(end - acked) / 1e9);
    *n_out = n;
    return s;
}

kura_status bix_run_lag(kura_db *db, const bench_config *cfg, bench_run *run)
{
    if (cfg->lag_gsis == 0)
        return kura_err(KURA_E_INVALID, "gsi_lag needs --lag-gsis of 1 or more");
    bix_precise_sleeps();
    bix_mem mem = {0};
    uint64_t written = 0, n = 0;
    kura_status s = lag_calibrate(db, cfg, &written, run, &mem);
    double max_rate = run->seconds > 0 ? (double)run->ops / run->seconds : 0;
    static const uint32_t pcts[] = {50, 90};
    for (size_t p = 0; p < 2 && s == KURA_OK; p++) {
        s = lag_phase(db, cfg, pcts[p], max_rate * pcts[p] / 100.0, written, &n, run, &mem);
        written += n;
        if (s == KURA_OK) s = bix_wait_gsis(db, cfg->lag_gsis);
    }
    /* the GSI holds what was written: a few collections, the last one partial */
    bench_rng rng;
    bench_rng_seed(&rng, written);
    uint64_t ngroups = (written + BENCH_ITEMS_PER_PK - 1) / BENCH_ITEMS_PER_PK;
    for (int k = 0; k < 32 && s == KURA_OK; k++) {
        uint64_t g = k == 0 ? ngroups - 1 : bench_rng_below(&rng, ngroups);
        uint64_t want = written - g * BENCH_ITEMS_PER_PK;
        s = bix_check_group(db, bix_gsi_names[0], g,
                            want > BENCH_ITEMS_PER_PK ? BENCH_ITEMS_PER_PK : want);
    }
    bix_mem_report(&mem, run);
    return s;
}
