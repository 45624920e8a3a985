/*
 * api_execute_test.c - tests of kura_execute (api/): every operation's happy path with the
 * exact response JSON, every class of request error (SerializationException from the
 * deserializer, the constraint messages "N validation errors detected", the operations'
 * structural checks, errors of the C API carried through with their types), the error body
 * shape and kura_execute_error_type(). One database in a temporary directory for the file.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_execute");
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    return kura_open(dir, &o, &db) == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Runs op on body; returns the status, *out the malloc'ed response. */
static kura_status run(const char *op, const char *body, char **out)
{
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), out, &len);
    assert_non_null(*out);
    assert_int_equal(len, strlen(*out));
    return s;
}

/* Asserts success and an exact response. */
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

/* Asserts the error body {"__type": T type, "message": msg} exactly (and the status). */
static void err(const char *op, const char *body, kura_status want, const char *type,
                const char *msg)
{
    char *out = NULL;
    kura_status s = run(op, body, &out);
    json_t *j = json_loads(out, 0, NULL);
    if (s != want || !j) fail_msg("%s %s\n  returned %s: %s", op, body, kura_status_str(s), out);
    char full[128];
    snprintf(full, sizeof full, T "%s", type);
    assert_string_equal(json_string_value(json_object_get(j, "__type")), full);
    assert_string_equal(kura_execute_error_type(), type);
    if (msg && strcmp(json_string_value(json_object_get(j, "message")), msg) != 0)
        fail_msg("%s %s\n  message: %s\n  expected %s", op, body,
                 json_string_value(json_object_get(j, "message")), msg);
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

#define CREATE_T1                                                                                  \
    "{\"TableName\":\"tb1\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","                  \
    "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"                \
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","    \
    "\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\",\"KuraPartitions\":2}"

/* ---- Tables ----------------------------------------------------------------------------- */

static void test_tables(void **state)
{
    (void)state;
    char *out = NULL;
    assert_kura_ok(run("CreateTable", CREATE_T1, &out));
    json_t *j = json_loads(out, 0, NULL), *d = json_object_get(j, "TableDescription");
    assert_string_equal(json_string_value(json_object_get(d, "TableName")), "tb1");
    assert_string_equal(json_string_value(json_object_get(d, "TableStatus")), "ACTIVE");
    assert_true(json_is_number(json_object_get(d, "CreationDateTime")));
    assert_string_equal(json_string_value(json_object_get(d, "TableArn")),
                        "arn:aws:dynamodb:us-east-1:000000000000:table/tb1");
    assert_true(json_is_string(json_object_get(d, "TableId")));
    assert_int_equal(json_integer_value(json_object_get(d, "ItemCount")), 0);
    assert_int_equal(json_integer_value(json_object_get(d, "TableSizeBytes")), 0);
    assert_true(json_is_false(json_object_get(d, "DeletionProtectionEnabled")));
    char *ks = json_dumps(json_object_get(d, "KeySchema"), JSON_COMPACT);
    assert_string_equal(ks, "[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                            "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]");
    free(ks);
    char *ad = json_dumps(json_object_get(d, "AttributeDefinitions"), JSON_COMPACT);
    assert_string_equal(ad, "[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                            "{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}]");
    free(ad);
    char *pt = json_dumps(json_object_get(d, "ProvisionedThroughput"), JSON_COMPACT);
    assert_string_equal(pt, "{\"NumberOfDecreasesToday\":0,\"ReadCapacityUnits\":0,"
                            "\"WriteCapacityUnits\":0}");
    free(pt);
    json_t *bm = json_object_get(d, "BillingModeSummary");
    assert_string_equal(json_string_value(json_object_get(bm, "BillingMode")), "PAY_PER_REQUEST");
    json_decref(j);
    kura_free(out);

    err("CreateTable", CREATE_T1, KURA_E_RESOURCE_IN_USE, "ResourceInUseException", NULL);
    ok("CreateTable",
       "{\"TableName\":\"tb2\",\"AttributeDefinitions\":[{\"AttributeName\":\"id\","
       "\"AttributeType\":\"B\"}],\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":"
       "\"HASH\"}],\"ProvisionedThroughput\":{\"ReadCapacityUnits\":5,\"WriteCapacityUnits\":"
       "7.9}}",
       NULL);
    ok("ListTables", "{}", "{\"TableNames\":[\"tb1\",\"tb2\"]}");
    ok("ListTables", "{\"Limit\":1}",
       "{\"TableNames\":[\"tb1\"],\"LastEvaluatedTableName\":\"tb1\"}");
    ok("ListTables", "{\"ExclusiveStartTableName\":\"tb1\"}", "{\"TableNames\":[\"tb2\"]}");

    assert_kura_ok(run("DescribeTable", "{\"TableName\":\"tb2\"}", &out));
    j = json_loads(out, 0, NULL);
    d = json_object_get(j, "Table");
    pt = json_dumps(json_object_get(d, "ProvisionedThroughput"), JSON_COMPACT);
    assert_string_equal(pt, "{\"NumberOfDecreasesToday\":0,\"ReadCapacityUnits\":5,"
                            "\"WriteCapacityUnits\":7}");
    free(pt);
    assert_null(json_object_get(d, "BillingModeSummary"));
    json_decref(j);
    kura_free(out);

    assert_kura_ok(
        run("UpdateTable", "{\"TableName\":\"tb2\",\"DeletionProtectionEnabled\":true}", &out));
    assert_non_null(strstr(out, "\"DeletionProtectionEnabled\":true"));
    kura_free(out);
    invalid("DeleteTable", "{\"TableName\":\"tb2\"}", NULL);
    ok("UpdateTable", "{\"TableName\":\"tb2\",\"DeletionProtectionEnabled\":false}", NULL);
    assert_kura_ok(run("DeleteTable", "{\"TableName\":\"tb2\"}", &out));
    assert_non_null(strstr(out, "{\"TableDescription\":{"));
    kura_free(out);
    err("DescribeTable", "{\"TableName\":\"tb2\"}", KURA_E_RESOURCE_NOT_FOUND,
        "ResourceNotFoundException", NULL);
}

static void test_table_request_errors(void **state)
{
    (void)state;
    invalid("DescribeTable", "{}",
            "1 validation error detected: Value null at 'tableName' failed to satisfy "
            "constraint: Member must not be null");
    invalid("DescribeTable", "{\"TableName\":\"ab\"}",
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3");
    invalid("DeleteTable", "{\"TableName\":\"a b\"}",
            "1 validation error detected: Value 'a b' at 'tableName' failed to satisfy "
            "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    invalid("CreateTable", "{\"TableName\":\"abc\"}",
            "2 validation errors detected: Value null at 'attributeDefinitions' failed to "
            "satisfy constraint: Member must not be null; Value null at 'keySchema' failed to "
            "satisfy constraint: Member must not be null");
    invalid("CreateTable",
            "{\"TableName\":\"abc\",\"AttributeDefinitions\":[{\"AttributeName\":\"a\","
            "\"AttributeType\":\"X\"}],\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":"
            "\"HASH\"},{\"KeyType\":\"RANGE\"},{\"AttributeName\":\"c\",\"KeyType\":\"RANGE\"}],"
            "\"BillingMode\":\"PAY_PER_REQUEST\"}",
            "2 validation errors detected: Value 'X' at "
            "'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member "
            "must satisfy enum value set: [B, N, S]; Value null at "
            "'keySchema.2.member.attributeName' failed to satisfy constraint: Member must not "
            "be null");
    invalid("CreateTable",
            "{\"TableName\":\"abc\",\"AttributeDefinitions\":[{\"AttributeName\":\"a\","
            "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":"
            "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\",\"KuraPartitions\":0}",
            "1 validation error detected: Value '0' at 'kuraPartitions' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1");
    invalid("CreateTable",
            "{\"TableName\":\"abc\",\"AttributeDefinitions\":[],\"KeySchema\":[],"
            "\"LocalSecondaryIndexes\":[{\"IndexName\":\"x\"}]}",
            "4 validation errors detected: Value '[]' at 'keySchema' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1; Value 'x' at "
            "'localSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member "
            "must have length greater than or equal to 3; Value null at "
            "'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: Member "
            "must not be null; Value null at 'localSecondaryIndexes.1.member.projection' failed "
            "to satisfy constraint: Member must not be null");
    invalid("ListTables", "{\"Limit\":101,\"ExclusiveStartTableName\":\"a;\"}",
            "3 validation errors detected: Value 'a;' at 'exclusiveStartTableName' failed to "
            "satisfy constraint: Member must satisfy regular expression pattern: "
            "[a-zA-Z0-9_.-]+; Value 'a;' at 'exclusiveStartTableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3; Value '101' at "
            "'limit' failed to satisfy constraint: Member must have value less than or equal to "
            "100");
    invalid("UpdateTable", "{\"TableName\":\"tb1\"}",
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
            "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required");
    err("UpdateTable",
        "{\"TableName\":\"tb1\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{\"IndexName\":"
        "\"idx\"}}]}",
        KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException", "Requested resource not found");
    invalid("UpdateTable", "{\"TableName\":\"tb1\",\"GlobalSecondaryIndexUpdates\":[{}]}",
            "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, "
            "GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be "
            "null");
    serialization("CreateTable", "{\"TableName\":\"abc\",\"KeySchema\":{}}",
                  "Start of structure or map found where not expected");
    serialization("CreateTable",
                  "{\"TableName\":\"abc\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":true}}",
                  "TRUE_VALUE cannot be converted to Long");
    serialization("CreateTable", "{\"TableName\":\"abc\",\"AttributeDefinitions\":[1]}",
                  "Unexpected value type in payload");
    serialization("ListTables", "{\"Limit\":[]}",
                  "Unrecognized collection type class java.lang.Integer");
}

/* ---- Items ------------------------------------------------------------------------------ */

static void test_items(void **state)
{
    (void)state;
    ok("PutItem",
       "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.50\"},\"v\":"
       "{\"SS\":[\"x\"]},\"b\":{\"B\":\"AAE=\"}}}",
       "{}");
    ok("PutItem",
       "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"},\"v\":"
       "{\"N\":\"2\"}},\"ReturnValues\":\"ALL_OLD\",\"ReturnConsumedCapacity\":\"TOTAL\"}",
       "{\"Attributes\":{\"b\":{\"B\":\"AAE=\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"},"
       "\"v\":{\"SS\":[\"x\"]}},\"ConsumedCapacity\":{\"TableName\":\"tb1\",\"CapacityUnits\":1.0}"
       "}");
    ok("GetItem",
       "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
       "\"ConsistentRead\":true,\"ReturnConsumedCapacity\":\"INDEXES\"}",
       "{\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"},\"v\":{\"N\":\"2\"}},"
       "\"ConsumedCapacity\":{\"TableName\":\"tb1\",\"CapacityUnits\":1.0,\"Table\":"
       "{\"CapacityUnits\":1.0}}}");
    ok("GetItem",
       "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
       "\"ProjectionExpression\":\"#v\",\"ExpressionAttributeNames\":{\"#v\":\"v\"}}",
       "{\"Item\":{\"v\":{\"N\":\"2\"}}}");
    ok("GetItem", "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"zz\"},\"sk\":{\"N\":\"1\"}}}",
       "{}");
    ok("UpdateItem",
       "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
       "\"UpdateExpression\":\"SET v = v + :one\",\"ExpressionAttributeValues\":{\":one\":"
       "{\"N\":\"1\"}},\"ReturnValues\":\"UPDATED_NEW\"}",
       "{\"Attributes\":{\"v\":{\"N\":\"3\"}}}");
    err("DeleteItem",
        "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
        "\"ConditionExpression\":\"v = :x\",\"ExpressionAttributeValues\":{\":x\":{\"N\":\"9\"}},"
        "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}",
        KURA_E_CONDITION_FAILED, "ConditionalCheckFailedException",
        "The conditional request failed");
    char *out = NULL;
    run("DeleteItem",
        "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
        "\"ConditionExpression\":\"v = :x\",\"ExpressionAttributeValues\":{\":x\":{\"N\":\"9\"}},"
        "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}",
        &out);
    assert_string_equal(out, "{\"__type\":\"" T "ConditionalCheckFailedException\",\"message\":"
                             "\"The conditional request failed\",\"Item\":{\"pk\":{\"S\":\"a\"},"
                             "\"sk\":{\"N\":\"1.5\"},\"v\":{\"N\":\"3\"}}}");
    kura_free(out);
    ok("DeleteItem",
       "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"}},"
       "\"ReturnValues\":\"ALL_OLD\"}",
       "{\"Attributes\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1.5\"},\"v\":{\"N\":\"3\"}}}");
    err("PutItem", "{\"TableName\":\"nope\",\"Item\":{\"pk\":{\"S\":\"a\"}}}",
        KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException", NULL);
}

