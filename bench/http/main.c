/*
 * main.c - kura-http-bench's command line: a closed-loop HTTP/1.1 load generator for
 * DynamoDB-compatible endpoints (kura-server, dynalite, DynamoDB Local).
 *
 * It either drives a server that is already running (--url) or starts one itself from the
 * command after "--" (run.h lists what it then also measures: start time, idle RSS, a clean
 * stop, a restart). scripts/bench_http.sh runs it against kura-server and dynalite.
 *
 * Exit status: 0 when every run completed requests and none failed; 1 when a run had errors,
 * completed no request, or the server could not be started, set up or stopped cleanly; 2 for
 * a bad command line.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/http/report.h"
#include "bench/http/run.h"
#include "util/status.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: kura-http-bench [options] --url=http://HOST:PORT\n"
            "       kura-http-bench [options] -- SERVER-COMMAND ({port} and {dir} replaced)\n\n"
            "Closed-loop DynamoDB load over HTTP/1.1 keep-alive connections; reports req/s and\n"
            "latency percentiles, and for a server it starts itself the time from start to the\n"
            "first successful request, RSS after start and when idle, and a restart.\n\n"
            "  --name=NAME            label of the server in the report (default: server)\n"
            "  --workloads=LIST       put,get,query,query_gsi,update,pq_get,pq_update in any\n"
            "                         order (default put,get,query); query_gsi queries the\n"
            "                         GSI by_grp (it turns on --gsi); update is UpdateItem\n"
            "                         SET n = n + :one, pq_get and pq_update ExecuteStatement's\n"
            "                         SELECT * and UPDATE SET n = n + 1 by key\n"
            "  --connections=LIST     connection counts, each workload runs with each\n"
            "                         (default 1,32; at most %d)\n"
            "  --duration=S           measured seconds per run (default 5)\n"
            "  --warmup=S             unmeasured seconds before each run (default 1)\n"
            "  --count=N              N requests per run instead of a duration\n"
            "  --items=N              items loaded before the runs, read by get and query\n"
            "                         (default 20000; 20 items per partition key)\n"
            "  --load-connections=N   connections of the load (default 32)\n"
            "  --threads=N            client threads (epoll loops) (default 1)\n"
            "  --table=NAME           table name (default bench)\n"
            "  --gsi                  the table gets the GSI by_grp (grp HASH, sk RANGE,\n"
            "                         ALL) and every item written an attribute grp: puts\n"
            "                         then maintain a GSI\n"
            "  --starts=N             spawned server: timed fresh starts (default 5)\n"
            "  --settle=S             spawned server: seconds before the idle RSS (default 2)\n"
            "  --restart              spawned server: restart on the data at the end\n"
            "  --dir=DIR              spawned server: where data directories are made\n"
            "                         (default $TMPDIR or /tmp)\n"
            "  --log=FILE             spawned server: its stdout and stderr (default\n"
            "                         DIR/kura-http-bench-server.log)\n"
            "  --json=FILE            also write the results as JSON\n"
            "  --seed=N               random seed (default 301)\n"
            "  --round=I/N            this is round I of N (scripts/bench_http.sh): shown in\n"
            "                         the progress lines\n"
            "  --quiet                no progress lines on stderr\n\n"
            "Progress goes to stderr, a line as each step begins: the server, the round, the\n"
            "step, the time elapsed and left (this run only), and what the step does.\n",
            HB_MAX_CONNS_LIST);
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *stop;
    if (!s || !*s || *s == '-') return false;
    *out = strtoull(s, &stop, 10);
    return *stop == 0;
}

static bool parse_double(const char *s, double *out)
{
    char *stop;
    *out = s && *s ? strtod(s, &stop) : -1;
    return s && *s && *stop == 0 && *out >= 0;
}

static bool parse_workloads(const char *s, hb_config *cfg)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    cfg->nworkloads = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (cfg->nworkloads == 8) return false;
        if (!strcmp(t, "put"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_PUT;
        else if (!strcmp(t, "get"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_GET;
        else if (!strcmp(t, "query"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_QUERY;
        else if (!strcmp(t, "update"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_UPDATE;
        else if (!strcmp(t, "pq_get"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_PQ_GET;
        else if (!strcmp(t, "pq_update"))
            cfg->workloads[cfg->nworkloads++] = HB_OP_PQ_UPDATE;
        else if (!strcmp(t, "query_gsi")) {
            cfg->workloads[cfg->nworkloads++] = HB_OP_QUERY_GSI;
            cfg->gsi = true;
        } else
            return false;
    }
    return cfg->nworkloads > 0;
}

static bool parse_conns(const char *s, hb_config *cfg)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    cfg->nconns = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t n;
        if (cfg->nconns == HB_MAX_CONNS_LIST || !parse_u64(t, &n) || n == 0 || n > 4096)
            return false;
        cfg->conns[cfg->nconns++] = (uint32_t)n;
    }
    return cfg->nconns > 0;
}

/* "I/N" with 1 <= I <= N. */
static bool parse_round(const char *s, hb_config *cfg)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *slash = strchr(buf, '/');
    uint64_t i, n;
    if (!slash) return false;
    *slash = 0;
    if (!parse_u64(buf, &i) || !parse_u64(slash + 1, &n) || i == 0 || i > n || n > 100000)
        return false;
    cfg->round = (uint32_t)i;
    cfg->rounds = (uint32_t)n;
    return true;
}

