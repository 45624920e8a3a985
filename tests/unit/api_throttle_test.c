/*
 * api_throttle_test.c - This file contains the tests of DynamoDB's capacity limits on the item
 * paths (kura_options.throttle, engine/tcap*.c) through the JSON API, with a driven clock:
 * a hot partition key throttles while cold keys and shards at the same total do not, a
 * provisioned table serves its burst and then throttles, UpdateTable raises it, a hot GSI key
 * refuses the base write (nothing half-applied), batches leave throttled requests unprocessed,
 * transactions cancel with a ThrottlingError reason, reads have their own 3,000 RCU, throttling
 * off never throttles, and the heat report names the hot key.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table.h"
#include "engine/table_int.h"
#include "engine/tcap.h"
#include "kura.h"
#include "testutil.h"

static kura_db *db;
static char *dir;
static int64_t now_ms = 1700000000000;

#define T "com.amazonaws.dynamodb.v20120810#"
#define MSG_PEAK                                                                               \
    "Throughput exceeds the current capacity of your table or index. DynamoDB is "             \
    "automatically scaling your table or index so please try again shortly. If exceptions "    \
    "persist, check if you have a hot partition: "                                             \
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
#define MSG_GSI                                                                                \
    "Throughput exceeds the current capacity for one or more global secondary indexes. "       \
    "DynamoDB is automatically scaling your index so please try again shortly."
#define MSG_TABLE                                                                              \
    "The level of configured provisioned throughput for the table was exceeded. Consider "     \
    "increasing your provisioning level with the UpdateTable API."

static int64_t test_clock(void *arg)
{
    (void)arg;
    return now_ms;
}

static void open_db(bool throttle)
{
    kura_options o;
    kura_options_init(&o);
    o.throttle = throttle;
    o.capacity_clock = test_clock;
    o.durability = KURA_RELAXED;
    assert_kura_ok(kura_open(dir, &o, &db));
}

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_throttle");
    open_db(true);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* The call's answer: NULL and *type_out set on an error (the type after '#'). */
static json_t *call(const char *op, const char *body, char *type_out, size_t cap)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    json_t *j = json_loads(out, 0, NULL);
    kura_free(out);
    if (s == KURA_OK)
        return j;
    const char *t = j ? json_string_value(json_object_get(j, "__type")) : NULL;
    const char *h = t ? strchr(t, '#') : NULL;
    snprintf(type_out, cap, "%s|%s", h ? h + 1 : "?",
             j ? json_string_value(json_object_get(j, "message")) : "?");
    json_decref(j);
    return NULL;
}

static json_t *ok(const char *op, const char *body)
{
    char e[1024];
    json_t *j = call(op, body, e, sizeof e);
    if (!j) fail_msg("%s %.200s: %s", op, body, e);
    return j;
}

static void create(const char *name, const char *extra)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
             "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}%s]%s}",
             name,
             extra && strstr(extra, "GlobalSecondaryIndexes")
                 ? ",{\"AttributeName\":\"st\",\"AttributeType\":\"S\"}"
                 : "",
             extra ? extra : ",\"BillingMode\":\"PAY_PER_REQUEST\"");
    json_decref(ok("CreateTable", body));
}

/* A put of an item of about `kb` KB (kb write units) on key pk (and status st when given):
 * true when accepted, false when throttled with the exception and message expected. */
static bool put(const char *table, const char *pk, const char *st, int kb, const char *expect)
{
    size_t n = (size_t)kb * 1024 - 64;
    char *pad = malloc(n + 1);
    memset(pad, 'x', n);
    pad[n] = '\0';
    size_t cap = n + 512;
    char *body = malloc(cap);
    char stattr[128] = "";
    if (st) snprintf(stattr, sizeof stattr, ",\"st\":{\"S\":\"%s\"}", st);
    snprintf(body, cap, "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"}%s,\"d\":{\"S\":\"%s\"}}}",
            table, pk, stattr, pad);
    char e[1024];
    json_t *j = call("PutItem", body, e, sizeof e);
    free(body);
    free(pad);
    if (j) {
        json_decref(j);
        return true;
    }
    if (!expect || strcmp(e, expect) != 0) fail_msg("PutItem %s %s: %s", table, pk, e);
    return false;
}