static void test_item_request_errors(void **state)
{
    (void)state;
    invalid("PutItem", "{}",
            "2 validation errors detected: Value null at 'tableName' failed to satisfy "
            "constraint: Member must not be null; Value null at 'item' failed to satisfy "
            "constraint: Member must not be null");
    invalid("PutItem",
            "{\"TableName\":\"tb1\",\"Item\":{},\"ReturnValues\":\"ALL\","
            "\"ReturnConsumedCapacity\":\"X\",\"ReturnValuesOnConditionCheckFailure\":\"NEW\"}",
            "3 validation errors detected: Value 'ALL' at 'returnValues' failed to satisfy "
            "constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, "
            "NONE, UPDATED_NEW]; Value 'X' at 'returnConsumedCapacity' failed to satisfy "
            "constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; Value 'NEW' at "
            "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must "
            "satisfy enum value set: [ALL_OLD, NONE]");
    invalid("PutItem",
            "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}},"
            "\"ReturnValues\":\"ALL_NEW\"}",
            "ReturnValues can only be ALL_OLD or NONE");
    invalid("DeleteItem",
            "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}},"
            "\"ReturnValues\":\"UPDATED_NEW\"}",
            "ReturnValues can only be ALL_OLD or NONE");
    invalid("PutItem", "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"NULL\":false}}}",
            "One or more parameter values were invalid: Null attribute value types must have "
            "the value of true");
    invalid("GetItem", "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{}}}",
            "Supplied AttributeValue is empty, must contain exactly one of the supported "
            "datatypes");
    invalid("PutItem",
            "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"a\"}},\"ConditionExpression\":"
            "\"a = :a\",\"ExpressionAttributeValues\":{\":a\":{\"SS\":[]}}}",
            "ExpressionAttributeValues contains invalid value: One or more parameter values "
            "were invalid: An string set  may not be empty for key :a");
    invalid("PutItem",
            "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"a\"}},\"ConditionExpression\":"
            "\"a = :a\",\"ExpressionAttributeValues\":{\"a\":{\"S\":\"x\"}}}",
            "ExpressionAttributeValues contains invalid key: Syntax error; key: \"a\"");
    invalid("UpdateItem",
            "{\"TableName\":\"tb1\",\"Key\":{\"pk\":{\"S\":\"a\"}},\"UpdateExpression\":"
            "\"SET #a = :a\",\"ExpressionAttributeNames\":{}}",
            "ExpressionAttributeNames must not be empty");
    /* a 400 KB item is refused before the table is even looked up */
    size_t n = 410 * 1024;
    char *big = malloc(n + 128);
    int off = snprintf(big, n + 128, "{\"TableName\":\"nope\",\"Item\":{\"pk\":{\"S\":\"");
    memset(big + off, 'x', n);
    strcpy(big + off + n, "\"}}}");
    invalid("PutItem", big, "Item size has exceeded the maximum allowed size");
    free(big);
    serialization("PutItem", "{\"TableName\":\"tb1\",\"Item\":[]}",
                  "Unrecognized collection type java.util.Map<java.lang.String, "
                  "com.amazonaws.dynamodb.v20120810.AttributeValue>");
    serialization("PutItem", "{\"TableName\":1}", "NUMBER_VALUE cannot be converted to String");
    serialization("GetItem", "{\"TableName\":\"tb1\",\"ConsistentRead\":\"sure\"}",
                  "Unexpected token received from parser");
    serialization("PutItem", "{\"TableName\":\"tb1\",\"Item\":{\"a\":{\"B\":\"!!!!\"}}}",
                  "Invalid last non-pad Base64 character dectected");
}

