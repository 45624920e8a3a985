/*
 * loop.c - the closed-loop HTTP load (see loop.h).
 *
 * Connections are opened by the caller's thread before the clock starts and dealt to the
 * client threads round-robin; each thread runs its own epoll loop over its connections and
 * keeps its own histogram and counters, merged at the end, so the threads share nothing but
 * two atomic counters (the next item to put, the requests issued in count mode). A request
 * is written with one send() (a partial write waits for EPOLLOUT); responses are read into a
 * per-connection buffer and framed by Content-Length.
 */
#include "bench/http/loop.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/hist.h"
#include "bench/http/conn.h"
#include "bench/keys.h"
#include "util/status.h"
#include "util/thread.h"

#define DRAIN_NS 10000000000ull /* in-flight requests get 10 s to finish after the window */

typedef struct lconn {
    int fd;
    kbuf out;       /* the request being sent */
    size_t out_off; /* bytes of it sent */
    kbuf in;        /* response bytes read */
    uint64_t t_start;
    bool busy; /* a request is in flight */
} lconn;

typedef struct shared {
    const hb_load *l;
    uint64_t t_begin, t_measure, t_end; /* t_end: UINT64_MAX in count mode */
    atomic_uint_fast64_t next_index;    /* puts */
    atomic_uint_fast64_t issued;        /* count mode */
    lconn *conns;
} shared;

typedef struct worker {
    shared *sh;
    uint32_t id;
    int ep;
    uint32_t busy; /* connections of this worker with a request in flight */
    uint64_t ok, errors;
    uint64_t t_last; /* completion time of the last measured request */
    bench_rng rng;
    bench_hist hist;
    char first_error[256];
} worker;

static void note_error(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Counts a failed request; the first failure's description is kept for the report. */
static void note_error(worker *w, const char *fmt, ...)
{
    w->errors++;
    if (w->first_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first_error, sizeof w->first_error, fmt, ap);
    va_end(ap);
}

static bool may_issue(worker *w, uint64_t now)
{
    const hb_load *l = w->sh->l;
    if (l->count) return atomic_fetch_add(&w->sh->issued, 1) < l->count;
    return now < w->sh->t_end;
}

static uint64_t pick_index(worker *w)
{
    const hb_load *l = w->sh->l;
    switch (l->op) {
    case HB_OP_PUT:
        return atomic_fetch_add(&w->sh->next_index, 1);
    case HB_OP_QUERY:
    case HB_OP_QUERY_GSI:
        return bench_rng_below(&w->rng, l->items / HB_ITEMS_PER_PK) * HB_ITEMS_PER_PK;
    default:
        return bench_rng_below(&w->rng, l->items);
    }
}

/* Sends what is left of c's request; waits for EPOLLOUT if the socket is full. */
static bool flush_request(worker *w, lconn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
            epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev);
            return true;
        }
        if (n <= 0) return false;
        c->out_off += (size_t)n;
    }
    return true;
}

