/*
 * bench_units_test.c - unit tests of kura-bench's building blocks that the smoke test
 * cannot check exactly: histogram percentiles, key and value formats, the JSON layout, the
 * time-left estimate of the progress lines, the benchmark items and kura-http-bench's
 * requests (made without printf, checked against it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <openssl/evp.h>

#include "bench/hist.h"
#include "bench/http/dynamo.h"
#include "bench/item_fields.h"
#include "bench/json.h"
#include "bench/keys.h"
#include "bench/progress.h"

/* Asserts |got - want| <= tol * want, printing both. */
static void assert_near(double got, double want, double tol)
{
    double diff = got > want ? got - want : want - got;
    if (diff > tol * want)
        fail_msg("got %.4f, want %.4f (+-%.0f%%)", got, want, tol * 100);
}

static void test_hist_uniform(void **state)
{
    (void)state;
    bench_hist h;
    bench_hist_init(&h);
    for (uint64_t us = 1; us <= 10000; us++)
        bench_hist_add(&h, us * 1000);
    assert_int_equal(h.count, 10000);
    assert_near(bench_hist_percentile_us(&h, 50), 5000, 0.07);
    assert_near(bench_hist_percentile_us(&h, 99), 9900, 0.07);
    assert_near(bench_hist_percentile_us(&h, 100), 10000, 0.001);
}

static void test_hist_small_exact_and_merge(void **state)
{
    (void)state;
    bench_hist a, b;
    bench_hist_init(&a);
    bench_hist_init(&b);
    assert_true(bench_hist_percentile_us(&a, 50) == 0); /* empty */
    for (int i = 0; i < 100; i++)
        bench_hist_add(&a, 10); /* below BENCH_HIST_EXACT: exact buckets */
    for (int i = 0; i < 100; i++)
        bench_hist_add(&b, 1000000);
    bench_hist_merge(&a, &b);
    assert_int_equal(a.count, 200);
    assert_int_equal(a.min_ns, 10);
    assert_int_equal(a.max_ns, 1000000);
    assert_near(bench_hist_percentile_us(&a, 25), 0.010, 0.01);
    assert_near(bench_hist_percentile_us(&a, 99), 1000, 0.07);
    bench_hist_add(&a, UINT64_MAX); /* the last bucket exists */
    assert_int_equal(a.count, 201);
}

static void test_keys(void **state)
{
    (void)state;
    uint8_t k[16];
    bench_key_format(k, 16, 123);
    assert_memory_equal(k, "0000000000000123", 16);
    bench_key_missing(k, 16, 123);
    assert_memory_equal(k, "000000000000123x", 16);
    bench_key_format(k, 4, 9999);
    assert_memory_equal(k, "9999", 4);
    assert_true(bench_key_fits(16, 1000000));
    assert_true(bench_key_fits(7, 1000000)); /* 999999: 6 digits + the missing byte */
    assert_false(bench_key_fits(6, 1000000));
    assert_false(bench_key_fits(1, 1));
}

static void test_rng_below_in_range(void **state)
{
    (void)state;
    bench_rng r;
    bench_rng_seed(&r, 42);
    uint64_t seen[10] = {0};
    for (int i = 0; i < 10000; i++) {
        uint64_t v = bench_rng_below(&r, 10);
        assert_true(v < 10);
        seen[v]++;
    }
    for (int i = 0; i < 10; i++) /* each bucket near 1000 */
        assert_in_range(seen[i], 800, 1200);
    assert_int_not_equal(bench_seed_mix(1, 2, 3), bench_seed_mix(1, 2, 4));
}

static void test_values_half_compressible(void **state)
{
    (void)state;
    bench_values v;
    assert_int_equal(bench_values_init(&v, 100, 7), KURA_OK);
    size_t pos = 0;
    const uint8_t *a = bench_values_next(&v, &pos);
    assert_memory_equal(a, a + 50, 50); /* each 100-byte piece is 50 bytes twice */
    for (int i = 0; i < 100; i++)
        assert_true(a[i] >= ' ' && a[i] < 127);
    /* walking past the end wraps to the start */
    pos = v.len - 10;
    assert_ptr_equal(bench_values_next(&v, &pos), v.data);
    bench_values_free(&v);
}

