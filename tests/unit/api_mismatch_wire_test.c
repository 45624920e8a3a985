/*
 * api_mismatch_wire_test.c - tests of small places where kura answered differently from
 * DynamoDB (api_mismatch_test.c has the first ones): malformed stream ARNs and sequence
 * numbers, a body that is not JSON, index key sizes on writes and at backfill, which invalid
 * transaction actions cancel, and Query/Scan capacity.
 */
#include <time.h>

#include "api_mismatch_util.h"

/* ---- 8. Malformed stream ARNs and sequence numbers ---------------------------------------- */

/* DynamoDB Streams answers an ARN that is not a stream ARN at all with a ValidationException
 * (ScyllaDB Alternator's test_streams.py, checked against DynamoDB: DynamoDB Local alone says
 * ResourceNotFoundException), and a well-formed ARN of no stream with
 * ResourceNotFoundException. */
static void test_malformed_stream_arns(void **state)
{
    (void)state;
    json_t *c = ok("CreateTable",
                   "{\"TableName\":\"arnt\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
                   "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\",\"StreamSpecification\":{"
                   "\"StreamEnabled\":true,\"StreamViewType\":\"KEYS_ONLY\"}}");
    const char *arn = json_string_value(
        json_object_get(json_object_get(c, "TableDescription"), "LatestStreamArn"));
    char body[1024];
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", arn);
    json_t *d = ok("DescribeStream", body);
    const char *shard = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(d, "StreamDescription"), "Shards"), 0),
        "ShardId"));
    static const char *const bad[] = {
        "sdfadfsdfsdgdfsgsfdabadfbabdadsfsdfsdfsdfsdfsdfsdfdfdssdffbdfdf",
        "arn:aws:dynamodb:ddblocal:000000000000:table/arnt/stream/notalabelatall",
        "arn:aws:dynamodb:ddblocal:000000000000:table/arnt/nostream/2020-01-01T00:00:00.000",
        "arn:aws:s3:::a-bucket-name-that-is-long-enough/and/more",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", bad[i]);
        invalid("DescribeStream", body, "Invalid StreamArn");
        snprintf(body, sizeof body,
                 "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"LATEST\"}",
                 bad[i], shard);
        invalid("GetShardIterator", body, "Invalid StreamArn");
    }
    /* well-formed, no such stream: not found */
    err("DescribeStream",
        "{\"StreamArn\":\"arn:aws:dynamodb:ddblocal:000000000000:table/arnt/stream/"
        "2020-01-01T00:00:00.000\"}",
        KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
        "Requested resource not found: Stream: arn:aws:dynamodb:ddblocal:000000000000:table/"
        "arnt/stream/2020-01-01T00:00:00.000 not found");
    /* a sequence number of the right length that is no number kura gave */
    snprintf(body, sizeof body,
             "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":"
             "\"AT_SEQUENCE_NUMBER\",\"SequenceNumber\":\"abcdefghijklmnopqrstu\"}",
             arn, shard);
    invalid("GetShardIterator", body, INVALID "Invalid SequenceNumber");
    json_decref(d);
    json_decref(c);
}

/* ---- 9. A body that is not JSON ----------------------------------------------------------- */

/* DynamoDB's front end answers a body that does not parse (or none) with Coral's
 * SerializationException and no message (dynalite, whose tests ran against DynamoDB, answers
 * exactly {"__type":"com.amazon.coral.service#SerializationException"}). */
static void test_not_json(void **state)
{
    (void)state;
    static const char *const bodies[] = {"{not json", "", "{\"TableName\": }", "{\"a\":1}}",
                                         "\xff\xfe{}", "[\"\\ud800\"]", "{\"a\":1,}"};
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        char *out = NULL;
        kura_status s = run_len("ListTables", bodies[i], strlen(bodies[i]), &out);
        if (s != KURA_E_INVALID ||
            strcmp(out, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}") != 0)
            fail_msg("%s: %s %s", bodies[i], kura_status_str(s), out);
        assert_string_equal(kura_execute_error_type(), "SerializationException");
        kura_free(out);
    }
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(kura_execute(db, "ListTables", NULL, 0, &out, &len), KURA_E_INVALID);
    assert_string_equal(out, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}");
    kura_free(out);
}

/* ---- 10. Index key values held to DynamoDB's key sizes ------------------------------------ */

#define HASH_TOO_LARGE INVALID "Size of hashkey has exceeded the maximum size limit of2048 bytes"
#define RANGE_TOO_LARGE                                                                          \
    INVALID "Aggregated size of all range keys has exceeded the size limit of 1024 bytes"

