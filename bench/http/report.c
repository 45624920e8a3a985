/*
 * report.c - kura-http-bench's text tables and JSON file (layout in report.h), written with
 * kura-bench's JSON writer (bench/json.h).
 */
#include "bench/http/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/json.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double hb_median(double *v, uint32_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double start_median(const hb_report *rep)
{
    double v[HB_MAX_STARTS];
    memcpy(v, rep->start_ms, rep->starts * sizeof *v);
    return hb_median(v, rep->starts);
}

static uint64_t start_rss_median(const hb_report *rep)
{
    double v[HB_MAX_STARTS];
    for (uint32_t i = 0; i < rep->starts; i++)
        v[i] = (double)rep->start_rss[i];
    return (uint64_t)hb_median(v, rep->starts);
}

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

void hb_report_print(const hb_report *rep, FILE *f)
{
    fprintf(f, "\n== %s (%s)%s ==\n", rep->name, rep->command[0] ? rep->command : rep->url,
            rep->gsi ? ", table with GSI " HB_GSI_NAME : "");
    if (rep->spawned && rep->starts) {
        fprintf(f, "start to first successful request: median %.1f ms of %u (", start_median(rep),
                rep->starts);
        for (uint32_t i = 0; i < rep->starts; i++)
            fprintf(f, "%s%.1f", i ? " " : "", rep->start_ms[i]);
        fprintf(f, "); RSS after start + 1 request %.1f MiB\n", mib(start_rss_median(rep)));
    }
    fprintf(f, "%-9s %5s %10s %9s %9s %9s %9s %9s %8s %7s %7s\n", "workload", "conns", "req/s",
            "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors", "cli cpu", "srv cpu");
    for (uint32_t i = 0; i < rep->nrows; i++) {
        const hb_row *w = &rep->rows[i];
        const hb_result *r = &w->r;
        fprintf(f, "%-9s %5u %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %8llu %6.0f%%", w->workload,
                w->connections, r->req_per_sec, r->p50_us, r->p90_us, r->p99_us, r->p999_us,
                r->max_us, (unsigned long long)r->errors,
                r->seconds > 0 ? 100 * r->client_cpu_s / r->seconds : 0);
        if (w->server_cpu_s >= 0 && r->seconds > 0)
            fprintf(f, " %6.0f%%\n", 100 * w->server_cpu_s / r->seconds);
        else
            fprintf(f, " %7s\n", "-");
        if (r->errors) fprintf(f, "         first error: %s\n", r->first_error);
    }
    if (rep->spawned) {
        fprintf(f,
                "idle RSS after the workloads: %.1f MiB (peak %.1f MiB); data %.1f MiB; "
                "stop %.0f ms (%s)\n",
                mib(rep->idle_rss), mib(rep->peak_rss), mib(rep->data_bytes), rep->stop_ms,
                rep->clean_stop ? "clean" : "NOT clean");
        if (rep->restarted)
            fprintf(
                f, "restart on the data: first request after %.1f ms, RSS %.1f MiB, item 0 %s\n",
                rep->restart_ms, mib(rep->restart_rss), rep->restart_found ? "found" : "MISSING");
    }
}

static void json_opt_double(bench_json *j, const char *key, bool have, double v)
{
    if (have)
        bj_double(j, key, v);
    else
        bj_double(j, key, NAN); /* written as null */
}

static void json_rows(bench_json *j, const hb_report *rep)
{
    bj_array_begin(j, "results");
    for (uint32_t i = 0; i < rep->nrows; i++) {
        const hb_row *w = &rep->rows[i];
        const hb_result *r = &w->r;
        bj_object_begin(j, NULL);
        bj_string(j, "workload", w->workload);
        bj_u64(j, "connections", w->connections);
        bj_u64(j, "requests", r->requests);
        bj_u64(j, "errors", r->errors);
        bj_double(j, "seconds", r->seconds);
        bj_double(j, "req_per_sec", r->req_per_sec);
        bj_double(j, "p50_us", r->p50_us);
        bj_double(j, "p90_us", r->p90_us);
        bj_double(j, "p99_us", r->p99_us);
        bj_double(j, "p999_us", r->p999_us);
        bj_double(j, "max_us", r->max_us);
        bj_double(j, "client_cpu_s", r->client_cpu_s);
        json_opt_double(j, "server_cpu_s", w->server_cpu_s >= 0, w->server_cpu_s);
        bj_string(j, "first_error", r->first_error);
        bj_object_end(j);
    }
    bj_array_end(j);
}

bool hb_report_json(const hb_report *rep, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kura-http-bench: %s: %s\n", path, strerror(errno));
        return false;
    }
    bench_json j;
    if (!bj_init(&j, f)) {
        fprintf(stderr, "kura-http-bench: %s: out of memory\n", path);
        fclose(f);
        return false;
    }
    bj_object_begin(&j, NULL);
    bj_string(&j, "name", rep->name);
    bj_string(&j, "command", rep->command);
    bj_string(&j, "url", rep->url);
    bj_u64(&j, "items", rep->items);
    bj_string(&j, "gsi", rep->gsi ? HB_GSI_NAME : "none");
    bj_double(&j, "duration_s", rep->duration_s);
    bj_double(&j, "warmup_s", rep->warmup_s);
    bj_u64(&j, "client_threads", rep->client_threads);
    bool sp = rep->spawned;
    bj_array_begin(&j, "start_ms");
    for (uint32_t i = 0; sp && i < rep->starts; i++)
        bj_double(&j, NULL, rep->start_ms[i]);
    bj_array_end(&j);
    json_opt_double(&j, "start_ms_median", sp && rep->starts,
                    sp && rep->starts ? start_median(rep) : 0);
    json_opt_double(&j, "start_rss_bytes", sp && rep->starts,
                    sp && rep->starts ? (double)start_rss_median(rep) : 0);
    json_opt_double(&j, "idle_rss_bytes", sp, (double)rep->idle_rss);
    json_opt_double(&j, "peak_rss_bytes", sp, (double)rep->peak_rss);
    json_opt_double(&j, "data_bytes", sp, (double)rep->data_bytes);
    json_opt_double(&j, "stop_ms", sp, rep->stop_ms);
    bj_string(&j, "clean_stop", !sp ? "n/a" : rep->clean_stop ? "yes" : "no");
    json_opt_double(&j, "restart_ms", rep->restarted, rep->restart_ms);
    json_opt_double(&j, "restart_rss_bytes", rep->restarted, (double)rep->restart_rss);
    bj_string(&j, "restart_found", !rep->restarted ? "n/a" : rep->restart_found ? "yes" : "no");
    json_rows(&j, rep);
    bj_object_end(&j);
    bj_free(&j);
    fputc('\n', f);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "kura-http-bench: writing %s failed\n", path);
        return false;
    }
    return true;
}
