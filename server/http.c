/*
 * http.c - This file contains kura-server's HTTP side: the listening socket and its acceptor
 * thread, the serving threads (each runs one libmicrohttpd daemon of its own: keep-alive, a
 * share of the connection limit and an idle timeout), and the handler that turns `POST /` +
 * X-Amz-Target into kura_execute().
 *
 * Why an acceptor of our own: libmicrohttpd's thread pool lets every pool thread accept from
 * the one listening socket, so whichever thread wakes first takes the connections that
 * arrive together, and 32 connections could land 20/4/4/4 on 4 threads: the busiest thread
 * then runs flat out while the others idle. The acceptor hands connection i to serving thread
 * i mod N, so each thread serves its equal share (GetItem at 32 connections on 2 cores: median
 * 70.6k req/s against 65.0k, and no more runs at ~52k; docs/server.md).
 *
 * Why our own serving loop: libmicrohttpd's internal threads sleep in poll(2) as soon as they
 * run out of ready connections, and on a busy server the wakeup that follows (the sender's
 * inter-processor interrupt, the context switch; on a virtual machine exits to the
 * hypervisor) costs more than the request. Each daemon is therefore run in libmicrohttpd's
 * external mode on epoll, and its thread (serve_main) looks for more work for a few
 * microseconds, yielding the CPU between looks, before it sleeps (GetItem at 32 connections
 * ~+15%; docs/server.md). Waiting in our own loop also means the thread can be woken by us: an
 * eventfd per thread, written by the acceptor when it hands over a connection (added by the
 * serving thread itself, as libmicrohttpd's external mode requires), by a writer when it has
 * resumed a connection, and by the stop. libmicrohttpd 0.9.75's epoll mode can miss a client's
 * FIN, which poll(2) never did; the thread watches for those itself (take_hangups).
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
 * instead: its connection is suspended (MHD_suspend_connection), a writer runs kura_execute(),
 * resumes it and wakes its serving thread, and libmicrohttpd calls the handler once more,
 * which answers with the writer's result. Reads and every operation under --relaxed run on
 * the serving threads.
 *
 * Where DynamoDB and DynamoDB Local answer differently, kura-server answers:
 *   - a method other than POST (GET / ...): 400 MissingAuthenticationToken "Request must
 *     contain either a valid (registered) AWS access key ID or X.509 certificate.", DynamoDB
 *     Local's answer to `curl http://host:port/` (DynamoDB itself answers GET with a 200
 *     health line); the path of a POST is not looked at, as neither does (except /kura/
 *     without X-Amz-Target, below);
 *   - a content type other than application/x-amz-json-1.0, application/json or none: 404
 *     UnknownOperationException (DynamoDB's status; DynamoDB Local accepts anything);
 *   - no or another X-Amz-Target: 400 UnknownOperationException, after the JSON check, as
 *     DynamoDB (DynamoDB Local: 500 InternalFailure); so is a DynamoDB Streams operation under
 *     DynamoDB_20120810 or a DynamoDB one under DynamoDBStreams_20120810 (target_op);
 *   - a body over 16 MB: 413 RequestEntityTooLarge, the connection closed;
 *   - every error's __type has kura_execute()'s prefix com.amazonaws.dynamodb.v20120810#
 *     (DynamoDB Local's too; DynamoDB uses com.amazon.coral.service# for the protocol and
 *     signature errors; SDKs read only the part after '#'), except a body that is not JSON:
 *     {"__type":"com.amazon.coral.service#SerializationException"}, as DynamoDB answers it;
 *   - with --auth the signature is checked before the body is parsed (DynamoDB parses
 *     first), so nothing of an unauthenticated request is interpreted;
 *   - no CORS headers: a web page cannot call the server from a browser.
 *
 * Beside DynamoDB's API: a request to a path under /kura/ without X-Amz-Target is one of
 * kura's extensions (extension.c), answered on the serving thread, except POST /kura/check,
 * which runs on a thread of its own as --sync's writes run on the writers (suspended, then
 * answered once done: a check may read the whole database); and with --gsi-read-wait a Query
 * or Scan of an index first waits for the index (execute()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/index_admin.h"
#include "server/reqid.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/pool.h"
#include "util/status.h"
#include "util/thread.h"

/* X-Amz-Target: DynamoDB's operations, and DynamoDB Streams' on the same endpoint (as DynamoDB
 * Local serves them; boto3's dynamodbstreams client signs for the service "dynamodb" too, which
 * sigv4.c requires). An operation under the other service's prefix is unknown, as DynamoDB
 * answers it. */
