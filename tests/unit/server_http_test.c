/*
 * server_http_test.c - This file contains the tests of kura-server's HTTP layer
 * (server/http.c, respond.c, auth.c): a server on a free loopback port over a database in a
 * temporary directory, driven with raw HTTP/1.1 so every header and status is visible —
 * DynamoDB's response headers (x-amzn-RequestId, x-amz-crc32), the answers to other
 * methods, content types and targets, the 16 MB limit with and without Content-Length,
 * keep-alive, and --auth refusing an unsigned request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "server/reqid.h"
#include "server/server.h"
#include "testutil.h"
#include "util/thread.h"

typedef struct fixture {
    char *dir;
    kura_db *db;
    srv_config cfg;
    srv_http *http;
} fixture;

static int start(void **state, const char *key, const char *secret)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("server_http");
    assert_kura_ok(kura_open(f->dir, NULL, &f->db));
    f->cfg.host = "127.0.0.1";
    f->cfg.threads = 2;
    f->cfg.max_connections = 64;
    f->cfg.timeout_s = 5;
    f->cfg.auth_key = key;
    f->cfg.auth_secret = secret;
    assert_kura_ok(srv_http_start(f->db, &f->cfg, &f->http));
    assert_true(srv_http_port(f->http) > 0);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return start(state, NULL, NULL);
}

static int setup_auth(void **state)
{
    return start(state, "AKIDKURA", "secret");
}

static int teardown(void **state)
{
    fixture *f = *state;
    srv_http_stop(f->http, 1000);
    assert_kura_ok(kura_close(f->db));
    test_rmrf(f->dir);
    free(f);
    return 0;
}

static int connect_to(const fixture *f)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(srv_http_port(f->http));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {60, 0}; /* only a hang reaches it */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0) return; /* the server may close early (a refused body) */
        c += w;
        n -= (size_t)w;
    }
}

/* One response: status, the head, the body (NUL-terminated copies, caller frees). */
typedef struct resp {
    int status;
    char head[4096];
    char *body;
    size_t body_len;
} resp;

static void read_resp(int fd, resp *r)
{
    static char buf[1 << 16];
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) fail_msg("connection closed before a response (%zu bytes)", len);
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - buf) + 4;
    snprintf(r->head, sizeof r->head, "%.*s", (int)head_len, buf);
    r->status = atoi(buf + 9);
    const char *cl = strcasestr(r->head, "\r\nContent-Length: ");
    assert_non_null(cl);
    r->body_len = strtoul(cl + 18, NULL, 10);
    while (len < head_len + r->body_len) {
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) fail_msg("connection closed inside a response body");
        len += (size_t)n;
    }
    r->body = strndup(buf + head_len, r->body_len);
}

/* Sends "POST / HTTP/1.1" with the headers `extra` and body, returns the response. */
static void post(int fd, const char *extra, const char *body, resp *r)
{
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: %zu\r\n\r\n", extra,
                     strlen(body));
    send_all(fd, req, (size_t)n);
    send_all(fd, body, strlen(body));
    read_resp(fd, r);
}

static const char *header_value(const resp *r, const char *name, char *out, size_t cap)
{
    char key[128];
    snprintf(key, sizeof key, "\r\n%s: ", name);
    const char *p = strcasestr(r->head, key);
    if (!p) return NULL;
    p += strlen(key);
    snprintf(out, cap, "%.*s", (int)strcspn(p, "\r"), p);
    return out;
}

#define JSON_CT "Content-Type: application/x-amz-json-1.0\r\n"
#define TARGET(op) "X-Amz-Target: DynamoDB_20120810." op "\r\n"
#define ERR(type) "{\"__type\":\"com.amazonaws.dynamodb.v20120810#" type "\",\"message\":"

