/*
 * api_transact_test.c - tests of TransactWriteItems and TransactGetItems through kura_execute
 * (api/req_transact.c): the request errors DynamoDB reports before it looks at a table
 * (SerializationException from the deserializer, the constraint messages with their paths
 * "transactItems.N.member.put.tableName", the checks of each action in DynamoDB Local's order),
 * the exact success responses (ConsumedCapacity with the units' kind, ItemCollectionMetrics by
 * table, Responses with {} for a missing item) and the TransactionCanceledException body
 * ("CancellationReasons" before "Message", an ALL_OLD "Item" first in its reason, a message
 * listing every code even for 100 actions). One database in a temporary directory for the
 * file; the semantics of transactions are engine_transact_test's.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"
#define W "TransactWriteItems"
#define G "TransactGetItems"

/* Runs op on body; returns the status, *out the malloc'ed response. */
static kura_status run(const char *op, const char *body, char **out)
{
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), out, &len);
    assert_non_null(*out);
    assert_int_equal(len, strlen(*out));
    return s;
}

/* Asserts success and an exact response (any response when want is NULL). */
static void ok(const char *op, const char *body, const char *want)
{
    char *out = NULL;
    kura_status s = run(op, body, &out);
    if (s != KURA_OK || (want && strcmp(out, want) != 0))
        fail_msg("%s %s\n  returned %s: %s\n  expected %s", op, body, kura_status_str(s), out,
                 want ? want : "success");
    assert_null(kura_execute_error_type());
    kura_free(out);
}

/* Asserts an error of status `want` whose body is exactly `body_want`. */
static void err_body(const char *op, const char *body, kura_status want, const char *type,
                     const char *body_want)
{
    char *out = NULL;
    kura_status s = run(op, body, &out);
    if (s != want || strcmp(out, body_want) != 0)
        fail_msg("%s %s\n  returned %s: %s\n  expected %s: %s", op, body, kura_status_str(s), out,
                 kura_status_str(want), body_want);
    assert_string_equal(kura_execute_error_type(), type);
    kura_free(out);
}

/* Asserts {"__type": T type, "message": msg} exactly (and the status). */
static void err(const char *op, const char *body, kura_status want, const char *type,
                const char *msg)
{
    char full[8192];
    json_t *m = json_string(msg);
    char *jm = json_dumps(m, JSON_ENCODE_ANY);
    snprintf(full, sizeof full, "{\"__type\":\"" T "%s\",\"message\":%s}", type, jm);
    free(jm);
    json_decref(m);
    err_body(op, body, want, type, full);
}

/* Asserts an error of this status and type whose message is the C API's (kura_last_error). */
static void err_type(const char *op, const char *body, kura_status want, const char *type)
{
    char *out = NULL;
    kura_status s = run(op, body, &out);
    json_t *j = json_loads(out, 0, NULL);
    char full[128];
    snprintf(full, sizeof full, T "%s", type);
    if (s != want || !j || strcmp(json_string_value(json_object_get(j, "__type")), full) != 0 ||
        strcmp(json_string_value(json_object_get(j, "message")), kura_last_error()) != 0)
        fail_msg("%s %s\n  returned %s: %s\n  expected %s (%s)", op, body, kura_status_str(s), out,
                 type, kura_last_error());
    assert_string_equal(kura_execute_error_type(), type);
    json_decref(j);
    kura_free(out);
}

static void invalid(const char *op, const char *body, const char *msg)
{
    err(op, body, KURA_E_INVALID, "ValidationException", msg);
}

static void serialization(const char *op, const char *body, const char *msg)
{
    err(op, body, KURA_E_INVALID, "SerializationException", msg);
}

