/*
 * conn.c - the HTTP/1.1 client pieces of kura-http-bench (see conn.h).
 *
 * The parser is deliberately small: it looks for the end of the head, reads the status code
 * from the status line and scans the header lines for Content-Length and Connection (names
 * compared case-insensitively). It never copies; the caller keeps the bytes in its buffer.
 */
#include "bench/http/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/status.h"

/* Whether the header line [p, end) is "name: value"; *value_out gets the trimmed value. */
static bool header_is(const char *p, const char *end, const char *name, const char **value_out,
                      size_t *vlen_out)
{
    size_t n = strlen(name);
    if ((size_t)(end - p) <= n || strncasecmp(p, name, n) != 0 || p[n] != ':') return false;
    const char *v = p + n + 1;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    const char *e = end;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *value_out = v;
    *vlen_out = (size_t)(e - v);
    return true;
}

hb_parse_result hb_resp_parse(const char *buf, size_t len, hb_resp *resp_out)
{
    const char *head_end = memmem(buf, len, "\r\n\r\n", 4);
    if (!head_end) return len > 64 * 1024 ? HB_PARSE_MALFORMED : HB_PARSE_MORE;
    if (len < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ') return HB_PARSE_MALFORMED;
    int status = 0;
    for (int i = 9; i < 12; i++) {
        if (buf[i] < '0' || buf[i] > '9') return HB_PARSE_MALFORMED;
        status = status * 10 + (buf[i] - '0');
    }
    hb_resp r = {.status = status, .head_len = (size_t)(head_end - buf) + 4};
    bool have_length = false;
    const char *p = (const char *)memmem(buf, (size_t)(head_end + 2 - buf), "\r\n", 2) + 2;
    while (p < head_end + 2) {
        const char *eol = memmem(p, (size_t)(head_end + 2 - p), "\r\n", 2);
        const char *v;
        size_t vlen;
        if (header_is(p, eol, "Content-Length", &v, &vlen)) {
            char *stop;
            char num[24];
            if (vlen == 0 || vlen >= sizeof num) return HB_PARSE_MALFORMED;
            memcpy(num, v, vlen);
            num[vlen] = 0;
            r.body_len = (size_t)strtoull(num, &stop, 10);
            if (*stop) return HB_PARSE_MALFORMED;
            have_length = true;
        } else if (header_is(p, eol, "Connection", &v, &vlen)) {
            r.close = vlen == 5 && strncasecmp(v, "close", 5) == 0;
        } else if (header_is(p, eol, "Transfer-Encoding", &v, &vlen)) {
            return HB_PARSE_MALFORMED;
        }
        p = eol + 2;
    }
    /* 204 and 304 carry no body; every other response must say how long it is */
    if (!have_length && status != 204 && status != 304) return HB_PARSE_MALFORMED;
    if (len < r.head_len + r.body_len) return HB_PARSE_MORE;
    *resp_out = r;
    return HB_PARSE_DONE;
}

kura_status hb_parse_url(const char *url, struct sockaddr_in *addr_out)
{
    const char *p = url;
    if (strncmp(p, "http://", 7) == 0) p += 7;
    const char *colon = strrchr(p, ':');
    if (!colon || colon == p)
        return kura_err(KURA_E_INVALID, "url '%s': want http://HOST:PORT", url);
    char host[64];
    size_t hlen = (size_t)(colon - p);
    if (hlen >= sizeof host) return kura_err(KURA_E_INVALID, "url '%s': host too long", url);
    memcpy(host, p, hlen);
    host[hlen] = 0;
    char *stop;
    unsigned long port = strtoul(colon + 1, &stop, 10);
    if (port == 0 || port > 65535 || (*stop && strcmp(stop, "/") != 0))
        return kura_err(KURA_E_INVALID, "url '%s': bad port", url);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0) strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return kura_err(KURA_E_INVALID, "url '%s': host must be an IPv4 address", url);
    *addr_out = a;
    return KURA_OK;
}

kura_status hb_connect(const struct sockaddr_in *addr, bool nonblock, int *fd_out, int *errno_out)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (errno_out) *errno_out = e;
        return kura_err(KURA_E_IO, "connect to port %u: %s", ntohs(addr->sin_port), strerror(e));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    *fd_out = fd;
    return KURA_OK;
}

static kura_status send_all(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len > 0) {
        ssize_t n = send(fd, c, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return kura_err(KURA_E_IO, "send: %s", n < 0 ? strerror(errno) : "closed");
        c += n;
        len -= (size_t)n;
    }
    return KURA_OK;
}

kura_status hb_call(int fd, const void *req, size_t req_len, int *status_out, kbuf *body)
{
    kura_status s = send_all(fd, req, req_len);
    if (s != KURA_OK) return s;
    kbuf in = KBUF_INIT;
    hb_resp r;
    hb_parse_result pr = HB_PARSE_MORE;
    while (pr == HB_PARSE_MORE) {
        if (!kbuf_reserve(&in, 16384)) {
            s = kura_err(KURA_E_NOMEM, "response buffer");
            break;
        }
        ssize_t n = recv(fd, in.data + in.len, in.cap - in.len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            s = kura_err(KURA_E_IO, "recv: %s", n < 0 ? strerror(errno) : "connection closed");
            break;
        }
        in.len += (size_t)n;
        pr = hb_resp_parse((const char *)in.data, in.len, &r);
    }
    if (s == KURA_OK && pr == HB_PARSE_MALFORMED)
        s = kura_err(KURA_E_CORRUPTION, "malformed HTTP response: %.200s", (const char *)in.data);
    if (s == KURA_OK) {
        kbuf_clear(body);
        if (!kbuf_append(body, in.data + r.head_len, r.body_len) || !kbuf_put_u8(body, 0))
            s = kura_err(KURA_E_NOMEM, "response body");
        else
            body->len--; /* NUL-terminated for strstr, not counted */
        *status_out = r.status;
    }
    kbuf_free(&in);
    return s;
}
