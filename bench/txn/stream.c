/*
 * stream.c - the change stream workloads (issue 17; docs/architecture.md, "Change stream"),
 * on the transaction suite's table, items and PutItem threads (txn_int.h). The table of
 * every one but stream_put_solo* has a NEW_AND_OLD_IMAGES stream (4 shards: one a
 * partition). --threads PutItem threads write new items of their own (btx_put_work).
 *
 *   stream_put_solo  no stream; the PutItem threads for --txn-seconds. ops = PutItems
 *   stream_put       the same with the stream: stream_put / stream_put_solo is what the
 *                    stream costs a write (each now reads the old item under its lock,
 *                    writes its image, and a meta entry with the time)
 *   stream_put_solo_sync, stream_put_sync  the same in KURA_SYNC
 *   stream_over_solo, stream_over  the same as stream_put_solo / stream_put, but each thread
 *                    first writes BTX_OVER_ITEMS items of its own (not timed) and then
 *                    overwrites them in turn, each put changing its number n (a MODIFY with
 *                    both images): what the stream costs a write that replaces an item
 *   stream_read      one consumer thread (stream_consumer.c) reads every shard from
 *                    TRIM_HORIZON while the PutItem threads write for --txn-seconds at full
 *                    speed, until it has read every record; then, with the writers gone, a
 *                    second consumer reads the whole stream again from TRIM_HORIZON (a drain
 *                    of a prewritten stream: what one consumer reads when it has a core to
 *                    itself). ops = records read by the first, seconds = from the writers'
 *                    start until it had read the last record; extras: the writers' rate, the
 *                    share read by the time they stopped (keep_up_pct) and the backlog then,
 *                    the catching up after, the drain's rate, both consumers' CPU per record
 *                    and their GetRecords calls. p50/p99: the PutItems
 *   stream_lag       stream_lag.c: write -> record at 50% of the maximum write rate
 *
 * The consumer polls as a real one does: a pass is one GetRecords (Limit 1000) on each
 * shard; a pass that brought nothing is followed by a sleep of BST_IDLE_US.
 *
 * What they check: stream_put*, every item written is in the table (the per-partition
 * counts); stream_read, both consumers read each writer's items exactly once, as INSERTs with
 * a new image and no old one, in the order written within a shard (stream_consumer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench/txn/txn_int.h"
#include "bench/workloads.h"
#include "util/status.h"

/* The process's CPU time (every thread: the clients' and the engine's), in seconds. */
static double process_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* stream_over*: overwrites the thread's BTX_OVER_ITEMS items in turn, n = the put's number. */
static kura_status over_work(btx_worker *w)
{
    uint64_t first = btx_put_first(w->id);
    char num[24];
    while (!atomic_load(w->stop)) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)w->ops + 1);
        uint64_t t0 = btx_call_begin(w);
        kura_status s = btx_put_n(w->c->db, first + w->ops % BTX_OVER_ITEMS, num);
        btx_call_end(w, t0);
        if (s != KURA_OK) return s;
        w->ops++;
    }
    w->items = BTX_OVER_ITEMS; /* (written before: the table holds them) */
    return KURA_OK;
}

/* The PutItem threads ws[0..n), fields set; with `over`, their items written first. */
static kura_status put_workers(btx_ctx *c, btx_worker *ws, uint32_t n, bool over,
                               atomic_bool *stop)
{
    kura_status s = KURA_OK;
    for (uint32_t t = 0; t < n; t++) {
        ws[t] = (btx_worker){.c = c, .fn = over ? over_work : btx_put_work, .id = t,
                             .slot = 1 + t, .nthreads = n, .stop = stop};
        for (uint64_t j = 0; over && j < BTX_OVER_ITEMS && s == KURA_OK; j++)
            s = btx_put(c->db, btx_put_first(t) + j);
    }
    return s;
}

/* The table's WAL bytes now per item written: with a stream every WAL is kept, so this is
 * what a put appends (record, image, meta entry; preallocated tails included). */
static void wal_report(kura_db *db, uint64_t items, bench_run *run)
{
    kura_stats st;
    kura_get_stats(db, &st);
    bench_run_extra(run, "wal_bytes_per_put", items ? (double)st.wal_bytes / (double)items : 0);
}

kura_status btx_run_stream_put(btx_ctx *c, bool over, bench_run *run)
{
    uint32_t nput = c->cfg->threads ? c->cfg->threads : 1;
    btx_worker *ws = calloc(nput, sizeof *ws);
    if (!ws) return kura_err(KURA_E_NOMEM, "workers");
    atomic_bool stop = false;
    kura_status s = put_workers(c, ws, nput, over, &stop);
    if (s != KURA_OK) {
        free(ws);
        return s;
    }
    btx_io_counts io0, io1;
    btx_io_read(c->io, &io0);
    double cpu0 = process_cpu_s();
    uint64_t t0 = know_ns();
    s = btx_workers_start(ws, nput);
    if (s == KURA_OK) btx_sleep_ms((uint64_t)c->cfg->txn_seconds * 1000u);
    atomic_store(&stop, true);
    s = btx_workers_join(ws, nput, s);
    uint64_t t1 = know_ns();
    double cpu = process_cpu_s() - cpu0;
    btx_io_read(c->io, &io1);
    for (uint32_t t = 0; t < nput; t++)
        run->ops += ws[t].ops;
    run->threads = nput;
    run->seconds = (double)(t1 - t0) / 1e9;
    btx_hist_report(ws, nput, run);
    bench_run_extra(run, "cpu_us_per_put", run->ops ? cpu * 1e6 / (double)run->ops : 0);
    btx_io_report(&io0, &io1, run->ops, run->seconds, run);
    if (c->stream_arn[0]) wal_report(c->db, run->ops + (over ? nput * BTX_OVER_ITEMS : 0), run);
    uint64_t *want = s == KURA_OK ? calloc(c->parts, sizeof *want) : NULL;
    if (s == KURA_OK && !want) s = kura_err(KURA_E_NOMEM, "counts");
    if (s == KURA_OK) {
        for (uint32_t t = 0; t < nput; t++)
            btx_count_range(btx_put_first(t), ws[t].items, c->parts, want);
        s = btx_check_parts(c, want);
    }
    free(want);
    free(ws);
    return s;
}

