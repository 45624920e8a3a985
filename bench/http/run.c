/*
 * run.c - the sequence of one kura-http-bench run against one server (see run.h).
 *
 * Setup requests (CreateTable, DescribeTable, the GetItem after a restart) go over one
 * blocking connection each; only the workloads go through the epoll loop (loop.c).
 */
#include "bench/http/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/http/conn.h"
#include "bench/http/loop.h"
#include "bench/http/spawn.h"
#include "bench/http/steps.h"
#include "util/status.h"
#include "util/thread.h"

#define PUT_INDEX_STRIDE 100000000ull /* put run k writes items from k x this on */

/* One request with a JSON body over a new blocking connection. */
static kura_status call_once(const struct sockaddr_in *addr, const hb_reqgen *g, const char *target,
                             const char *body, int *status_out, kbuf *resp)
{
    int fd;
    kura_status s = hb_connect(addr, false, &fd, NULL);
    if (s != KURA_OK) return s;
    kbuf req = KBUF_INIT;
    s = hb_req_http(g, target, body, strlen(body), &req)
            ? hb_call(fd, req.data, req.len, status_out, resp)
            : kura_err(KURA_E_NOMEM, "request");
    kbuf_free(&req);
    close(fd);
    return s;
}

/* Creates the table (or reuses an existing one) and waits until it is ACTIVE. */
static kura_status setup_table(const struct sockaddr_in *addr, const hb_reqgen *g)
{
    char body[1024];
    hb_create_table_body(g, body, sizeof body);
    kbuf resp = KBUF_INIT;
    int status = 0;
    kura_status s = call_once(addr, g, "CreateTable", body, &status, &resp);
    if (s == KURA_OK && status != 200 && !strstr((char *)resp.data, "ResourceInUseException"))
        s = kura_err(KURA_E_IO, "CreateTable: HTTP %d: %.300s", status, (char *)resp.data);
    snprintf(body, sizeof body, "{\"TableName\":\"%s\"}", g->table);
    uint64_t deadline = know_ns() + 30000000000ull;
    while (s == KURA_OK) {
        s = call_once(addr, g, "DescribeTable", body, &status, &resp);
        if (s == KURA_OK && status != 200)
            s = kura_err(KURA_E_IO, "DescribeTable: HTTP %d: %.300s", status, (char *)resp.data);
        if (s != KURA_OK || strstr((char *)resp.data, "\"ACTIVE\"")) break;
        if (know_ns() > deadline)
            s = kura_err(KURA_E_IO, "table %s not ACTIVE after 30 s", g->table);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    kbuf_free(&resp);
    return s;
}

static hb_row *add_row(hb_report *rep, const char *workload, uint32_t conns)
{
    if (rep->nrows == HB_MAX_ROWS) return NULL;
    hb_row *w = &rep->rows[rep->nrows++];
    memset(w, 0, sizeof *w);
    snprintf(w->workload, sizeof w->workload, "%s", workload);
    w->connections = conns;
    return w;
}

static const char *op_name(hb_op op)
{
    return op == HB_OP_PUT         ? "put"
           : op == HB_OP_GET       ? "get"
           : op == HB_OP_QUERY     ? "query"
           : op == HB_OP_UPDATE    ? "update"
           : op == HB_OP_PQ_GET    ? "pq_get"
           : op == HB_OP_PQ_UPDATE ? "pq_update"
                                   : "query_gsi";
}

/* After the load, with a GSI: puts item `items` rounded up to a whole collection (a
 * collection no workload reads), then Queries the GSI until it returns that item. */
static kura_status wait_gsi(const struct sockaddr_in *addr, const hb_reqgen *g, uint64_t items)
{
    uint64_t probe = (items + HB_ITEMS_PER_PK - 1) / HB_ITEMS_PER_PK * HB_ITEMS_PER_PK;
    kbuf req = KBUF_INIT, resp = KBUF_INIT;
    int status = 0, fd = -1;
    kura_status s = hb_connect(addr, false, &fd, NULL);
    if (s == KURA_OK)
        s = hb_req_item(g, HB_OP_PUT, probe, &req) ? hb_call(fd, req.data, req.len, &status, &resp)
                                                   : kura_err(KURA_E_NOMEM, "request");
    if (s == KURA_OK && status != 200)
        s = kura_err(KURA_E_IO, "PutItem: HTTP %d: %.300s", status, (char *)resp.data);
    uint64_t deadline = know_ns() + 60000000000ull;
    while (s == KURA_OK) {
        kbuf_clear(&req);
        s = hb_req_item(g, HB_OP_QUERY_GSI, probe, &req)
                ? hb_call(fd, req.data, req.len, &status, &resp)
                : kura_err(KURA_E_NOMEM, "request");
        if (s == KURA_OK && status != 200)
            s = kura_err(KURA_E_IO, "Query of %s: HTTP %d: %.300s", HB_GSI_NAME, status,
                         (char *)resp.data);
        if (s != KURA_OK || hb_resp_count((char *)resp.data) == 1) break;
        if (know_ns() > deadline)
            s = kura_err(KURA_E_IO, "GSI %s does not show item %llu 60 s after it was written",
                         HB_GSI_NAME, (unsigned long long)probe);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (fd >= 0) close(fd);
    kbuf_free(&req);
    kbuf_free(&resp);
    return s;
}

/* Runs one load and adds its row; server_pid 0 when the server is not ours to watch. */
static kura_status run_row(hb_steps *steps, hb_report *rep, const hb_load *l,
                           const char *workload, pid_t server_pid)
{
    hb_row *w = add_row(rep, workload, l->connections);
    if (!w) return kura_err(KURA_E_INVALID, "more than %d runs", HB_MAX_ROWS);
    hb_steps_begin(steps, "%s, %u connection%s", workload, l->connections,
                   l->connections == 1 ? "" : "s");
    double cpu0 = server_pid ? hb_proc_cpu_seconds(server_pid) : 0;
    kura_status s = hb_load_run(l, &w->r);
    w->server_cpu_s = server_pid ? hb_proc_cpu_seconds(server_pid) - cpu0 : -1;
    return s;
}

static kura_status run_workloads(const hb_config *cfg, hb_steps *steps, hb_report *rep,
                                 const struct sockaddr_in *addr, pid_t server_pid)
{
    hb_reqgen g;
    hb_reqgen_init(&g, addr, cfg->table);
    g.gsi = cfg->gsi;
    kura_status s = setup_table(addr, &g);
    hb_load l = {
        .addr = *addr, .gen = &g, .op = HB_OP_PUT, .threads = cfg->threads, .seed = cfg->seed};
    if (s == KURA_OK && cfg->items > 0) {
        l.connections = cfg->load_conns;
        l.count = cfg->items;
        s = run_row(steps, rep, &l, "load", server_pid);
    }
    if (s == KURA_OK && cfg->gsi)
        s = wait_gsi(addr, &g, cfg->items);
    uint64_t put_runs = 0;
    for (uint32_t i = 0; s == KURA_OK && i < cfg->nworkloads; i++) {
        for (uint32_t c = 0; s == KURA_OK && c < cfg->nconns; c++) {
            l.op = cfg->workloads[i];
            l.connections = cfg->conns[c];
            l.count = cfg->count;
            l.warmup_s = cfg->count ? 0 : cfg->warmup_s;
            l.duration_s = cfg->duration_s;
            l.items = cfg->items;
            l.first_index = l.op == HB_OP_PUT ? ++put_runs * PUT_INDEX_STRIDE : 0;
            l.seed = cfg->seed + i * 31 + c;
            s = run_row(steps, rep, &l, op_name(l.op), server_pid);
        }
    }
    return s;
}

/* The starts of step 1; the last one is left running in *srv. */
static kura_status measure_starts(const hb_config *cfg, hb_steps *steps, hb_report *rep,
                                  hb_server *srv)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; s == KURA_OK && i < rep->starts; i++) {
        hb_steps_begin(steps, "start %u/%u", i + 1, rep->starts);
        memset(srv, 0, sizeof *srv);
        s = hb_server_start(srv, cfg->server_argc, cfg->server_argv, cfg->dir_base, cfg->log_path);
        if (s == KURA_OK) s = hb_server_wait_ready(srv, 60, &rep->start_ms[i]);
        if (s == KURA_OK) {
            double ignored;
            s = hb_server_wait_ready(srv, 60, &ignored); /* the "one request" before RSS */
            rep->start_rss[i] = hb_proc_rss_bytes(srv->pid);
        }
        if (s != KURA_OK || i + 1 < rep->starts) {
            kura_status st = hb_server_stop(srv, true, NULL, NULL);
            if (s == KURA_OK) s = st;
        }
    }
    return s;
}

