/*
 * respond.c - This file contains how kura-server answers: the headers every DynamoDB
 * response carries, the error bodies the server makes itself (kura_execute() makes the
 * others), and the log line of a failure.
 *
 * Every response, success or error, has
 *   Content-Type: application/x-amz-json-1.0 (the heat page, text/html: srv_respond_as)
 *   x-amzn-RequestId: <52 characters>
 *   x-amz-crc32: <CRC32 (IEEE, zlib's crc32) of the body, decimal>
 * SDKs check x-amz-crc32 and retry on a mismatch, so it is computed over the exact bytes
 * sent. Bodies are handed to libmicrohttpd without a copy, with the function that frees them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libdeflate.h>

#include "server/server.h"
#include "util/buf.h"

enum MHD_Result srv_respond(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                            void (*free_fn)(void *), const char *reqid, bool close)
{
    return srv_respond_as(conn, status, "application/x-amz-json-1.0", body, len, free_fn, reqid,
                          close);
}

enum MHD_Result srv_respond_as(struct MHD_Connection *conn, unsigned status,
                               const char *content_type, char *body, size_t len,
                               void (*free_fn)(void *), const char *reqid, bool close)
{
    char crc[16];
    snprintf(crc, sizeof crc, "%lu", (unsigned long)libdeflate_crc32(0, body, len));
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, body, free_fn);
    if (!r) {
        free_fn(body);
        return MHD_NO;
    }
    bool ok =
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) == MHD_YES &&
        MHD_add_response_header(r, "x-amzn-RequestId", reqid) == MHD_YES &&
        MHD_add_response_header(r, "x-amz-crc32", crc) == MHD_YES &&
        (!close || MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES);
    enum MHD_Result res = ok ? MHD_queue_response(conn, status, r) : MHD_NO;
    MHD_destroy_response(r);
    return res;
}

/* The length of the UTF-8 sequence at p (1..4), or 0 if it is not valid UTF-8 (overlong
 * forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const unsigned char *p)
{
    size_t n = p[0] < 0x80                    ? 1
               : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                              : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* Appends `s` as the contents of a JSON string: RFC 8259 escapes, and U+FFFD for each byte
 * that is not part of valid UTF-8 (messages may quote a client's header). */
static bool json_escape(kbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = 1;
        bool ok;
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            ok = kbuf_append(b, e, 2);
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            ok = kbuf_append(b, e, 6);
        } else if ((n = utf8_len(p)) > 0) {
            ok = kbuf_append(b, p, n);
        } else {
            n = 1;
            ok = kbuf_append(b, "\xef\xbf\xbd", 3);
        }
        if (!ok) return false;
        p += n;
    }
    return true;
}

enum MHD_Result srv_respond_error(struct MHD_Connection *conn, unsigned status, const char *type,
                                  const char *message, const char *reqid, bool close)
{
    kbuf b = {0};
    static const char pre[] = "{\"__type\":\"" SRV_ERROR_PREFIX;
    bool ok = kbuf_append(&b, pre, sizeof pre - 1) && json_escape(&b, type) &&
              kbuf_append(&b, "\",\"message\":\"", 13) && json_escape(&b, message) &&
              kbuf_append(&b, "\"}", 2);
    if (!ok) {
        kbuf_free(&b);
        return MHD_NO;
    }
    return srv_respond(conn, status, (char *)b.data, b.len, free, reqid, close);
}

void srv_log_error(const char *reqid, const char *operation, const char *type, const char *message)
{
    struct timespec ts;
    struct tm tm;
    char when[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    /* One fprintf: stderr is unbuffered, and a single call keeps a line whole between
     * threads. */
    fprintf(stderr, "%s.%03ldZ kura-server: request %s %s: %s: %s\n", when, ts.tv_nsec / 1000000,
            reqid, operation ? operation : "-", type, message);
}