/* How many of `n` puts of kb KB on `pk` are accepted (the rest throttled as `expect`). */
static int puts_ok(const char *table, const char *pk, int n, int kb, const char *expect)
{
    int accepted = 0;
    for (int i = 0; i < n; i++) accepted += put(table, pk, NULL, kb, expect);
    return accepted;
}

static void test_hot_key(void **state)
{
    (void)state;
    create("Hot", NULL);
    /* one second of a key's 1,000 WCU: 100 puts of 10 KB, then refused */
    assert_int_equal(puts_ok("Hot", "h", 130, 10, "ThrottlingException|" MSG_PEAK), 100);
    now_ms += 1000; /* the next second refills the key */
    assert_int_equal(puts_ok("Hot", "h", 130, 10, "ThrottlingException|" MSG_PEAK), 100);
    /* 200 cold keys and 10 shards at twice the hot key's total, in one second: none refused */
    now_ms += 1000;
    char k[32];
    for (int i = 0; i < 200; i++) {
        snprintf(k, sizeof k, "cold%d", i);
        assert_true(put("Hot", k, NULL, 10, NULL));
    }
    now_ms += 1000;
    for (int i = 0; i < 200; i++) {
        snprintf(k, sizeof k, "h#%d", i % 10);
        assert_true(put("Hot", k, NULL, 10, NULL));
    }
}

static void test_provisioned_burst(void **state)
{
    (void)state;
    create("Prov", ",\"BillingMode\":\"PROVISIONED\",\"ProvisionedThroughput\":"
                   "{\"ReadCapacityUnits\":5,\"WriteCapacityUnits\":100}");
    char k[32];
    int accepted = 0;
    for (int i = 0; i < 150; i++) { /* a new table holds one second: 100 writes of 1 KB */
        snprintf(k, sizeof k, "p%d", i);
        accepted += put("Prov", k, NULL, 1, "ProvisionedThroughputExceededException|" MSG_TABLE);
    }
    assert_int_equal(accepted, 100);
    now_ms += 20000; /* 20 s unused: 2,000 units of burst */
    accepted = 0;
    for (int i = 0; i < 2100; i++) {
        snprintf(k, sizeof k, "q%d", i);
        accepted += put("Prov", k, NULL, 1, "ProvisionedThroughputExceededException|" MSG_TABLE);
    }
    assert_int_equal(accepted, 2000);
    json_decref(ok("UpdateTable", "{\"TableName\":\"Prov\",\"ProvisionedThroughput\":"
                                  "{\"ReadCapacityUnits\":5,\"WriteCapacityUnits\":400}}"));
    now_ms += 1000;
    accepted = 0;
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof k, "r%d", i);
        accepted += put("Prov", k, NULL, 1, "ProvisionedThroughputExceededException|" MSG_TABLE);
    }
    assert_int_equal(accepted, 400);
}

static void test_gsi_back_pressure(void **state)
{
    (void)state;
    create("Orders", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":[{"
                     "\"IndexName\":\"StatusIndex\",\"KeySchema\":[{\"AttributeName\":\"st\","
                     "\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]");
    char k[32];
    int accepted = 0;
    for (int i = 0; i < 120; i++) { /* distinct table keys, one status: the index key is hot */
        snprintf(k, sizeof k, "o%d", i);
        accepted += put("Orders", k, "ACTIVE", 10, "ThrottlingException|" MSG_GSI);
    }
    assert_int_equal(accepted, 100);
    /* the refused write left nothing behind */
    json_t *g = ok("GetItem", "{\"TableName\":\"Orders\",\"Key\":{\"pk\":{\"S\":\"o119\"}}}");
    assert_null(json_object_get(g, "Item"));
    json_decref(g);
    /* other statuses are other index partitions */
    assert_true(put("Orders", "o200", "SHIPPED", 10, NULL));
}