static void create(const char *body)
{
    char *out = NULL;
    assert_kura_ok(run("CreateTable", body, &out));
    kura_free(out);
}

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_transact");
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    if (kura_open(dir, &o, &db) != KURA_OK) return -1;
    create("{\"TableName\":\"tx1\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
           "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
           "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
    create("{\"TableName\":\"tx2\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
           "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"
           "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
           "\"sk\",\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
           "\"KuraPartitions\":3}");
    create("{\"TableName\":\"lsi\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
           "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
           "{\"AttributeName\":\"x\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
           "\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
           "\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":[{\"IndexName\":"
           "\"ByX\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
           "{\"AttributeName\":\"x\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":"
           "\"ALL\"}}]}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

#define PUT1(k) "{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":\"" k "\"}}}}"
#define BAD_ATTR "{\"pk\":{\"S\":\"b\",\"N\":\"1\"}}"
#define MSG_MULTI_TYPES                                                                            \
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "    \
    "supported datatypes"
#define MSG_NO_ACTION                                                                              \
    "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
#define MSG_MULTI_ACTION "TransactItems can only contain one of Check, Put, Update or Delete"

/* A body of n actions: Put of tx1 items "<prefix>0", "<prefix>1", ... (malloc'ed). */
static char *many_puts(size_t n, const char *prefix, const char *extra)
{
    char *b = malloc(n * (96 + strlen(extra)) + 256);
    size_t off = (size_t)sprintf(b, "{\"TransactItems\":[");
    for (size_t i = 0; i < n; i++)
        off += (size_t)sprintf(b + off,
                               "%s{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":"
                               "\"%s%zu\"}}%s}}",
                               i ? "," : "", prefix, i, extra);
    strcpy(b + off, "]}");
    return b;
}

/* ---- TransactWriteItems: request errors --------------------------------------------------- */

static void test_write_constraints(void **state)
{
    (void)state;
    invalid(W, "{}",
            "1 validation error detected: Value null at 'transactItems' failed to satisfy "
            "constraint: Member must not be null");
    invalid(W, "{\"TransactItems\":[]}",
            "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1");
    invalid(W, "{\"TransactItems\":[{\"Put\":{}}]}",
            "2 validation errors detected: Value null at 'transactItems.1.member.put.item' failed "
            "to satisfy constraint: Member must not be null; Value null at "
            "'transactItems.1.member.put.tableName' failed to satisfy constraint: Member must not "
            "be null");
    invalid(W,
            "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":"
            "\"a\"}}}},{\"Update\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"b\"}}}},"
            "{\"Delete\":{\"TableName\":\"x\"}}]}",
            "3 validation errors detected: Value null at "
            "'transactItems.1.member.conditionCheck.conditionExpression' failed to satisfy "
            "constraint: Member must not be null; Value null at "
            "'transactItems.2.member.update.updateExpression' failed to satisfy constraint: "
            "Member must not be null; Value null at 'transactItems.3.member.delete.key' failed to "
            "satisfy constraint: Member must not be null");
    invalid(W,
            "{\"TransactItems\":[{\"Put\":{\"TableName\":\"a;b\",\"Item\":{},"
            "\"ReturnValuesOnConditionCheckFailure\":\"ALL_NEW\"}}],\"ReturnConsumedCapacity\":"
            "\"ALL\",\"ReturnItemCollectionMetrics\":\"BIG\",\"ClientRequestToken\":\"\"}",
            "4 validation errors detected: Value 'ALL_NEW' at "
            "'transactItems.1.member.put.returnValuesOnConditionCheckFailure' failed to satisfy "
            "constraint: Member must satisfy enum value set: [ALL_OLD, NONE]; Value 'ALL' at "
            "'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum "
            "value set: [INDEXES, TOTAL, NONE]; Value 'BIG' at 'returnItemCollectionMetrics' "
            "failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]; "
            "Value '' at 'clientRequestToken' failed to satisfy constraint: Member must have "
            "length greater than or equal to 1");
    invalid(W,
            "{\"TransactItems\":[" PUT1("a") "],\"ClientRequestToken\":"
                                             "\"0123456789012345678901234567890123456\"}",
            "1 validation error detected: Value '0123456789012345678901234567890123456' at "
            "'clientRequestToken' failed to satisfy constraint: Member must have length less "
            "than or equal to 36");
    /* 101 actions: a list of structures prints as Java prints one (validate_msg.c) */
    char *body = many_puts(101, "k", "");
    char *out = NULL;
    assert_int_equal(run(W, body, &out), KURA_E_INVALID);
    assert_non_null(strstr(out, "1 validation error detected: Value '[com.amazonaws.dynamodb."
                                "v20120810.TransactWriteItem@"));
    assert_non_null(strstr(out, "]' at 'transactItems' failed to satisfy constraint: Member "
                                "must have length less than or equal to 100\"}"));
    kura_free(out);
    free(body);
    /* 100 are fine */
    body = many_puts(100, "k", "");
    ok(W, body, "{}");
    free(body);
}

static void test_write_types(void **state)
{
    (void)state;
    serialization(W, "{\"TransactItems\":{}}",
                  "Start of structure or map found where not expected");
    serialization(W, "{\"TransactItems\":1}", "Unexpected field type");
    serialization(W, "{\"TransactItems\":[1]}", "Unexpected value type in payload");
    serialization(W, "{\"TransactItems\":[[]]}",
                  "Unrecognized collection type class "
                  "com.amazonaws.dynamodb.v20120810.TransactWriteItem");
    serialization(W, "{\"TransactItems\":[{\"Put\":1}]}", "Unexpected field type");
    serialization(W, "{\"TransactItems\":[{\"Update\":[]}]}",
                  "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.Update");
    serialization(W, "{\"TransactItems\":[{\"Put\":{\"Item\":[]}}]}",
                  "Unrecognized collection type java.util.Map<java.lang.String, "
                  "com.amazonaws.dynamodb.v20120810.AttributeValue>");
    serialization(W, "{\"TransactItems\":[" PUT1("a") "],\"ClientRequestToken\":5}",
                  "NUMBER_VALUE cannot be converted to String");
    /* unknown and null members are dropped as everywhere */
    ok(W,
       "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":\"u\"}},"
       "\"Other\":1,\"ConditionExpression\":null},\"Get\":{}}],\"Bogus\":true,"
       "\"ClientRequestToken\":null}",
       "{}");
}

static void test_write_action_checks(void **state)
{
    (void)state;
    invalid(W, "{\"TransactItems\":[{}]}", MSG_NO_ACTION);
    invalid(W,
            "{\"TransactItems\":[" PUT1("a") ",{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":"
                                             "{\"S\":\"b\"}}},\"Delete\":{\"TableName\":\"tx1\","
                                             "\"Key\":{\"pk\":{\"S\":\"b\"}}}}]}",
            MSG_MULTI_ACTION);
    /* each action in turn: which one, its values, a Put's size; then the expression maps */
    invalid(W, "{\"TransactItems\":[{},{\"Put\":{\"TableName\":\"tx1\",\"Item\":" BAD_ATTR "}}]}",
            MSG_NO_ACTION);
    invalid(W, "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":" BAD_ATTR "}},{}]}",
            MSG_MULTI_TYPES);
    invalid(W,
            "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":\"b\"}},"
            "\"ExpressionAttributeValues\":{}}},{}]}",
            MSG_NO_ACTION);
    invalid(
        W,
        "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":\"b\"}},"
        "\"ExpressionAttributeValues\":{}}},{\"Delete\":{\"TableName\":\"tx1\",\"Key\":" BAD_ATTR
        "}}]}",
        MSG_MULTI_TYPES);
    invalid(W,
            "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":"
            "\"b\"}},\"ConditionExpression\":\"attribute_exists(a)\","
            "\"ExpressionAttributeNames\":{}}}]}",
            "ExpressionAttributeNames must not be empty");
    invalid(W,
            "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":"
            "\"b\"}},\"ConditionExpression\":\"attribute_exists(a)\","
            "\"ExpressionAttributeNames\":{\"a\":\"b\"}}}]}",
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"a\"");
    invalid(W,
            "{\"TransactItems\":[{\"Update\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"b\"}},"
            "\"UpdateExpression\":\"SET a = :a\",\"ExpressionAttributeValues\":{\":a\":"
            "{\"S\":\"x\",\"N\":\"1\"}}}}]}",
            "ExpressionAttributeValues contains invalid value: " MSG_MULTI_TYPES " for key :a");
    /* a Put's item over 400 KB is refused with the request, before the later actions' values */
    size_t big = 410 * 1024;
    char *body = malloc(big + 512);
    int off = sprintf(body, "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":"
                            "{\"S\":\"b\"},\"big\":{\"S\":\"");
    memset(body + off, 'x', big);
    sprintf(body + off + big, "\"}}}},{\"Put\":{\"TableName\":\"tx1\",\"Item\":" BAD_ATTR "}}]}");
    invalid(W, body, "Item size has exceeded the maximum allowed size");
    free(body);
}