/* Polls DescribeTable until index `name` of table `table` is ACTIVE. */
static void wait_active(const char *table, const char *name)
{
    char body[128];
    snprintf(body, sizeof body, "{\"TableName\":\"%s\"}", table);
    for (int tries = 0;; tries++) {
        json_t *j = ok("DescribeTable", body);
        json_t *g = json_object_get(json_object_get(j, "Table"), "GlobalSecondaryIndexes");
        bool active = false;
        for (size_t i = 0; i < json_array_size(g); i++) {
            json_t *x = json_array_get(g, i);
            if (!strcmp(json_string_value(json_object_get(x, "IndexName")), name))
                active = !strcmp(json_string_value(json_object_get(x, "IndexStatus")), "ACTIVE");
        }
        json_decref(j);
        if (active) break;
        if (tries > 100000) fail_msg("index %s never became ACTIVE", name);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(kura_index_wait(db, table, name, 60000), KURA_OK);
}

static void test_index_key_sizes(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"gks\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"},"
                   "{\"AttributeName\":\"r\",\"AttributeType\":\"B\"}],\"KeySchema\":[{"
                   "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"BillingMode\":"
                   "\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"byg\","
                   "\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"},{"
                   "\"AttributeName\":\"r\",\"KeyType\":\"RANGE\"}],\"Projection\":{"
                   "\"ProjectionType\":\"KEYS_ONLY\"}}]}"));
    char *b;
    /* at the limits: written */
    json_decref(ok("PutItem", b = with_value("{\"TableName\":\"gks\",\"Item\":{\"pk\":{\"S\":"
                                             "\"a\"},\"g\":{\"S\":\"%s\"}}}",
                                             2048)));
    free(b);
    /* zero bytes in base64: 1024 are 1368 characters ending "==", 1025 ending "=" */
    char *r1024 = with_value("%s", 1368), *r1025 = with_value("%s", 1368);
    for (char *p = r1024; *p; p++) *p = 'A';
    for (char *p = r1025; *p; p++) *p = 'A';
    r1024[1366] = r1024[1367] = '=';
    r1025[1367] = '=';
    char fmt[4096];
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"gks\",\"Item\":{\"pk\":{\"S\":\"b\"},\"g\":{\"S\":\"%%s\"},"
             "\"r\":{\"B\":\"%s\"}}}",
             r1024);
    json_decref(ok("PutItem", b = with_value(fmt, 1)));
    free(b);
    /* past them: refused with the messages of the table's keys */
    invalid("PutItem", b = with_value("{\"TableName\":\"gks\",\"Item\":{\"pk\":{\"S\":\"c\"},"
                                      "\"g\":{\"S\":\"%s\"}}}",
                                      2049),
            HASH_TOO_LARGE);
    free(b);
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"gks\",\"Item\":{\"pk\":{\"S\":\"c\"},\"g\":{\"S\":\"%%s\"},"
             "\"r\":{\"B\":\"%s\"}}}",
             r1025);
    invalid("PutItem", b = with_value(fmt, 1), RANGE_TOO_LARGE);
    free(b);
    invalid("UpdateItem", b = with_value("{\"TableName\":\"gks\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
                                         "\"UpdateExpression\":\"SET g = :g\","
                                         "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"%s\"}}}",
                                         2049),
            HASH_TOO_LARGE);
    free(b);
    invalid("BatchWriteItem",
            b = with_value("{\"RequestItems\":{\"gks\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":"
                           "\"c\"},\"g\":{\"S\":\"%s\"}}}}]}}",
                           2049),
            HASH_TOO_LARGE);
    free(b);
    ok_is("GetItem", "{\"TableName\":\"gks\",\"Key\":{\"pk\":{\"S\":\"c\"}}}", "{}");
    /* an index added later skips the items whose key is too large for it (DynamoDB's
     * backfill leaves index key violations out of the index) */
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"gkb\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                   "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    json_decref(ok("PutItem", b = with_value("{\"TableName\":\"gkb\",\"Item\":{\"pk\":{\"S\":"
                                             "\"big\"},\"h\":{\"S\":\"%s\"}}}",
                                             2049)));
    free(b);
    json_decref(ok("PutItem", "{\"TableName\":\"gkb\",\"Item\":{\"pk\":{\"S\":\"small\"},"
                              "\"h\":{\"S\":\"s\"}}}"));
    json_decref(ok("UpdateTable",
                   "{\"TableName\":\"gkb\",\"AttributeDefinitions\":[{\"AttributeName\":\"h\","
                   "\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{"
                   "\"IndexName\":\"byh\",\"KeySchema\":[{\"AttributeName\":\"h\",\"KeyType\":"
                   "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}}]}"));
    wait_active("gkb", "byh");
    ok_is("Scan", "{\"TableName\":\"gkb\",\"IndexName\":\"byh\"}",
          "{\"Items\":[{\"h\":{\"S\":\"s\"},\"pk\":{\"S\":\"small\"}}],\"Count\":1,"
          "\"ScannedCount\":1}");
    /* and the table keeps the item, which a write must now fix to stay */
    invalid("UpdateItem", "{\"TableName\":\"gkb\",\"Key\":{\"pk\":{\"S\":\"big\"}},"
                          "\"UpdateExpression\":\"SET x = :x\",\"ExpressionAttributeValues\":{"
                          "\":x\":{\"N\":\"1\"}}}",
            HASH_TOO_LARGE);
    /* a write that brings its key within the sizes indexes it (the applier deletes the old
     * image's too-large key, a tombstone of nothing here), and the index matches its table */
    json_decref(ok("UpdateItem", "{\"TableName\":\"gkb\",\"Key\":{\"pk\":{\"S\":\"big\"}},"
                                 "\"UpdateExpression\":\"SET h = :h\",\"ExpressionAttributeValues\":"
                                 "{\":h\":{\"S\":\"b\"}}}"));
    json_decref(ok("DeleteItem", "{\"TableName\":\"gkb\",\"Key\":{\"pk\":{\"S\":\"small\"}}}"));
    assert_int_equal(kura_index_wait(db, "gkb", "byh", 60000), KURA_OK);
    ok_is("Scan", "{\"TableName\":\"gkb\",\"IndexName\":\"byh\",\"ConsistentRead\":false}",
          "{\"Items\":[{\"h\":{\"S\":\"b\"},\"pk\":{\"S\":\"big\"}}],\"Count\":1,"
          "\"ScannedCount\":1}");
    kura_check_summary sum;
    assert_int_equal(kura_check(db, "gkb", NULL, NULL, &sum), KURA_OK);
    assert_int_equal(sum.problems, 0);
    assert_int_equal(sum.indexes, 1);
    free(r1024);
    free(r1025);
}

