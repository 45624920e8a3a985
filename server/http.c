/*
 * http.c - This file contains kura-server's HTTP side: the listening socket and its acceptor
 * thread, one libmicrohttpd daemon per serving thread (each on poll(2), keep-alive, a share of
 * the connection limit and an idle timeout), and the handler that turns `POST /` +
 * X-Amz-Target into kura_execute().
 *
 * Why an acceptor of our own: libmicrohttpd's thread pool lets every pool thread accept from
 * the one listening socket, so whichever thread wakes first takes the connections that
 * arrive together, and 32 connections could land 20/4/4/4 on 4 threads: the busiest thread
 * then runs flat out while the others idle. The acceptor hands connection i to daemon i mod N
 * (MHD_add_connection), so each thread serves its equal share (GetItem at 32 connections on 2
 * cores: median 70.6k req/s against 65.0k, and no more runs at ~52k; docs/server.md).
 *
 * poll, not epoll: with libmicrohttpd
 * 0.9.75's epoll mode a client that sends part of a body and then half-closes its side was
 * never noticed (the connection waited for its timeout and held up shutdown; the conformance
 * test test_half_closed_request_is_dropped); with poll it is closed at once, and GetItem at 32
 * connections is as fast (p99 1.5 ms measured with kura-http-bench).
 *
 * libmicrohttpd calls the handler several times per request: once when the headers are in,
 * once per piece of body, once more when the body is complete. So:
 *   headers   the method, the declared length (> 16 MB refused before a byte of body is read),
 *             the content type, and with --auth everything of SigV4 that needs no body;
 *             a request refused here is answered at once, its body never read
 *   body      appended to one buffer, sized from Content-Length when there is one; a chunked
 *             body that grows past 16 MB is dropped from there on and refused when it ends
 *             (libmicrohttpd accepts no response while a body is arriving)
 *   complete  the signature (with --auth), then kura_execute() on the buffer; its output is
 *             the response body, handed over without a copy
 * The requests in flight are counted (first call .. completion callback) so a shutdown can
 * wait for them.
 *
 * Durable writes (--sync): a write returns only after its WAL fdatasync, and the WAL's group
 * commit makes one fdatasync for all the writes waiting at that moment; so the more writes can
 * wait at once, the more share a sync. Run on a serving thread, a write would hold its thread
 * (and every other connection of that thread) for the whole sync, and the threads would have to
 * be as large as the writes we want in one group, which costs the reads context switches. So
 * with cfg->sync_writers > 0 a write operation is handed to a pool of that many writer threads
 * instead: its connection is suspended (MHD_suspend_connection), a writer runs kura_execute()
 * and resumes it, and libmicrohttpd calls the handler once more, which answers with the
 * writer's result. Reads and every operation under --relaxed run on the serving threads.
 *
 * Where DynamoDB and DynamoDB Local answer differently, kura-server answers:
 *   - a method other than POST (GET / ...): 400 MissingAuthenticationToken "Request must
 *     contain either a valid (registered) AWS access key ID or X.509 certificate.", DynamoDB
 *     Local's answer to `curl http://host:port/` (DynamoDB itself answers GET with a 200
 *     health line); the path of a POST is not looked at, as neither does;
 *   - a content type other than application/x-amz-json-1.0, application/json or none: 404
 *     UnknownOperationException (DynamoDB's status; DynamoDB Local accepts anything);
 *   - no or another X-Amz-Target: 400 UnknownOperationException, after the JSON check, as
 *     DynamoDB (DynamoDB Local: 500 InternalFailure);
 *   - a body over 16 MB: 413 RequestEntityTooLarge, the connection closed;
 *   - every error's __type has kura_execute()'s prefix com.amazonaws.dynamodb.v20120810#
 *     (DynamoDB Local's too; DynamoDB uses com.amazon.coral.service# for the protocol and
 *     signature errors; SDKs read only the part after '#');
 *   - with --auth the signature is checked before the body is parsed (DynamoDB parses
 *     first), so nothing of an unauthenticated request is interpreted;
 *   - no CORS headers: a web page cannot call the server from a browser.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/reqid.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/pool.h"
#include "util/status.h"

#define TARGET_PREFIX "DynamoDB_20120810."

typedef struct srv_req srv_req;

/* The writers of --sync (see above): a thread pool that runs the suspended requests in order.
 * Once it is stopping it refuses new ones, which then run in place. */
typedef struct srv_writers {
    kpool *pool;          /* NULL: no writers (--relaxed) */
    atomic_int suspended; /* connections suspended and not yet answered */
} srv_writers;

