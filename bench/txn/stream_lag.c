/*
 * stream_lag.c - stream_lag (stream.c): how long after a PutItem its record reaches a
 * consumer of the table's stream, with the writes arriving on a fixed schedule at 50% of the
 * maximum write rate.
 *
 * Calibration: the --threads PutItem threads write closed-loop for --txn-seconds (nothing
 * reads the stream meanwhile): the maximum write rate, ops/s of the run (p50/p99: those
 * PutItems). Then a consumer takes LATEST iterators on every shard, so that it reads only
 * what follows, and the same threads write new items for --txn-seconds more, each on a fixed
 * schedule at half its share of that rate (released on gsi_lag's 1 ms grid, BIX_PACE_NS:
 * several writes go at once at each grid point). Each item carries the time its PutItem was
 * called in its number attribute n (CLOCK_MONOTONIC ns); each writer stamps its
 * acknowledgements by item. The consumer polls every shard (stream_consumer.c: a pass, then
 * a sleep of BST_IDLE_US after a pass that found nothing) and, for each record, takes the
 * time its GetRecords call returned:
 *
 *   lag        that time - the write's acknowledgement (0 when the record came back before
 *              the writer had its acknowledgement: the write is visible, and so in the WAL
 *              the stream reads, before PutItem returns; counted as before_ack_pct)
 *   lag_start  that time - the write's call (n): the acknowledgement's own time included
 *
 * so each is an upper bound by at most a pass and the sleep after an empty one. Extras: the
 * offered and achieved rates, both lags' p50/p99/max, PutItem latency from its scheduled time
 * (put_*: a writer that falls behind its schedule shows) and of the call alone, the
 * consumer's CPU and its GetRecords calls. The consumer checks every record as stream_read's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench/index/index_int.h"
#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

typedef struct lag_writer {
    uint64_t base, n;            /* items base .. base + n - 1 */
    double rate;                 /* per second */
    uint64_t start;              /* the schedule's origin */
    atomic_uint_fast64_t *t_ack; /* [n]: when write j was acknowledged (0: not yet) */
    bench_hist sched;            /* acknowledgement - scheduled time */
} lag_writer;

typedef struct lag_state {
    lag_writer *w; /* [nwriters] */
    uint32_t nwriters;
    bench_hist lag, lag_start;
    uint64_t before_ack;
    bst_consumer *k;
    bst_progress p;
    double cpu_s;
} lag_state;

static kura_status paced_work(btx_worker *w)
{
    lag_writer *lw = w->arg;
    bix_precise_sleeps();
    char num[24];
    for (uint64_t j = 0; j < lw->n; j++) {
        uint64_t sched = lw->start + (uint64_t)((double)j * 1e9 / lw->rate);
        bix_pace(sched);
        uint64_t t0 = btx_call_begin(w);
        snprintf(num, sizeof num, "%llu", (unsigned long long)t0);
        kura_status s = btx_put_n(w->c->db, lw->base + j, num);
        btx_call_end(w, t0);
        uint64_t t = know_ns();
        atomic_store_explicit(&lw->t_ack[j], t, memory_order_release);
        bench_hist_add(&lw->sched, t > sched ? t - sched : 0);
        if (s != KURA_OK) return s;
        w->ops++;
        w->items++;
    }
    return KURA_OK;
}

static kura_status on_record(void *arg, uint64_t index, uint32_t writer,
                             const kura_stream_record *r, uint64_t got_ns)
{
    lag_state *ls = arg;
    lag_writer *lw = &ls->w[writer];
    uint64_t j = index - lw->base;
    if (index < lw->base || j >= lw->n)
        return kura_err(KURA_E_CORRUPTION, "item %llu read, writer %u wrote %llu..%llu",
                        (unsigned long long)index, writer, (unsigned long long)lw->base,
                        (unsigned long long)(lw->base + lw->n - 1));
    uint64_t ack = atomic_load_explicit(&lw->t_ack[j], memory_order_acquire);
    if (ack == 0 || ack >= got_ns) {
        ls->before_ack++;
        bench_hist_add(&ls->lag, 0);
    } else {
        bench_hist_add(&ls->lag, got_ns - ack);
    }
    char num[200];
    const kura_value *n = kura_value_get(r->new_image, "n", 1);
    unsigned long long called = 0;
    if (!n || !kura_value_num(n, num, sizeof num) || sscanf(num, "%llu", &called) != 1 ||
        called > got_ns)
        return kura_err(KURA_E_CORRUPTION, "item %llu: n is not the time of its write",
                        (unsigned long long)index);
    bench_hist_add(&ls->lag_start, got_ns - called);
    return KURA_OK;
}

static kura_status consumer_work(btx_worker *w)
{
    lag_state *ls = w->arg;
    bix_precise_sleeps();
    double cpu0 = bst_thread_cpu_s();
    kura_status s = bst_consumer_read_all(ls->k, on_record, ls, &ls->p);
    ls->cpu_s = bst_thread_cpu_s() - cpu0;
    return s;
}

/* The calibration: closed-loop PutItems on ws[0..n) for --txn-seconds; the run's figures. */
static kura_status calibrate(btx_ctx *c, btx_worker *ws, uint32_t n, bench_run *run)
{
    atomic_bool stop = false;
    for (uint32_t t = 0; t < n; t++)
        ws[t] = (btx_worker){
            .c = c, .fn = btx_put_work, .id = t, .slot = 1 + t, .nthreads = n, .stop = &stop};
    uint64_t t0 = know_ns();
    kura_status s = btx_workers_start(ws, n);
    if (s == KURA_OK) btx_sleep_ms((uint64_t)c->cfg->txn_seconds * 1000u);
    atomic_store(&stop, true);
    s = btx_workers_join(ws, n, s);
    for (uint32_t t = 0; t < n; t++)
        run->ops += ws[t].ops;
    run->threads = n;
    run->seconds = (double)(know_ns() - t0) / 1e9;
    btx_hist_report(ws, n, run);
    return s;
}