#define TARGET_PREFIX "DynamoDB_20120810."
#define STREAMS_TARGET_PREFIX "DynamoDBStreams_20120810."

typedef struct srv_req srv_req;
typedef struct srv_thread srv_thread;

/* The serving thread running on this thread (NULL on any other). */
static _Thread_local srv_thread *this_thread;

static void wake(srv_thread *t);

/* The writers of --sync (see above): a thread pool that runs the suspended requests in order.
 * Once it is stopping it refuses new ones, which then run in place. And the same for the
 * extensions that run long (POST /kura/check, extension.c): one thread of their own, so that
 * a check holds no serving thread, whatever the durability. */
typedef struct srv_writers {
    kpool *pool;          /* NULL: no writers (--relaxed) */
    kpool *slow;          /* the long extension requests, one at a time */
    atomic_int suspended; /* connections suspended and not yet answered */
} srv_writers;

/* A connection accepted and not yet taken by its serving thread. */
typedef struct srv_handoff {
    int fd;
    socklen_t len;
    struct sockaddr_storage addr;
} srv_handoff;

/* One serving thread: its libmicrohttpd daemon (external polling on epoll, so that this
 * thread decides how it waits), the connections the acceptor hands it, and an eventfd that
 * wakes it for those, for a connection a writer has resumed and for the stop. */
struct srv_thread {
    srv_http *h;
    struct MHD_Daemon *daemon;
    int epoll_fd;       /* the daemon's: readable when one of its connections is ready */
    pthread_t thread;
    bool running;
    int wake_fd;
    int hup_fd;         /* epoll: the thread's connections, for their peers' half-closes */
    pthread_mutex_t mu; /* guards handoff */
    srv_handoff *handoff;
    unsigned nhandoff, cap;
};

struct srv_http {
    srv_thread *threads; /* the serving threads */
    unsigned nthreads;
    int listen_fd;
    pthread_t acceptor;
    kura_db *db;
    const srv_config *cfg;
    uint16_t port;
    /* "host:port" listened on ("[v6]:port"): DescribeEndpoints' address of a request
     * without a Host header */
    char listen_addr[1100];
    atomic_int inflight;  /* requests between their first call and their completion */
    atomic_uint_fast64_t started; /* requests ever started (beside inflight: one cache line) */
    atomic_bool stopping; /* set by srv_http_stop(): answers close their connection */
    atomic_bool quit;     /* set by srv_http_stop() when the serving threads are to return */
    srv_writers writers;
};

/* One request's state, from its first handler call to the completion callback. */
struct srv_req {
    kbuf body;
    bool answered;  /* a response is queued; the rest of the body is discarded */
    bool authed;    /* srv_auth_precheck() ran (its state must be freed) */
    bool too_large; /* the body outgrew SRV_MAX_BODY_BYTES: dropped, answered 413 */
    bool nomem;     /* the body could not be stored: answered 500 */
    bool ext;       /* one of kura's extensions (/kura/..., extension.c), not DynamoDB's */
    uint64_t discarded;
    srv_auth_req auth;
    char id[SRV_REQID_LEN + 1];
    /* a write handed to the writers: the operation, then its result */
    srv_http *h;
    srv_thread *thread; /* the serving thread of its connection, woken when it is resumed */
    struct MHD_Connection *conn;
    const char *op;
    const char *host; /* the Host header (MHD's copy, valid until the request completes), or
                       * NULL: kura_request_context's endpoint */
    char region[33];  /* the region of its SigV4 credential scope; "": unsigned (the database's
                       * default region: kura_request_context) */
    atomic_bool ran;   /* the writer has run it (set before the connection is resumed) */
    bool queued;
    bool suspended;   /* counted in writers.suspended */
    const char *type; /* kura_execute_error_type() of the thread that ran it (a static string) */
    unsigned status;  /* a slow extension's HTTP status (0: from `type`) */
    char *out;
    size_t out_len;
    char *log_msg;    /* kura_last_error() of an InternalServerError, for the log line */
};

