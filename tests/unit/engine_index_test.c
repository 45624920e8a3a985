/*
 * engine_index_test.c - a table's indexes maintained by every write operation (engine/
 * table_index.c with index/): random PutItem, UpdateItem, DeleteItem and BatchWriteItem that
 * add, change, retype (within the allowed types) and remove index key attributes, then every
 * index recomputed from the items and compared with its tree (tests/crash/index_check.c),
 * before and after a reopen; writes that would give an index key attribute the wrong type or
 * an empty value are refused and change nothing; the GSI applier's lag and waits.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index_check.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"

static kura_status exec(const char *op, const char *body, char **out)
{
    size_t len = 0;
    *out = NULL;
    return kura_execute(db, op, body, strlen(body), out, &len);
}

static void ok(const char *op, const char *body)
{
    char *out = NULL;
    kura_status s = exec(op, body, &out);
    if (s != KURA_OK)
        fail_msg("%s %s\n  -> %s: %s", op, body, kura_status_str(s), out);
    kura_free(out);
}

static void err(const char *op, const char *body, const char *want_msg)
{
    char *out = NULL;
    kura_status s = exec(op, body, &out);
    if (s == KURA_OK || !strstr(out, want_msg))
        fail_msg("%s %s\n  -> %s: %s\n  expected: %s", op, body, kura_status_str(s), out,
                 want_msg);
    kura_free(out);
}

static const char *CREATE =
    "{\"TableName\":\"Tix\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"lsk\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"gpk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"gsk\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"a\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"b\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"c\",\"AttributeType\":\"B\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByLsk\",\"KeySchema\":["
    "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"lsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"x\"]}}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByG\",\"KeySchema\":["
    "{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"gsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}},"
    "{\"IndexName\":\"Multi\",\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"b\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"c\",\"KeyType\":"
    "\"RANGE\"},{\"AttributeName\":\"gsk\",\"KeyType\":\"RANGE\"}],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}";

static int setup(void **state)
{
    dir = test_mkdtemp("engine_index");
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.memtable_budget_bytes = 1 << 20; /* small: index checkpoints and flushes happen */
    if (kura_open(dir, &o, &db) != KURA_OK)
        return -1;
    char *out = NULL;
    kura_status s = exec("CreateTable", CREATE, &out);
    if (s != KURA_OK)
        fprintf(stderr, "CreateTable: %s\n", out);
    kura_free(out);
    return s == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

static void reopen(void)
{
    assert_kura_ok(kura_close(db));
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.memtable_budget_bytes = 1 << 20;
    assert_kura_ok(kura_open(dir, &o, &db));
}

static void check(void)
{
    kura_status s = index_check_table(db, "Tix", 30000);
    if (s != KURA_OK)
        fail_msg("%s", kura_last_error());
}

/* The attributes of a random item: each index attribute present or not. */
static int item_json(uint64_t *rng, int k, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"}", k % 17, k);
    if (test_rand(rng) % 4)
        n += snprintf(buf + n, cap - n, ",\"lsk\":{\"N\":\"%d\"}", (int)(test_rand(rng) % 50));
    if (test_rand(rng) % 4)
        n += snprintf(buf + n, cap - n, ",\"gpk\":{\"S\":\"g%d\"}", (int)(test_rand(rng) % 9));
    if (test_rand(rng) % 3)
        n += snprintf(buf + n, cap - n, ",\"gsk\":{\"N\":\"%d.5\"}", (int)(test_rand(rng) % 30));
    if (test_rand(rng) % 3)
        n += snprintf(buf + n, cap - n, ",\"a\":{\"S\":\"a%d\"},\"b\":{\"N\":\"%d\"}",
                      (int)(test_rand(rng) % 3), (int)(test_rand(rng) % 3));
    if (test_rand(rng) % 2)
        n += snprintf(buf + n, cap - n, ",\"c\":{\"B\":\"%s\"}",
                      test_rand(rng) % 2 ? "AAE=" : "/w==");
    if (test_rand(rng) % 2)
        n += snprintf(buf + n, cap - n, ",\"x\":{\"S\":\"x%d\"}", (int)(test_rand(rng) % 99));
    if (test_rand(rng) % 2)
        n += snprintf(buf + n, cap - n, ",\"y\":{\"L\":[{\"N\":\"%d\"}]}", k);
    return n + snprintf(buf + n, cap - n, "}");
}