/* ---- 11. Which invalid transaction actions cancel and which refuse the request ------------ */

/* DynamoDB checks what a request says before the transaction (a plain ValidationException:
 * a Put's item, keys, an update of a key attribute) and cancels it with a ValidationError
 * reason for what an Update's evaluation meets (the API reference's list under
 * TransactionCanceledException: an index key updated to a wrong type or beyond its size, an
 * operand of the wrong type, "Item size to update has exceeded the maximum allowed size"...). */
static void test_transaction_validation_split(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"txv\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                   "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
                   "\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":[{"
                   "\"IndexName\":\"gix\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":"
                   "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]}"));
    json_decref(ok("PutItem", "{\"TableName\":\"txv\",\"Item\":{\"pk\":{\"S\":\"e\"},\"s\":{"
                              "\"S\":\"str\"}}}"));
    char *b;
    invalid("TransactWriteItems",
            b = with_value("{\"TransactItems\":[{\"Put\":{\"TableName\":\"txv\",\"Item\":{\"pk\":"
                           "{\"S\":\"a\"},\"g\":{\"S\":\"%s\"}}}}]}",
                           2049),
            HASH_TOO_LARGE);
    free(b);
    invalid("TransactWriteItems",
            "{\"TransactItems\":[{\"Put\":{\"TableName\":\"txv\",\"Item\":{\"pk\":{\"S\":\"a\"},"
            "\"g\":{\"N\":\"1\"}}}}]}",
            INVALID "Type mismatch for Index Key g Expected: S Actual: N IndexName: gix");
    invalid("TransactWriteItems",
            "{\"TransactItems\":[{\"Update\":{\"TableName\":\"txv\",\"Key\":{\"pk\":{\"S\":\"e\"}},"
            "\"UpdateExpression\":\"SET pk = :v\",\"ExpressionAttributeValues\":{\":v\":{\"S\":"
            "\"1\"}}}}]}",
            INVALID "Cannot update attribute pk. This attribute is part of the key");
    static const char *const reasons[][2] = {
        {"SET g = :v\",\"ExpressionAttributeValues\":{\":v\":{\"N\":\"1\"}}",
         INVALID "Type mismatch for Index Key g Expected: S Actual: N IndexName: gix"},
        {"ADD s :v\",\"ExpressionAttributeValues\":{\":v\":{\"N\":\"1\"}}",
         "An operand in the update expression has an incorrect data type"},
        {"SET g = :v\",\"ExpressionAttributeValues\":{\":v\":{\"S\":\"%s\"}}", HASH_TOO_LARGE},
    };
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++) {
        char fmt[512];
        snprintf(fmt, sizeof fmt,
                 "{\"TransactItems\":[{\"Update\":{\"TableName\":\"txv\",\"Key\":{\"pk\":{\"S\":"
                 "\"e\"}},\"UpdateExpression\":\"%s}}]}",
                 reasons[i][0]);
        b = with_value(fmt, 2049);
        char *out = NULL;
        kura_status st = run_len("TransactWriteItems", b, strlen(b), &out);
        json_t *j = json_loads(out, 0, NULL);
        json_t *r = json_array_get(json_object_get(j, "CancellationReasons"), 0);
        if (st != KURA_E_TXN_CANCELED ||
            strcmp(json_string_value(json_object_get(r, "Code")), "ValidationError") != 0 ||
            strcmp(json_string_value(json_object_get(r, "Message")), reasons[i][1]) != 0)
            fail_msg("%zu: %s", i, out);
        json_decref(j);
        kura_free(out);
        free(b);
    }
}

