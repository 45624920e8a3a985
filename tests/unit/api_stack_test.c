/*
 * api_stack_test.c - no request body can exhaust a serving thread's stack (issue 14).
 *
 * This file contains a test that sends kura_execute the deepest documents a request may hold,
 * on a thread whose stack is 256 KiB: JSON nested to YAJL's limit (2,048) and past it, items,
 * keys and ExpressionAttributeValues whose maps and lists nest as deep as that JSON allows
 * (~1,000 DynamoDB levels; DynamoDB refuses more than 32), deep expressions and long
 * projection paths. Every one must get its DynamoDB answer, never a crash.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_BYTES (256 * 1024)
#define BODY_BYTES (64 * 1024)

static kura_db *db;
static char *dir;
static char st_failure[1024]; /* the first failure on the small thread (see expr_stack_test) */

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond) && !st_failure[0]) {                                                     \
            int n_ = snprintf(st_failure, sizeof st_failure, "line %d: ", __LINE__);          \
            snprintf(st_failure + n_, sizeof st_failure - (size_t)n_, __VA_ARGS__);          \
        }                                                                                    \
    } while (0)

/* Runs op on body and checks that the response holds `want` (a substring). */
static void expect(int line, const char *op, const char *body, const char *want)
{
    char *out = NULL;
    size_t len = 0;
    kura_execute(db, op, body, strlen(body), &out, &len);
    if ((!out || !strstr(out, want)) && !st_failure[0])
        snprintf(st_failure, sizeof st_failure, "line %d: %s of %zu bytes\n  want: %s\n  got: %.300s",
                 line, op, strlen(body), want, out ? out : "(null)");
    kura_free(out);
}

/* body = head + open x n + middle + close x n + tail */
static const char *nest(char *body, const char *head, const char *open, int n, const char *middle,
                        const char *close, const char *tail)
{
    size_t off = (size_t)snprintf(body, BODY_BYTES, "%s", head);
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(body + off, BODY_BYTES - off, "%s", open);
    off += (size_t)snprintf(body + off, BODY_BYTES - off, "%s", middle);
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(body + off, BODY_BYTES - off, "%s", close);
    off += (size_t)snprintf(body + off, BODY_BYTES - off, "%s", tail);
    CHECK(off < BODY_BYTES - 1, "body buffer too small");
    return body;
}

static void *run_cases(void *arg)
{
    char *b = malloc(BODY_BYTES);
    if (!b)
        abort();
    const char *nesting = "Nesting Levels have exceeded supported limits";

    /* JSON itself: arrays nested to the parser's limit, and one deeper. */
    expect(__LINE__, "PutItem", nest(b, "{\"TableName\":\"tbl\",\"x\":", "[", 2046, "1", "]", "}"),
           "Value null at 'item'");
    expect(__LINE__, "PutItem", nest(b, "{\"TableName\":\"tbl\",\"x\":", "[", 2100, "1", "]", "}"),
           "SerializationException");
    expect(__LINE__, "PutItem", nest(b, "", "{\"a\":", 5000, "1", "}", ""),
           "SerializationException");

    /* An item whose map nests ~1,020 levels (two JSON levels each). */
    expect(__LINE__, "PutItem",
           nest(b, "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"k\"},\"v\":", "{\"M\":{\"a\":",
                1020, "{\"S\":\"x\"}", "}}", "}}"),
           nesting);
    expect(__LINE__, "PutItem",
           nest(b, "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"k\"},\"v\":", "{\"L\":[", 1020,
                "{\"S\":\"x\"}", "]}", "}}"),
           nesting);
    /* The same in a key and in ExpressionAttributeValues. */
    expect(__LINE__, "GetItem",
           nest(b, "{\"TableName\":\"tbl\",\"Key\":{\"pk\":", "{\"M\":{\"a\":", 1020,
                "{\"S\":\"x\"}", "}}", "}}"),
           nesting);
    expect(__LINE__, "PutItem",
           nest(b,
                "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"k\"}},\"ConditionExpression\":"
                "\"a = :v\",\"ExpressionAttributeValues\":{\":v\":",
                "{\"L\":[", 1020, "{\"S\":\"x\"}", "]}", "}}"),
           "Nesting Levels have exceeded supported limits for key :v");

    /* Expressions: 2,000 parentheses (4 KB), a 4 KB projection path. */
    expect(__LINE__, "PutItem",
           nest(b, "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"k\"}},\"ConditionExpression\":\"",
                "(", 2000, "a = :v", ")",
                "\",\"ExpressionAttributeValues\":{\":v\":{\"S\":\"x\"}}}"),
           "redundant parentheses");
    expect(__LINE__, "GetItem",
           nest(b, "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"ProjectionExpression\":\"a",
                ".a", 2000, "", "", "\"}"),
           "too many nesting levels; nesting levels: 2001");
    expect(__LINE__, "GetItem",
           nest(b, "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"ProjectionExpression\":\"a",
                "[1]", 1000, "", "", "\"}"),
           "too many nesting levels; nesting levels: 1001");
    free(b);
    return NULL;
}

static void test_deep_requests_on_a_small_stack(void **state)
{
    pthread_attr_t attr;
    pthread_t th;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, STACK_BYTES), 0);
    assert_int_equal(pthread_create(&th, &attr, run_cases, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
    if (st_failure[0])
        fail_msg("%s", st_failure);
}

static int setup(void **state)
{
    dir = test_mkdtemp("api_stack");
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    if (kura_open(dir, &o, &db) != KURA_OK)
        return -1;
    const char *create = "{\"TableName\":\"tbl\",\"KeySchema\":[{\"AttributeName\":\"pk\","
                         "\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":[{\"AttributeName\":"
                         "\"pk\",\"AttributeType\":\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}";
    char *out = NULL;
    size_t len;
    kura_status s = kura_execute(db, "CreateTable", create, strlen(create), &out, &len);
    kura_free(out);
    return s == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_requests_on_a_small_stack),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
