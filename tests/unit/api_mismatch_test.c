/*
 * api_mismatch_test.c - tests of small places where kura answered differently from DynamoDB,
 * found by running public conformance suites written against DynamoDB: each test pins
 * DynamoDB's answer through kura_execute (an UpdateItem that only removes on a missing item,
 * DescribeTimeToLive, DeleteTable's description, attribute names, stream ARNs, capacity...).
 * One database in a temporary directory for the file.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"
#define INVALID "One or more parameter values were invalid: "

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_mismatch");
    kura_options o;
    kura_options_init(&o); /* KURA_SYNC: a stream shows a write once it is durable */
    return kura_open(dir, &o, &db) == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Runs op on body[0..len); returns the status, *out the malloc'ed response. */
static kura_status run_len(const char *op, const char *body, size_t blen, char **out)
{
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, blen, out, &len);
    assert_non_null(*out);
    return s;
}

/* Asserts success; returns the response parsed (json_decref it). */
static json_t *ok_len(const char *op, const char *body, size_t blen)
{
    char *out = NULL;
    kura_status s = run_len(op, body, blen, &out);
    if (s != KURA_OK) fail_msg("%s %s\n  returned %s: %s", op, body, kura_status_str(s), out);
    json_t *j = json_loads(out, JSON_ALLOW_NUL, NULL);
    if (!j) fail_msg("%s: not JSON: %s", op, out);
    kura_free(out);
    return j;
}

static json_t *ok(const char *op, const char *body)
{
    return ok_len(op, body, strlen(body));
}

/* Asserts success and an exact response. */
static void ok_is(const char *op, const char *body, const char *want)
{
    char *out = NULL;
    kura_status s = run_len(op, body, strlen(body), &out);
    if (s != KURA_OK || strcmp(out, want) != 0)
        fail_msg("%s %s\n  returned %s: %s\n  expected %s", op, body, kura_status_str(s), out,
                 want);
    kura_free(out);
}

/* Asserts the error body {"__type": T type, "message": msg} (msg NULL: no message member;
 * msg "*": any message). */
static void err_len(const char *op, const char *body, size_t blen, kura_status want,
                    const char *type, const char *msg)
{
    char *out = NULL;
    kura_status s = run_len(op, body, blen, &out);
    json_t *j = json_loads(out, 0, NULL);
    if (s != want || !j)
        fail_msg("%s %.300s\n  returned %s: %s\n  expected %s %s", op, body, kura_status_str(s),
                 out, type, msg ? msg : "");
    char full[160];
    snprintf(full, sizeof full, "%s%s", strchr(type, '#') ? "" : T, type);
    const char *got_type = json_string_value(json_object_get(j, "__type"));
    const char *got_msg = json_string_value(json_object_get(j, "message"));
    bool msg_ok = msg ? (strcmp(msg, "*") == 0 ? got_msg != NULL
                                               : got_msg && strcmp(got_msg, msg) == 0)
                      : got_msg == NULL;
    if (!got_type || strcmp(got_type, full) != 0 || !msg_ok)
        fail_msg("%s %.300s\n  got      %s: %.400s\n  expected %s: %.400s", op, body, got_type,
                 got_msg, full, msg ? msg : "(no message)");
    json_decref(j);
    kura_free(out);
}

static void __attribute__((unused)) err(const char *op, const char *body, kura_status want, const char *type,
                const char *msg)
{
    err_len(op, body, strlen(body), want, type, msg);
}

static void __attribute__((unused)) invalid(const char *op, const char *body, const char *msg)
{
    err(op, body, KURA_E_INVALID, "ValidationException", msg);
}

/* The number of records a stream holds from its start (one shard: a fresh table). */
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
        "\"UpdateExpression\":\"REMOVE a, b.c\",\"ReturnValues\":\"UPDATED_NEW\"",
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

#define NAME_TOO_LARGE INVALID "Attribute name is too large, must be less than 65536 bytes"

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
    free(name);
    free(b);
    /* other attribute names: up to 65,535 bytes, at the top of an item or in a map */
    char *key = with_name("%s", 255);
    char fmt[1024];
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Item\":{\"%s\":{\"S\":\"k\"},\"%%s\":{\"S\":\"v\"}}}", key);
    json_decref(ok("PutItem", b = with_name(fmt, 65535)));
    free(b);
    invalid("PutItem", b = with_name(fmt, 65536), NAME_TOO_LARGE);
    free(b);
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Item\":{\"%s\":{\"S\":\"k\"},\"m\":{\"M\":{\"%%s\":{"
             "\"S\":\"v\"}}}}}",
             key);
    json_decref(ok("PutItem", b = with_name(fmt, 65535)));
    free(b);
    invalid("PutItem", b = with_name(fmt, 65536), NAME_TOO_LARGE);
    free(b);
    /* UpdateItem: a name from ExpressionAttributeNames, and the legacy AttributeUpdates */
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Key\":{\"%s\":{\"S\":\"k\"}},\"UpdateExpression\":"
             "\"SET #n = :v\",\"ExpressionAttributeNames\":{\"#n\":\"%%s\"},"
             "\"ExpressionAttributeValues\":{\":v\":{\"N\":\"1\"}}}",
             key);
    json_decref(ok("UpdateItem", b = with_name(fmt, 65535)));
    free(b);
    invalid("UpdateItem", b = with_name(fmt, 65536), NAME_TOO_LARGE);
    free(b);
    snprintf(fmt, sizeof fmt,
             "{\"TableName\":\"lent\",\"Key\":{\"%s\":{\"S\":\"k\"}},\"AttributeUpdates\":{"
             "\"%%s\":{\"Value\":{\"N\":\"1\"}}}}",
             key);
    invalid("UpdateItem", b = with_name(fmt, 65536), NAME_TOO_LARGE);
    free(b);
    free(key);
}

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

/* fmt with its %s replaced by a string of n 'x's. */
static char *with_value(const char *fmt, size_t n)
{
    char *v = malloc(n + 1);
    memset(v, 'x', n);
    v[n] = 0;
    char *b = NULL;
    if (asprintf(&b, fmt, v) < 0) fail_msg("nomem");
    free(v);
    return b;
}

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
        cmocka_unit_test(test_update_remove_missing_item),
        cmocka_unit_test(test_ttl_enabled_at_once),
        cmocka_unit_test(test_delete_table_description),
        cmocka_unit_test(test_names_with_nul),
        cmocka_unit_test(test_name_lengths),
        cmocka_unit_test(test_malformed_stream_arns),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_index_key_sizes),
        cmocka_unit_test(test_transaction_validation_split),
        cmocka_unit_test(test_query_scan_capacity),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