static void test_random_writes(void **state)
{
    uint64_t rng = test_seed();
    char item[1024], body[8192];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 1500; i++) {
            int k = (int)(test_rand(&rng) % 200);
            unsigned op = (unsigned)(test_rand(&rng) % 10);
            if (op < 4) {
                item_json(&rng, k, item, sizeof item);
                snprintf(body, sizeof body, "{\"TableName\":\"Tix\",\"Item\":%s}", item);
                ok("PutItem", body);
            } else if (op < 7) {
                const char *upd[] = {"SET gpk = :g, lsk = :n", "REMOVE gpk", "SET x = :g",
                                     "SET gsk = :n ADD b :n", "REMOVE lsk, a SET c = :c",
                                     "SET a = :g, b = :n, c = :c, gsk = :n"};
                snprintf(body, sizeof body,
                         "{\"TableName\":\"Tix\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
                         "\"s%d\"}},\"UpdateExpression\":\"%s\",\"ExpressionAttributeValues\":"
                         "{\":g\":{\"S\":\"u%d\"},\":n\":{\"N\":\"%d\"},\":c\":{\"B\":\"AQ==\"}}}",
                         k % 17, k, upd[test_rand(&rng) % 6], (int)(test_rand(&rng) % 5),
                         (int)(test_rand(&rng) % 7));
                /* ExpressionAttributeValues unused by some: DynamoDB refuses those; skip */
                char *out = NULL;
                kura_status s = exec("UpdateItem", body, &out);
                if (s != KURA_OK && !strstr(out, "unused in expressions"))
                    fail_msg("UpdateItem %s\n  -> %s", body, out);
                kura_free(out);
            } else if (op < 8) {
                snprintf(body, sizeof body,
                         "{\"TableName\":\"Tix\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
                         "\"s%d\"}}}",
                         k % 17, k);
                ok("DeleteItem", body);
            } else {
                int n = snprintf(body, sizeof body, "{\"RequestItems\":{\"Tix\":[");
                for (int j = 0; j < 5; j++) {
                    int kk = (k + j * 37) % 200;
                    if (j % 3 == 2) {
                        n += snprintf(body + n, sizeof body - n,
                                      "%s{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"p%d\"},"
                                      "\"sk\":{\"S\":\"s%d\"}}}}",
                                      j ? "," : "", kk % 17, kk);
                    } else {
                        item_json(&rng, kk, item, sizeof item);
                        n += snprintf(body + n, sizeof body - n,
                                      "%s{\"PutRequest\":{\"Item\":%s}}", j ? "," : "", item);
                    }
                }
                snprintf(body + n, sizeof body - n, "]}}");
                ok("BatchWriteItem", body);
            }
        }
        check();
        if (round == 1)
            reopen();
    }
    reopen();
    check();
}