struct srv_http {
    struct MHD_Daemon **daemons; /* one per serving thread */
    unsigned ndaemons;
    int listen_fd;
    pthread_t acceptor;
    kura_db *db;
    const srv_config *cfg;
    uint16_t port;
    atomic_int inflight;  /* requests between their first call and their completion */
    atomic_uint_fast64_t started; /* requests ever started (beside inflight: one cache line) */
    atomic_bool stopping; /* set by srv_http_stop(): answers close their connection */
    srv_writers writers;
};

/* One request's state, from its first handler call to the completion callback. */
struct srv_req {
    kbuf body;
    bool answered;  /* a response is queued; the rest of the body is discarded */
    bool authed;    /* srv_auth_precheck() ran (its state must be freed) */
    bool too_large; /* the body outgrew SRV_MAX_BODY_BYTES: dropped, answered 413 */
    bool nomem;     /* the body could not be stored: answered 500 */
    uint64_t discarded;
    srv_auth_req auth;
    char id[SRV_REQID_LEN + 1];
    /* a write handed to the writers: the operation, then its result */
    srv_http *h;
    struct MHD_Connection *conn;
    const char *op;
    atomic_bool ran;   /* the writer has run it (set before the connection is resumed) */
    bool queued;
    bool suspended;   /* counted in writers.suspended */
    const char *type; /* kura_execute_error_type() of the thread that ran it (a static string) */
    char *out;
    size_t out_len;
    char *log_msg;    /* kura_last_error() of an InternalServerError, for the log line */
};

/* Body bytes dropped after the limit before the connection is closed without an answer. */
#define SRV_MAX_DISCARD_BYTES (64ull * 1024 * 1024)

/* The most a body buffer is sized to in advance from Content-Length. */
#define SRV_PRESIZE_MAX (1u << 20)

/* libmicrohttpd's per-connection memory (request line, headers, read buffer), cleared after
 * every request: its default of 32 KiB made that memset a tenth of a GetItem's server time. */
#define SRV_CONNECTION_MEMORY (16u * 1024)

static const char MSG_TOO_LARGE[] = "Request body must be at most 16777216 bytes";
static const char MSG_NO_TOKEN[] =
    "Request must contain either a valid (registered) AWS access key ID or X.509 certificate.";

/* True if the request announces a body (so answering early leaves bytes unread). */
static bool has_body(struct MHD_Connection *conn, unsigned long long *len_out)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    *len_out = cl ? strtoull(cl, NULL, 10) : 0;
    return *len_out > 0 || te != NULL;
}

/* application/x-amz-json-1.0, application/json (parameters ignored), or none at all. */
static bool content_type_ok(struct MHD_Connection *conn)
{
    const char *ct =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ct) return true;
    while (*ct == ' ')
        ct++;
    size_t n = strcspn(ct, "; ");
    return n == 0 || (n == 26 && strncasecmp(ct, "application/x-amz-json-1.0", n) == 0) ||
           (n == 16 && strncasecmp(ct, "application/json", n) == 0);
}

static enum MHD_Result answer_error(srv_http *h, struct MHD_Connection *conn, srv_req *r,
                                    unsigned status, const char *type, const char *message,
                                    bool close)
{
    r->answered = true;
    return srv_respond_error(conn, status, type, message, r->id,
                             close || atomic_load(&h->stopping));
}

/* A refused signature is a 400; running out of memory while checking it a 500. */
static unsigned auth_status(const sigv4_error *err)
{
    return strcmp(err->type, "InternalServerError") == 0 ? MHD_HTTP_INTERNAL_SERVER_ERROR
                                                         : MHD_HTTP_BAD_REQUEST;
}

static enum MHD_Result count_content_length(void *cls, enum MHD_ValueKind kind,
                                           const char *key, const char *value)
{
    (void)kind;
    (void)value;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        (*(unsigned *)cls)++;
    return MHD_YES;
}

/* RFC 9112 section 6.3: several Content-Length headers make the framing ambiguous (the way
 * requests are smuggled past proxies), so such a request is refused and its connection
 * closed. */
static bool content_length_ambiguous(struct MHD_Connection *conn)
{
    unsigned n = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_content_length, &n);
    return n > 1;
}