/* The phase's figures. */
static void lag_report(const lag_state *ls, const btx_worker *ws, double rate, uint64_t begin,
                       uint64_t end, bench_run *run)
{
    bench_hist *sched = malloc(sizeof *sched), *call = malloc(sizeof *call);
    if (!sched || !call) {
        free(sched);
        free(call);
        return;
    }
    bench_hist_init(sched);
    bench_hist_init(call);
    uint64_t n = 0;
    for (uint32_t t = 0; t < ls->nwriters; t++) {
        bench_hist_merge(sched, &ls->w[t].sched);
        bench_hist_merge(call, &ws[t].hist);
        n += ls->w[t].n;
    }
    double sec = end > begin ? (double)(end - begin) / 1e9 : 0;
    bench_run_extra(run, "offered_per_sec", rate);
    bench_run_extra(run, "done_per_sec", sec > 0 ? (double)n / sec : 0);
    bix_hist_report(&ls->lag, "lag", run);
    bix_hist_report(&ls->lag_start, "lag_start", run);
    bench_run_extra(run, "before_ack_pct", n ? 100.0 * (double)ls->before_ack / (double)n : 0);
    bench_run_extra(run, "put_p99_ms", bench_hist_percentile_us(sched, 99) / 1000.0);
    bench_run_extra(run, "put_max_ms", (double)sched->max_ns / 1e6);
    bench_run_extra(run, "call_max_ms", (double)call->max_ns / 1e6);
    bench_run_extra(run, "consumer_cpu_pct", sec > 0 ? 100.0 * ls->cpu_s / sec : 0);
    bench_run_extra(run, "consumer_cpu_us_per_rec", n ? ls->cpu_s * 1e6 / (double)n : 0);
    bst_consumer_report(ls->k, "poll", sec, run);
    free(sched);
    free(call);
}

kura_status btx_run_stream_lag(btx_ctx *c, bench_run *run)
{
    uint32_t nput = c->cfg->threads ? c->cfg->threads : 1;
    btx_worker *ws = calloc(nput + 1, sizeof *ws);
    lag_state *ls = calloc(1, sizeof *ls);
    lag_writer *lw = calloc(nput, sizeof *lw);
    kura_status s = ws && ls && lw ? KURA_OK : kura_err(KURA_E_NOMEM, "workers");
    if (s == KURA_OK) s = calibrate(c, ws, nput, run);
    double max_rate = run->seconds > 0 ? (double)run->ops / run->seconds : 0;
    double rate = max_rate / 2; /* the phase's, all writers together */
    uint64_t total = 0;
    if (s == KURA_OK && !(rate > 0))
        s = kura_err(KURA_E_INVALID, "stream_lag: the calibration wrote nothing");
    if (s == KURA_OK) {
        *ls = (lag_state){.w = lw, .nwriters = nput};
        bench_hist_init(&ls->lag);
        bench_hist_init(&ls->lag_start);
        s = bst_consumer_open(c, KURA_ITER_LATEST, nput, 1 + nput, &ls->k);
    }
    uint64_t start = know_ns() + 10000000u; /* 10 ms: every thread is up by then */
    for (uint32_t t = 0; t < nput && s == KURA_OK; t++) {
        uint64_t n = (uint64_t)(rate / nput * c->cfg->txn_seconds);
        lw[t] = (lag_writer){.base = btx_put_first(t) + ws[t].items,
                             .n = n ? n : 1,
                             .rate = rate / nput,
                             .start = start};
        bench_hist_init(&lw[t].sched);
        if (!(lw[t].t_ack = calloc(lw[t].n, sizeof *lw[t].t_ack)))
            s = kura_err(KURA_E_NOMEM, "acknowledgements");
        bst_consumer_expect(ls->k, t, lw[t].base, lw[t].n);
        total += lw[t].n;
    }
    uint64_t end = start;
    if (s == KURA_OK) {
        atomic_store(&ls->p.total, total);
        atomic_store(&ls->p.writers_done, true); /* (the consumer knows how many to read) */
        atomic_bool stop = false;                /* (the paced writers stop by count) */
        for (uint32_t t = 0; t <= nput; t++)
            ws[t] = (btx_worker){.c = c,
                                 .fn = t < nput ? paced_work : consumer_work,
                                 .id = t,
                                 .slot = 1 + t,
                                 .nthreads = t < nput ? nput : 1,
                                 .stop = &stop,
                                 .arg = t < nput ? (void *)&lw[t] : (void *)ls};
        s = btx_workers_start(ws, nput + 1);
        s = btx_workers_join(ws, nput, s);
        end = know_ns();
        if (s != KURA_OK) /* the consumer would wait for records that never come */
            atomic_store(&ls->p.total, 0);
        s = btx_workers_join(ws + nput, 1, s);
    }
    if (s == KURA_OK) s = bst_consumer_check(ls->k);
    if (s == KURA_OK) {
        bench_run_extra(run, "max_per_sec", max_rate);
        lag_report(ls, ws, rate, start, end, run);
    }
    for (uint32_t t = 0; lw && t < nput; t++)
        free(lw[t].t_ack);
    if (ls) bst_consumer_free(ls->k);
    free(lw);
    free(ls);
    free(ws);
    return s;
}
