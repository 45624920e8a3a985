/*
 * api_mismatch_test.c - tests of small places where kura answered differently from DynamoDB,
 * found by running public conformance suites written against DynamoDB: each test pins
 * DynamoDB's answer through kura_execute. This file: an UpdateItem that only removes on a
 * missing item, DescribeTimeToLive after enabling, DeleteTable's description, attribute names
 * holding NUL, attribute name lengths. api_mismatch_wire_test.c has the rest.
 */
#include "api_mismatch_util.h"

static size_t stream_records(const char *arn)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", arn);
    json_t *d = ok("DescribeStream", body);
    json_t *shards = json_object_get(json_object_get(d, "StreamDescription"), "Shards");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(shards); i++) {
        const char *shard =
            json_string_value(json_object_get(json_array_get(shards, i), "ShardId"));
        snprintf(body, sizeof body,
                 "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"TRIM_HORIZON\"}",
                 arn, shard);
        json_t *it = ok("GetShardIterator", body);
        snprintf(body, sizeof body, "{\"ShardIterator\":\"%s\"}",
                 json_string_value(json_object_get(it, "ShardIterator")));
        json_t *r = ok("GetRecords", body);
        n += json_array_size(json_object_get(r, "Records"));
        json_decref(r);
        json_decref(it);
    }
    json_decref(d);
    return n;
}

/* ---- 1. UpdateItem that only removes, on a missing item --------------------------------- */