/* ---- 12. Query and Scan capacity: the page's bytes, rounded up once ----------------------- */

/* The CapacityUnits of op on body (with ReturnConsumedCapacity TOTAL added). */
static double units_of(const char *op, const char *body)
{
    char *b = NULL;
    if (asprintf(&b, "%.*s,\"ReturnConsumedCapacity\":\"TOTAL\"}", (int)strlen(body) - 1, body) <
        0)
        fail_msg("nomem");
    json_t *j = ok(op, b);
    double u = json_number_value(
        json_object_get(json_object_get(j, "ConsumedCapacity"), "CapacityUnits"));
    json_decref(j);
    free(b);
    return u;
}

static void test_query_scan_capacity(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"cap\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"},"
                   "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],\"KeySchema\":[{"
                   "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
                   "\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
                   "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gix\",\"KeySchema\":[{"
                   "\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{"
                   "\"ProjectionType\":\"ALL\"}}]}"));
    /* three items of about 1.5 KB: 4.5 KB together, 3 KB for two */
    for (int i = 0; i < 3; i++) {
        char fmt[256];
        snprintf(fmt, sizeof fmt,
                 "{\"TableName\":\"cap\",\"Item\":{\"pk\":{\"S\":\"p\"},\"sk\":{\"N\":\"%d\"},"
                 "\"g\":{\"S\":\"g\"},\"v\":{\"S\":\"%%s\"}}}",
                 i);
        char *b = with_value(fmt, 1500);
        json_decref(ok("PutItem", b));
        free(b);
    }
    assert_kura_ok(kura_index_wait(db, "cap", "gix", 60000));
    const char *q = "{\"TableName\":\"cap\",\"KeyConditionExpression\":\"pk = :p\","
                    "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"p\"}},\"ConsistentRead\":true}";
    assert_true(units_of("Query", q) == 2.0); /* ceil(4.5 KB / 4 KB), not 3 x 1 */
    q = "{\"TableName\":\"cap\",\"KeyConditionExpression\":\"pk = :p\","
        "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"p\"}}}";
    assert_true(units_of("Query", q) == 1.0); /* eventually consistent: half */
    q = "{\"TableName\":\"cap\",\"KeyConditionExpression\":\"pk = :p\","
        "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"p\"}},\"Limit\":2}";
    assert_true(units_of("Query", q) == 0.5);
    /* a filter does not change what was read */
    q = "{\"TableName\":\"cap\",\"KeyConditionExpression\":\"pk = :p\",\"FilterExpression\":"
        "\"attribute_exists(nope)\",\"ExpressionAttributeValues\":{\":p\":{\"S\":\"p\"}},"
        "\"ConsistentRead\":true}";
    assert_true(units_of("Query", q) == 2.0);
    assert_true(units_of("Scan", "{\"TableName\":\"cap\",\"ConsistentRead\":true}") == 2.0);
    assert_true(units_of("Scan", "{\"TableName\":\"cap\"}") == 1.0);
    assert_true(units_of("Scan", "{\"TableName\":\"cap\",\"Select\":\"COUNT\"}") == 1.0);
    /* an index the same, on its entries */
    q = "{\"TableName\":\"cap\",\"IndexName\":\"gix\",\"KeyConditionExpression\":\"g = :g\","
        "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"g\"}}}";
    assert_true(units_of("Query", q) == 1.0);
    assert_true(units_of("Scan", "{\"TableName\":\"cap\",\"IndexName\":\"gix\"}") == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_stream_arns),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_index_key_sizes),
        cmocka_unit_test(test_transaction_validation_split),
        cmocka_unit_test(test_query_scan_capacity),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