/* ---- Query and Scan --------------------------------------------------------------------- */

static void test_query_scan(void **state)
{
    (void)state;
    for (int i = 1; i <= 3; i++) {
        char body[200];
        snprintf(body, sizeof body,
                 "{\"TableName\":\"tb1\",\"Item\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"%d\"}}}",
                 i);
        ok("PutItem", body, "{}");
    }
    ok("Query",
       "{\"TableName\":\"tb1\",\"KeyConditionExpression\":\"pk = "
       ":p\",\"ExpressionAttributeValues\":"
       "{\":p\":{\"S\":\"q\"}},\"Limit\":2,\"ScanIndexForward\":false}",
       "{\"Items\":[{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"3\"}},{\"pk\":{\"S\":\"q\"},\"sk\":"
       "{\"N\":\"2\"}}],\"Count\":2,\"ScannedCount\":2,\"LastEvaluatedKey\":{\"pk\":{\"S\":\"q\"},"
       "\"sk\":{\"N\":\"2\"}}}");
    ok("Query",
       "{\"TableName\":\"tb1\",\"KeyConditionExpression\":\"pk = "
       ":p\",\"ExpressionAttributeValues\":"
       "{\":p\":{\"S\":\"q\"}},\"Select\":\"COUNT\"}",
       "{\"Count\":3,\"ScannedCount\":3}");
    ok("Query",
       "{\"TableName\":\"tb1\",\"KeyConditionExpression\":\"pk = "
       ":p\",\"ExpressionAttributeValues\":"
       "{\":p\":{\"S\":\"q\"}},\"ExclusiveStartKey\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"2\"}}}",
       "{\"Items\":[{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"3\"}}],\"Count\":1,\"ScannedCount\":1}");
    ok("Scan", "{\"TableName\":\"tb1\",\"Select\":\"COUNT\"}", "{\"Count\":3,\"ScannedCount\":3}");
    ok("Scan", "{\"TableName\":\"tb1\",\"Segment\":0,\"TotalSegments\":1,\"Select\":\"COUNT\"}",
       "{\"Count\":3,\"ScannedCount\":3}");
    invalid("Query", "{\"TableName\":\"tb1\"}",
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in "
            "the request.");
    invalid("Query", "{\"TableName\":\"tb1\",\"Limit\":0,\"IndexName\":\"i\"}",
            "2 validation errors detected: Value 'i' at 'indexName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3; Value '0' at "
            "'limit' failed to satisfy constraint: Member must have value greater than or equal "
            "to 1");
    invalid("Query",
            "{\"TableName\":\"tb1\",\"KeyConditionExpression\":\"pk = :p\","
            "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"q\"}},\"ExclusiveStartKey\":"
            "{\"pk\":{}}}",
            "The provided starting key is invalid: Supplied AttributeValue is empty, must "
            "contain exactly one of the supported datatypes");
    invalid("Scan", "{\"TableName\":\"tb1\",\"ExclusiveStartKey\":{\"pk\":{\"N\":\"x\"}}}",
            "The parameter cannot be converted to a numeric value: x");
    invalid("Scan", "{\"TableName\":\"tb1\",\"Segment\":1}",
            "The TotalSegments parameter is required but was not present in the request when "
            "Segment parameter is present");
    invalid("Scan", "{\"TableName\":\"tb1\",\"TotalSegments\":2}",
            "The Segment parameter is required but was not present in the request when "
            "parameter TotalSegments is present");
    invalid("Scan", "{\"TableName\":\"tb1\",\"Segment\":2,\"TotalSegments\":2}",
            "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
            "Segment: 2 is not less than TotalSegments: 2");
    invalid("Scan", "{\"TableName\":\"tb1\",\"Segment\":-1,\"TotalSegments\":1000001}",
            "2 validation errors detected: Value '1000001' at 'totalSegments' failed to satisfy "
            "constraint: Member must have value less than or equal to 1000000; Value '-1' at "
            "'segment' failed to satisfy constraint: Member must have value greater than or "
            "equal to 0");
    invalid("Scan", "{\"TableName\":\"tb1\",\"IndexName\":\"nosuch\"}",
            "The table does not have the specified index: nosuch");
}

