/*
 * report.c - medians, the human table and the JSON file of kura-bench (layout and
 * definitions in report.h).
 */
#include "bench/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/engine.h"
#include "bench/json.h"
#include "bench/workloads.h"
#include "util/status.h"

static int rp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v); the mean of the middle two for even n. */
static double rp_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, rp_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The fields a median is taken of, as offsets into bench_run. */
#define RP_DOUBLES(X) X(seconds) X(ops_per_sec) X(mb_per_sec) X(p50_us) X(p99_us)
#define RP_U64S(X) X(ops) X(found) X(bytes) X(bytes_on_disk) X(peak_rss_bytes)

void bench_report_median(const bench_config *cfg, const bench_run *runs, size_t e, size_t w,
                         bench_run *out)
{
    const bench_run *ok[256];
    size_t n = 0;
    const bench_run *failed = NULL, *skipped = NULL;
    for (size_t r = 0; r < cfg->repeat; r++) {
        const bench_run *run = &runs[bench_run_index(cfg, r, e, w)];
        if (run->state == BENCH_RUN_OK && n < sizeof ok / sizeof ok[0])
            ok[n++] = run;
        else if (run->state == BENCH_RUN_FAILED && failed == NULL)
            failed = run;
        else if (run->state == BENCH_RUN_SKIPPED)
            skipped = run;
    }
    memset(out, 0, sizeof *out);
    if (n == 0) {
        const bench_run *why = failed != NULL ? failed : skipped;
        out->state = failed != NULL ? BENCH_RUN_FAILED : BENCH_RUN_SKIPPED;
        snprintf(out->error, sizeof out->error, "%s", why != NULL ? why->error : "no runs");
        return;
    }
    double v[256];
#define RP_MEDIAN_(field)                                                                      \
    for (size_t i = 0; i < n; i++)                                                             \
        v[i] = (double)ok[i]->field;                                                           \
    out->field = rp_median(v, n);
    RP_DOUBLES(RP_MEDIAN_)
#undef RP_MEDIAN_
#define RP_MEDIAN_(field)                                                                      \
    for (size_t i = 0; i < n; i++)                                                             \
        v[i] = (double)ok[i]->field;                                                           \
    out->field = (uint64_t)(rp_median(v, n) + 0.5);
    RP_U64S(RP_MEDIAN_)
#undef RP_MEDIAN_
    /* the extras, name by name (a workload reports the same names in every round) */
    out->nextras = ok[0]->nextras;
    for (uint32_t x = 0; x < out->nextras; x++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (x < ok[i]->nextras && !strcmp(ok[i]->extras[x].name, ok[0]->extras[x].name))
                v[m++] = ok[i]->extras[x].value;
        out->extras[x] = ok[0]->extras[x];
        out->extras[x].value = rp_median(v, m);
    }
    out->threads = ok[0]->threads;
    out->state = BENCH_RUN_OK;
}

/* Index of kura in the engine list, or -1. */
/* The engine the "vs" column compares with: kura, or kura-raw for the item workloads. */
static long rp_ref_index(const bench_config *cfg, const char *name)
{
    for (size_t e = 0; e < cfg->nengines; e++)
        if (strcmp(cfg->engines[e]->name, name) == 0)
            return (long)e;
    return -1;
}

static long rp_kura_index(const bench_config *cfg)
{
    return rp_ref_index(cfg, "kura");
}

/* The settings string of engine e, as opened for the fill workloads. */
static void rp_engine_settings(const bench_config *cfg, size_t e, char *buf, size_t cap)
{
    bench_engine_opts o;
    bench_workload_engine_opts(cfg, bench_workload_find("fillrandom"), &o);
    cfg->engines[e]->settings(&o, buf, cap);
}

void bench_report_header(FILE *out, const bench_config *cfg, const bench_machine *m)
{
    fprintf(out, "kura-bench on %s (%u cores, %.1f GiB), %s, %s (%s), %s, load %.2f\n",
            m->cpu_model, m->cores, (double)m->mem_bytes / (1u << 30), m->kernel, cfg->dir,
            m->fs, m->date, m->load_avg_1m);
    fprintf(out, "command: %s\n", cfg->command);
    for (size_t e = 0; e < cfg->nengines; e++) {
        char buf[1024];
        rp_engine_settings(cfg, e, buf, sizeof buf);
        fprintf(out, "  %-8s %s\n", cfg->engines[e]->name, buf);
    }
}