enum {
    O_NAME = 1,
    O_WORKLOADS,
    O_CONNS,
    O_DURATION,
    O_WARMUP,
    O_COUNT,
    O_ITEMS,
    O_LOADCONNS,
    O_THREADS,
    O_TABLE,
    O_GSI,
    O_STARTS,
    O_SETTLE,
    O_RESTART,
    O_DIR,
    O_LOG,
    O_JSON,
    O_SEED,
    O_QUIET,
    O_ROUND,
    O_URL,
    O_HELP
};

static const struct option long_opts[] = {{"name", 1, 0, O_NAME},
                                          {"workloads", 1, 0, O_WORKLOADS},
                                          {"connections", 1, 0, O_CONNS},
                                          {"duration", 1, 0, O_DURATION},
                                          {"warmup", 1, 0, O_WARMUP},
                                          {"count", 1, 0, O_COUNT},
                                          {"items", 1, 0, O_ITEMS},
                                          {"load-connections", 1, 0, O_LOADCONNS},
                                          {"threads", 1, 0, O_THREADS},
                                          {"table", 1, 0, O_TABLE},
                                          {"gsi", 0, 0, O_GSI},
                                          {"starts", 1, 0, O_STARTS},
                                          {"settle", 1, 0, O_SETTLE},
                                          {"restart", 0, 0, O_RESTART},
                                          {"dir", 1, 0, O_DIR},
                                          {"log", 1, 0, O_LOG},
                                          {"json", 1, 0, O_JSON},
                                          {"seed", 1, 0, O_SEED},
                                          {"quiet", 0, 0, O_QUIET},
                                          {"round", 1, 0, O_ROUND},
                                          {"url", 1, 0, O_URL},
                                          {"help", 0, 0, O_HELP},
                                          {0, 0, 0, 0}};