static void test_invalid_index_values(void **state)
{
    ok("PutItem", "{\"TableName\":\"Tix\",\"Item\":{\"pk\":{\"S\":\"v\"},\"sk\":{\"S\":\"1\"},"
                  "\"gpk\":{\"S\":\"ok\"}}}");
    err("PutItem",
        "{\"TableName\":\"Tix\",\"Item\":{\"pk\":{\"S\":\"v\"},\"sk\":{\"S\":\"1\"},"
        "\"gpk\":{\"N\":\"1\"}}}",
        "Type mismatch for Index Key gpk Expected: S Actual: N IndexName: ByG");
    err("PutItem",
        "{\"TableName\":\"Tix\",\"Item\":{\"pk\":{\"S\":\"v\"},\"sk\":{\"S\":\"1\"},"
        "\"gpk\":{\"S\":\"\"}}}",
        "The AttributeValue for a key attribute cannot contain an empty string value. "
        "IndexName: ByG, IndexKey: gpk");
    err("UpdateItem",
        "{\"TableName\":\"Tix\",\"Key\":{\"pk\":{\"S\":\"v\"},\"sk\":{\"S\":\"1\"}},"
        "\"UpdateExpression\":\"SET lsk = :s\",\"ExpressionAttributeValues\":{\":s\":{\"S\":"
        "\"x\"}}}",
        "Type mismatch for Index Key lsk Expected: N Actual: S IndexName: ByLsk");
    err("BatchWriteItem",
        "{\"RequestItems\":{\"Tix\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"w\"},\"sk\":{"
        "\"S\":\"1\"}}}},{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"w\"},\"sk\":{\"S\":\"2\"},"
        "\"c\":{\"B\":\"\"}}}}]}}",
        "cannot contain an empty binary value. IndexName: Multi, IndexKey: c");
    /* nothing of the refused batch was written */
    char *out = NULL;
    assert_kura_ok(exec("GetItem",
                        "{\"TableName\":\"Tix\",\"Key\":{\"pk\":{\"S\":\"w\"},\"sk\":{\"S\":"
                        "\"1\"}}}",
                        &out));
    assert_string_equal(out, "{}");
    kura_free(out);
    check();
}

/* Polls DescribeTable until `index` has the status `want` (or is gone: want NULL). */
static void wait_status(const char *index, const char *want)
{
    for (int i = 0; i < 3000; i++) {
        char *out = NULL;
        assert_kura_ok(exec("DescribeTable", "{\"TableName\":\"Tix\"}", &out));
        char pat[128];
        snprintf(pat, sizeof pat, "\"IndexName\":\"%s\"", index);
        const char *at = strstr(out, pat);
        const char *st = at ? strstr(at, "\"IndexStatus\":\"") : NULL;
        bool done = want ? st && !strncmp(st + 15, want, strlen(want)) : !at;
        kura_free(out);
        if (done)
            return;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fail_msg("index %s never became %s", index, want ? want : "gone");
}

static const char *CREATE_LATE =
    "{\"TableName\":\"Tix\",\"AttributeDefinitions\":[{\"AttributeName\":\"x\","
    "\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":"
    "\"Late\",\"KeySchema\":[{\"AttributeName\":\"x\",\"KeyType\":\"HASH\"}],"
    "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"y\"]}}}]}";

static void test_update_table_gsi(void **state)
{
    uint64_t rng = test_seed();
    char item[1024], body[2048];
    ok("UpdateTable", CREATE_LATE);
    /* the table stays writable during the backfill */
    for (int i = 0; i < 300; i++) {
        item_json(&rng, (int)(test_rand(&rng) % 200), item, sizeof item);
        snprintf(body, sizeof body, "{\"TableName\":\"Tix\",\"Item\":%s}", item);
        ok("PutItem", body);
    }
    wait_status("Late", "ACTIVE");
    check();
    err("UpdateTable", CREATE_LATE, "Attempting to create an index which already exists");
    err("UpdateTable",
        "{\"TableName\":\"Tix\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{\"IndexName\":"
        "\"Nope\"}}]}",
        "Requested resource not found");
    err("UpdateTable",
        "{\"TableName\":\"Tix\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{\"IndexName\":"
        "\"Late\"}},{\"Delete\":{\"IndexName\":\"ByG\"}}]}",
        "Only 1 online index can be created or deleted simultaneously per table");
    err("UpdateTable",
        "{\"TableName\":\"Tix\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{\"IndexName\":"
        "\"ByLsk\"}}]}",
        "Requested resource not found"); /* an LSI cannot be deleted */
    /* a key attribute redefined with another type */
    err("UpdateTable",
        "{\"TableName\":\"Tix\",\"AttributeDefinitions\":[{\"AttributeName\":\"gpk\","
        "\"AttributeType\":\"N\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":"
        "\"Other\",\"KeySchema\":[{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"}],"
        "\"Projection\":{\"ProjectionType\":\"ALL\"}}}]}",
        "SchemaElement redefined should be of same type");
    /* drop it; then its name can be used again */
    ok("UpdateTable",
       "{\"TableName\":\"Tix\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{\"IndexName\":"
       "\"Late\"}}]}");
    wait_status("Late", NULL);
    check();
    char *out = NULL;
    assert_kura_ok(exec("DescribeTable", "{\"TableName\":\"Tix\"}", &out));
    assert_null(strstr(out, "\"AttributeName\":\"x\"")); /* its definition went with it */
    kura_free(out);
    reopen();
    check();
    /* created again, and the database closed at once: the backfill resumes at open */
    ok("UpdateTable", CREATE_LATE);
    reopen();
    wait_status("Late", "ACTIVE");
    check();
    reopen();
    check();
}