/* Step 6: a start on the data the workloads left; item 0 must be there. */
static kura_status restart(const hb_config *cfg, hb_steps *steps, hb_report *rep, hb_server *srv)
{
    hb_steps_begin(steps, "restart on the data");
    kura_status s =
        hb_server_start(srv, cfg->server_argc, cfg->server_argv, cfg->dir_base, cfg->log_path);
    if (s == KURA_OK) s = hb_server_wait_ready(srv, 60, &rep->restart_ms);
    if (s == KURA_OK) {
        rep->restart_rss = hb_proc_rss_bytes(srv->pid);
        hb_reqgen g;
        hb_reqgen_init(&g, &srv->addr, cfg->table);
        kbuf req = KBUF_INIT, resp = KBUF_INIT;
        int status = 0, fd;
        s = hb_connect(&srv->addr, false, &fd, NULL);
        if (s == KURA_OK) {
            s = hb_req_item(&g, HB_OP_GET, 0, &req) ? hb_call(fd, req.data, req.len, &status, &resp)
                                                    : kura_err(KURA_E_NOMEM, "request");
            close(fd);
        }
        rep->restart_found =
            s == KURA_OK && status == 200 && hb_resp_ok(HB_OP_GET, (char *)resp.data);
        kbuf_free(&req);
        kbuf_free(&resp);
        rep->restarted = true;
    }
    kura_status st = hb_server_stop(srv, true, NULL, NULL);
    return s == KURA_OK ? st : s;
}