static void rp_table_row(FILE *out, const char *name, const bench_workload *wl,
                         const bench_run *m, const bench_run *kura)
{
    if (m->state != BENCH_RUN_OK) {
        fprintf(out, "%-9s %s: %s\n", name, m->state == BENCH_RUN_SKIPPED ? "n/a" : "FAILED",
                m->error);
        return;
    }
    char found[32] = "-", ratio[32] = "-";
    if (wl->kind == BENCH_WL_READ || wl->kind == BENCH_WL_READ_MISSING ||
        wl->kind == BENCH_WL_SEEK)
        snprintf(found, sizeof found, "%llu", (unsigned long long)m->found);
    if (kura != NULL && kura->state == BENCH_RUN_OK && kura->ops_per_sec > 0)
        snprintf(ratio, sizeof ratio, "%.2fx", m->ops_per_sec / kura->ops_per_sec);
    fprintf(out, "%-9s %11.0f %8.2f %9.2f %9.2f %9.3f %9.1f %8.1f %9s %8s\n", name,
            m->ops_per_sec, m->mb_per_sec, m->p50_us, m->p99_us, m->seconds,
            (double)m->bytes_on_disk / 1048576.0, (double)m->peak_rss_bytes / 1048576.0, found,
            ratio);
    for (uint32_t x = 0; x < m->nextras; x++) /* three to a line */
        fprintf(out, "%s%-24s %12.3f%s", x % 3 ? "  " : "          ", m->extras[x].name,
                m->extras[x].value, x % 3 == 2 || x + 1 == m->nextras ? "\n" : "");
}

void bench_report_table(FILE *out, const bench_config *cfg, const bench_run *runs)
{
    for (size_t w = 0; w < cfg->nworkloads; w++) {
        const bench_workload *wl = cfg->workloads[w];
        bool item = bench_wl_is_item(wl->kind) && !bench_wl_is_txn(wl->kind);
        long ki = item ? rp_ref_index(cfg, "kura-raw") : rp_kura_index(cfg);
        bench_run med[BENCH_MAX_ENGINES], kura;
        uint32_t threads = wl->threaded ? cfg->threads : 1;
        for (size_t e = 0; e < cfg->nengines; e++)
            bench_report_median(cfg, runs, e, w, &med[e]);
        if (ki >= 0)
            kura = med[ki];
        if (bench_wl_is_txn(wl->kind))
            fprintf(out, "\n== %s: transactions (bench/txn/txn.h), median of %u run%s ==\n",
                    wl->name, cfg->repeat, cfg->repeat == 1 ? "" : "s");
        else if (bench_wl_is_index(wl->kind))
            fprintf(out, "\n== %s: secondary indexes (bench/index/index.h), median of %u "
                         "run%s ==\n", wl->name, cfg->repeat, cfg->repeat == 1 ? "" : "s");
        else if (item)
            fprintf(out, "\n== %s: DynamoDB-shaped items (~400 bytes), 1 thread, median of %u "
                         "run%s ==\n", wl->name, cfg->repeat, cfg->repeat == 1 ? "" : "s");
        else
            fprintf(out, "\n== %s: key %u + value %u bytes, %u thread%s, median of %u run%s ==\n",
                    wl->name, cfg->key_size, cfg->value_size, threads, threads == 1 ? "" : "s",
                    cfg->repeat, cfg->repeat == 1 ? "" : "s");
        fprintf(out, "%-9s %11s %8s %9s %9s %9s %9s %8s %9s %8s\n", "engine", "ops/s", "MB/s",
                "p50 us", "p99 us", "seconds", "disk MiB", "RSS MiB", "found",
                item ? "vs raw" : "vs kura");
        for (size_t e = 0; e < cfg->nengines; e++)
            rp_table_row(out, cfg->engines[e]->name, wl, &med[e], ki >= 0 ? &kura : NULL);
    }
    fprintf(out, "\nvs kura = the engine's ops/s / kura's (above 1.00x: faster than kura); "
                 "vs raw (item workloads) = ops/s / kura-raw's; index and transaction workloads: "
                 "the lines under a row are its extra figures (bench/index/index.h, "
                 "bench/txn/txn.h). "
                 "MB/s = (key + value bytes) x ops / s; compact: bytes on disk before it / s; "
                 "recover: bytes written before the crash / s to reopen.\n");
}

static void rp_json_figures(bench_json *j, const bench_run *run)
{
    bj_u64(j, "num", run->ops);
    bj_double(j, "ops_per_sec", run->ops_per_sec);
    bj_double(j, "mb_per_sec", run->mb_per_sec);
    bj_double(j, "p50_us", run->p50_us);
    bj_double(j, "p99_us", run->p99_us);
    bj_u64(j, "bytes_on_disk", run->bytes_on_disk);
    bj_u64(j, "peak_rss_bytes", run->peak_rss_bytes);
    bj_double(j, "seconds", run->seconds);
    bj_u64(j, "found", run->found);
    if (run->nextras > 0) {
        bj_object_begin(j, "extras");
        for (uint32_t x = 0; x < run->nextras; x++)
            bj_double(j, run->extras[x].name, run->extras[x].value);
        bj_object_end(j);
    }
}

static void rp_json_machine(bench_json *j, const bench_machine *m)
{
    bj_object_begin(j, "machine");
    bj_string(j, "cpu_model", m->cpu_model);
    bj_u64(j, "cores", m->cores);
    bj_u64(j, "mem_bytes", m->mem_bytes);
    bj_string(j, "kernel", m->kernel);
    bj_string(j, "fs", m->fs);
    bj_string(j, "date", m->date);
    bj_double(j, "load_avg_1m", m->load_avg_1m);
    bj_object_end(j);
}