/* ---- Batches ---------------------------------------------------------------------------- */

static void test_batches(void **state)
{
    (void)state;
    ok("BatchWriteItem",
       "{\"RequestItems\":{\"tb1\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b\"},\"sk\":"
       "{\"N\":\"1\"}}}},{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b\"},\"sk\":{\"N\":\"2\"}}}},"
       "{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"1\"}}}}]},"
       "\"ReturnConsumedCapacity\":\"INDEXES\"}",
       "{\"UnprocessedItems\":{},\"ConsumedCapacity\":[{\"TableName\":\"tb1\",\"CapacityUnits\":"
       "3.0,\"Table\":{\"CapacityUnits\":3.0}}]}");
    ok("BatchWriteItem",
       "{\"RequestItems\":{\"tb1\":[{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"x\"},\"sk\":"
       "{\"N\":\"1\"}}}}]}}",
       "{\"UnprocessedItems\":{}}");
    ok("BatchGetItem",
       "{\"RequestItems\":{\"tb1\":{\"Keys\":[{\"pk\":{\"S\":\"b\"},\"sk\":{\"N\":\"2\"}},"
       "{\"pk\":{\"S\":\"none\"},\"sk\":{\"N\":\"2\"}}],\"ProjectionExpression\":\"sk\"}},"
       "\"ReturnConsumedCapacity\":\"TOTAL\"}",
       "{\"Responses\":{\"tb1\":[{\"sk\":{\"N\":\"2\"}}]},\"UnprocessedKeys\":{},"
       "\"ConsumedCapacity\":[{\"TableName\":\"tb1\",\"CapacityUnits\":1.0}]}");
    invalid("BatchGetItem",
            "{\"RequestItems\":{\"tb1\":{\"Keys\":[{\"pk\":{\"S\":\"b\"},\"sk\":{\"N\":\"2\"}},"
            "{\"pk\":{\"S\":\"b\"},\"sk\":{\"N\":\"2.0\"}}]}}}",
            "Provided list of item keys contains duplicates");
    invalid("BatchGetItem", "{\"RequestItems\":{\"t\":{\"Keys\":[]}}}",
            "1 validation error detected: Value '[]' at 'requestItems.t.member.keys' failed to "
            "satisfy constraint: Member must have length greater than or equal to 1");
    /* the table-name check comes after the modelled ones (a map's keys are TableArn) */
    invalid("BatchGetItem", "{\"RequestItems\":{\"t\":{\"Keys\":[{}]}}}",
            "1 validation error detected: Value '{t=com.amazonaws.dynamodb.v20120810."
            "KeysAndAttributes@09626603}' at 'requestItems' failed to satisfy constraint: Map "
            "keys must satisfy constraint: [Member must have length less than or equal to 255, "
            "Member must have length greater than or equal to 3, Member must satisfy regular "
            "expression pattern: [a-zA-Z0-9_.-]+]");
    invalid("BatchGetItem", "{\"RequestItems\":{}}",
            "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1");
    /* 101 keys over two tables */
    char *body = malloc(16384);
    size_t off = (size_t)sprintf(body, "{\"RequestItems\":{\"tb1\":{\"Keys\":[");
    for (int i = 0; i < 101; i++) {
        if (i == 60) off += (size_t)sprintf(body + off - 1, "]},\"tb2x\":{\"Keys\":[") - 1;
        off += (size_t)sprintf(body + off, "{\"pk\":{\"S\":\"k%d\"},\"sk\":{\"N\":\"1\"}},", i);
    }
    strcpy(body + off - 1, "]}}}");
    invalid("BatchGetItem", body, "Too many items requested for the BatchGetItem call");

    off = (size_t)sprintf(body, "{\"RequestItems\":{\"tb1\":[");
    for (int i = 0; i < 26; i++)
        off += (size_t)sprintf(body + off,
                               "{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"k%d\"},"
                               "\"sk\":{\"N\":\"1\"}}}},",
                               i);
    strcpy(body + off - 1, "]}}");
    char want[400];
    snprintf(want, sizeof want,
             "Map value must satisfy constraint: [Member must have length "
             "less than or equal to 25, Member must have length greater than "
             "or equal to 1]");
    char *out = NULL;
    assert_int_equal(run("BatchWriteItem", body, &out), KURA_E_INVALID);
    assert_non_null(strstr(out, want));
    /* a structure prints as Java's Object.toString (validate_msg.c) */
    assert_non_null(strstr(out, "1 validation error detected: Value '{tb1=[com.amazonaws.dynamodb."
                                "v20120810.WriteRequest@"));
    kura_free(out);
    free(body);
    invalid("BatchWriteItem", "{\"RequestItems\":{\"tb1\":[{}]}}",
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
            "of the supported datatypes");
    invalid("BatchWriteItem",
            "{\"RequestItems\":{\"tb1\":[{\"PutRequest\":{\"Item\":{\"a\":{\"NS\":[]}}}}]}}",
            "One or more parameter values were invalid: An number set  may not be empty");
    invalid("BatchWriteItem", "{\"RequestItems\":{\"tb1\":[{\"PutRequest\":{}}]}}",
            "1 validation error detected: Value null at 'requestItems.tb1.member.1.member."
            "putRequest.item' failed to satisfy constraint: Member must not be null");
    serialization("BatchWriteItem", "{\"RequestItems\":{\"tb1\":{}}}",
                  "Start of structure or map found where not expected");
    serialization("BatchWriteItem", "{\"RequestItems\":{\"tb1\":1}}",
                  "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be "
                  "cast to class java.lang.Class (sun.reflect.generics.reflectiveObjects."
                  "ParameterizedTypeImpl and java.lang.Class are in module java.base of loader "
                  "'bootstrap')");
}