/* The time slice a serving thread asks the scheduler for (util/thread.h: kthread_set_slice).
 * A serving thread that wakes with requests to answer then runs before threads on the
 * default slice (1.4 ms on 2 cores: the load generator, a compaction) rather than after them.
 * GetItem at 32 connections after a PutItem run, six alternated pairs: 88.3k against 81.7k
 * req/s median, p99 1.50 against 1.58 ms (docs/server.md, "Threads and shutdown"). */
#define SRV_SLICE_NS 300000u

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
    /* an extension checks its method itself and takes any content type (extension.c) */
    r->ext = srv_ext_match(conn, url);
    if (!r->ext && strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return answer_error(h, conn, r, MHD_HTTP_BAD_REQUEST, "MissingAuthenticationToken",
                            MSG_NO_TOKEN, body);
    if (len > SRV_MAX_BODY_BYTES)
        return answer_error(h, conn, r, MHD_HTTP_CONTENT_TOO_LARGE, "RequestEntityTooLarge",
                            MSG_TOO_LARGE, true);
    if (!r->ext && !content_type_ok(conn))
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

/* --gsi-read-wait: a Query or Scan of an index first waits for the index to catch up
 * (index_admin.h). Returns false when the request may run; true when the wait failed, with
 * the error response in r. */
static bool read_wait_failed(srv_http *h, srv_req *r, const char *op, const char *body)
{
    ixadm_reply rep;
    if (ixadm_read_wait(h->db, op, body, r->body.len, h->cfg->gsi_read_wait_ms, &rep) == KURA_OK)
        return false;
    r->out = rep.body; /* malloc'ed, and kura_free() is free(): freed as kura_execute()'s */
    r->out_len = rep.len;
    r->type = rep.type;
    r->log_msg = strdup(rep.message);
    return true;
}

/* Runs the request's operation (on a serving thread, or on a writer for --sync writes). */
static void execute(srv_http *h, srv_req *r, const char *op)
{
    const char *body = r->body.data ? (const char *)r->body.data : "";
    r->op = op;
    if (h->cfg->gsi_read_wait_ms && read_wait_failed(h, r, op, body)) return;
    kura_request_context ctx = {.endpoint = r->host && *r->host ? r->host : h->listen_addr,
                                .region = r->region[0] ? r->region : NULL};
    kura_status s = kura_execute_ctx(h->db, &ctx, op, body, r->body.len, &r->out, &r->out_len);
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
    if (r->status) { /* a slow extension's reply (its body is malloc'ed: kura_free is free) */
        status = r->status;
        if (status >= 500)
            srv_log_error(r->id, r->op, r->type, r->log_msg ? r->log_msg : "internal error");
    } else if (r->type && strcmp(r->type, "InternalServerError") == 0) {
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

/* Whether an ExecuteStatement body's Statement starts with SELECT (a read); anything else,
 * or a body this cheap look cannot read, counts as a write. Only where the statement runs
 * depends on it (a serving thread or a writer), never what it does. */
static bool is_select(const char *body, size_t len)
{
    const char *end = body + len, *p = memmem(body, len, "\"Statement\"", 11);
    if (!p) return false;
    for (p += 11; p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':');)
        p++;
    if (p >= end || *p++ != '"') return false;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return end - p > 6 && strncasecmp(p, "select", 6) == 0;
}

/* The operations that write (and so, under --sync, wait for a WAL sync): PartiQL's when they
 * may (a batch or a transaction always, a statement unless it is a SELECT). */
static bool is_write(const char *op, const char *body, size_t len)
{
    if (op && (strcmp(op, "BatchExecuteStatement") == 0 || strcmp(op, "ExecuteTransaction") == 0))
        return true;
    if (op && strcmp(op, "ExecuteStatement") == 0)
        return !is_select(body, len);
    static const char *const writes[] = {"PutItem",        "UpdateItem",         "DeleteItem",
                                         "BatchWriteItem", "TransactWriteItems", "CreateTable",
                                         "DeleteTable",    "UpdateTable",        "UpdateTimeToLive",
                                         "TagResource",    "UntagResource",
                                         "PutResourcePolicy", "DeleteResourcePolicy",
                                         "UpdateContributorInsights"};
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
    srv_thread *t = r->thread; /* once resumed, r can be answered and freed at any moment */
    atomic_store(&r->ran, true);
    MHD_resume_connection(r->conn);
    wake(t);
}

/* A slow extension's job (on writers.slow): runs it, then resumes its connection as
 * write_job does. r->op is the extension's path. */
static void slow_job(void *arg)
{
    srv_req *r = arg;
    ixadm_reply rep;
    const char *body = r->body.data ? (const char *)r->body.data : "";
    srv_ext_run_slow(r->h->db, r->op, body, r->body.len, &rep);
    r->out = rep.body;
    r->out_len = rep.len;
    r->type = rep.type;
    r->status = rep.body ? rep.status : 0; /* no body: answer() reports out of memory */
    if (rep.status >= 500) r->log_msg = strdup(rep.message);
    srv_thread *t = r->thread;
    atomic_store(&r->ran, true);
    MHD_resume_connection(r->conn);
    wake(t);
}

/* Suspends the connection and queues job(r) on `pool` (run in place if the pool refuses it);
 * the handler answers once the job has resumed the connection. */
static enum MHD_Result hand_to(srv_http *h, struct MHD_Connection *conn, srv_req *r,
                               const char *op, kpool *pool, void (*job)(void *))
{
    r->h = h;
    r->thread = this_thread;
    r->conn = conn;
    r->op = op;
    r->queued = true;
    r->suspended = true;
    atomic_fetch_add(&h->writers.suspended, 1);
    /* suspended before it is queued, so that its resumption always comes after */
    MHD_suspend_connection(conn);
    if (!kpool_submit(pool, job, r))
        job(r); /* shutting down (or out of memory): run here, answered all the same */
    return MHD_YES;
}

static kura_status writers_start(srv_http *h, unsigned n)
{
    atomic_init(&h->writers.suspended, 0);
    if (n && !(h->writers.pool = kpool_new(n)))
        return kura_err(KURA_E_IO, "cannot start the writer threads");
    if (!(h->writers.slow = kpool_new(1)))
        return kura_err(KURA_E_IO, "cannot start the extension thread");
    return KURA_OK;
}

/* Lets the writers run what is queued, then joins them; later writes run in place. */
static void writers_stop(srv_http *h)
{
    if (h->writers.pool) kpool_stop(h->writers.pool);
    if (h->writers.slow) kpool_stop(h->writers.slow);
}

/* After the daemon has stopped (nothing can reach the writers any more). */
static void writers_free(srv_http *h)
{
    kpool_free(h->writers.pool);
    kpool_free(h->writers.slow);
}

/* The request no longer counts as suspended (answered, or its connection closed). */
static void unsuspend(srv_http *h, srv_req *r)
{
    if (!r->suspended) return;
    r->suspended = false;
    atomic_fetch_sub(&h->writers.suspended, 1);
}

/* DynamoDB Streams' operations (api/req_streams.c). */
static bool is_streams_op(const char *op)
{
    static const char *const ops[] = {"ListStreams", "DescribeStream", "GetShardIterator",
                                      "GetRecords"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}

/* The operation X-Amz-Target names for kura_execute(), NULL for none (no header, another
 * prefix, or an operation of the other service: UnknownOperationException). */
static const char *target_op(const char *target)
{
    if (!target) return NULL;
    if (strncmp(target, TARGET_PREFIX, sizeof TARGET_PREFIX - 1) == 0) {
        const char *op = target + sizeof TARGET_PREFIX - 1;
        return is_streams_op(op) ? NULL : op;
    }
    if (strncmp(target, STREAMS_TARGET_PREFIX, sizeof STREAMS_TARGET_PREFIX - 1) == 0) {
        const char *op = target + sizeof STREAMS_TARGET_PREFIX - 1;
        return is_streams_op(op) ? op : NULL;
    }
    return NULL;
}

/* The body is complete: the signature, then the operation (or the extension). */
static enum MHD_Result on_complete(srv_http *h, struct MHD_Connection *conn, srv_req *r,
                                   const char *url, const char *method)
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
    if (r->ext && srv_ext_slow(method, url))
        return hand_to(h, conn, r, url, h->writers.slow, slow_job);
    if (r->ext) {
        r->answered = true;
        return srv_ext_answer(h->db, conn, method, url, body, r->body.len, r->id,
                              atomic_load(&h->stopping));
    }
    const char *op =
        target_op(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target"));
    r->host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!srv_auth_region(conn, r->region, sizeof r->region)) r->region[0] = '\0';
    if (h->writers.pool && is_write(op, body, r->body.len))
        return hand_to(h, conn, r, op, h->writers.pool, write_job);
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
        /* malloc, not calloc: glibc's calloc bypasses its per-thread cache and takes the
         * lock of a malloc arena, which the serving threads share */
        if (!(r = malloc(sizeof *r))) return MHD_NO;
        memset(r, 0, sizeof *r);
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
    return on_complete(h, conn, r, url, method);
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

/* How long a serving thread that has run out of work keeps looking for more before it sleeps
 * (see serve_main). */
#define SRV_SPIN_NS 20000ull

/* Wakes thread t out of its wait (wait_for_work) or makes it not sleep at its next one. */
static void wake(srv_thread *t)
{
    uint64_t one = 1;
    (void)!write(t->wake_fd, &one, sizeof one);
}

/* Hands an accepted connection to thread t (its loop adds it to its daemon). */
static void hand_over(srv_thread *t, int fd, const struct sockaddr_storage *addr, socklen_t len)
{
    pthread_mutex_lock(&t->mu);
    if (t->nhandoff == t->cap) {
        unsigned cap = t->cap ? 2 * t->cap : 16;
        srv_handoff *a = realloc(t->handoff, cap * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&t->mu);
            close(fd); /* out of memory: the client sees its connection reset */
            return;
        }
        t->handoff = a;
        t->cap = cap;
    }
    t->handoff[t->nhandoff++] = (srv_handoff){.fd = fd, .len = len, .addr = *addr};
    pthread_mutex_unlock(&t->mu);
    wake(t);
}

/* The acceptor: connection i goes to serving thread i mod N, until srv_http_stop() shuts the
 * socket. */
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
        hand_over(&h->threads[next++ % h->nthreads], fd, &addr, len);
    }
    return NULL;
}