static void rp_json_settings(bench_json *j, const bench_config *cfg)
{
    bj_object_begin(j, "settings");
    bj_string(j, "command", cfg->command);
    bj_array_begin(j, "engines");
    for (size_t e = 0; e < cfg->nengines; e++)
        bj_string(j, NULL, cfg->engines[e]->name);
    bj_array_end(j);
    bj_array_begin(j, "workloads");
    for (size_t w = 0; w < cfg->nworkloads; w++)
        bj_string(j, NULL, cfg->workloads[w]->name);
    bj_array_end(j);
    bj_u64(j, "num", cfg->num);
    bj_u64(j, "key_size", cfg->key_size);
    bj_u64(j, "value_size", cfg->value_size);
    bj_u64(j, "threads", cfg->threads);
    bj_u64(j, "repeat", cfg->repeat);
    bj_u64(j, "sync_num", cfg->sync_num);
    bj_u64(j, "partitions", cfg->partitions);
    bj_u64(j, "memtable_mb", cfg->memtable_mb);
    bj_u64(j, "cache_mb", cfg->cache_mb);
    bj_u64(j, "seed", cfg->seed);
    bj_u64(j, "backfill_num", cfg->backfill_num);
    bj_u64(j, "lag_gsis", cfg->lag_gsis);
    bj_u64(j, "lag_seconds", cfg->lag_seconds);
    bj_string(j, "gsi_projection", cfg->gsi_keys_only ? "keys" : "all");
    bj_u64(j, "txn_seconds", cfg->txn_seconds);
    bj_string(j, "dir", cfg->dir);
    bj_object_begin(j, "engine_settings");
    for (size_t e = 0; e < cfg->nengines; e++) {
        char buf[1024];
        rp_engine_settings(cfg, e, buf, sizeof buf);
        bj_string(j, cfg->engines[e]->name, buf);
    }
    bj_object_end(j);
    bj_object_end(j);
}

static void rp_json_result(bench_json *j, const bench_config *cfg, const bench_run *runs,
                           size_t e, size_t w, const bench_run *med)
{
    bj_object_begin(j, NULL);
    bj_string(j, "engine", cfg->engines[e]->name);
    bj_string(j, "workload", cfg->workloads[w]->name);
    bj_u64(j, "threads", med->threads);
    rp_json_figures(j, med);
    bj_array_begin(j, "runs");
    for (uint32_t r = 0; r < cfg->repeat; r++) {
        const bench_run *run = &runs[bench_run_index(cfg, r, e, w)];
        if (run->state != BENCH_RUN_OK)
            continue;
        bj_object_begin(j, NULL);
        bj_u64(j, "repeat", r + 1);
        rp_json_figures(j, run);
        bj_object_end(j);
    }
    bj_array_end(j);
    bj_object_end(j);
}

/* Writes the "results", "skipped" and "errors" arrays. */
static void rp_json_runs(bench_json *j, const bench_config *cfg, const bench_run *runs)
{
    bj_array_begin(j, "results");
    for (size_t w = 0; w < cfg->nworkloads; w++)
        for (size_t e = 0; e < cfg->nengines; e++) {
            bench_run med;
            bench_report_median(cfg, runs, e, w, &med);
            if (med.state == BENCH_RUN_OK)
                rp_json_result(j, cfg, runs, e, w, &med);
        }
    bj_array_end(j);
    for (int pass = 0; pass < 2; pass++) {
        bench_run_state want = pass == 0 ? BENCH_RUN_SKIPPED : BENCH_RUN_FAILED;
        bj_array_begin(j, pass == 0 ? "skipped" : "errors");
        for (size_t w = 0; w < cfg->nworkloads; w++)
            for (size_t e = 0; e < cfg->nengines; e++)
                for (uint32_t r = 0; r < cfg->repeat; r++) {
                    const bench_run *run = &runs[bench_run_index(cfg, r, e, w)];
                    if (run->state != want || (pass == 0 && r > 0))
                        continue; /* a skip is the same every repeat: list it once */
                    bj_object_begin(j, NULL);
                    bj_string(j, "engine", cfg->engines[e]->name);
                    bj_string(j, "workload", cfg->workloads[w]->name);
                    if (pass == 1)
                        bj_u64(j, "repeat", r + 1);
                    bj_string(j, pass == 0 ? "reason" : "error", run->error);
                    bj_object_end(j);
                }
        bj_array_end(j);
    }
}

kura_status bench_report_json(const char *path, const bench_config *cfg,
                              const bench_machine *m, const bench_run *runs)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return kura_err(kura_status_from_errno(errno), "%s: %s", path, strerror(errno));
    bench_json j;
    if (!bj_init(&j, f)) {
        fclose(f);
        return kura_err(KURA_E_NOMEM, "%s: out of memory", path);
    }
    bj_object_begin(&j, NULL);
    rp_json_machine(&j, m);
    rp_json_settings(&j, cfg);
    rp_json_runs(&j, cfg, runs);
    bj_object_end(&j);
    bj_free(&j);
    bool write_failed = ferror(f) != 0;
    if (fclose(f) != 0 || write_failed)
        return kura_err(KURA_E_IO, "%s: write failed", path);
    return KURA_OK;
}