/* The first call of a request: everything that can be decided from the headers. */
static enum MHD_Result on_headers(srv_http *h, struct MHD_Connection *conn, srv_req *r,
                                  const char *url, const char *method)
{
    unsigned long long len;
    bool body = has_body(conn, &len);
    if (content_length_ambiguous(conn))
        return answer_error(h, conn, r, MHD_HTTP_BAD_REQUEST, "SerializationException",
                            "Multiple Content-Length headers", true);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return answer_error(h, conn, r, MHD_HTTP_BAD_REQUEST, "MissingAuthenticationToken",
                            MSG_NO_TOKEN, body);
    if (len > SRV_MAX_BODY_BYTES)
        return answer_error(h, conn, r, MHD_HTTP_CONTENT_TOO_LARGE, "RequestEntityTooLarge",
                            MSG_TOO_LARGE, true);
    if (!content_type_ok(conn))
        return answer_error(h, conn, r, MHD_HTTP_NOT_FOUND, "UnknownOperationException",
                            "An unknown operation was requested.", body);
    if (h->cfg->auth_key) {
        sigv4_error err;
        r->authed = true;
        if (!srv_auth_precheck(conn, method, url, h->cfg, &r->auth, &err))
            return answer_error(h, conn, r, auth_status(&err), err.type, err.message, body);
    }
    /* sized for the whole body up to 1 MiB: a client announcing 16 MB and sending nothing
     * holds no more than that until its connection times out */
    if (len > 0 && !kbuf_reserve(&r->body, (size_t)(len < SRV_PRESIZE_MAX ? len : SRV_PRESIZE_MAX)))
        return answer_error(h, conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError",
                            "out of memory", true);
    return MHD_YES;
}

/* A piece of body. libmicrohttpd takes no response while a body is arriving, so a chunked
 * body that outgrows the limit is dropped from then on and answered when it ends; one that
 * goes on past SRV_MAX_DISCARD_BYTES more has its connection closed. */
static enum MHD_Result on_data(srv_req *r, const char *data, size_t n)
{
    if (r->too_large || r->nomem) {
        r->discarded += n;
        return r->discarded > SRV_MAX_DISCARD_BYTES ? MHD_NO : MHD_YES;
    }
    if (n > SRV_MAX_BODY_BYTES - r->body.len) {
        kbuf_free(&r->body);
        r->too_large = true;
    } else if (!kbuf_append(&r->body, data, n)) {
        kbuf_free(&r->body);
        r->nomem = true;
    }
    return MHD_YES;
}

static void free_output(void *p)
{
    kura_free(p);
}

/* Runs the request's operation (on a serving thread, or on a writer for --sync writes). */
static void execute(srv_http *h, srv_req *r, const char *op)
{
    const char *body = r->body.data ? (const char *)r->body.data : "";
    r->op = op;
    kura_status s = kura_execute(h->db, op, body, r->body.len, &r->out, &r->out_len);
    r->type = s == KURA_OK ? NULL : kura_execute_error_type();
    if (r->type && strcmp(r->type, "InternalServerError") == 0)
        r->log_msg = strdup(kura_last_error());
}

/* Queues the response of an executed request. */
static enum MHD_Result answer(srv_http *h, struct MHD_Connection *conn, srv_req *r)
{
    if (!r->out) {
        srv_log_error(r->id, r->op, "InternalServerError", "out of memory");
        return answer_error(h, conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError",
                            "out of memory", false);
    }
    unsigned status = MHD_HTTP_OK;
    if (r->type && strcmp(r->type, "InternalServerError") == 0) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        srv_log_error(r->id, r->op, r->type, r->log_msg ? r->log_msg : "internal error");
    } else if (r->type) {
        status = MHD_HTTP_BAD_REQUEST;
    }
    r->answered = true;
    char *out = r->out;
    r->out = NULL; /* libmicrohttpd frees it with the response */
    return srv_respond(conn, status, out, r->out_len, free_output, r->id,
                       atomic_load(&h->stopping));
}

/* The operations that write (and so, under --sync, wait for a WAL sync). */
static bool is_write(const char *op)
{
    static const char *const writes[] = {"PutItem",     "UpdateItem",  "DeleteItem",
                                         "BatchWriteItem", "CreateTable", "DeleteTable",
                                         "UpdateTable"};
    for (size_t i = 0; op && i < sizeof writes / sizeof *writes; i++)
        if (strcmp(op, writes[i]) == 0) return true;
    return false;
}

/* A writer's job: runs the write, then resumes its connection, whose handler is called again
 * and answers (on_request). */
static void write_job(void *arg)
{
    srv_req *r = arg;
    execute(r->h, r, r->op);
    atomic_store(&r->ran, true);
    MHD_resume_connection(r->conn);
}

