/*
 * server.h - the parts of kura-server, DynamoDB's HTTP wire protocol over kura_execute().
 *
 * This file declares the server's modules and how they meet:
 *   main.c     options, signals, the lifecycle (open the database, start, wait, stop, close)
 *   datadir.c  the --in-memory temporary data directory
 *   http.c     the libmicrohttpd daemon and the request handler (body accumulation, checks)
 *   auth.c     a request's headers and query in the shape sigv4.c verifies
 *   respond.c  responses: headers DynamoDB sends, error bodies, the error log line
 *   extension.c  kura's endpoints beside DynamoDB's API (/kura/...), on index_admin.c and
 *              check_admin.c, whose index lag, waits and integrity check the `kura` CLI
 *              shares (index_admin.h, check_admin.h)
 *   heat_http.c  GET /kura/heat and /kura/heat.html: the heat report (heat_report.h) as JSON
 *              and as a page (heat_page.h)
 *   reqid.c    request ids
 *   sigv4.c    the SigV4 checks, sigv4_canon.c its computations (pure functions, sigv4.h).
 *
 * Threads: an acceptor hands connections round-robin to the serving threads (one
 * libmicrohttpd daemon each), which run the handler; under --sync, writes run on writer
 * threads (http.c). kura_execute() is thread-safe, so requests run in parallel with no lock
 * of the server's own. main() waits for SIGINT, SIGTERM or SIGHUP with the signals blocked in
 * every thread (sigtimedwait), so no handler runs in signal context.
 */
#ifndef KURA_SERVER_SERVER_H
#define KURA_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "kura.h"
#include "server/index_admin.h"
#include "server/sigv4.h"

/* A request body larger than this is refused (DynamoDB's limit) and never read further. */
#define SRV_MAX_BODY_BYTES (16u * 1024 * 1024)

#define SRV_ERROR_PREFIX "com.amazonaws.dynamodb.v20120810#"

typedef struct srv_config {
    const char *host; /* address to listen on, numeric or a name; "127.0.0.1" */
    unsigned port;    /* 0: a free port */
    unsigned threads; /* serving threads (libmicrohttpd daemons), >= 1 */
    unsigned sync_writers; /* > 0: writes run on this many writer threads (--sync; http.c) */
    unsigned max_connections;
    unsigned timeout_s;   /* idle connection timeout */
    const char *auth_key; /* --auth: the access key and secret; NULL: accept anything */
    const char *auth_secret;
    /* --gsi-read-wait[=MS]: a Query or Scan with IndexName first waits up to this many ms for
     * the index to apply every write committed before it (index_admin.h); 0: off */
    unsigned gsi_read_wait_ms;
} srv_config;

/* ---- http.c ------------------------------------------------------------------------------ */

typedef struct srv_http srv_http;

/* Starts listening on cfg->host:cfg->port and serving requests on `db` (borrowed: it must
 * stay open until srv_http_stop() returns). `cfg` is borrowed for the server's lifetime.
 * Errors: KURA_E_INVALID (the host does not resolve), KURA_E_IO (cannot listen: the message
 * says why), KURA_E_NOMEM. */
kura_status srv_http_start(kura_db *db, const srv_config *cfg, srv_http **h_out);

/* The port the server listens on (the one chosen when cfg->port was 0). */
uint16_t srv_http_port(const srv_http *h);

/* Requests started so far (*started_out) and whether any is in flight now: an unchanged count
 * and false mean the server was idle in between. */
bool srv_http_activity(srv_http *h, uint64_t *started_out);

/* Stops accepting connections, lets the requests in flight finish (waiting up to grace_ms
 * for requests whose body is still arriving), stops the threads and frees the server. After
 * it returns no request runs, so the database may be closed. */
void srv_http_stop(srv_http *h, uint32_t grace_ms);

/* ---- auth.c ------------------------------------------------------------------------------ */

/* A request seen by the signature checks: its headers and query arguments, collected once
 * from libmicrohttpd (the strings are the connection's, valid until the request completes). */
typedef struct srv_auth_req {
    sigv4_request req;
    sigv4_pair *pairs; /* headers then query arguments, one allocation */
    sigv4_auth auth;
} srv_auth_req;

/* Collects the request and runs sigv4_precheck(). Returns true to go on (the body follows),
 * false with *err_out filled to refuse. */