static void test_update_remove_missing_item(void **state)
{
    (void)state;
    json_t *c = ok("CreateTable",
                   "{\"TableName\":\"rmt\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                   "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
                   "\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":[{"
                   "\"IndexName\":\"gix\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":"
                   "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
                   "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":"
                   "\"NEW_AND_OLD_IMAGES\"}}");
    char *arn = strdup(json_string_value(
        json_object_get(json_object_get(c, "TableDescription"), "LatestStreamArn")));
    json_decref(c);
    static const char *const removes[] = {
        "\"UpdateExpression\":\"REMOVE a\",\"ReturnValues\":\"ALL_NEW\"",
        "\"UpdateExpression\":\"REMOVE a, b\",\"ReturnValues\":\"UPDATED_NEW\"",
        "\"UpdateExpression\":\"DELETE s :s\",\"ExpressionAttributeValues\":{\":s\":{\"SS\":"
        "[\"x\"]}},\"ReturnValues\":\"ALL_NEW\"",
        "\"UpdateExpression\":\"REMOVE a DELETE s :s\",\"ExpressionAttributeValues\":{\":s\":"
        "{\"SS\":[\"x\"]}},\"ReturnValues\":\"UPDATED_NEW\"",
        "\"AttributeUpdates\":{\"a\":{\"Action\":\"DELETE\"}},\"ReturnValues\":\"ALL_NEW\"",
        "\"AttributeUpdates\":{\"s\":{\"Action\":\"DELETE\",\"Value\":{\"SS\":[\"x\"]}}},"
        "\"ReturnValues\":\"ALL_NEW\"",
    };
    char body[512];
    for (size_t i = 0; i < sizeof removes / sizeof *removes; i++) {
        snprintf(body, sizeof body, "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"k\"}},%s}",
                 removes[i]);
        ok_is("UpdateItem", body, "{}");
        ok_is("GetItem", "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"k\"}}}", "{}");
    }
    /* the actions are still evaluated, on the item as its key alone: a nested path under a
     * missing attribute fails as on an existing item without it */
    invalid("UpdateItem", "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"k\"}},"
                          "\"UpdateExpression\":\"REMOVE b.c\"}",
            "The document path provided in the update expression is invalid for update");
    /* in a transaction neither */
    ok_is("TransactWriteItems",
          "{\"TransactItems\":[{\"Update\":{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":"
          "\"t\"}},\"UpdateExpression\":\"REMOVE a\"}}]}",
          "{}");
    ok_is("GetItem", "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"t\"}}}", "{}");
    /* capacity is still consumed: one write unit */
    ok_is("UpdateItem",
          "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"UpdateExpression\":\"REMOVE a\","
          "\"ReturnConsumedCapacity\":\"TOTAL\"}",
          "{\"ConsumedCapacity\":{\"TableName\":\"rmt\",\"CapacityUnits\":1.0}}");
    ok_is("Scan", "{\"TableName\":\"rmt\",\"Select\":\"COUNT\"}",
          "{\"Count\":0,\"ScannedCount\":0}");
    assert_int_equal(stream_records(arn), 0);
    /* SET and ADD create it; a SET with a REMOVE too */
    ok_is("UpdateItem",
          "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"UpdateExpression\":"
          "\"SET g = :g REMOVE a\",\"ExpressionAttributeValues\":{\":g\":{\"S\":\"v\"}},"
          "\"ReturnValues\":\"ALL_NEW\"}",
          "{\"Attributes\":{\"g\":{\"S\":\"v\"},\"pk\":{\"S\":\"k\"}}}");
    ok_is("UpdateItem",
          "{\"TableName\":\"rmt\",\"Key\":{\"pk\":{\"S\":\"n\"}},\"UpdateExpression\":"
          "\"ADD c :one\",\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}},"
          "\"ReturnValues\":\"UPDATED_NEW\"}",
          "{\"Attributes\":{\"c\":{\"N\":\"1\"}}}");
    assert_int_equal(stream_records(arn), 2);
    free(arn);
}

/* ---- 2. DescribeTimeToLive right after enabling ------------------------------------------ */

/* DynamoDB answers ENABLED with the attribute right after UpdateTimeToLive enables TTL (the
 * suites checked against it, e.g. ScyllaDB Alternator's test_ttl.py, assert exactly that). */
static void test_ttl_enabled_at_once(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"ttlt\",\"AttributeDefinitions\":[{\"AttributeName\":"
                   "\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                   "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    ok_is("UpdateTimeToLive",
          "{\"TableName\":\"ttlt\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
          "\"AttributeName\":\"exp\"}}",
          "{\"TimeToLiveSpecification\":{\"Enabled\":true,\"AttributeName\":\"exp\"}}");
    ok_is("DescribeTimeToLive", "{\"TableName\":\"ttlt\"}",
          "{\"TimeToLiveDescription\":{\"TimeToLiveStatus\":\"ENABLED\",\"AttributeName\":"
          "\"exp\"}}");
}

/* ---- 3. DeleteTable's TableDescription --------------------------------------------------- */

/* The member names of `o`, comma-separated, in order. */
static void member_names(const json_t *o, char *buf, size_t cap)
{
    *buf = 0;
    for (void *it = json_object_iter((json_t *)o); it; it = json_object_iter_next((json_t *)o, it))
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", *buf ? "," : "",
                 json_object_iter_key(it));
}

/* DynamoDB's DeleteTable describes the table being deleted without its schema, creation time
 * or indexes (the API reference's and the CLI reference's examples: TableName, TableStatus
 * DELETING, ProvisionedThroughput, TableSizeBytes, ItemCount; current responses add TableArn,
 * TableId, BillingModeSummary, the stream and DeletionProtectionEnabled). */
static void test_delete_table_description(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"delt\",\"AttributeDefinitions\":[{\"AttributeName\":"
                   "\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":"
                   "\"S\"},{\"AttributeName\":\"l\",\"AttributeType\":\"S\"}],\"KeySchema\":[{"
                   "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
                   "\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
                   "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi\",\"KeySchema\":[{"
                   "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"l\","
                   "\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
                   "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gsi\",\"KeySchema\":[{"
                   "\"AttributeName\":\"l\",\"KeyType\":\"HASH\"}],\"Projection\":{"
                   "\"ProjectionType\":\"KEYS_ONLY\"}}],\"StreamSpecification\":{"
                   "\"StreamEnabled\":true,\"StreamViewType\":\"KEYS_ONLY\"}}"));
    json_t *j = ok("DeleteTable", "{\"TableName\":\"delt\"}");
    json_t *d = json_object_get(j, "TableDescription");
    char got[512];
    member_names(d, got, sizeof got);
    assert_string_equal(got, "TableName,TableStatus,ProvisionedThroughput,TableSizeBytes,"
                             "ItemCount,TableArn,TableId,BillingModeSummary,"
                             "StreamSpecification,LatestStreamLabel,LatestStreamArn,"
                             "DeletionProtectionEnabled");
    assert_string_equal(json_string_value(json_object_get(d, "TableStatus")), "DELETING");
    json_decref(j);
    /* a provisioned table without indexes or stream */
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"delp\",\"AttributeDefinitions\":[{\"AttributeName\":"
                   "\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                   "\"KeyType\":\"HASH\"}],\"ProvisionedThroughput\":{\"ReadCapacityUnits\":5,"
                   "\"WriteCapacityUnits\":5}}"));
    j = ok("DeleteTable", "{\"TableName\":\"delp\"}");
    d = json_object_get(j, "TableDescription");
    member_names(d, got, sizeof got);
    assert_string_equal(got, "TableName,TableStatus,ProvisionedThroughput,TableSizeBytes,"
                             "ItemCount,TableArn,TableId,DeletionProtectionEnabled");
    member_names(json_object_get(d, "ProvisionedThroughput"), got, sizeof got);
    assert_string_equal(got, "NumberOfDecreasesToday,ReadCapacityUnits,WriteCapacityUnits");
    json_decref(j);
}

