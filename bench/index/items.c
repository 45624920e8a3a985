/*
 * items.c - the database, table, items and GSIs of the index workloads (index.h), the
 * dispatch of bench_index_run, and the helpers they share (index_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench/index/index.h"
#include "bench/index/index_int.h"
#include "bench/item_fields.h"
#include "bench/items.h"
#include "bench/keys.h"
#include "bench/workloads.h"
#include "util/status.h"
#include "util/thread.h"

const char *const bix_gsi_names[BIX_MAX_GSIS] = {"by_grp", "by_email", "by_name", "by_price",
                                                 "by_ts"};

/* Each GSI's key: HASH attribute, RANGE attribute (or NULL). */
static const kura_key_schema_element GSI_KEYS[BIX_MAX_GSIS][2] = {{{"grp", false}, {"sk", true}},
                                                                  {{"email", false}},
                                                                  {{"name", false}},
                                                                  {{"price", false}},
                                                                  {{"ts", false}}};
static const size_t GSI_NKEYS[BIX_MAX_GSIS] = {2, 1, 1, 1, 1};

/* The table's key and every GSI key attribute. */
static const kura_attribute_definition ATTR_DEFS[] = {
    {"pk", KURA_S},   {"sk", KURA_S},    {"grp", KURA_S}, {"email", KURA_S},
    {"name", KURA_S}, {"price", KURA_N}, {"ts", KURA_N}};

kura_status bix_fail(kura_status s, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kura_last_error());
    return kura_err(s, "%s: %s: %s", what, kura_status_str(s), msg);
}

kura_status bix_open(const char *dir, const bench_config *cfg, kura_db **db_out)
{
    kura_options ko;
    kura_options_init(&ko);
    ko.durability = KURA_RELAXED;
    ko.memtable_budget_bytes = (size_t)cfg->memtable_mb << 20;
    ko.block_cache_bytes = (size_t)cfg->cache_mb << 20;
    ko.default_partitions = cfg->partitions;
    kura_status s = kura_open(dir, &ko, db_out);
    return s == KURA_OK ? s : bix_fail(s, "open");
}

static void gsi_def(uint32_t i, bool keys_only, kura_index_def *out)
{
    *out = (kura_index_def){
        .index_name = bix_gsi_names[i],
        .key_schema = GSI_KEYS[i],
        .key_schema_count = GSI_NKEYS[i],
        .projection = {keys_only ? KURA_PROJECTION_KEYS_ONLY : KURA_PROJECTION_ALL, NULL, 0}};
}

kura_status bix_create_table(kura_db *db, uint32_t ngsis, bool keys_only)
{
    kura_index_def gsis[BIX_MAX_GSIS];
    for (uint32_t i = 0; i < ngsis && i < BIX_MAX_GSIS; i++)
        gsi_def(i, keys_only, &gsis[i]);
    kura_key_schema_element ks[] = {{"pk", false}, {"sk", true}};
    /* only the attributes some key uses may be defined (DynamoDB's rule) */
    kura_attribute_definition defs[7];
    size_t nd = 0;
    for (size_t a = 0; a < sizeof ATTR_DEFS / sizeof ATTR_DEFS[0]; a++) {
        bool used = a < 2;
        for (uint32_t i = 0; i < ngsis; i++)
            for (size_t k = 0; k < GSI_NKEYS[i]; k++)
                used |= !strcmp(GSI_KEYS[i][k].attribute_name, ATTR_DEFS[a].attribute_name);
        if (used) defs[nd++] = ATTR_DEFS[a];
    }
    kura_create_table_req req = {.table_name = BIX_TABLE,
                                 .attribute_definitions = defs,
                                 .attribute_definitions_count = nd,
                                 .key_schema = ks,
                                 .key_schema_count = 2,
                                 .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                                 .global_secondary_indexes = ngsis ? gsis : NULL,
                                 .global_secondary_indexes_count = ngsis};
    kura_table_description desc;
    kura_status s = kura_create_table(db, &req, &desc);
    if (s != KURA_OK) return bix_fail(s, "CreateTable");
    kura_table_description_free(&desc);
    return KURA_OK;
}