/* A write's capacity with INDEXES names every index it changed, as DynamoDB Local 1.25.1
 * does; a second write that moves the item in one GSI only charges a delete and a put there. */
static void test_write_capacity(void **state)
{
    char *out = NULL;
    assert_kura_ok(exec("PutItem",
                        "{\"TableName\":\"Tix\",\"ReturnConsumedCapacity\":\"INDEXES\",\"Item\":{"
                        "\"pk\":{\"S\":\"cap\"},\"sk\":{\"S\":\"1\"},\"lsk\":{\"N\":\"1\"},"
                        "\"gpk\":{\"S\":\"g\"},\"gsk\":{\"N\":\"1\"}}}",
                        &out));
    assert_string_equal(out, "{\"ConsumedCapacity\":{\"TableName\":\"Tix\",\"CapacityUnits\":3.0,"
                             "\"Table\":{\"CapacityUnits\":1.0},\"LocalSecondaryIndexes\":{"
                             "\"ByLsk\":{\"CapacityUnits\":1.0}},\"GlobalSecondaryIndexes\":{"
                             "\"ByG\":{\"CapacityUnits\":1.0}}}}");
    kura_free(out);
    assert_kura_ok(exec("UpdateItem",
                        "{\"TableName\":\"Tix\",\"ReturnConsumedCapacity\":\"TOTAL\",\"Key\":{"
                        "\"pk\":{\"S\":\"cap\"},\"sk\":{\"S\":\"1\"}},\"UpdateExpression\":"
                        "\"SET gsk = :n\",\"ExpressionAttributeValues\":{\":n\":{\"N\":\"2\"}}}",
                        &out));
    /* the table 1, the LSI projects gsk? no (INCLUDE x): 0, ByG moves: delete + put = 2 */
    assert_string_equal(out, "{\"ConsumedCapacity\":{\"TableName\":\"Tix\",\"CapacityUnits\":3.0}}");
    kura_free(out);
}

static void test_wait_and_stats(void **state)
{
    kura_index_stats st;
    assert_kura_ok(kura_index_wait(db, "Tix", "ByG", 30000));
    assert_kura_ok(kura_index_stats_get(db, "Tix", "ByG", &st));
    assert_int_equal(st.lag_writes, 0);
    assert_int_equal(st.error, KURA_OK);
    assert_kura_ok(kura_index_wait(db, "Tix", "ByLsk", 0)); /* an LSI is always current */
    assert_int_equal(kura_index_wait(db, "Tix", "Nope", 0), KURA_E_RESOURCE_NOT_FOUND);
    assert_int_equal(kura_index_wait(db, "Nope", "ByG", 0), KURA_E_RESOURCE_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_writes),
        cmocka_unit_test(test_invalid_index_values),
        cmocka_unit_test(test_wait_and_stats),
        cmocka_unit_test(test_write_capacity),
        cmocka_unit_test(test_update_table_gsi),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