static enum MHD_Result hand_to_writers(srv_http *h, struct MHD_Connection *conn, srv_req *r,
                                       const char *op)
{
    r->h = h;
    r->conn = conn;
    r->op = op;
    r->queued = true;
    r->suspended = true;
    atomic_fetch_add(&h->writers.suspended, 1);
    /* suspended before it is queued, so that its resumption always comes after */
    MHD_suspend_connection(conn);
    if (!kpool_submit(h->writers.pool, write_job, r))
        write_job(r); /* shutting down (or out of memory): run here, answered all the same */
    return MHD_YES;
}

static kura_status writers_start(srv_http *h, unsigned n)
{
    atomic_init(&h->writers.suspended, 0);
    if (n && !(h->writers.pool = kpool_new(n)))
        return kura_err(KURA_E_IO, "cannot start the writer threads");
    return KURA_OK;
}

/* Lets the writers run what is queued, then joins them; later writes run in place. */
static void writers_stop(srv_http *h)
{
    if (h->writers.pool) kpool_stop(h->writers.pool);
}

/* After the daemon has stopped (nothing can reach the writers any more). */
static void writers_free(srv_http *h)
{
    kpool_free(h->writers.pool);
}

/* The request no longer counts as suspended (answered, or its connection closed). */
static void unsuspend(srv_http *h, srv_req *r)
{
    if (!r->suspended) return;
    r->suspended = false;
    atomic_fetch_sub(&h->writers.suspended, 1);
}

/* The body is complete: the signature, then the operation. */
static enum MHD_Result on_complete(srv_http *h, struct MHD_Connection *conn, srv_req *r)
{
    if (r->too_large)
        return answer_error(h, conn, r, MHD_HTTP_CONTENT_TOO_LARGE, "RequestEntityTooLarge",
                            MSG_TOO_LARGE, true);
    if (r->nomem)
        return answer_error(h, conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError",
                            "out of memory", true);
    const char *body = r->body.data ? (const char *)r->body.data : "";
    if (h->cfg->auth_key) {
        sigv4_error err;
        if (!srv_auth_verify(&r->auth, body, r->body.len, h->cfg, &err))
            return answer_error(h, conn, r, auth_status(&err), err.type, err.message, false);
    }
    const char *target = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target");
    const char *op = NULL;
    if (target && strncmp(target, TARGET_PREFIX, sizeof TARGET_PREFIX - 1) == 0)
        op = target + sizeof TARGET_PREFIX - 1;
    if (h->writers.pool && is_write(op)) return hand_to_writers(h, conn, r, op);
    execute(h, r, op);
    return answer(h, conn, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    srv_http *h = cls;
    srv_req *r = *con_cls;
    (void)version;
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        *con_cls = r;
        atomic_fetch_add(&h->inflight, 1);
        atomic_fetch_add_explicit(&h->started, 1, memory_order_relaxed);
        srv_reqid_new(r->id);
        return on_headers(h, conn, r, url, method);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return on_data(r, upload_data, n);
    }
    if (r->answered) return MHD_YES;
    if (r->queued) { /* called again after MHD_resume_connection(): the writer has run it */
        if (!atomic_load(&r->ran)) return MHD_YES;
        unsuspend(h, r);
        return answer(h, conn, r);
    }
    return on_complete(h, conn, r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    srv_http *h = cls;
    srv_req *r = *con_cls;
    (void)conn;
    (void)toe;
    if (!r) return;
    if (r->authed) srv_auth_free(&r->auth);
    unsuspend(h, r);
    kbuf_free(&r->body);
    kura_free(r->out);
    free(r->log_msg);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&h->inflight, 1);
}

static kura_status resolve(const srv_config *cfg, struct addrinfo **ai_out)
{
    struct addrinfo hints;
    char port[16];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof port, "%u", cfg->port);
    int rc = getaddrinfo(cfg->host, port, &hints, ai_out);
    if (rc != 0)
        return kura_err(KURA_E_INVALID, "cannot resolve host %s: %s", cfg->host, gai_strerror(rc));
    return KURA_OK;
}

static kura_status listen_on(const srv_config *cfg, const struct addrinfo *ai, int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        return kura_err(KURA_E_IO, "cannot listen on %s port %u: %s", cfg->host, cfg->port,
                        strerror(err));
    }
    *fd_out = fd;
    return KURA_OK;
}