kura_status bix_create_gsi(kura_db *db, uint32_t i, bool keys_only)
{
    kura_gsi_update u = {.action = KURA_GSI_CREATE};
    gsi_def(i, keys_only, &u.create);
    kura_attribute_definition defs[2];
    size_t nd = 0;
    for (size_t k = 0; k < GSI_NKEYS[i]; k++)
        for (size_t a = 0; a < sizeof ATTR_DEFS / sizeof ATTR_DEFS[0]; a++)
            if (!strcmp(GSI_KEYS[i][k].attribute_name, ATTR_DEFS[a].attribute_name))
                defs[nd++] = ATTR_DEFS[a];
    kura_update_table_req req = {.table_name = BIX_TABLE,
                                 .attribute_definitions = defs,
                                 .attribute_definitions_count = nd,
                                 .global_secondary_index_updates = &u,
                                 .global_secondary_index_updates_count = 1};
    kura_table_description desc;
    kura_status s = kura_update_table(db, &req, &desc);
    if (s != KURA_OK) return bix_fail(s, "UpdateTable");
    kura_table_description_free(&desc);
    return KURA_OK;
}

/* ---- Items --------------------------------------------------------------------------------- */

static bool put_s(kura_value *m, const char *name, const char *s)
{
    return kura_value_map_put(m, name, strlen(name), kura_value_s(s, strlen(s))) == KURA_OK;
}

static bool put_n(kura_value *m, const char *name, const char *n)
{
    return kura_value_map_put(m, name, strlen(name), kura_value_n(n, strlen(n))) == KURA_OK;
}

/* The partition key "userDDDDDDDDDDDD" of f as grp: "teamDDDDDDDDDDDD". */
static void grp_of(const bench_item_fields *f, char grp[17])
{
    memcpy(grp, "team", 4);
    memcpy(grp + 4, f->pk + 4, 13);
}

/* ts of item `index` in decimal (no printf in the timed loops: item_fields.c says why). */
static void ts_of(uint64_t index, char ts[24])
{
    char tmp[24];
    int n = 0;
    for (uint64_t v = 1767225600000ull + index * 37; v; v /= 10)
        tmp[n++] = (char)('0' + v % 10);
    for (int i = 0; i < n; i++)
        ts[i] = tmp[n - 1 - i];
    ts[n] = 0;
}

kura_value *bix_item(uint64_t index, bool small)
{
    bench_item_fields f;
    bench_item_fields_make(index, &f);
    char grp[17], ts[24];
    grp_of(&f, grp);
    ts_of(index, ts);
    kura_value *m = bench_item_value(&f, "0", !small);
    if (m && (!put_s(m, "grp", grp) || !put_n(m, "ts", ts))) {
        kura_value_free(m);
        return NULL;
    }
    return m;
}

kura_status bix_put(kura_db *db, uint64_t index, bool small)
{
    kura_value *item = bix_item(index, small);
    if (!item) return kura_err(KURA_E_NOMEM, "item %llu", (unsigned long long)index);
    kura_put_item_req req = {.table_name = BIX_TABLE, .item = item};
    kura_write_result res = {0};
    kura_status s = kura_put_item(db, &req, &res);
    kura_write_result_free(&res);
    kura_value_free(item);
    return s == KURA_OK ? s : bix_fail(s, "PutItem");
}

kura_status bix_query(kura_db *db, const char *gsi, uint64_t group, uint64_t *count_out)
{
    bench_item_fields f;
    bench_item_key_make(group * BENCH_ITEMS_PER_PK, &f);
    char key[17];
    if (gsi)
        grp_of(&f, key);
    else
        memcpy(key, f.pk, sizeof key);
    kura_value *vals = kura_value_map();
    if (!vals || kura_value_map_put(vals, ":k", 2, kura_value_s(key, strlen(key))) != KURA_OK) {
        kura_value_free(vals);
        return kura_err(KURA_E_NOMEM, "query values");
    }
    kura_query_req req = {.table_name = BIX_TABLE,
                          .index_name = gsi,
                          .key_condition_expression = gsi ? "grp = :k" : "pk = :k",
                          .expr = {.values = vals}};
    kura_page page = {0};
    kura_status s = kura_query(db, &req, &page);
    if (s == KURA_OK) *count_out = page.count;
    kura_page_free(&page);
    kura_value_free(vals);
    return s == KURA_OK ? s : bix_fail(s, "Query");
}

kura_status bix_check_group(kura_db *db, const char *gsi, uint64_t group, uint64_t want)
{
    uint64_t n = 0;
    kura_status s = bix_query(db, gsi, group, &n);
    if (s == KURA_OK && n != want)
        s = kura_err(KURA_E_CORRUPTION, "Query of %s, group %llu: %llu items, not %llu",
                     gsi ? gsi : "the table", (unsigned long long)group, (unsigned long long)n,
                     (unsigned long long)want);
    return s;
}