/* ---- TransactWriteItems: responses and engine errors ---------------------------------------- */

static void test_write_responses(void **state)
{
    (void)state;
    ok(W,
       "{\"TransactItems\":[{\"Put\":{\"TableName\":\"tx1\",\"Item\":{\"pk\":{\"S\":\"r1\"},"
       "\"n\":{\"N\":\"1\"}}}},{\"Put\":{\"TableName\":\"tx2\",\"Item\":{\"pk\":{\"S\":\"r1\"},"
       "\"sk\":{\"N\":\"1\"}}}}]}",
       "{}");
    /* one entry per table in order of first appearance, the units named */
    ok(W,
       "{\"TransactItems\":[{\"Update\":{\"TableName\":\"tx2\",\"Key\":{\"pk\":{\"S\":\"r1\"},"
       "\"sk\":{\"N\":\"1\"}},\"UpdateExpression\":\"SET v = :v\",\"ExpressionAttributeValues\":"
       "{\":v\":{\"N\":\"2\"}}}},{\"ConditionCheck\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":"
       "\"r1\"}},\"ConditionExpression\":\"n = :one\",\"ExpressionAttributeValues\":{\":one\":"
       "{\"N\":\"1\"}}}},{\"Delete\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"k0\"}}}}],"
       "\"ReturnConsumedCapacity\":\"TOTAL\",\"ReturnItemCollectionMetrics\":\"SIZE\"}",
       "{\"ConsumedCapacity\":[{\"TableName\":\"tx2\",\"CapacityUnits\":2.0,"
       "\"WriteCapacityUnits\":2.0},{\"TableName\":\"tx1\",\"CapacityUnits\":4.0,"
       "\"WriteCapacityUnits\":4.0}]}");
    /* INDEXES: "Table" and each index with the same split, index writes doubled too (as
     * DynamoDB Local doubles them); metrics by table (LSI tables) */
    ok(W,
       "{\"TransactItems\":[{\"Put\":{\"TableName\":\"lsi\",\"Item\":{\"pk\":{\"S\":\"c\"},\"sk\":"
       "{\"S\":\"1\"},\"x\":{\"S\":\"1\"}}}}," PUT1(
           "r2") ",{\"Put\":{\"TableName\":\"lsi\",\"Item\":"
                 "{\"pk\":{\"S\":\"d\"},\"sk\":{\"S\":\"1\"}}}}],\"ReturnConsumedCapacity\":"
                 "\"INDEXES\","
                 "\"ReturnItemCollectionMetrics\":\"SIZE\"}",
       "{\"ConsumedCapacity\":[{\"TableName\":\"lsi\",\"CapacityUnits\":6.0,"
       "\"WriteCapacityUnits\":6.0,\"Table\":{\"WriteCapacityUnits\":4.0,\"CapacityUnits\":4.0},"
       "\"LocalSecondaryIndexes\":{\"ByX\":{\"WriteCapacityUnits\":2.0,\"CapacityUnits\":2.0}}},"
       "{\"TableName\":\"tx1\",\"CapacityUnits\":2.0,\"WriteCapacityUnits\":2.0,\"Table\":"
       "{\"WriteCapacityUnits\":2.0,\"CapacityUnits\":2.0}}],\"ItemCollectionMetrics\":{\"lsi\":"
       "[{\"ItemCollectionKey\":{\"pk\":{\"S\":\"c\"}},\"SizeEstimateRangeGB\":[0.0,1.0]},"
       "{\"ItemCollectionKey\":{\"pk\":{\"S\":\"d\"}},\"SizeEstimateRangeGB\":[0.0,1.0]}]}}");
    /* errors of kura_transact_write_items keep their types and messages */
    invalid(W, "{\"TransactItems\":[" PUT1("dup") "," PUT1("dup") "]}",
            "Transaction request cannot include multiple operations on one item");
    err_type(W,
             "{\"TransactItems\":[{\"Put\":{\"TableName\":\"nosuch\",\"Item\":{\"pk\":"
             "{\"S\":\"a\"}}}}]}",
             KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException");
}

static void test_write_cancelled(void **state)
{
    (void)state;
    /* "CancellationReasons" before "Message"; an ALL_OLD item first in its reason */
    err_body(
        W,
        "{\"TransactItems\":[{\"Update\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":"
        "\"r1\"}},\"UpdateExpression\":\"REMOVE n\",\"ConditionExpression\":"
        "\"attribute_not_exists(pk)\",\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}}," PUT1(
            "new1") ","
                    "{\"Delete\":{\"TableName\":\"tx2\",\"Key\":{\"pk\":{\"S\":\"r1\"},\"sk\":{"
                    "\"N\":\"1\"}},"
                    "\"ConditionExpression\":\"v = "
                    ":z\",\"ExpressionAttributeValues\":{\":z\":{\"N\":\"0\"}}}}],"
                    "\"ReturnConsumedCapacity\":\"TOTAL\"}",
        KURA_E_TXN_CANCELED, "TransactionCanceledException",
        "{\"__type\":\"" T "TransactionCanceledException\",\"CancellationReasons\":["
        "{\"Item\":{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":\"r1\"}},\"Code\":\"ConditionalCheckFailed\","
        "\"Message\":\"The conditional request failed\"},{\"Code\":\"None\"},"
        "{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"The conditional request failed\"}],"
        "\"Message\":\"Transaction cancelled, please refer cancellation reasons for specific "
        "reasons [ConditionalCheckFailed, None, ConditionalCheckFailed]\"}");
    /* nothing was written */
    ok("GetItem", "{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"new1\"}}}", "{}");
    /* 100 reasons: the message lists them all (longer than kura_last_error() keeps) */
    char *body = many_puts(100, "c", ",\"ConditionExpression\":\"attribute_exists(pk)\"");
    char *out = NULL;
    assert_int_equal(run(W, body, &out), KURA_E_TXN_CANCELED);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "CancellationReasons")), 100);
    const char *msg = json_string_value(json_object_get(j, "Message"));
    assert_non_null(msg);
    assert_null(json_object_get(j, "message"));
    char want[4096];
    int off = sprintf(want, "Transaction cancelled, please refer cancellation reasons for "
                            "specific reasons [");
    for (int i = 0; i < 100; i++)
        off += sprintf(want + off, "%sConditionalCheckFailed", i ? ", " : "");
    strcpy(want + off, "]");
    assert_string_equal(msg, want);
    json_decref(j);
    kura_free(out);
    free(body);
    /* the next request's error body carries no reasons */
    invalid(W, "{\"TransactItems\":[{}]}", MSG_NO_ACTION);
}

