/*
 * loop.h - the closed-loop load of kura-http-bench: N keep-alive connections, each with one
 * request in flight at a time (a new request is sent as soon as the previous response has
 * been read), driven by epoll on a few client threads.
 *
 * A run lasts either a duration (a warm-up whose requests are not measured, then the
 * measured window; requests still in flight at its end are drained, not counted) or a count
 * of requests (all measured). Latency is from the first byte sent to the last byte of the
 * response read, into bench/hist.h histograms. Every response must be HTTP 200 with the body
 * the workload expects (dynamo.h hb_resp_ok); anything else is counted as an error, and a
 * connection the server closes is reopened.
 */
#ifndef KURA_BENCH_HTTP_LOOP_H
#define KURA_BENCH_HTTP_LOOP_H

#include <netinet/in.h>
#include <stdint.h>

#include "bench/http/dynamo.h"
#include "kura.h"

typedef struct hb_load {
    struct sockaddr_in addr;
    const hb_reqgen *gen; /* borrowed for the run */
    hb_op op;
    uint32_t connections;
    uint32_t threads;     /* client threads (epoll loops); at most `connections` are used */
    double warmup_s;      /* duration mode: seconds not measured at the start */
    double duration_s;    /* duration mode: the measured window */
    uint64_t count;       /* > 0: count mode, exactly this many requests, all measured */
    uint64_t first_index; /* HB_OP_PUT: items first_index, first_index + 1, ... in order */
    uint64_t items;       /* HB_OP_GET / HB_OP_QUERY: random items (partitions) below this */
    uint64_t seed;
} hb_load;

typedef struct hb_result {
    uint64_t requests; /* successful requests in the measured window */
    uint64_t errors;   /* non-200, unexpected body, lost connection (whole run) */
    double seconds;    /* the measured window */
    double req_per_sec;
    double p50_us, p90_us, p99_us, p999_us, max_us;
    double client_cpu_s; /* CPU time (user + system) this process used during the run */
    char first_error[256];
} hb_result;

/* Runs the load. Returns KURA_OK when the run itself could take place (errors of single
 * requests are counted in res_out->errors); KURA_E_IO if the connections could not be
 * opened, KURA_E_NOMEM. *res_out is set on KURA_OK. */
kura_status hb_load_run(const hb_load *l, hb_result *res_out);

#endif