static void test_batch_and_transaction(void **state)
{
    (void)state;
    create("Bat", NULL);
    assert_int_equal(puts_ok("Bat", "b", 95, 10, "ThrottlingException|" MSG_PEAK), 95);
    json_t *r;
    char big[40000];
    snprintf(big, sizeof big,
             "{\"RequestItems\":{\"Bat\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b\"}}}},"
             "{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"b\"}}}}]}}");
    /* "b" twice is a duplicate key: refused before any capacity is taken */
    char e[1024];
    assert_null(call("BatchWriteItem", big, e, sizeof e));
    assert_string_equal(e, "ValidationException|Provided list of item keys contains duplicates");
    int n = snprintf(big, sizeof big, "{\"RequestItems\":{\"Bat\":[");
    const char *keys[3] = {"b", "c", "d"};
    for (int i = 0; i < 3; i++) {
        char pad[10000];
        memset(pad, 'y', 9000);
        pad[9000] = '\0';
        n += snprintf(big + n, sizeof big - (size_t)n,
                      "%s{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"%s\"},\"d\":{\"S\":\"%s\"}}}}",
                      i ? "," : "", keys[i], pad);
    }
    snprintf(big + n, sizeof big - (size_t)n, "]}}");
    /* b has 50 WCU left and needs 9: processed; then exhaust b and retry */
    r = ok("BatchWriteItem", big);
    assert_int_equal(json_object_size(json_object_get(r, "UnprocessedItems")), 0);
    json_decref(r);
    assert_int_equal(puts_ok("Bat", "b", 10, 10, "ThrottlingException|" MSG_PEAK), 4);
    r = ok("BatchWriteItem", big); /* b refused, c and d processed */
    json_t *un = json_object_get(json_object_get(r, "UnprocessedItems"), "Bat");
    assert_int_equal(json_array_size(un), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                            json_object_get(json_array_get(un, 0), "PutRequest"), "Item"),
                                                                          "pk"),
                                                          "S")),
                        "b");
    json_decref(r);
    /* every request refused: the call fails with the throttle's error */
    char pad5[5001];
    memset(pad5, 'w', 5000);
    pad5[5000] = '\0';
    snprintf(big, sizeof big,
             "{\"RequestItems\":{\"Bat\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b\"},"
             "\"d\":{\"S\":\"%s\"}}}}]}}",
             pad5);
    assert_null(call("BatchWriteItem", big, e, sizeof e));
    assert_string_equal(e, "ThrottlingException|" MSG_PEAK);
    /* a transaction on the hot key: cancelled with a ThrottlingError reason, nothing written */
    char *out = NULL;
    size_t len = 0;
    const char *tx = "{\"TransactItems\":[{\"Put\":{\"TableName\":\"Bat\",\"Item\":{\"pk\":{\"S\":"
                     "\"z\"}}}},{\"Put\":{\"TableName\":\"Bat\",\"Item\":{\"pk\":{\"S\":\"b\"},"
                     "\"n\":{\"N\":\"1\"}}}}]}";
    assert_int_equal(kura_execute(db, "TransactWriteItems", tx, strlen(tx), &out, &len),
                     KURA_E_TXN_CANCELED);
    json_t *j = json_loads(out, 0, NULL);
    kura_free(out);
    json_t *reasons = json_object_get(j, "CancellationReasons");
    assert_int_equal(json_array_size(reasons), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(reasons, 0), "Code")),
                        "None");
    assert_string_equal(json_string_value(json_object_get(json_array_get(reasons, 1), "Code")),
                        "ThrottlingError");
    assert_string_equal(json_string_value(json_object_get(json_array_get(reasons, 1), "Message")),
                        MSG_PEAK);
    json_decref(j);
    json_t *g = ok("GetItem", "{\"TableName\":\"Bat\",\"Key\":{\"pk\":{\"S\":\"z\"}}}");
    assert_null(json_object_get(g, "Item"));
    json_decref(g);
    now_ms += 1000; /* and the next second it goes through */
    json_decref(ok("TransactWriteItems", tx));
}