/* Adds the connections handed to t since it last looked (the daemon closes a socket it cannot
 * take: its share of the connection limit is full). */
static void take_handoff(srv_thread *t)
{
    uint64_t n;
    (void)!read(t->wake_fd, &n, sizeof n);
    pthread_mutex_lock(&t->mu);
    for (unsigned i = 0; i < t->nhandoff; i++) {
        /* before the daemon has it: if it closes the socket, that also ends this watch */
        struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLET, .data.fd = t->handoff[i].fd};
        epoll_ctl(t->hup_fd, EPOLL_CTL_ADD, t->handoff[i].fd, &ev);
        MHD_add_connection(t->daemon, t->handoff[i].fd, (struct sockaddr *)&t->handoff[i].addr,
                           t->handoff[i].len);
    }
    t->nhandoff = 0;
    pthread_mutex_unlock(&t->mu);
}

/*
 * Peers that half-closed. libmicrohttpd 0.9.75's epoll mode misses a FIN that arrives with the
 * last bytes it reads (a read shorter than its buffer makes it wait for the next edge, and the
 * FIN brings none), so a client that sends part of a body and then shuts its side down would
 * hold its connection until the idle timeout. The thread watches its connections for that
 * (EPOLLRDHUP) in an epoll set of its own and shuts the read side of such a socket down, which
 * wakes every poller of the socket: libmicrohttpd then reads, finds the end of the stream and
 * acts as with poll(2) (closes a connection in the middle of a request; answers a complete one
 * first).
 */