kura_status bix_wait_gsis(kura_db *db, uint32_t ngsis)
{
    for (uint32_t i = 0; i < ngsis; i++) {
        kura_status s = kura_index_wait(db, BIX_TABLE, bix_gsi_names[i], BIX_WAIT_MS);
        if (s != KURA_OK) return bix_fail(s, "kura_index_wait");
    }
    return KURA_OK;
}

void bix_sleep_until(uint64_t t_ns)
{
    struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ; /* EINTR */
}

void bix_pace(uint64_t sched_ns)
{
    uint64_t release = (sched_ns + BIX_PACE_NS - 1) / BIX_PACE_NS * BIX_PACE_NS;
    if (release > know_ns()) bix_sleep_until(release);
}

void bix_precise_sleeps(void)
{
    prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
}

void bix_mem_sample(kura_db *db, uint32_t ngsis, bix_mem *m)
{
    kura_stats st;
    kura_get_stats(db, &st);
    if (st.memtable_bytes > m->memtable_bytes) m->memtable_bytes = st.memtable_bytes;
    if (st.block_cache_bytes > m->cache_bytes) m->cache_bytes = st.block_cache_bytes;
    kura_index_stats is;
    if (ngsis > 0 && kura_index_stats_get(db, BIX_TABLE, bix_gsi_names[0], &is) == KURA_OK &&
        is.queue_bytes > m->queue_bytes)
        m->queue_bytes = is.queue_bytes;
}

void bix_mem_report(const bix_mem *m, bench_run *run)
{
    bench_run_extra(run, "max_memtable_mib", (double)m->memtable_bytes / 1048576.0);
    bench_run_extra(run, "max_gsi_queue_mib", (double)m->queue_bytes / 1048576.0);
    bench_run_extra(run, "max_cache_mib", (double)m->cache_bytes / 1048576.0);
}

void bix_hist_report(const bench_hist *h, const char *prefix, bench_run *run)
{
    char name[32];
    snprintf(name, sizeof name, "%s_p50_ms", prefix);
    bench_run_extra(run, name, bench_hist_percentile_us(h, 50) / 1000.0);
    snprintf(name, sizeof name, "%s_p99_ms", prefix);
    bench_run_extra(run, name, bench_hist_percentile_us(h, 99) / 1000.0);
    snprintf(name, sizeof name, "%s_max_ms", prefix);
    bench_run_extra(run, name, (double)h->max_ns / 1e6);
}

/* ---- bench_index_run ----------------------------------------------------------------------- */

kura_status bench_index_run(const bench_workload *wl, const bench_config *cfg, uint32_t repeat,
                            const char *dir, bench_run *run_out)
{
    kura_db *db = NULL;
    kura_status s = bix_open(dir, cfg, &db);
    if (s != KURA_OK) return s;
    bench_run run;
    memset(&run, 0, sizeof run);
    run.threads = 1;
    uint64_t seed = bench_seed_mix(cfg->seed, repeat, (uint64_t)(wl - bench_workloads));
    switch (wl->kind) {
    case BENCH_WL_IDX_PUT:
        s = bix_create_table(db, wl->gsis, cfg->gsi_keys_only);
        if (s == KURA_OK) s = bix_run_put(db, cfg, wl->gsis, &run);
        break;
    case BENCH_WL_IDX_QUERY_BASE:
    case BENCH_WL_IDX_QUERY_GSI:
        s = bix_run_query(db, cfg, wl->kind == BENCH_WL_IDX_QUERY_GSI, seed, &run);
        break;
    case BENCH_WL_IDX_LAG:
        s = bix_create_table(db, cfg->lag_gsis, cfg->gsi_keys_only);
        if (s == KURA_OK) s = bix_run_lag(db, cfg, &run);
        break;
    case BENCH_WL_IDX_BACKFILL:
        s = bix_create_table(db, 0, cfg->gsi_keys_only);
        if (s == KURA_OK) s = bix_run_backfill(db, cfg, seed, &run);
        break;
    default:
        s = kura_err(KURA_E_INVALID, "%s is not an index workload", wl->name);
    }
    kura_status cs = kura_close(db);
    if (s == KURA_OK && cs != KURA_OK) s = bix_fail(cs, "close");
    if (s != KURA_OK) return s;
    bench_run_finish(&run);
    run.state = BENCH_RUN_OK;
    *run_out = run;
    return KURA_OK;
}
