/*
 * run.h - one kura-http-bench run against one server, in order:
 *
 *   1. (spawned server) --starts fresh starts, each on a new data directory: the time from
 *      fork() to the first successful ListTables, and VmRSS after one more request; every
 *      start but the last is stopped at once, the last one serves the workloads
 *   2. CreateTable (an existing table is reused) and DescribeTable until ACTIVE
 *   3. "load": PutItem of items 0..items-1 with --load-connections (count mode); with --gsi
 *      then one more item in a collection of its own, and Queries of the GSI until it shows
 *      it (a GSI is eventually consistent; kura applies a table's writes to its GSIs in
 *      commit order, so the load is then in the GSI too)
 *   4. every workload x every connection count, in the order given (duration or count mode;
 *      each put run writes new items, from index 100,000,000 x (its number))
 *   5. (spawned) --settle seconds of quiet, then idle VmRSS, VmHWM, the data's bytes, and a
 *      SIGTERM stop (timed; the exit must be clean)
 *   6. (spawned, --restart) a start on the same data: time to the first successful request,
 *      VmRSS, and a GetItem of item 0 that must find it
 */
#ifndef KURA_BENCH_HTTP_RUN_H
#define KURA_BENCH_HTTP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/http/dynamo.h"
#include "bench/http/report.h"
#include "kura.h"

#define HB_MAX_CONNS_LIST 8

typedef struct hb_config {
    const char *name;
    const char *url; /* an already running server, or NULL to spawn one */
    int server_argc; /* the server's command template (spawn.h) */
    char *const *server_argv;
    hb_op workloads[8];
    uint32_t nworkloads;
    uint32_t conns[HB_MAX_CONNS_LIST];
    uint32_t nconns;
    uint32_t load_conns;
    uint32_t threads;
    double duration_s, warmup_s;
    uint64_t count; /* > 0: requests per run instead of a duration */
    uint64_t items;
    const char *table;
    bool gsi; /* the table has GSI by_grp (dynamo.h); needed by query_gsi */
    uint32_t starts;
    double settle_s;
    bool restart;
    const char *dir_base;
    const char *log_path;
    uint64_t seed;
    bool quiet;             /* no progress lines on stderr */
    uint32_t round, rounds; /* --round=I/N, for the progress lines; rounds 0: not given */
} hb_config;

/* Runs everything above and fills *rep. A failure to start, set up or stop the server, or a
 * run that could not take place, returns an error with a message (kura_last_error()); a
 * run whose requests failed is reported in rep (errors > 0) and returns KURA_OK. */
kura_status hb_run(const hb_config *cfg, hb_report *rep);

#endif