/* The acceptor: connection i goes to daemon i mod N, until srv_http_stop() shuts the socket. */
static void *acceptor_main(void *arg)
{
    srv_http *h = arg;
    for (unsigned next = 0; !atomic_load(&h->stopping);) {
        struct sockaddr_storage addr;
        socklen_t len = sizeof addr;
        int fd =
            accept4(h->listen_fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (atomic_load(&h->stopping)) break;
            /* EMFILE, ENFILE, ENOBUFS, ENOMEM: the connection waits in the backlog */
            usleep(10000);
            continue;
        }
        /* the daemon closes fd if it cannot take it (its share of the limit is full) */
        MHD_add_connection(h->daemons[next++ % h->ndaemons], fd, (struct sockaddr *)&addr, len);
    }
    return NULL;
}

static void stop_daemons(srv_http *h)
{
    for (unsigned i = 0; i < h->ndaemons; i++)
        if (h->daemons[i]) MHD_stop_daemon(h->daemons[i]);
}

/* Undoes a start that failed after the writers' state was set up: stops what runs, frees h. */
static kura_status start_failed(srv_http *h, kura_status s)
{
    writers_stop(h);
    stop_daemons(h);
    writers_free(h);
    close(h->listen_fd);
    free(h->daemons);
    free(h);
    return s;
}

kura_status srv_http_start(kura_db *db, const srv_config *cfg, srv_http **h_out)
{
    struct addrinfo *ai;
    kura_status s = resolve(cfg, &ai);
    if (s != KURA_OK) return s;
    int fd = -1;
    s = listen_on(cfg, ai, &fd);
    freeaddrinfo(ai);
    if (s != KURA_OK) return s;
    unsigned n = cfg->threads > 0 ? cfg->threads : 1;
    srv_http *h = calloc(1, sizeof *h);
    if (!h || !(h->daemons = calloc(n, sizeof *h->daemons))) {
        free(h);
        close(fd);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    h->db = db;
    h->cfg = cfg;
    h->listen_fd = fd;
    h->ndaemons = n;
    atomic_init(&h->inflight, 0);
    atomic_init(&h->started, 0);
    atomic_init(&h->stopping, false);
    s = writers_start(h, cfg->sync_writers);
    if (s != KURA_OK) return start_failed(h, s);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                     MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET |
                     (cfg->sync_writers ? MHD_ALLOW_SUSPEND_RESUME : 0);
    unsigned share = (cfg->max_connections + n - 1) / n;
    for (unsigned i = 0; i < n; i++) {
        errno = 0;
        h->daemons[i] = MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, h, MHD_OPTION_CONNECTION_LIMIT, share,
            MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            (size_t)SRV_CONNECTION_MEMORY, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
            MHD_OPTION_END);
        if (!h->daemons[i]) {
            int err = errno;
            return start_failed(h, kura_err(KURA_E_IO, "cannot start the HTTP threads: %s",
                                            err ? strerror(err)
                                                : "libmicrohttpd failed to start"));
        }
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    int rc = pthread_create(&h->acceptor, NULL, acceptor_main, h);
    if (rc != 0)
        return start_failed(h, kura_err(KURA_E_IO, "cannot start the acceptor thread: %s",
                                        strerror(rc)));
    *h_out = h;
    return KURA_OK;
}

uint16_t srv_http_port(const srv_http *h)
{
    return h->port;
}

bool srv_http_activity(srv_http *h, uint64_t *started_out)
{
    *started_out = atomic_load_explicit(&h->started, memory_order_relaxed);
    return atomic_load(&h->inflight) > 0;
}

void srv_http_stop(srv_http *h, uint32_t grace_ms)
{
    if (!h) return;
    atomic_store(&h->stopping, true);
    /* wakes the acceptor out of accept(); connections still in the backlog are reset */
    shutdown(h->listen_fd, SHUT_RDWR);
    pthread_join(h->acceptor, NULL);
    close(h->listen_fd);
    /* Requests already executing finish inside MHD_stop_daemon() (it joins the threads);
     * waiting here lets those still receiving their body complete and be answered. */
    for (uint32_t waited = 0; atomic_load(&h->inflight) > 0 && waited < grace_ms; waited += 2)
        usleep(2000);
    /* every suspended connection must be resumed, and the resumption seen by its thread,
     * before the daemons stop (libmicrohttpd aborts otherwise): the writers run what they
     * have queued, writes that arrive after that run in place, and each resumed connection
     * is answered by its thread */
    writers_stop(h);
    while (atomic_load(&h->writers.suspended) > 0)
        usleep(1000);
    stop_daemons(h);
    writers_free(h);
    free(h->daemons);
    free(h);
}