static void take_hangups(srv_thread *t)
{
    struct epoll_event ev[32];
    int n = epoll_wait(t->hup_fd, ev, 32, 0);
    for (int i = 0; i < n; i++)
        shutdown(ev[i].data.fd, SHUT_RD);
}

/* Waits until the daemon has something to do or t is woken: at once if libmicrohttpd has work
 * left (its timeout is 0), else first by looking (poll with no timeout, yielding the CPU
 * between looks) for up to SRV_SPIN_NS, then by sleeping in poll until its next timeout. */
static void wait_for_work(srv_thread *t, struct pollfd fds[3])
{
    MHD_UNSIGNED_LONG_LONG ms;
    int timeout = -1;
    if (MHD_get_timeout(t->daemon, &ms) == MHD_YES) timeout = ms > INT_MAX ? INT_MAX : (int)ms;
    uint64_t deadline = 0;
    while (timeout != 0) {
        if (poll(fds, 3, 0) != 0) return;
        uint64_t now = know_ns();
        if (!deadline)
            deadline = now + SRV_SPIN_NS;
        else if (now >= deadline)
            break;
        sched_yield();
    }
    poll(fds, 3, timeout);
}

/*
 * A serving thread. It runs its daemon (MHD_run: every connection that is ready is read,
 * handled and answered) and then waits for more work. Waiting is where the time goes on a
 * busy server: a thread that sleeps in poll(2) has to be woken by the kernel when the next
 * request arrives, and a wakeup (a context switch here, an inter-processor interrupt to wake
 * a halted CPU for the sender, which on a virtual machine is an exit to the hypervisor) costs
 * more than the request. So a thread that runs out of work first keeps looking for SRV_SPIN_NS,
 * giving the CPU to any other runnable thread between looks (sched_yield), and only then
 * sleeps: under load the next request is usually there before then, and an idle server spins
 * SRV_SPIN_NS once per wakeup and sleeps.
 */