/* ---- TransactGetItems ------------------------------------------------------------------------ */

static void test_get(void **state)
{
    (void)state;
    invalid(G, "{}",
            "1 validation error detected: Value null at 'transactItems' failed to satisfy "
            "constraint: Member must not be null");
    invalid(G, "{\"TransactItems\":[]}",
            "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1");
    invalid(G, "{\"TransactItems\":[{}],\"ReturnConsumedCapacity\":\"X\"}",
            "2 validation errors detected: Value null at 'transactItems.1.member.get' failed to "
            "satisfy constraint: Member must not be null; Value 'X' at 'returnConsumedCapacity' "
            "failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, "
            "NONE]");
    invalid(G, "{\"TransactItems\":[{\"Get\":{}}]}",
            "2 validation errors detected: Value null at 'transactItems.1.member.get.key' failed "
            "to satisfy constraint: Member must not be null; Value null at "
            "'transactItems.1.member.get.tableName' failed to satisfy constraint: Member must not "
            "be null");
    serialization(G, "{\"TransactItems\":[{\"Get\":[]}]}",
                  "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.Get");
    invalid(G,
            "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
            "\"ExpressionAttributeNames\":{}}},{\"Get\":{\"TableName\":\"tx1\",\"Key\":" BAD_ATTR
            "}}]}",
            MSG_MULTI_TYPES);
    invalid(G,
            "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
            "\"ExpressionAttributeNames\":{}}}]}",
            "ExpressionAttributeNames must not be empty");
    invalid(G,
            "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"a\"}}}},"
            "{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"a\"}}}}]}",
            "Transaction request cannot include multiple operations on one item");
    /* Responses in request order, {} for a missing item; ConsumedCapacity first */
    ok(G,
       "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"r1\"}}}},"
       "{\"Get\":{\"TableName\":\"tx2\",\"Key\":{\"pk\":{\"S\":\"r1\"},\"sk\":{\"N\":\"1\"}},"
       "\"ProjectionExpression\":\"#v, sk\",\"ExpressionAttributeNames\":{\"#v\":\"v\"}}},"
       "{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"none\"}}}}]}",
       "{\"Responses\":[{\"Item\":{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":\"r1\"}}},{\"Item\":{\"sk\":"
       "{\"N\":\"1\"},\"v\":{\"N\":\"2\"}}},{}]}");
    ok(G,
       "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"none\"}}}},"
       "{\"Get\":{\"TableName\":\"tx2\",\"Key\":{\"pk\":{\"S\":\"r1\"},\"sk\":{\"N\":\"1\"}}}},"
       "{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"r1\"}}}}],"
       "\"ReturnConsumedCapacity\":\"INDEXES\"}",
       "{\"ConsumedCapacity\":[{\"TableName\":\"tx1\",\"CapacityUnits\":4.0,"
       "\"ReadCapacityUnits\":4.0,\"Table\":{\"CapacityUnits\":4.0}},{\"TableName\":\"tx2\","
       "\"CapacityUnits\":2.0,\"ReadCapacityUnits\":2.0,\"Table\":{\"CapacityUnits\":2.0}}],"
       "\"Responses\":[{},{\"Item\":{\"pk\":{\"S\":\"r1\"},\"sk\":{\"N\":\"1\"},\"v\":{\"N\":"
       "\"2\"}}},{\"Item\":{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":\"r1\"}}}]}");
    ok(G,
       "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"r1\"}}}}],"
       "\"ReturnConsumedCapacity\":\"TOTAL\"}",
       "{\"ConsumedCapacity\":[{\"TableName\":\"tx1\",\"CapacityUnits\":2.0,"
       "\"ReadCapacityUnits\":2.0}],\"Responses\":[{\"Item\":{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":"
       "\"r1\"}}}]}");
}