static kura_status run_spawned(const hb_config *cfg, hb_steps *steps, hb_report *rep)
{
    hb_server srv;
    rep->spawned = true;
    rep->starts = cfg->starts;
    kura_status s = measure_starts(cfg, steps, rep, &srv);
    if (s != KURA_OK) return s;
    snprintf(rep->url, sizeof rep->url, "http://127.0.0.1:%u", ntohs(srv.addr.sin_port));
    s = run_workloads(cfg, steps, rep, &srv.addr, srv.pid);
    if (s == KURA_OK)
        hb_steps_begin(steps, "%g s quiet, idle RSS, stop", cfg->settle_s);
    if (s == KURA_OK && cfg->settle_s > 0) {
        struct timespec ts = {(time_t)cfg->settle_s,
                              (long)((cfg->settle_s - (double)(time_t)cfg->settle_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    rep->idle_rss = hb_proc_rss_bytes(srv.pid);
    rep->peak_rss = hb_proc_hwm_bytes(srv.pid);
    kura_status st = hb_server_stop(&srv, false, &rep->stop_ms, &rep->clean_stop);
    rep->data_bytes = hb_dir_bytes(srv.dir);
    if (s == KURA_OK) s = st;
    if (s == KURA_OK && cfg->restart) return restart(cfg, steps, rep, &srv);
    hb_server_stop(&srv, true, NULL, NULL); /* removes the data directory */
    return s;
}

kura_status hb_run(const hb_config *cfg, hb_report *rep)
{
    memset(rep, 0, sizeof *rep);
    snprintf(rep->name, sizeof rep->name, "%s", cfg->name);
    size_t off = 0;
    for (int i = 0; i < cfg->server_argc && off < sizeof rep->command; i++)
        off += (size_t)snprintf(rep->command + off, sizeof rep->command - off, "%s%s", i ? " " : "",
                                cfg->server_argv[i]);
    rep->items = cfg->items;
    rep->gsi = cfg->gsi;
    rep->duration_s = cfg->duration_s;
    rep->warmup_s = cfg->warmup_s;
    rep->client_threads = cfg->threads;
    hb_steps steps;
    hb_steps_plan(&steps, cfg);
    if (!cfg->url) return run_spawned(cfg, &steps, rep);
    snprintf(rep->url, sizeof rep->url, "%s", cfg->url);
    struct sockaddr_in addr;
    kura_status s = hb_parse_url(cfg->url, &addr);
    return s == KURA_OK ? run_workloads(cfg, &steps, rep, &addr, 0) : s;
}
