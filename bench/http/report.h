/*
 * report.h - what one kura-http-bench run measured about one server, and how it is written:
 * a table on stdout and a JSON file.
 *
 * JSON layout (one server per file; scripts/bench_http.sh puts several side by side):
 *   {"name", "command", "url", "items", "gsi" ("by_grp" or "none"), "duration_s", "warmup_s",
 *    "client_threads",
 *    "start_ms": [..], "start_ms_median", "start_rss_bytes" (median after start + one request),
 *    "idle_rss_bytes" (after the workloads and --settle seconds), "peak_rss_bytes" (VmHWM),
 *    "data_bytes", "stop_ms", "clean_stop", "restart_ms", "restart_rss_bytes", "restart_found",
 *    "results": [{"workload", "connections", "requests", "errors", "seconds", "req_per_sec",
 *                 "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "client_cpu_s",
 *                 "server_cpu_s", "first_error"}]}
 * Figures that were not measured (no spawned server, no --restart) are null.
 */
#ifndef KURA_BENCH_HTTP_REPORT_H
#define KURA_BENCH_HTTP_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/http/loop.h"

#define HB_MAX_STARTS 32
#define HB_MAX_ROWS 64

typedef struct hb_row {
    char workload[16]; /* "load", "put", "get", "query", "query_gsi" */
    uint32_t connections;
    hb_result r;
    double server_cpu_s; /* -1: not known (no spawned server) */
} hb_row;

typedef struct hb_report {
    char name[64];
    char command[2048]; /* the server's command template, or "" with --url */
    char url[64];
    uint64_t items;
    bool gsi; /* the table had GSI by_grp (dynamo.h) */
    double duration_s, warmup_s;
    uint32_t client_threads;
    bool spawned; /* the figures below exist */
    uint32_t starts;
    double start_ms[HB_MAX_STARTS];
    uint64_t start_rss[HB_MAX_STARTS];
    uint64_t idle_rss, peak_rss, data_bytes;
    double stop_ms;
    bool clean_stop;
    bool restarted;
    double restart_ms;
    uint64_t restart_rss;
    bool restart_found; /* item 0 was read back after the restart */
    uint32_t nrows;
    hb_row rows[HB_MAX_ROWS];
} hb_report;

/* The median of v[0..n) (n > 0; v is reordered). */
double hb_median(double *v, uint32_t n);

/* Prints the report as text tables. */
void hb_report_print(const hb_report *rep, FILE *f);

/* Writes the JSON to path. false (with the reason on stderr) if it cannot be written. */
bool hb_report_json(const hb_report *rep, const char *path);

#endif
