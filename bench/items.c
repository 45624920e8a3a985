/*
 * items.c - the timed loops of the item-level workloads (bench/items.h) and the items they
 * write.
 *
 * Every loop checks what it reads: a GetItem must find its item, a Query must return the 20
 * items of its partition key; a violation fails the run (KURA_E_CORRUPTION).
 */
#include "bench/items.h"
#include "bench/items_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/hist.h"
#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

/* The heat report's answer time: --num PutItems of small items, each a new partition key
 * (untimed: the keys the accounting has seen), then HEAT_REPORTS reports of every table,
 * timed one by one (p50/p99 are the report's). */
enum { HEAT_REPORTS = 1000 };

static kura_status heat_loop(bench_idb *db, const bench_config *cfg, bench_run *run,
                             bench_hist *h)
{
    char pk[32];
    kura_status s = KURA_OK;
    for (uint64_t i = 0; i < cfg->num && s == KURA_OK; i++) {
        kura_value *item = kura_value_map();
        int n = snprintf(pk, sizeof pk, "key%llu", (unsigned long long)i);
        if (!item || kura_value_map_put(item, "pk", 2, kura_value_s(pk, (size_t)n)) != KURA_OK ||
            kura_value_map_put(item, "sk", 2, kura_value_s("s", 1)) != KURA_OK)
            s = kura_err(KURA_E_NOMEM, "heatreport item");
        kura_put_item_req req = {.table_name = ITEMS_TABLE, .item = item};
        kura_write_result res;
        if (s == KURA_OK && (s = kura_put_item(db->db, &req, &res)) == KURA_OK)
            kura_write_result_free(&res);
        kura_value_free(item);
    }
    uint64_t start = know_ns(), t0 = start;
    for (int i = 0; i < HEAT_REPORTS && s == KURA_OK; i++) {
        char *json = NULL;
        s = kura_heat_report(db->db, NULL, 60, &json);
        free(json);
        uint64_t t1 = know_ns();
        bench_hist_add(h, t1 - t0);
        t0 = t1;
        run->ops++;
    }
    run->seconds = (double)(t0 - start) / 1e9;
    return s;
}

static kura_status items_loop(const bench_workload *wl, const bench_item_api *api,
                              bench_idb *db, const bench_config *cfg, uint64_t seed,
                              bench_run *run)
{
    bench_hist *h = malloc(sizeof *h);
    if (!h)
        return kura_err(KURA_E_NOMEM, "histogram");
    bench_hist_init(h);
    bench_rng rng;
    bench_rng_seed(&rng, seed);
    uint64_t nops = cfg->num;
    if (wl->kind == BENCH_WL_ITEM_QUERY)
        nops = cfg->num / BENCH_ITEMS_PER_PK ? cfg->num / BENCH_ITEMS_PER_PK : 1;
    kura_status s = KURA_OK;
    if (wl->kind == BENCH_WL_ITEM_HEAT) {
        s = heat_loop(db, cfg, run, h);
        nops = 0;
    }
    uint64_t start = know_ns(), t0 = start;
    for (uint64_t i = 0; i < nops && s == KURA_OK; i++) {
        uint64_t index = wl->kind == BENCH_WL_ITEM_PUT ? i : bench_rng_below(&rng, cfg->num);
        bool found = false;
        uint64_t count = 0;
        switch (wl->kind) {
        case BENCH_WL_ITEM_PUT: s = api->put(db, index); break;
        case BENCH_WL_ITEM_UPDATE: s = api->update(db, index); break;
        case BENCH_WL_ITEM_GET:
            s = api->get(db, index, &found);
            if (s == KURA_OK && !found)
                s = kura_err(KURA_E_CORRUPTION, "getitem: item %llu not found",
                             (unsigned long long)index);
            run->found += found;
            break;
        default: {
            uint64_t want = BENCH_ITEMS_PER_PK;
            uint64_t first = index - index % BENCH_ITEMS_PER_PK;
            if (first + want > cfg->num)
                want = cfg->num - first;
            s = api->query(db, index, &count);
            if (s == KURA_OK && count != want)
                s = kura_err(KURA_E_CORRUPTION, "query: %llu items for item %llu, not %llu",
                             (unsigned long long)count, (unsigned long long)index,
                             (unsigned long long)want);
            run->found += count;
        }
        }
        uint64_t t1 = know_ns();
        bench_hist_add(h, t1 - t0);
        t0 = t1;
        run->ops++;
    }
    run->threads = 1;
    if (wl->kind != BENCH_WL_ITEM_HEAT)
        run->seconds = (double)(t0 - start) / 1e9;
    run->p50_us = bench_hist_percentile_us(h, 50);
    run->p99_us = bench_hist_percentile_us(h, 99);
    free(h);
    return s;
}

kura_status bench_items_run(const bench_workload *wl, const bench_engine *e,
                            const bench_config *cfg, uint32_t repeat, const char *dir,
                            bench_run *run_out)
{
    bench_engine_opts o;
    bench_workload_engine_opts(cfg, wl, &o);
    bench_idb *db = NULL;
    kura_status s = e->items->open(dir, &o, cfg, &db);
    if (s != KURA_OK)
        return s;
    bench_run run;
    memset(&run, 0, sizeof run);
    uint64_t seed = bench_seed_mix(cfg->seed, repeat, (uint64_t)(wl - bench_workloads));
    s = items_loop(wl, e->items, db, cfg, seed, &run);
    kura_status cs = e->items->close(db);
    if (s == KURA_OK)
        s = cs;
    if (s != KURA_OK)
        return s;
    /* MB/s over the items' DynamoDB sizes would need the item layer; report the ops only */
    run.bytes = 0;
    bench_run_finish(&run);
    run.state = BENCH_RUN_OK;
    *run_out = run;
    return KURA_OK;
}