/* ---- 4. Attribute names holding any UTF-8, NUL included ----------------------------------- */

static void test_names_with_nul(void **state)
{
    (void)state;
    json_decref(ok("CreateTable",
                   "{\"TableName\":\"nult\",\"AttributeDefinitions\":[{\"AttributeName\":"
                   "\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                   "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    ok_is("PutItem",
          "{\"TableName\":\"nult\",\"Item\":{\"pk\":{\"S\":\"k\"},\"a\\u0000b\":{\"S\":\"v\"},"
          "\"a\":{\"M\":{\"x\\u0000\":{\"N\":\"1\"},\"x\":{\"N\":\"2\"}}},\"\\u0000\":{\"S\":\"\\u0000\"},"
          "\"\\u00e9\\u0000\\ud83d\\ude00\":{\"BOOL\":true}}}",
          "{}");
    /* back byte for byte, in name order (NUL sorts first) */
    ok_is("GetItem", "{\"TableName\":\"nult\",\"Key\":{\"pk\":{\"S\":\"k\"}}}",
          "{\"Item\":{\"\\u0000\":{\"S\":\"\\u0000\"},\"a\":{\"M\":{\"x\":{\"N\":\"2\"},"
          "\"x\\u0000\":{\"N\":\"1\"}}},\"a\\u0000b\":{\"S\":\"v\"},\"pk\":{\"S\":\"k\"},"
          "\"\xc3\xa9\\u0000\xf0\x9f\x98\x80\":{\"BOOL\":true}}}");
    /* through ExpressionAttributeNames: projection, condition, update, filter */
    ok_is("GetItem",
          "{\"TableName\":\"nult\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"ProjectionExpression\":"
          "\"#n, a.#m\",\"ExpressionAttributeNames\":{\"#n\":\"a\\u0000b\",\"#m\":\"x\\u0000\"}}",
          "{\"Item\":{\"a\":{\"M\":{\"x\\u0000\":{\"N\":\"1\"}}},\"a\\u0000b\":{\"S\":\"v\"}}}");
    ok_is("UpdateItem",
          "{\"TableName\":\"nult\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"UpdateExpression\":"
          "\"SET #n = :v, #o = :v REMOVE a.#m\",\"ConditionExpression\":\"attribute_exists(#n)\","
          "\"ExpressionAttributeNames\":{\"#n\":\"a\\u0000b\",\"#o\":\"\\u0000\\u0000\",\"#m\":"
          "\"x\\u0000\"},\"ExpressionAttributeValues\":{\":v\":{\"S\":\"w\"}},\"ReturnValues\":"
          "\"UPDATED_NEW\"}",
          "{\"Attributes\":{\"\\u0000\\u0000\":{\"S\":\"w\"},\"a\\u0000b\":{\"S\":\"w\"}}}");
    ok_is("Scan",
          "{\"TableName\":\"nult\",\"FilterExpression\":\"#n = :v AND attribute_not_exists(a.#m)"
          "\",\"ProjectionExpression\":\"#n\",\"ExpressionAttributeNames\":{\"#n\":\"a\\u0000b\","
          "\"#m\":\"x\\u0000\"},\"ExpressionAttributeValues\":{\":v\":{\"S\":\"w\"}}}",
          "{\"Items\":[{\"a\\u0000b\":{\"S\":\"w\"}}],\"Count\":1,\"ScannedCount\":1}");
    /* the legacy parameters name attributes by map keys and lists */
    ok_is("UpdateItem",
          "{\"TableName\":\"nult\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"AttributeUpdates\":{"
          "\"a\\u0000b\":{\"Action\":\"DELETE\"}},\"Expected\":{\"\\u0000\\u0000\":{\"Value\":{"
          "\"S\":\"w\"}}}}",
          "{}");
    ok_is("GetItem",
          "{\"TableName\":\"nult\",\"Key\":{\"pk\":{\"S\":\"k\"}},\"AttributesToGet\":["
          "\"a\\u0000b\",\"\\u0000\\u0000\",\"a\"]}",
          "{\"Item\":{\"\\u0000\\u0000\":{\"S\":\"w\"},\"a\":{\"M\":{\"x\":{\"N\":\"2\"}}}}}");
    /* a NUL where a table name is expected is no table name (the pattern) */
    invalid("BatchGetItem",
            "{\"RequestItems\":{\"nult\\u0000x\":{\"Keys\":[{\"pk\":{\"S\":\"k\"}}]}}}",
            "*"); /* the schema's "Map keys must satisfy constraint" */
    /* a datatype name with a NUL is no datatype */
    invalid("PutItem", "{\"TableName\":\"nult\",\"Item\":{\"pk\":{\"S\":\"k\"},\"a\":{"
                       "\"S\\u0000\":\"v\"}}}",
            "Supplied AttributeValue is empty, must contain exactly one of the supported "
            "datatypes");
    /* key schemas, projections and Time to Live hold names as C strings: refused, not cut */
    static const char *const nul_names[][2] = {
        {"CreateTable", "{\"TableName\":\"nul2\",\"AttributeDefinitions\":[{\"AttributeName\":"
                        "\"p\\u0000k\",\"AttributeType\":\"S\"}],\"KeySchema\":[{"
                        "\"AttributeName\":\"p\\u0000k\",\"KeyType\":\"HASH\"}],"
                        "\"BillingMode\":\"PAY_PER_REQUEST\"}"},
        {"UpdateTimeToLive", "{\"TableName\":\"nult\",\"TimeToLiveSpecification\":{"
                             "\"Enabled\":true,\"AttributeName\":\"e\\u0000x\"}}"},
        {"UpdateTable", "{\"TableName\":\"nult\",\"AttributeDefinitions\":[{\"AttributeName\":"
                        "\"g\",\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{"
                        "\"Create\":{\"IndexName\":\"gsi\",\"KeySchema\":[{\"AttributeName\":"
                        "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":"
                        "\"INCLUDE\",\"NonKeyAttributes\":[\"a\\u0000b\"]}}}]}"},
    };
    for (size_t i = 0; i < sizeof nul_names / sizeof *nul_names; i++)
        invalid(nul_names[i][0], nul_names[i][1],
                INVALID "kura does not support NUL in key, projected or Time to Live attribute "
                        "names");
    err("DescribeTable", "{\"TableName\":\"nul2\"}", KURA_E_RESOURCE_NOT_FOUND,
        "ResourceNotFoundException", "*");
}

/* ---- 5. Attribute name lengths ------------------------------------------------------------ */

#define NAME_KEYS_65535 "failed to satisfy constraint: Map keys must satisfy constraint: [Member " \
                      "must have length less than or equal to 65535]"

/* The model's check of an attribute name (AttributeName, 1..65535) in its message, whose value
 * is the map as Java prints it, with its values' identity hashes: the start and the end. */
static void name_too_large(const char *op, const char *body, const char *end)
{
    char *out = NULL;
    kura_status s = run_len(op, body, strlen(body), &out);
    json_t *j = json_loads(out, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "message"));
    size_t n = msg ? strlen(msg) : 0, e = strlen(end);
    if (s != KURA_E_INVALID || !msg ||
        strncmp(msg, "1 validation error detected: Value '{", 37) != 0 || n < e ||
        strcmp(msg + n - e, end) != 0)
        fail_msg("%s: %.300s\n  expected a message ending %s", op, out, end);
    json_decref(j);
    kura_free(out);
}

/* A request body: fmt with every %s replaced by a name of `len` 'n's. */
static char *with_name(const char *fmt, size_t len)
{
    char *name = malloc(len + 1);
    memset(name, 'n', len);
    name[len] = 0;
    size_t cap = strlen(fmt) + 4 * len + 1;
    char *b = malloc(cap);
    snprintf(b, cap, fmt, name, name, name, name);
    free(name);
    return b;
}

static void test_name_lengths(void **state)
{
    (void)state;
    /* key attribute names: up to 255 (the model's KeySchemaAttributeName) */
    char *b = with_name("{\"TableName\":\"lent\",\"AttributeDefinitions\":[{\"AttributeName\":"
                        "\"%s\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
                        "\"%s\",\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}",
                        255);
    json_decref(ok("CreateTable", b));
    free(b);
    b = with_name("{\"TableName\":\"len2\",\"AttributeDefinitions\":[{\"AttributeName\":"
                  "\"%s\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
                  "\"%s\",\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}",
                  256);
    char *want = NULL;
    char *name = with_name("%s", 256);
    if (asprintf(&want,
                 "2 validation errors detected: Value '%s' at "
                 "'attributeDefinitions.1.member.attributeName' failed to satisfy constraint: "
                 "Member must have length less than or equal to 255; Value '%s' at "
                 "'keySchema.1.member.attributeName' failed to satisfy constraint: Member must "
                 "have length less than or equal to 255",
                 name, name) < 0)
        fail_msg("nomem");
    invalid("CreateTable", b, want);
    free(want);
    free(b);
    /* UpdateTable's new definitions too */
    b = with_name("{\"TableName\":\"lent\",\"AttributeDefinitions\":[{\"AttributeName\":"
                  "\"%s\",\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{"
                  "\"Create\":{\"IndexName\":\"gix\",\"KeySchema\":[{\"AttributeName\":\"%s\","
                  "\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}}]}",
                  256);
    if (asprintf(&want,
                 "2 validation errors detected: Value '%s' at "
                 "'attributeDefinitions.1.member.attributeName' failed to satisfy constraint: "
                 "Member must have length less than or equal to 255; Value '%s' at "
                 "'globalSecondaryIndexUpdates.1.member.create.keySchema.1.member.attributeName' "
                 "failed to satisfy constraint: Member must have length less than or equal to "
                 "255",
                 name, name) < 0)
        fail_msg("nomem");
    invalid("UpdateTable", b, want);
    free(want);
    free(name);
    free(b);
    /* other attribute names: up to 65,535 bytes, at the top of an item or in a map */
    char *key = with_name("%s", 255);
    char fmt[1024];
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Item\":{\"%s\":{\"S\":\"k\"},\"%%s\":{\"S\":\"v\"}}}", key);
    json_decref(ok("PutItem", b = with_name(fmt, 65535)));
    free(b);
    name_too_large("PutItem", b = with_name(fmt, 65536), "' at 'item' " NAME_KEYS_65535);
    free(b);
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Item\":{\"%s\":{\"S\":\"k\"},\"m\":{\"M\":{\"%%s\":{"
             "\"S\":\"v\"}}}}}",
             key);
    json_decref(ok("PutItem", b = with_name(fmt, 65535)));
    free(b);
    name_too_large("PutItem", b = with_name(fmt, 65536), "' at 'item.m.member.m' " NAME_KEYS_65535);
    free(b);
    /* UpdateItem: a name from ExpressionAttributeNames, and the legacy AttributeUpdates */
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Key\":{\"%s\":{\"S\":\"k\"}},\"UpdateExpression\":"
             "\"SET #n = :v\",\"ExpressionAttributeNames\":{\"#n\":\"%%s\"},"
             "\"ExpressionAttributeValues\":{\":v\":{\"N\":\"1\"}}}",
             key);
    json_decref(ok("UpdateItem", b = with_name(fmt, 65535)));
    free(b);
    name_too_large("UpdateItem", b = with_name(fmt, 65536),
                   "' at 'expressionAttributeNames' failed to satisfy constraint: Map value must "
                   "satisfy constraint: [Member must have length less than or equal to 65535]");
    free(b);
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Key\":{\"%s\":{\"S\":\"k\"}},\"AttributeUpdates\":{"
             "\"%%s\":{\"Value\":{\"N\":\"1\"}}}}",
             key);
    name_too_large("UpdateItem", b = with_name(fmt, 65536), "' at 'attributeUpdates' " NAME_KEYS_65535);
    free(b);
    free(key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_remove_missing_item),
        cmocka_unit_test(test_ttl_enabled_at_once),
        cmocka_unit_test(test_delete_table_description),
        cmocka_unit_test(test_names_with_nul),
        cmocka_unit_test(test_name_lengths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