static void test_dynamodb_headers(void **state)
{
    fixture *f = *state;
    int fd = connect_to(f);
    resp r;
    post(fd, JSON_CT TARGET("ListTables"), "{}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"TableNames\":[]}");
    char v[128];
    assert_string_equal(header_value(&r, "Content-Type", v, sizeof v),
                        "application/x-amz-json-1.0");
    char crc[32];
    snprintf(crc, sizeof crc, "%lu", crc32(0, (const Bytef *)r.body, (uInt)r.body_len));
    assert_string_equal(header_value(&r, "x-amz-crc32", v, sizeof v), crc);
    assert_non_null(header_value(&r, "x-amzn-RequestId", v, sizeof v));
    assert_int_equal(strlen(v), SRV_REQID_LEN);
    assert_int_equal(strspn(v, "0123456789ABCDEFGHIJKLMNOPQRSTUV"), SRV_REQID_LEN);
    char first_id[SRV_REQID_LEN + 1];
    strcpy(first_id, v);
    free(r.body);
    /* keep-alive: the same connection answers again, with a new id */
    post(fd, TARGET("ListTables"), "{}", &r);
    assert_int_equal(r.status, 200);
    assert_string_not_equal(header_value(&r, "x-amzn-RequestId", v, sizeof v), first_id);
    free(r.body);
    close(fd);
}