static void *serve_main(void *arg)
{
    srv_thread *t = arg;
    this_thread = t;
    kthread_set_slice(SRV_SLICE_NS); /* a kernel without custom slices: the default slice */
    struct pollfd fds[3] = {{.fd = t->epoll_fd, .events = POLLIN},
                            {.fd = t->wake_fd, .events = POLLIN},
                            {.fd = t->hup_fd, .events = POLLIN}};
    while (!atomic_load(&t->h->quit)) {
        if (fds[1].revents & POLLIN) take_handoff(t);
        if (fds[2].revents & POLLIN) take_hangups(t);
        MHD_run(t->daemon);
        wait_for_work(t, fds);
    }
    return NULL;
}

/* Stops the serving threads (each finishes what it is running), then their daemons. */
static void stop_threads(srv_http *h)
{
    atomic_store(&h->quit, true);
    for (unsigned i = 0; i < h->nthreads; i++) {
        srv_thread *t = &h->threads[i];
        if (t->running) {
            wake(t);
            pthread_join(t->thread, NULL);
            t->running = false;
        }
    }
    for (unsigned i = 0; i < h->nthreads; i++) {
        srv_thread *t = &h->threads[i];
        for (unsigned j = 0; j < t->nhandoff; j++)
            close(t->handoff[j].fd);
        t->nhandoff = 0;
        if (t->daemon) MHD_stop_daemon(t->daemon);
        t->daemon = NULL;
    }
}