/* ---- Protocol errors -------------------------------------------------------------------- */

static void test_protocol_errors(void **state)
{
    (void)state;
    err("CreateBackup", "{}", KURA_E_NOT_SUPPORTED, "UnknownOperationException",
        "An unknown operation was requested.");
    err("putItem", "{}", KURA_E_NOT_SUPPORTED, "UnknownOperationException", NULL);
    /* not JSON: Coral's error alone (api_mismatch_test.c) */
    for (int i = 0; i < 2; i++) {
        char *out = NULL;
        assert_int_equal(run("PutItem", i ? "" : "{not json", &out), KURA_E_INVALID);
        assert_string_equal(out, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}");
        assert_string_equal(kura_execute_error_type(), "SerializationException");
        kura_free(out);
    }
    serialization("PutItem", "[1,2]", NULL);
    /* an error is forgotten by the next success */
    ok("ListTables", "{\"Ignored\":[1]}", NULL);
    assert_null(kura_execute_error_type());
}

/* ---- Service operations (api/req_account.c) ------------------------------------------------ */

/* DescribeEndpoints through kura_execute_ctx with `endpoint`; asserts the exact answer. */
static void endpoints_ctx(const char *endpoint, const char *body, const char *want)
{
    kura_request_context ctx = {.endpoint = endpoint};
    char *out = NULL;
    size_t len = 0;
    kura_status s =
        kura_execute_ctx(db, &ctx, "DescribeEndpoints", body, strlen(body), &out, &len);
    if (s != KURA_OK || !out || strcmp(out, want) != 0 || len != strlen(out))
        fail_msg("DescribeEndpoints at %s\n  returned %s: %s\n  expected %s",
                 endpoint ? endpoint : "(null)", kura_status_str(s), out ? out : "(null)", want);
    kura_free(out);
}