static void test_operation_errors(void **state)
{
    fixture *f = *state;
    int fd = connect_to(f);
    resp r;
    post(fd, JSON_CT, "{}", &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(
        r.body, ERR("UnknownOperationException") "\"An unknown operation was requested.\"}");
    free(r.body);
    post(fd, JSON_CT "X-Amz-Target: DynamoDB_20111205.ListTables\r\n", "{}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "UnknownOperationException"));
    free(r.body);
    post(fd, "Content-Type: application/json; charset=utf-8\r\n" TARGET("ListTables"), "{x", &r);
    assert_int_equal(r.status, 400);
    /* not JSON: Coral's error alone, as DynamoDB */
    assert_string_equal(r.body, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}");
    free(r.body);
    post(fd, JSON_CT TARGET("GetItem"), "{\"TableName\":\"nothere\",\"Key\":{\"k\":{\"S\":\"a\"}}}",
         &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, ERR("ResourceNotFoundException")));
    free(r.body);
    post(fd, "Content-Type: text/plain\r\n" TARGET("ListTables"), "{}", &r);
    assert_int_equal(r.status, 404);
    assert_string_equal(
        r.body, ERR("UnknownOperationException") "\"An unknown operation was requested.\"}");
    free(r.body);
    close(fd);

    fd = connect_to(f);
    const char get[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    send_all(fd, get, sizeof get - 1);
    read_resp(fd, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.body,
                        ERR("MissingAuthenticationToken") "\"Request must contain either a valid "
                                                          "(registered) AWS access key ID "
                                                          "or X.509 certificate.\"}");
    free(r.body);
    close(fd);
}

static void test_body_limit(void **state)
{
    fixture *f = *state;
    resp r;
    const char *too_large =
        ERR("RequestEntityTooLarge") "\"Request body must be at most 16777216 bytes\"}";
    /* announced: refused before the body is sent */
    int fd = connect_to(f);
    const char big[] = "POST / HTTP/1.1\r\nHost: x\r\n" JSON_CT TARGET(
        "ListTables") "Content-Length: 16777217\r\n\r\n";
    send_all(fd, big, sizeof big - 1);
    read_resp(fd, &r);
    assert_int_equal(r.status, 413);
    assert_string_equal(r.body, too_large);
    free(r.body);
    close(fd);

    /* chunked: dropped past the limit, refused at the end */
    fd = connect_to(f);
    const char chunked[] = "POST / HTTP/1.1\r\nHost: x\r\n" JSON_CT TARGET(
        "ListTables") "Transfer-Encoding: chunked\r\n\r\n";
    send_all(fd, chunked, sizeof chunked - 1);
    size_t chunk = 1 << 20;
    char *data = malloc(chunk + 32);
    int n = snprintf(data, 32, "%zx\r\n", chunk);
    memset(data + n, ' ', chunk);
    memcpy(data + n + chunk, "\r\n", 2);
    for (int i = 0; i < 17; i++)
        send_all(fd, data, (size_t)n + chunk + 2);
    send_all(fd, "0\r\n\r\n", 5);
    read_resp(fd, &r);
    assert_int_equal(r.status, 413);
    assert_string_equal(r.body, too_large);
    free(r.body);
    free(data);
    close(fd);

    /* the server goes on */
    fd = connect_to(f);
    post(fd, JSON_CT TARGET("ListTables"), "{}", &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    close(fd);
}

static void test_auth_refuses_unsigned(void **state)
{
    fixture *f = *state;
    int fd = connect_to(f);
    resp r;
    post(fd, JSON_CT TARGET("ListTables"), "{}", &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(
        r.body,
        ERR("MissingAuthenticationTokenException") "\"Request is missing Authentication Token\"}");
    free(r.body);
    close(fd);
    /* refused from the headers, before the body: the connection is closed after the answer */
    fd = connect_to(f);
    post(fd,
         JSON_CT TARGET("ListTables") "X-Amz-Date: 20200101T000000Z\r\n"
                                      "Authorization: AWS4-HMAC-SHA256 Credential=AKIDKURA/"
                                      "20200101/us-east-1/dynamodb/aws4_request, "
                                      "SignedHeaders=host, Signature=00\r\n",
         "{}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(
        strstr(r.body, ERR("InvalidSignatureException") "\"Signature expired: 20200101T000000Z is "
                                                        "now earlier than "));
    free(r.body);
    close(fd);
    /* a message quoting invalid UTF-8 stays valid JSON text */
    fd = connect_to(f);
    post(fd, JSON_CT TARGET("ListTables") "Authorization: AWS4-\xff\r\n", "{}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "Authorization=AWS4-\xef\xbf\xbd\"}"));
    free(r.body);
    close(fd);
}

/* Shutdown: a request whose body is still arriving when the server is stopped is answered
 * (with Connection: close) before srv_http_stop() returns.
 *
 * The order is made, not waited for: the body's last byte is sent once the server has the
 * request's head (srv_http_activity counts it) and has stopped listening (a connect is
 * refused: srv_http_stop() shuts the listening socket after it marks the server stopping). */
enum { STOP_DEADLINE_S = 60 }; /* only a hang reaches it */

typedef struct late_body {
    int fd;
    uint16_t port;
    bool saw_stop; /* a connect was refused before the body was finished */
    resp r;
} late_body;

/* Connects to the port every millisecond until a connect is refused; false after 60 s. A
 * connection accepted meanwhile is closed at once (an idle connection, never a request). */
static bool wait_until_refused(uint16_t port)
{
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint64_t deadline = know_ns() + STOP_DEADLINE_S * 1000000000ull;
    while (know_ns() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return false;
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        close(fd);
        if (rc != 0) return true;
        usleep(1000);
    }
    return false;
}

static void *finish_body(void *arg)
{
    late_body *lb = arg;
    lb->saw_stop = wait_until_refused(lb->port);
    send_all(lb->fd, "}", 1);
    read_resp(lb->fd, &lb->r);
    return NULL;
}

static void test_stop_finishes_requests(void **state)
{
    fixture *f = *state;
    late_body lb = {connect_to(f), srv_http_port(f->http), false, {0}};
    const char head[] =
        "POST / HTTP/1.1\r\nHost: x\r\n" JSON_CT TARGET("ListTables") "Content-Length: 2\r\n\r\n{";
    uint64_t started = 0;
    assert_false(srv_http_activity(f->http, &started));
    assert_int_equal(started, 0);
    send_all(lb.fd, head, sizeof head - 1);
    /* the server has read the head: the request is started and in flight */
    uint64_t deadline = know_ns() + STOP_DEADLINE_S * 1000000000ull;
    bool inflight;
    while (!(inflight = srv_http_activity(f->http, &started)) && know_ns() < deadline)
        usleep(1000);
    if (!inflight || started != 1)
        fail_msg("the request is not in flight after %d s (%llu started)", STOP_DEADLINE_S,
                 (unsigned long long)started);
    kthread t;
    assert_true(kthread_start(&t, finish_body, &lb));
    srv_http_stop(f->http, STOP_DEADLINE_S * 1000);
    f->http = NULL;
    kthread_join(t);
    assert_true(lb.saw_stop);
    assert_int_equal(lb.r.status, 200);
    assert_string_equal(lb.r.body, "{\"TableNames\":[]}");
    char v[64];
    assert_string_equal(header_value(&lb.r, "Connection", v, sizeof v), "close");
    free(lb.r.body);
    close(lb.fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dynamodb_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operation_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_body_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auth_refuses_unsigned, setup_auth, teardown),
        cmocka_unit_test_setup_teardown(test_stop_finishes_requests, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