static void test_reads(void **state)
{
    (void)state;
    create("Reads", NULL);
    assert_true(put("Reads", "r", NULL, 1, NULL));
    const char *get = "{\"TableName\":\"Reads\",\"Key\":{\"pk\":{\"S\":\"r\"}},\"ConsistentRead\":true}";
    int accepted = 0;
    char e[1024];
    for (int i = 0; i < 3100; i++) {
        json_t *j = call("GetItem", get, e, sizeof e);
        if (j) accepted++;
        else assert_string_equal(e, "ThrottlingException|" MSG_PEAK);
        json_decref(j);
    }
    assert_int_equal(accepted, 3000);
}

static void test_heat_report(void **state)
{
    (void)state;
    create("Heat", NULL);
    assert_int_equal(puts_ok("Heat", "device-7", 110, 10, "ThrottlingException|" MSG_PEAK), 100);
    char *json = NULL;
    assert_kura_ok(kura_heat_report(db, "Heat", 60, &json));
    json_t *r = json_loads(json, 0, NULL);
    free(json);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "throttling")));
    json_t *tg = json_array_get(json_object_get(r, "targets"), 0);
    assert_string_equal(json_string_value(json_object_get(tg, "table")), "Heat");
    json_t *hot = json_array_get(json_object_get(tg, "hot_keys"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                                               hot, "key"),
                                                           "pk"),
                                          "S")),
                        "device-7");
    assert_int_equal(json_integer_value(json_object_get(hot, "throttled")), 10);
    /* 1,000 WCU in its busiest second: all of the key's limit */
    assert_true(json_real_value(json_object_get(hot, "peak_write")) == 1000.0);
    assert_true(json_is_null(json_object_get(tg, "contributor_insights")));
    json_t *th = json_object_get(tg, "throttled");
    assert_int_equal(json_integer_value(json_object_get(th, "writes")), 10);
    const char *v = json_string_value(json_array_get(json_object_get(tg, "verdicts"), 0));
    assert_non_null(v);
    assert_string_equal(v, "Table Heat: key device-7 takes 100% of its partition's write limit "
                           "in its busiest second; 10 writes throttled in the last minute");
    json_decref(r);
    /* Contributor Insights enabled: the report says so (its rules' data is the report's) */
    json_decref(ok("UpdateContributorInsights", "{\"TableName\":\"Heat\","
                                                "\"ContributorInsightsAction\":\"ENABLE\"}"));
    assert_kura_ok(kura_heat_report(db, "Heat", 60, &json));
    r = json_loads(json, 0, NULL);
    free(json);
    json_t *ci = json_object_get(json_array_get(json_object_get(r, "targets"), 0),
                                 "contributor_insights");
    assert_string_equal(json_string_value(json_object_get(ci, "status")), "ENABLED");
    assert_string_equal(json_string_value(json_object_get(ci, "mode")),
                        "ACCESSED_AND_THROTTLED_KEYS");
    json_decref(r);
    char *none = NULL;
    assert_int_equal(kura_heat_report(db, "Nope", 60, &none), KURA_E_RESOURCE_NOT_FOUND);
}