/* ---- stream_read ------------------------------------------------------------------------- */

typedef struct read_state {
    bst_consumer *k;
    bst_progress p;
    double cpu_s;
} read_state;

static kura_status consumer_work(btx_worker *w)
{
    read_state *rs = w->arg;
    double cpu0 = bst_thread_cpu_s();
    kura_status s = bst_consumer_read_all(rs->k, NULL, NULL, &rs->p);
    rs->cpu_s = bst_thread_cpu_s() - cpu0;
    return s;
}

/* The drain: a second consumer reads all `total` records from TRIM_HORIZON on this thread. */
static kura_status drain(btx_ctx *c, const btx_worker *ws, uint32_t nput, uint64_t total,
                         bench_run *run)
{
    bst_consumer *k = NULL;
    bst_progress p = {.total = total, .writers_done = true};
    kura_status s = bst_consumer_open(c, KURA_ITER_TRIM_HORIZON, nput, 2 + nput, &k);
    double cpu0 = bst_thread_cpu_s();
    uint64_t t0 = know_ns();
    if (s == KURA_OK) s = bst_consumer_read_all(k, NULL, NULL, &p);
    double sec = (double)(know_ns() - t0) / 1e9, cpu = bst_thread_cpu_s() - cpu0;
    for (uint32_t t = 0; t < nput && s == KURA_OK; t++)
        bst_consumer_expect(k, t, btx_put_first(t), ws[t].items);
    if (s == KURA_OK) s = bst_consumer_check(k);
    if (s == KURA_OK) {
        bench_run_extra(run, "drain_per_sec", sec > 0 ? (double)total / sec : 0);
        bench_run_extra(run, "drain_cpu_us_per_rec", total ? cpu * 1e6 / (double)total : 0);
        bench_run_extra(run, "drain_cpu_pct", sec > 0 ? 100.0 * cpu / sec : 0);
        bst_consumer_report(k, "drain", sec, run);
    }
    bst_consumer_free(k);
    return s;
}

kura_status btx_run_stream_read(btx_ctx *c, bench_run *run)
{
    uint32_t nput = c->cfg->threads ? c->cfg->threads : 1;
    btx_worker *ws = calloc(nput + 1, sizeof *ws);
    if (!ws) return kura_err(KURA_E_NOMEM, "workers");
    atomic_bool stop = false;
    kura_status s = put_workers(c, ws, nput, false, &stop); /* (new items: nothing written) */
    read_state rs = {.k = NULL};
    if (s == KURA_OK)
        s = bst_consumer_open(c, KURA_ITER_TRIM_HORIZON, nput, 1 + nput, &rs.k);
    ws[nput] = (btx_worker){
        .c = c, .fn = consumer_work, .slot = 1 + nput, .nthreads = 1, .stop = &stop, .arg = &rs};
    uint64_t t0 = know_ns(), t1 = t0, total = 0, read_at_stop = 0;
    if (s == KURA_OK) {
        s = btx_workers_start(ws + nput, 1); /* the consumer first: it waits for records */
        t0 = know_ns();
        if (s == KURA_OK) s = btx_workers_start(ws, nput);
        if (s == KURA_OK) btx_sleep_ms((uint64_t)c->cfg->txn_seconds * 1000u);
        atomic_store(&stop, true);
        s = btx_workers_join(ws, nput, s);
        t1 = know_ns();
        read_at_stop = atomic_load(&rs.p.read);
        for (uint32_t t = 0; t < nput; t++)
            total += ws[t].items;
        atomic_store(&rs.p.total, total);
        atomic_store(&rs.p.writers_done, true);
        s = btx_workers_join(ws + nput, 1, s);
    }
    for (uint32_t t = 0; t < nput && s == KURA_OK; t++)
        bst_consumer_expect(rs.k, t, btx_put_first(t), ws[t].items);
    if (s == KURA_OK) s = bst_consumer_check(rs.k);
    if (s == KURA_OK) {
        double window = (double)(t1 - t0) / 1e9;
        run->ops = total;
        run->threads = nput + 1;
        run->seconds = (double)(rs.p.caught_ns - t0) / 1e9;
        btx_hist_report(ws, nput, run);
        bench_run_extra(run, "put_per_sec", window > 0 ? (double)total / window : 0);
        bench_run_extra(run, "read_window_per_sec", window > 0 ? (double)read_at_stop / window : 0);
        bench_run_extra(run, "keep_up_pct",
                        total ? 100.0 * (double)read_at_stop / (double)total : 0);
        bench_run_extra(run, "backlog_at_stop", (double)(total - read_at_stop));
        bench_run_extra(run, "catch_up_ms", (double)(rs.p.caught_ns - t1) / 1e6);
        bench_run_extra(run, "live_cpu_us_per_rec", total ? rs.cpu_s * 1e6 / (double)total : 0);
        bench_run_extra(run, "live_cpu_pct",
                        run->seconds > 0 ? 100.0 * rs.cpu_s / run->seconds : 0);
        bst_consumer_report(rs.k, "live", run->seconds, run);
        wal_report(c->db, total, run);
        s = drain(c, ws, nput, total, run);
    }
    bst_consumer_free(rs.k);
    free(ws);
    return s;
}