static void test_service_operations(void **state)
{
    (void)state;
    /* DynamoDB Local 1.25.1's answer, byte for byte */
    const char *limits = "{\"AccountMaxReadCapacityUnits\":80000,\"AccountMaxWriteCapacityUnits\":"
                         "80000,\"TableMaxReadCapacityUnits\":40000,\"TableMaxWriteCapacityUnits\":"
                         "40000}";
    ok("DescribeLimits", "{}", limits);
    ok("DescribeLimits", "{\"TableName\":\"x\",\"Other\":[1]}", limits); /* dropped */
    serialization("DescribeLimits", "[]", NULL);
    /* no context: the documented default */
    const char *dflt = "{\"Endpoints\":[{\"Address\":\"" KURA_DEFAULT_ENDPOINT "\","
                       "\"CachePeriodInMinutes\":1440}]}";
    assert_string_equal(KURA_DEFAULT_ENDPOINT, "localhost:8000");
    ok("DescribeEndpoints", "{}", dflt);
    endpoints_ctx(NULL, "{}", dflt);
    endpoints_ctx("", "{}", dflt);
    endpoints_ctx("dynamodb.eu-west-1.amazonaws.com", "{\"Unknown\":1}",
                  "{\"Endpoints\":[{\"Address\":\"dynamodb.eu-west-1.amazonaws.com\","
                  "\"CachePeriodInMinutes\":1440}]}");
    /* an address from a header is escaped, and bytes that are not UTF-8 do not fail it */
    endpoints_ctx("a\"b\xff:1", "{}",
                  "{\"Endpoints\":[{\"Address\":\"a\\\"b\xef\xbf\xbd:1\","
                  "\"CachePeriodInMinutes\":1440}]}");
    /* the operations kura does not have keep answering UnknownOperationException */
    static const char *const unknown[] = {"CreateBackup", "DescribeContinuousBackups",
                                          "ExportTableToPointInTime", "ImportTable",
                                          "CreateGlobalTable", "RestoreTableFromBackup",
                                          "EnableKinesisStreamingDestination"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        err(unknown[i], "{}", KURA_E_NOT_SUPPORTED, "UnknownOperationException",
            "An unknown operation was requested.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),          cmocka_unit_test(test_table_request_errors),
        cmocka_unit_test(test_items),           cmocka_unit_test(test_item_request_errors),
        cmocka_unit_test(test_query_scan),      cmocka_unit_test(test_batches),
        cmocka_unit_test(test_protocol_errors), cmocka_unit_test(test_service_operations),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