static void test_decreases(void **state)
{
    (void)state;
    now_ms = 1764288000000; /* Friday, November 28, 2025 0:00:00 UTC */
    create("Dec", ",\"BillingMode\":\"PROVISIONED\",\"ProvisionedThroughput\":"
                  "{\"ReadCapacityUnits\":100,\"WriteCapacityUnits\":100}");
    char body[256], e[1024];
    for (int i = 1; i <= 5; i++) {
        now_ms += 60000;
        snprintf(body, sizeof body,
                 "{\"TableName\":\"Dec\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":%d,"
                 "\"WriteCapacityUnits\":100}}",
                 100 - i);
        json_t *j = call("UpdateTable", body, e, sizeof e);
        if (i <= 4) {
            if (!j) fail_msg("decrease %d refused: %s", i, e);
            json_decref(j);
            continue;
        }
        assert_null(j);
        assert_string_equal(
            e, "LimitExceededException|Subscriber limit exceeded: Provisioned throughput "
               "decreases are limited within a given UTC day. After the first 4 decreases, each "
               "subsequent decrease in the same UTC day can be performed at most once every 3600 "
               "seconds. Number of decreases today: 4. Last decrease at Friday, November 28, "
               "2025 12:04:00 AM UTC. Next decrease can be made at Friday, November 28, 2025 "
               "1:04:00 AM UTC");
    }
    /* an increase is never limited; an hour after the last decrease one more is allowed */
    json_decref(ok("UpdateTable", "{\"TableName\":\"Dec\",\"ProvisionedThroughput\":"
                                  "{\"ReadCapacityUnits\":500,\"WriteCapacityUnits\":500}}"));
    now_ms += 3600000;
    json_decref(ok("UpdateTable", "{\"TableName\":\"Dec\",\"ProvisionedThroughput\":"
                                  "{\"ReadCapacityUnits\":50,\"WriteCapacityUnits\":500}}"));
}

/* The accounting's memory is fixed once the table has seen traffic: 20,000 more distinct keys
 * (items and partition keys) leave it as it was. */
static void test_memory_bounded(void **state)
{
    (void)state;
    create("Mem", NULL);
    char k[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof k, "m%d", i);
        assert_true(put("Mem", k, NULL, 1, NULL));
    }
    kura_table *t = NULL;
    assert_kura_ok(table_acquire(db, "Mem", &t));
    size_t before = tcap_bytes(t->cap);
    for (int i = 0; i < 20000; i++) {
        if (i % 500 == 0) now_ms += 1000; /* under the key and table limits */
        snprintf(k, sizeof k, "n%d", i);
        assert_true(put("Mem", k, NULL, 1, NULL));
    }
    size_t after = tcap_bytes(t->cap);
    table_release(t);
    print_message("tcap bytes: %zu before, %zu after 20,000 more keys\n", before, after);
    assert_int_equal(before, after);
    assert_true(after < 1024 * 1024);
}

/* A table with an LSI: the report lists its largest item collections with their sizes. */
static void test_collections(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"Coll\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
                   "\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                   "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                   "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"ls\","
                   "\"AttributeType\":\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
                   "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByLs\",\"KeySchema\":[{"
                   "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"ls\","
                   "\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]}"));
    char body[512];
    for (int i = 0; i < 30; i++) { /* big: 20 items; small: 10 */
        snprintf(body, sizeof body,
                 "{\"TableName\":\"Coll\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"s%d\"},"
                 "\"ls\":{\"S\":\"x\"}},\"ReturnItemCollectionMetrics\":\"SIZE\"}",
                 i < 20 ? "big" : "small", i);
        json_decref(ok("PutItem", body));
    }
    char *json = NULL;
    assert_kura_ok(kura_heat_report(db, "Coll", 60, &json));
    json_t *r = json_loads(json, 0, NULL);
    free(json);
    json_t *cs = json_object_get(json_array_get(json_object_get(r, "targets"), 0), "collections");
    assert_int_equal(json_array_size(cs), 2);
    json_t *big = json_array_get(cs, 0), *small = json_array_get(cs, 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                                               big, "key"),
                                                           "pk"),
                                          "S")),
                        "big");
    assert_true(json_integer_value(json_object_get(big, "size_bytes")) >
                json_integer_value(json_object_get(small, "size_bytes")));
    assert_true(json_integer_value(json_object_get(small, "size_bytes")) > 0);
    json_decref(r);
}

static void test_off(void **state)
{
    (void)state;
    assert_kura_ok(kura_close(db));
    open_db(false);
    create("Off", NULL);
    assert_int_equal(puts_ok("Off", "h", 300, 10, NULL), 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hot_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_provisioned_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gsi_back_pressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_and_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heat_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decreases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