static void free_threads(srv_http *h)
{
    for (unsigned i = 0; h->threads && i < h->nthreads; i++) {
        srv_thread *t = &h->threads[i];
        if (t->wake_fd >= 0) close(t->wake_fd);
        if (t->hup_fd >= 0) close(t->hup_fd);
        pthread_mutex_destroy(&t->mu);
        free(t->handoff);
    }
    free(h->threads);
}

/* Undoes a start that failed after the writers' state was set up: stops what runs, frees h. */
static kura_status start_failed(srv_http *h, kura_status s)
{
    writers_stop(h);
    stop_threads(h);
    writers_free(h);
    free_threads(h);
    close(h->listen_fd);
    free(h);
    return s;
}

/* Starts serving thread t: its eventfd, its daemon, the thread. */
static kura_status start_thread(srv_http *h, srv_thread *t, unsigned share)
{
    const srv_config *cfg = h->cfg;
    t->h = h;
    if ((t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        (t->hup_fd = epoll_create1(EPOLL_CLOEXEC)) < 0)
        return kura_err(KURA_E_IO, "cannot start the HTTP threads: %s", strerror(errno));
    /* suspend/resume always: the slow extensions use it whatever the durability */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET |
                     MHD_ALLOW_SUSPEND_RESUME;
    errno = 0;
    t->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_CONNECTION_LIMIT, share,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)SRV_CONNECTION_MEMORY, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_END);
    if (!t->daemon) {
        int err = errno;
        return kura_err(KURA_E_IO, "cannot start the HTTP threads: %s",
                        err ? strerror(err) : "libmicrohttpd failed to start");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(t->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (!info || info->epoll_fd < 0)
        return kura_err(KURA_E_IO, "cannot start the HTTP threads: libmicrohttpd has no epoll");
    t->epoll_fd = info->epoll_fd;
    int rc = pthread_create(&t->thread, NULL, serve_main, t);
    if (rc != 0)
        return kura_err(KURA_E_IO, "cannot start the HTTP threads: %s", strerror(rc));
    t->running = true;
    return KURA_OK;
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
    if (!h || !(h->threads = calloc(n, sizeof *h->threads))) {
        free(h);
        close(fd);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    h->db = db;
    h->cfg = cfg;
    h->listen_fd = fd;
    h->nthreads = n;
    for (unsigned i = 0; i < n; i++) {
        h->threads[i].wake_fd = h->threads[i].hup_fd = -1;
        pthread_mutex_init(&h->threads[i].mu, NULL);
    }
    atomic_init(&h->inflight, 0);
    atomic_init(&h->started, 0);
    atomic_init(&h->stopping, false);
    atomic_init(&h->quit, false);
    s = writers_start(h, cfg->sync_writers);
    if (s != KURA_OK) return start_failed(h, s);
    unsigned share = (cfg->max_connections + n - 1) / n;
    for (unsigned i = 0; i < n && s == KURA_OK; i++)
        s = start_thread(h, &h->threads[i], share);
    if (s != KURA_OK) return start_failed(h, s);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    snprintf(h->listen_addr, sizeof h->listen_addr, strchr(cfg->host, ':') ? "[%s]:%u" : "%s:%u",
             cfg->host, (unsigned)h->port);
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
    /* Requests already executing finish before stop_threads() has joined their threads;
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
    stop_threads(h);
    writers_free(h);
    free_threads(h);
    free(h);
}