/* Reopens a connection the server closed or broke. */
static void reopen(worker *w, lconn *c)
{
    epoll_ctl(w->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    kbuf_clear(&c->in);
    if (c->busy) {
        c->busy = false;
        w->busy--;
    }
    if (hb_connect(&w->sh->l->addr, true, &c->fd, NULL) != KURA_OK) {
        note_error(w, "reconnect failed: %s", kura_last_error());
        c->fd = -1;
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(w->ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Starts the next request on c if the run wants one. */
static void issue(worker *w, lconn *c, uint64_t now)
{
    if (c->fd < 0 || !may_issue(w, now)) return;
    kbuf_clear(&c->out);
    if (!hb_req_item(w->sh->l->gen, w->sh->l->op, pick_index(w), &c->out)) {
        note_error(w, "request build failed (out of memory)");
        return;
    }
    c->out_off = 0;
    c->busy = true;
    w->busy++;
    c->t_start = know_ns();
    if (!flush_request(w, c)) {
        note_error(w, "send failed: %s", strerror(errno));
        reopen(w, c);
    }
}

/* A complete response r is at the start of c->in. */
static void complete(worker *w, lconn *c, const hb_resp *r, uint64_t now)
{
    const shared *sh = w->sh;
    char *body = (char *)c->in.data + r->head_len;
    char saved = body[r->body_len];
    body[r->body_len] = 0; /* in.cap > len: room was reserved before the read */
    bool good = r->status == 200 && hb_resp_ok(sh->l->op, body);
    if (!good) note_error(w, "HTTP %d: %.200s", r->status, body);
    body[r->body_len] = saved;
    c->busy = false;
    w->busy--;
    size_t used = r->head_len + r->body_len;
    memmove(c->in.data, c->in.data + used, c->in.len - used);
    c->in.len -= used;
    if (good && (sh->l->count || (c->t_start >= sh->t_measure && now <= sh->t_end))) {
        bench_hist_add(&w->hist, now - c->t_start);
        w->ok++;
        w->t_last = now;
    }
    if (r->close) reopen(w, c);
}

static void on_readable(worker *w, lconn *c)
{
    for (;;) {
        if (!kbuf_reserve(&c->in, 16384 + 1)) {
            note_error(w, "out of memory for a response");
            reopen(w, c);
            return;
        }
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            note_error(w, "connection lost: %s", n < 0 ? strerror(errno) : "closed by the server");
            reopen(w, c);
            return;
        }
        c->in.len += (size_t)n;
        hb_resp r;
        hb_parse_result pr = hb_resp_parse((const char *)c->in.data, c->in.len, &r);
        if (pr == HB_PARSE_MALFORMED) {
            note_error(w, "malformed response: %.200s", (const char *)c->in.data);
            reopen(w, c);
            return;
        }
        if (pr == HB_PARSE_DONE) {
            uint64_t now = know_ns();
            complete(w, c, &r, now);
            issue(w, c, now);
            return;
        }
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    uint32_t nthreads = sh->l->threads;
    for (uint32_t i = w->id; i < sh->l->connections; i += nthreads) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &sh->conns[i]};
        epoll_ctl(w->ep, EPOLL_CTL_ADD, sh->conns[i].fd, &ev);
        issue(w, &sh->conns[i], know_ns());
    }
    struct epoll_event evs[64];
    while (w->busy > 0) {
        int n = epoll_wait(w->ep, evs, 64, 5);
        for (int i = 0; i < n; i++) {
            lconn *c = evs[i].data.ptr;
            if (evs[i].events & EPOLLOUT) {
                struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev);
                if (!flush_request(w, c)) {
                    note_error(w, "send failed: %s", strerror(errno));
                    reopen(w, c);
                    continue;
                }
            }
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(w, c);
        }
        if (!sh->l->count && know_ns() > sh->t_end + DRAIN_NS)
            break; /* requests still in flight are abandoned (their sockets are closed) */
    }
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void merge_results(const shared *sh, worker *ws, uint32_t nthreads, hb_result *res)
{
    bench_hist *h = &ws[0].hist;
    uint64_t t_last = 0;
    memset(res, 0, sizeof *res);
    for (uint32_t t = 0; t < nthreads; t++) {
        if (t > 0) bench_hist_merge(h, &ws[t].hist);
        res->requests += ws[t].ok;
        res->errors += ws[t].errors;
        if (ws[t].t_last > t_last) t_last = ws[t].t_last;
        if (!res->first_error[0] && ws[t].first_error[0])
            snprintf(res->first_error, sizeof res->first_error, "%s", ws[t].first_error);
    }
    if (sh->l->count)
        res->seconds = t_last > sh->t_begin ? (double)(t_last - sh->t_begin) / 1e9 : 0;
    else
        res->seconds = sh->l->duration_s;
    res->req_per_sec = res->seconds > 0 ? (double)res->requests / res->seconds : 0;
    res->p50_us = bench_hist_percentile_us(h, 50);
    res->p90_us = bench_hist_percentile_us(h, 90);
    res->p99_us = bench_hist_percentile_us(h, 99);
    res->p999_us = bench_hist_percentile_us(h, 99.9);
    res->max_us = h->count ? (double)h->max_ns / 1000.0 : 0;
}

kura_status hb_load_run(const hb_load *l, hb_result *res_out)
{
    hb_load lc = *l;
    if (lc.threads == 0 || lc.threads > lc.connections) lc.threads = lc.connections;
    bool query = lc.op == HB_OP_QUERY || lc.op == HB_OP_QUERY_GSI;
    bool keyed = lc.op == HB_OP_GET || lc.op == HB_OP_UPDATE || lc.op == HB_OP_PQ_GET ||
                 lc.op == HB_OP_PQ_UPDATE;
    if ((keyed && lc.items == 0) || (query && lc.items < HB_ITEMS_PER_PK))
        return kura_err(KURA_E_INVALID, "%s needs --items >= %d", hb_op_target(lc.op),
                        query ? HB_ITEMS_PER_PK : 1);
    shared sh = {.l = &lc};
    atomic_init(&sh.next_index, lc.first_index);
    atomic_init(&sh.issued, 0);
    sh.conns = calloc(lc.connections, sizeof *sh.conns);
    worker *ws = calloc(lc.threads, sizeof *ws);
    kthread *tids = calloc(lc.threads, sizeof *tids);
    kura_status s = sh.conns && ws && tids ? KURA_OK : kura_err(KURA_E_NOMEM, "connections");
    for (uint32_t i = 0; sh.conns && i < lc.connections; i++)
        sh.conns[i].fd = -1;
    for (uint32_t i = 0; s == KURA_OK && i < lc.connections; i++)
        s = hb_connect(&lc.addr, true, &sh.conns[i].fd, NULL);
    uint32_t started = 0;
    double cpu0 = cpu_seconds();
    sh.t_begin = know_ns();
    sh.t_measure = sh.t_begin + (uint64_t)(lc.warmup_s * 1e9);
    sh.t_end = lc.count ? UINT64_MAX : sh.t_measure + (uint64_t)(lc.duration_s * 1e9);
    for (; s == KURA_OK && started < lc.threads; started++) {
        worker *w = &ws[started];
        w->sh = &sh;
        w->id = started;
        w->ep = epoll_create1(EPOLL_CLOEXEC);
        bench_rng_seed(&w->rng, bench_seed_mix(lc.seed, lc.op, started));
        bench_hist_init(&w->hist);
        if (w->ep < 0 || !kthread_start(&tids[started], worker_main, w))
            s = kura_err(KURA_E_IO, "client thread %u could not start", started);
    }
    for (uint32_t t = 0; t < started; t++)
        kthread_join(tids[t]);
    if (s == KURA_OK) {
        merge_results(&sh, ws, lc.threads, res_out);
        res_out->client_cpu_s = cpu_seconds() - cpu0;
    }
    for (uint32_t t = 0; ws && t < lc.threads; t++)
        if (ws[t].ep > 0) close(ws[t].ep);
    for (uint32_t i = 0; sh.conns && i < lc.connections; i++) {
        if (sh.conns[i].fd >= 0) close(sh.conns[i].fd);
        kbuf_free(&sh.conns[i].out);
        kbuf_free(&sh.conns[i].in);
    }
    free(sh.conns);
    free(ws);
    free(tids);
    return s;
}
