/*
 * put.c - putitem_gsi0/2/5 (what GSIs cost a PutItem) and query_base / query_gsi (a Query of
 * a GSI against one of the table), index.h.
 *
 * putitem_gsiN times the PutItems and then the wait for the GSI applier to catch up: the
 * applier queues up to 32 MiB of writes (index/applier.c), so the acknowledgements alone
 * would leave up to ~60,000 items' index work out of the figure. The run's seconds are both
 * together; the extras split them.
 */
#include <stdlib.h>

#include "bench/index/index_int.h"
#include "bench/item_fields.h"
#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

enum { MEM_SAMPLE_EVERY = 4096 }; /* puts between two samples of the memory figures */

kura_status bix_run_put(kura_db *db, const bench_config *cfg, uint32_t ngsis, bench_run *run)
{
    bench_hist *h = malloc(sizeof *h);
    if (!h) return kura_err(KURA_E_NOMEM, "histogram");
    bench_hist_init(h);
    bix_mem mem = {0};
    kura_status s = KURA_OK;
    uint64_t start = know_ns(), t0 = start;
    for (uint64_t i = 0; i < cfg->num && s == KURA_OK; i++) {
        s = bix_put(db, i, false);
        uint64_t t1 = know_ns();
        bench_hist_add(h, t1 - t0);
        t0 = t1;
        run->ops++;
        if (i % MEM_SAMPLE_EVERY == MEM_SAMPLE_EVERY - 1) bix_mem_sample(db, ngsis, &mem);
    }
    uint64_t acked = t0;
    kura_index_stats st = {0};
    if (s == KURA_OK && ngsis > 0) s = kura_index_stats_get(db, BIX_TABLE, bix_gsi_names[0], &st);
    bix_mem_sample(db, ngsis, &mem);
    if (s == KURA_OK) s = bix_wait_gsis(db, ngsis);
    uint64_t end = know_ns();
    run->seconds = (double)(end - start) / 1e9;
    run->p50_us = bench_hist_percentile_us(h, 50);
    run->p99_us = bench_hist_percentile_us(h, 99);
    free(h);
    kura_stats ks;
    kura_get_stats(db, &ks);
    double ack_s = (double)(acked - start) / 1e9;
    bench_run_extra(run, "ack_ops_per_sec", ack_s > 0 ? (double)run->ops / ack_s : 0);
    bench_run_extra(run, "drain_s", (double)(end - acked) / 1e9);
    bench_run_extra(run, "backlog_writes", (double)st.lag_writes);
    bench_run_extra(run, "backlog_mib", (double)st.queue_bytes / 1048576.0);
    bench_run_extra(run, "write_slowdowns", (double)ks.write_slowdowns);
    bix_mem_report(&mem, run);
    return s;
}

kura_status bix_run_query(kura_db *db, const bench_config *cfg, bool gsi, uint64_t seed,
                          bench_run *run)
{
    const char *index = gsi ? bix_gsi_names[0] : NULL;
    /* the GSI must hold every item before its reads are compared with the table's */
    kura_status s = gsi ? kura_index_wait(db, BIX_TABLE, index, BIX_WAIT_MS) : KURA_OK;
    if (s == KURA_E_RESOURCE_NOT_FOUND)
        return kura_err(s,
                        "query_gsi needs the table with GSI %s that putitem_gsi2 or "
                        "putitem_gsi5 leaves: run one of them before it",
                        index);
    if (s != KURA_OK) return bix_fail(s, "kura_index_wait");
    bench_hist *h = malloc(sizeof *h);
    if (!h) return kura_err(KURA_E_NOMEM, "histogram");
    bench_hist_init(h);
    bench_rng rng;
    bench_rng_seed(&rng, seed);
    uint64_t ngroups = (cfg->num + BENCH_ITEMS_PER_PK - 1) / BENCH_ITEMS_PER_PK;
    uint64_t nops = cfg->num / BENCH_ITEMS_PER_PK ? cfg->num / BENCH_ITEMS_PER_PK : 1;
    uint64_t start = know_ns(), t0 = start;
    for (uint64_t i = 0; i < nops && s == KURA_OK; i++) {
        uint64_t g = bench_rng_below(&rng, ngroups), count = 0;
        uint64_t want = cfg->num - g * BENCH_ITEMS_PER_PK;
        if (want > BENCH_ITEMS_PER_PK) want = BENCH_ITEMS_PER_PK;
        s = bix_query(db, index, g, &count);
        if (s == KURA_OK && count != want)
            s = kura_err(KURA_E_CORRUPTION, "Query of %s, group %llu: %llu items, not %llu",
                         gsi ? index : "the table", (unsigned long long)g,
                         (unsigned long long)count, (unsigned long long)want);
        uint64_t t1 = know_ns();
        bench_hist_add(h, t1 - t0);
        t0 = t1;
        run->ops++;
        run->found += count;
    }
    run->seconds = (double)(t0 - start) / 1e9;
    run->p50_us = bench_hist_percentile_us(h, 50);
    run->p99_us = bench_hist_percentile_us(h, 99);
    free(h);
    return s;
}