bool srv_auth_precheck(struct MHD_Connection *conn, const char *method, const char *url,
                       const srv_config *cfg, srv_auth_req *ar, sigv4_error *err_out);

/* sigv4_verify() over the received body. */
bool srv_auth_verify(srv_auth_req *ar, const void *body, size_t len, const srv_config *cfg,
                     sigv4_error *err_out);

/* The region the request was signed for (sigv4_region: its Authorization header's credential
 * scope, else its X-Amz-Credential query argument) into region_out (cap bytes), whether or not
 * --auth verifies it; false for an unsigned request (the database's default region then). */
bool srv_auth_region(struct MHD_Connection *conn, char *region_out, size_t cap);

/* Frees what srv_auth_precheck() allocated. */
void srv_auth_free(srv_auth_req *ar);

/* ---- respond.c --------------------------------------------------------------------------- */

/* Queues `body` (len bytes; ownership passes to libmicrohttpd, which calls free_fn(body)
 * once sent, or at once if the response cannot be created) with DynamoDB's headers:
 * Content-Type application/x-amz-json-1.0, x-amzn-RequestId, x-amz-crc32. `close` adds
 * "Connection: close" (shutdown, or a body left unread). */
enum MHD_Result srv_respond(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                            void (*free_fn)(void *), const char *reqid, bool close);

/* srv_respond() with another Content-Type (the heat page's text/html; charset=utf-8). */
enum MHD_Result srv_respond_as(struct MHD_Connection *conn, unsigned status,
                               const char *content_type, char *body, size_t len,
                               void (*free_fn)(void *), const char *reqid, bool close);

/* Queues DynamoDB's error body {"__type":SRV_ERROR_PREFIX type,"message":message}. */
enum MHD_Result srv_respond_error(struct MHD_Connection *conn, unsigned status, const char *type,
                                  const char *message, const char *reqid, bool close);

/* One line on stderr: UTC timestamp, request id, operation, error type, message. */
void srv_log_error(const char *reqid, const char *operation, const char *type, const char *message);

/* ---- extension.c ------------------------------------------------------------------------- */

/* True when the request is one of kura's extensions: its path starts with /kura/ and it has
 * no X-Amz-Target (with one it is DynamoDB's, whatever its path). */
bool srv_ext_match(struct MHD_Connection *conn, const char *url);

/* Answers an extension request whose body (len bytes, borrowed) is complete: GET
 * /kura/indexes, POST /kura/index-wait, or an error (404 for another path, 400 for another
 * method). May block for the wait's timeout. `close` as srv_respond(). The slow ones are not
 * answered here (srv_ext_slow). */
enum MHD_Result srv_ext_answer(kura_db *db, struct MHD_Connection *conn, const char *method,
                               const char *url, const char *body, size_t len, const char *reqid,
                               bool close);

/* True for an extension request that runs long (POST /kura/check): http.c runs it with
 * srv_ext_run_slow on a thread of its own, its connection suspended meanwhile, and answers
 * with the reply. */
bool srv_ext_slow(const char *method, const char *url);
/* Runs the slow extension `url` on the request body into *rep (check_admin.h; rep->body
 * NULL when out of memory). */
void srv_ext_run_slow(kura_db *db, const char *url, const char *body, size_t len,
                      ixadm_reply *rep);

/* ---- heat_http.c ------------------------------------------------------------------------- */

/* True for the heat report's paths: GET /kura/heat (its JSON) and GET /kura/heat.html (the
 * page, heat_page.h). */
bool srv_heat_match(const char *url);

/* Answers a heat request (srv_heat_match): ?window=N (1..300 s, default 60) and ?table=T as
 * heat_report.h; 400 for another method or a bad query, as extension.c's errors. */
enum MHD_Result srv_heat_answer(kura_db *db, struct MHD_Connection *conn, const char *method,
                                const char *url, const char *reqid, bool close);

/* ---- datadir.c --------------------------------------------------------------------------- */

/* Creates an empty directory "kura-server-XXXXXX" under $TMPDIR (or /tmp). *path_out is
 * malloc'ed (caller frees). Errors: KURA_E_IO with the reason. */
kura_status srv_tmpdir_create(char **path_out);

/* Removes `path` and everything under it, through util/io. */
kura_status srv_tmpdir_remove(const char *path);

#endif