/* Applies one option; false if its value is bad. */
static bool apply(int opt, const char *v, hb_config *cfg, const char **json)
{
    uint64_t n = 0;
    switch (opt) {
    case O_NAME:
        cfg->name = v;
        return true;
    case O_WORKLOADS:
        return parse_workloads(v, cfg);
    case O_CONNS:
        return parse_conns(v, cfg);
    case O_DURATION:
        return parse_double(v, &cfg->duration_s) && cfg->duration_s > 0;
    case O_WARMUP:
        return parse_double(v, &cfg->warmup_s);
    case O_COUNT:
        return parse_u64(v, &cfg->count);
    case O_ITEMS:
        return parse_u64(v, &cfg->items);
    case O_LOADCONNS:
        cfg->load_conns = parse_u64(v, &n) && n > 0 && n <= 4096 ? (uint32_t)n : 0;
        return cfg->load_conns > 0;
    case O_THREADS:
        cfg->threads = parse_u64(v, &n) && n > 0 && n <= 64 ? (uint32_t)n : 0;
        return cfg->threads > 0;
    case O_TABLE:
        cfg->table = v;
        return *v != 0;
    case O_GSI:
        cfg->gsi = true;
        return true;
    case O_STARTS:
        cfg->starts = parse_u64(v, &n) && n > 0 && n <= HB_MAX_STARTS ? (uint32_t)n : 0;
        return cfg->starts > 0;
    case O_SETTLE:
        return parse_double(v, &cfg->settle_s);
    case O_RESTART:
        cfg->restart = true;
        return true;
    case O_DIR:
        cfg->dir_base = v;
        return *v != 0;
    case O_LOG:
        cfg->log_path = v;
        return *v != 0;
    case O_JSON:
        *json = v;
        return true;
    case O_SEED:
        return parse_u64(v, &cfg->seed);
    case O_QUIET:
        cfg->quiet = true;
        return true;
    case O_ROUND:
        return parse_round(v, cfg);
    case O_URL:
        cfg->url = v;
        return true;
    default:
        return false;
    }
}

int main(int argc, char **argv)
{
    hb_config cfg = {.name = "server",
                     .conns = {1, 32},
                     .nconns = 2,
                     .load_conns = 32,
                     .threads = 1,
                     .duration_s = 5,
                     .warmup_s = 1,
                     .items = 20000,
                     .table = "bench",
                     .starts = 5,
                     .settle_s = 2,
                     .seed = 301,
                     .workloads = {HB_OP_PUT, HB_OP_GET, HB_OP_QUERY},
                     .nworkloads = 3};
    const char *json = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "+h", long_opts, NULL)) != -1) {
        if (opt == 'h' || opt == O_HELP) {
            usage(stdout);
            return 0;
        }
        if (!apply(opt, optarg, &cfg, &json)) {
            if (opt != '?')
                fprintf(stderr, "kura-http-bench: bad value '%s' for --%s\n", optarg ? optarg : "",
                        long_opts[opt - 1].name);
            usage(stderr);
            return 2;
        }
    }
    cfg.server_argc = argc - optind;
    cfg.server_argv = argv + optind;
    if ((cfg.url != NULL) == (cfg.server_argc > 0)) {
        fprintf(stderr, "kura-http-bench: give either --url or a server command after --\n");
        usage(stderr);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    if (!cfg.dir_base) cfg.dir_base = tmp && *tmp ? tmp : "/tmp";
    char log[4096];
    if (!cfg.log_path) {
        snprintf(log, sizeof log, "%s/kura-http-bench-server.log", cfg.dir_base);
        cfg.log_path = log;
    }
    hb_report *rep = malloc(sizeof *rep);
    if (!rep) return 1;
    kura_status s = hb_run(&cfg, rep);
    hb_report_print(rep, stdout);
    int rc = 0;
    if (s != KURA_OK) {
        fprintf(stderr, "kura-http-bench: %s: %s\n", cfg.name, kura_last_error());
        rc = 1;
    }
    for (uint32_t i = 0; i < rep->nrows; i++)
        if (rep->rows[i].r.errors || rep->rows[i].r.requests == 0) rc = 1;
    if (rep->spawned && s == KURA_OK && !rep->clean_stop) rc = 1;
    if (rep->restarted && !rep->restart_found) rc = 1;
    if (json && !hb_report_json(rep, json)) rc = 1;
    free(rep);
    return rc;
}
