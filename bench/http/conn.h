/*
 * conn.h - the HTTP/1.1 client side of kura-http-bench: connecting to a loopback server, the
 * response parser (status line, headers, Content-Length framing) and a blocking call for the
 * few requests made outside the timed loops (setup, start-up polling).
 *
 * Only what a DynamoDB endpoint answers is understood: a response must carry Content-Length
 * (kura-server and dynalite always send it); a chunked response is reported as malformed, so a
 * server that changes its framing fails the benchmark loudly instead of hanging it.
 */
#ifndef KURA_BENCH_HTTP_CONN_H
#define KURA_BENCH_HTTP_CONN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

/* A parsed response head. */
typedef struct hb_resp {
    int status;      /* 200, 400, ... */
    size_t head_len; /* bytes up to and including the blank line */
    size_t body_len; /* Content-Length */
    bool close;      /* "Connection: close": the server ends the connection after it */
} hb_resp;

typedef enum hb_parse_result {
    HB_PARSE_MORE = 0,      /* the response is not complete yet */
    HB_PARSE_DONE = 1,      /* buf[0..head_len+body_len) is one complete response */
    HB_PARSE_MALFORMED = -1 /* not an HTTP/1.x response with Content-Length */
} hb_parse_result;

/* Parses the response at the start of buf[0..len). On HB_PARSE_DONE fills *resp_out; the
 * bytes after head_len + body_len belong to a later response. */
hb_parse_result hb_resp_parse(const char *buf, size_t len, hb_resp *resp_out);

/* Parses "http://HOST:PORT[/]" (HOST a dotted IPv4 address or "localhost") into *addr_out.
 * KURA_E_INVALID with a message otherwise. */
kura_status hb_parse_url(const char *url, struct sockaddr_in *addr_out);

/* Opens a TCP connection (TCP_NODELAY) to addr; non-blocking after the connect if
 * `nonblock`. The connect itself is blocking (loopback: it completes or is refused at once).
 * KURA_E_IO with the errno text on failure; *errno_out (may be NULL) gets the errno. */
kura_status hb_connect(const struct sockaddr_in *addr, bool nonblock, int *fd_out, int *errno_out);

/* Sends one complete request on the blocking socket fd and reads its response: *status_out
 * gets the HTTP status and `body` (cleared first) the response body. KURA_E_IO on a socket
 * error or a closed connection, KURA_E_CORRUPTION on a malformed response. */
kura_status hb_call(int fd, const void *req, size_t req_len, int *status_out, kbuf *body);

#endif