/* A Key that does not match its table's key schema cancels the transaction, as DynamoDB does
 * (reason ValidationError at its position, None elsewhere); other errors stay plain. */
#define GET1(k) "{\"Get\":{\"TableName\":\"tx1\",\"Key\":" k "}}"
#define GET2(k) "{\"Get\":{\"TableName\":\"tx2\",\"Key\":" k "}}"
#define R_NONE "{\"Code\":\"None\"}"
#define R_BAD                                                                                      \
    "{\"Code\":\"ValidationError\",\"Message\":\"The provided key element does not match the "     \
    "schema\"}"
#define CANCELLED(reasons, codes)                                                                  \
    "{\"__type\":\"" T "TransactionCanceledException\",\"CancellationReasons\":[" reasons          \
    "],\"Message\":\"Transaction cancelled, please refer cancellation reasons for specific "       \
    "reasons [" codes "]\"}"
static void get_cancelled(const char *items, const char *want)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"TransactItems\":[%s]}", items);
    err_body(G, body, KURA_E_TXN_CANCELED, "TransactionCanceledException", want);
}

static void test_get_cancelled(void **state)
{
    (void)state;
    /* missing sort key, wrong name, wrong type, an extra attribute, no attribute */
    get_cancelled(GET1("{\"pk\":{\"S\":\"r1\"}}") "," GET2("{\"pk\":{\"S\":\"r1\"}}"),
                  CANCELLED(R_NONE "," R_BAD, "None, ValidationError"));
    get_cancelled(GET2("{\"pk\":{\"S\":\"r1\"},\"sx\":{\"N\":\"1\"}}"),
                  CANCELLED(R_BAD, "ValidationError"));
    get_cancelled(GET2("{\"pk\":{\"S\":\"r1\"},\"sk\":{\"S\":\"1\"}}"),
                  CANCELLED(R_BAD, "ValidationError"));
    get_cancelled(GET1("{\"pk\":{\"S\":\"r1\"},\"x\":{\"S\":\"1\"}}"),
                  CANCELLED(R_BAD, "ValidationError"));
    get_cancelled(
        GET1("{}") "," GET1("{\"pk\":{\"S\":\"r1\"}}") "," GET1("{\"pk\":{\"B\":\"YQ==\"}}"),
        CANCELLED(R_BAD "," R_NONE "," R_BAD, "ValidationError, None, ValidationError"));
    /* a mismatch before a missing table, or before a duplicate: cancelled */
    get_cancelled(GET1("{}") ",{\"Get\":{\"TableName\":\"nope\",\"Key\":{}}}",
                  CANCELLED(R_BAD "," R_NONE, "ValidationError, None"));
    get_cancelled(GET2("{}") "," GET1("{\"pk\":{\"S\":\"a\"}}") "," GET1("{\"pk\":{\"S\":\"a\"}}"),
                  CANCELLED(R_BAD "," R_NONE "," R_NONE, "ValidationError, None, None"));
    /* a missing table first: not found; a key's values, a projection of a key: plain */
    err(G, "{\"TransactItems\":[{\"Get\":{\"TableName\":\"nope\",\"Key\":{}}}," GET1("{}") "]}",
        KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException", "Requested resource not found");
    invalid(G, "{\"TransactItems\":[" GET1("{\"pk\":{\"S\":\"\"}}") "]}",
            "One or more parameter values were invalid: The AttributeValue for a key attribute "
            "cannot contain an empty string value. Key: pk");
    err_type(G,
             "{\"TransactItems\":[{\"Get\":{\"TableName\":\"tx1\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
             "\"ProjectionExpression\":\"pk.x\"}}]}",
             KURA_E_INVALID, "ValidationException");
    /* the next request's error carries no reasons */
    invalid(G, "{\"TransactItems\":[" GET1("{\"pk\":{\"S\":\"\"}}") "]}",
            "One or more parameter values were invalid: The AttributeValue for a key attribute "
            "cannot contain an empty string value. Key: pk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_constraints),   cmocka_unit_test(test_write_types),
        cmocka_unit_test(test_write_action_checks), cmocka_unit_test(test_write_responses),
        cmocka_unit_test(test_write_cancelled),     cmocka_unit_test(test_get),
        cmocka_unit_test(test_get_cancelled),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