/* Writes what `fill` writes through a bench_json and returns the text (caller frees). */
static char *json_text(void (*fill)(bench_json *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    bench_json j;
    assert_true(bj_init(&j, f));
    fill(&j);
    bj_free(&j);
    fclose(f);
    return buf;
}

static void fill_escaping(bench_json *j)
{
    bj_object_begin(j, NULL);
    bj_string(j, "s", "a\"b\\c\n\t\x01");
    bj_string(j, "utf8", "caf\xc3\xa9");
    bj_string(j, "not utf8", "x\xc3y\xff");
    bj_u64(j, "n", 18446744073709551615ull);
    bj_double(j, "d", 0.1);
    bj_double(j, "big", 1e20);
    bj_double(j, "inf", 1.0 / 0.0);
    bj_array_begin(j, "empty");
    bj_array_end(j);
    bj_object_begin(j, "none");
    bj_object_end(j);
    bj_array_begin(j, "list");
    bj_u64(j, NULL, 1);
    bj_object_begin(j, NULL);
    bj_string(j, "k", "v");
    bj_object_end(j);
    bj_array_end(j);
    bj_object_end(j);
}

/* The layout of the results files: the hand-written writer's, which YAJL now produces. */
static void test_json_layout(void **state)
{
    (void)state;
    char *got = json_text(fill_escaping);
    const char *want = "{\n"
                       "  \"s\": \"a\\\"b\\\\c\\n\\t\\u0001\",\n"
                       "  \"utf8\": \"caf\xc3\xa9\",\n"
                       "  \"not utf8\": \"x?y?\",\n"
                       "  \"n\": 18446744073709551615,\n"
                       "  \"d\": 0.1,\n"
                       "  \"big\": 1e+20,\n"
                       "  \"inf\": null,\n"
                       "  \"empty\": [],\n"
                       "  \"none\": {},\n"
                       "  \"list\": [\n"
                       "    1,\n"
                       "    {\n"
                       "      \"k\": \"v\"\n"
                       "    }\n"
                       "  ]\n"
                       "}\n";
    assert_string_equal(got, want);
    free(got);
}

static void fill_empty_top(bench_json *j)
{
    bj_array_begin(j, NULL);
    bj_array_end(j);
}

static void test_json_empty_top_level(void **state)
{
    (void)state;
    char *got = json_text(fill_empty_top);
    assert_string_equal(got, "[]\n");
    free(got);
}

/* A kind that has not run is expected to take the mean of every step so far. */
static void test_progress_estimate(void **state)
{
    (void)state;
    bench_progress p;
    bench_progress_init(&p);
    assert_true(bench_progress_expect(&p, 0) == 0);
    bench_progress_step_done(&p, 0, 2);
    bench_progress_step_done(&p, 0, 4);
    assert_near(bench_progress_expect(&p, 0), 3, 1e-9);
    assert_near(bench_progress_expect(&p, 7), 3, 1e-9);
    bench_progress_step_done(&p, 7, 12);
    assert_near(bench_progress_expect(&p, 7), 12, 1e-9);
    assert_near(bench_progress_expect(&p, 9), 6, 1e-9);
    char buf[64];
    bench_progress_format(buf, sizeof buf, 59.6, 3725, true);
    assert_string_equal(buf, "1:00 elapsed, ~1:02:05 left");
    bench_progress_format(buf, sizeof buf, 0.2, 0, false);
    assert_string_equal(buf, "0:00 elapsed");
}

static const uint64_t some_indexes[] = {0,          1,           19,         20,
                                        996,        997,         12345,      99999,
                                        100000,     123456789,   9999999999, 10000000007,
                                        1ull << 40, 1ull << 62, UINT64_MAX};

static void test_item_fields_match_printf(void **state)
{
    (void)state;
    char want[64];
    for (size_t i = 0; i < sizeof some_indexes / sizeof *some_indexes; i++) {
        unsigned long long x = some_indexes[i];
        bench_item_fields f;
        bench_item_fields_make(x, &f);
        snprintf(want, sizeof want, "user%012llu", x / BENCH_ITEMS_PER_PK % 1000000000000ull);
        assert_string_equal(f.pk, want);
        snprintf(want, sizeof want, "order#%05llu", x % BENCH_ITEMS_PER_PK);
        assert_string_equal(f.sk, want);
        snprintf(want, sizeof want, "Customer Name %010llu", x);
        assert_string_equal(f.name, want);
        snprintf(want, sizeof want, "customer%010llu@example.com", x);
        assert_string_equal(f.email, want);
        snprintf(want, sizeof want, "City %06llu", x % 997);
        assert_string_equal(f.city, want);
        snprintf(want, sizeof want, "%07llu", x * 7919 % 10000000);
        assert_string_equal(f.zip, want);
        for (int t = 0; t < 3; t++) {
            snprintf(want, sizeof want, "tag-%c%05llu", 'a' + t, (x + (uint64_t)t * 31) % 100000);
            assert_string_equal(f.tag[t], want);
        }
        snprintf(want, sizeof want, "%llu.%02llu", x % 100000, x % 100);
        assert_string_equal(f.price, want);
        bench_item_fields k;
        bench_item_key_make(x, &k);
        assert_string_equal(k.pk, f.pk);
        assert_string_equal(k.sk, f.sk);
    }
}

/* Splits an HTTP request into its head (checked against the generator) and body. */
static const char *request_body(const hb_reqgen *g, const kbuf *req, const char *target)
{
    const char *r = (const char *)req->data;
    const char *end = memmem(r, req->len, "\r\n\r\n", 4);
    assert_non_null(end);
    const char *body = end + 4;
    size_t blen = req->len - (size_t)(body - r);
    char want[1024];
    snprintf(want, sizeof want,
             "POST / HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: identity\r\n"
             "Content-Type: application/x-amz-json-1.0\r\nUser-Agent: kura-http-bench\r\n"
             "X-Amz-Target: DynamoDB_20120810.%s\r\nX-Amz-Date: %s\r\n"
             "Authorization: AWS4-HMAC-SHA256 Credential=AKIDKURABENCH/%.8s/us-east-1/"
             "dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
             "Signature=0000000000000000000000000000000000000000000000000000000000000000\r\n"
             "Content-Length: %zu\r\n\r\n",
             g->host, target, g->amz_date, g->amz_date, blen);
    assert_int_equal((size_t)(body - r), strlen(want));
    assert_memory_equal(r, want, strlen(want));
    return body;
}

static void test_http_requests(void **state)
{
    (void)state;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(8123)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    hb_reqgen g;
    hb_reqgen_init(&g, &addr, "bench");
    assert_string_equal(g.host, "127.0.0.1:8123");
    char want[2048];
    for (size_t i = 0; i < sizeof some_indexes / sizeof *some_indexes; i++) {
        uint64_t x = some_indexes[i];
        bench_item_fields f;
        bench_item_fields_make(x, &f);
        kbuf req = KBUF_INIT;

        assert_true(hb_req_item(&g, HB_OP_GET, x, &req));
        kbuf_put_u8(&req, 0);
        req.len--;
        snprintf(want, sizeof want,
                 "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"%s\"}}}",
                 f.pk, f.sk);
        assert_string_equal(request_body(&g, &req, "GetItem"), want);

        kbuf_clear(&req);
        assert_true(hb_req_item(&g, HB_OP_QUERY, x, &req));
        kbuf_put_u8(&req, 0);
        req.len--;
        snprintf(want, sizeof want,
                 "{\"TableName\":\"bench\",\"KeyConditionExpression\":\"pk = :p\","
                 "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"%s\"}}}",
                 f.pk);
        assert_string_equal(request_body(&g, &req, "Query"), want);

        kbuf_clear(&req);
        assert_true(hb_req_item(&g, HB_OP_PUT, x, &req));
        kbuf_put_u8(&req, 0);
        req.len--;
        char b64[4 * sizeof f.data / 3 + 8];
        EVP_EncodeBlock((unsigned char *)b64, f.data, (int)sizeof f.data);
        snprintf(want, sizeof want,
                 "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
                 "\"sk\":{\"S\":\"%s\"},\"name\":{\"S\":\"%s\"},\"email\":{\"S\":\"%s\"},"
                 "\"n\":{\"N\":\"0\"},\"price\":{\"N\":\"%s\"},\"active\":{\"BOOL\":%s},"
                 "\"tags\":{\"SS\":[\"%s\",\"%s\",\"%s\"]},\"profile\":{\"M\":{\"city\":"
                 "{\"S\":\"%s\"},\"zip\":{\"S\":\"%s\"}}},\"data\":{\"B\":\"%s\"}}}",
                 f.pk, f.sk, f.name, f.email, f.price, f.active ? "true" : "false", f.tag[0],
                 f.tag[1], f.tag[2], f.city, f.zip, b64);
        assert_string_equal(request_body(&g, &req, "PutItem"), want);

        kbuf_clear(&req);
        assert_true(hb_req_http(&g, "DescribeTable", "{}", 2, &req));
        kbuf_put_u8(&req, 0);
        req.len--;
        assert_string_equal(request_body(&g, &req, "DescribeTable"), "{}");
        kbuf_free(&req);
    }
}

/* UpdateItem and the ExecuteStatement requests of the PartiQL comparison (SUITE=partiql):
 * each body as an SDK sends it, and a SELECT's response check wants one item. */
static void test_http_partiql_requests(void **state)
{
    (void)state;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(8123)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    hb_reqgen g;
    hb_reqgen_init(&g, &addr, "bench");
    char want[1024];
    bench_item_fields f;
    bench_item_fields_make(4321, &f);
    kbuf req = KBUF_INIT;
    assert_true(hb_req_item(&g, HB_OP_UPDATE, 4321, &req));
    kbuf_put_u8(&req, 0);
    req.len--;
    snprintf(want, sizeof want,
             "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"%s\"}},"
             "\"UpdateExpression\":\"SET n = n + :one\",\"ExpressionAttributeValues\":"
             "{\":one\":{\"N\":\"1\"}}}",
             f.pk, f.sk);
    assert_string_equal(request_body(&g, &req, "UpdateItem"), want);
    const char *stmts[] = {"SELECT * FROM \\\"bench\\\" WHERE pk = ? AND sk = ?",
                           "UPDATE \\\"bench\\\" SET n = n + 1 WHERE pk = ? AND sk = ?"};
    const hb_op ops[] = {HB_OP_PQ_GET, HB_OP_PQ_UPDATE};
    for (int i = 0; i < 2; i++) {
        kbuf_clear(&req);
        assert_true(hb_req_item(&g, ops[i], 4321, &req));
        kbuf_put_u8(&req, 0);
        req.len--;
        snprintf(want, sizeof want,
                 "{\"Statement\":\"%s\",\"Parameters\":[{\"S\":\"%s\"},{\"S\":\"%s\"}]}", stmts[i],
                 f.pk, f.sk);
        assert_string_equal(request_body(&g, &req, "ExecuteStatement"), want);
    }
    kbuf_free(&req);
    assert_true(hb_resp_ok(HB_OP_PQ_GET, "{\"Items\":[{\"pk\":{\"S\":\"a\"}}]}"));
    assert_false(hb_resp_ok(HB_OP_PQ_GET, "{\"Items\":[]}"));
    assert_true(hb_resp_ok(HB_OP_PQ_UPDATE, "{\"Items\":[]}"));
}

/* With a GSI (--gsi): items carry grp ("team" + the pk's digits), the table is created with
 * by_grp, and HB_OP_QUERY_GSI queries it; its response check is the Query's. */
static void test_http_gsi_requests(void **state)
{
    (void)state;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(8123)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    hb_reqgen g;
    hb_reqgen_init(&g, &addr, "bench");
    assert_false(g.gsi);
    g.gsi = true;
    char want[2048];
    uint64_t x = 12345;
    bench_item_fields f;
    bench_item_fields_make(x, &f);
    kbuf req = KBUF_INIT;
    assert_true(hb_req_item(&g, HB_OP_QUERY_GSI, x, &req));
    kbuf_put_u8(&req, 0);
    req.len--;
    snprintf(want, sizeof want,
             "{\"TableName\":\"bench\",\"IndexName\":\"by_grp\","
             "\"KeyConditionExpression\":\"grp = :g\","
             "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"team%s\"}}}",
             f.pk + 4);
    assert_string_equal(request_body(&g, &req, "Query"), want);

    kbuf_clear(&req);
    assert_true(hb_req_item(&g, HB_OP_PUT, x, &req));
    kbuf_put_u8(&req, 0);
    req.len--;
    snprintf(want, sizeof want,
             "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
             "\"sk\":{\"S\":\"%s\"},\"grp\":{\"S\":\"team%s\"},\"name\":",
             f.pk, f.sk, f.pk + 4);
    assert_memory_equal(request_body(&g, &req, "PutItem"), want, strlen(want));
    kbuf_free(&req);

    char body[2048];
    size_t n = hb_create_table_body(&g, body, sizeof body);
    assert_true(n > 0 && n == strlen(body));
    assert_non_null(strstr(body, "{\"AttributeName\":\"grp\",\"AttributeType\":\"S\"}"));
    assert_non_null(strstr(body, "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_grp\","
                                 "\"KeySchema\":[{\"AttributeName\":\"grp\",\"KeyType\":"
                                 "\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                                 "\"Projection\":{\"ProjectionType\":\"ALL\"}}]"));
    g.gsi = false;
    n = hb_create_table_body(&g, body, sizeof body);
    assert_null(strstr(body, "grp"));

    assert_true(hb_resp_ok(HB_OP_QUERY_GSI, "{\"Count\":20,\"Items\":[]}"));
    assert_false(hb_resp_ok(HB_OP_QUERY_GSI, "{\"Count\": 19}"));
    assert_int_equal(hb_resp_count("{\"Items\":[],\"Count\": 1}"), 1);
    assert_int_equal(hb_resp_count("{}"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_uniform),
        cmocka_unit_test(test_hist_small_exact_and_merge),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_rng_below_in_range),
        cmocka_unit_test(test_values_half_compressible),
        cmocka_unit_test(test_json_layout),
        cmocka_unit_test(test_json_empty_top_level),
        cmocka_unit_test(test_progress_estimate),
        cmocka_unit_test(test_item_fields_match_printf),
        cmocka_unit_test(test_http_requests),
        cmocka_unit_test(test_http_gsi_requests),
        cmocka_unit_test(test_http_partiql_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
