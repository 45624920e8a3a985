/*
 * api_table_arn_test.c - tests of tables named by ARN (api/table_arn.c): every operation whose
 * TableName (or RequestItems key) DynamoDB's model types as TableArn acts on the table an ARN
 * of the request's scope names, and answers with the ARN where the request gave it
 * (ConsumedCapacity.TableName, BatchGetItem's Responses and UnprocessedKeys keys,
 * ItemCollectionMetrics keys); an ARN of another region or account is a missing table; a
 * malformed one fails the table name's constraints.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"
#define API_CTX_DIR "api_table_arn"
#include "api/api_int.h"
#include "api_ctx_util.h"

#define ARN "arn:aws:dynamodb:us-east-1:000000000000:table/tab"
#define EU_ARN "arn:aws:dynamodb:eu-west-1:000000000000:table/tab"
#define ACCT_ARN "arn:aws:dynamodb:us-east-1:123456789012:table/tab"
#define KEY "{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}}"
/* err() in the request region, in the default account */
#define err(region, op, body, type, msg) ctx_err(region, NULL, op, body, type, msg)

static void create_by_arn(void)
{
    json_t *j = ok(NULL, "CreateTable",
                   "{\"TableName\":\"" ARN "\",\"AttributeDefinitions\":["
                   "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                   "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
                   "{\"AttributeName\":\"l\",\"AttributeType\":\"S\"}],"
                   "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                   "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                   "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi1\",\"KeySchema\":["
                   "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                   "{\"AttributeName\":\"l\",\"KeyType\":\"RANGE\"}],"
                   "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
                   "\"BillingMode\":\"PAY_PER_REQUEST\"}");
    expect(j, "TableDescription.TableName", "tab");
    expect(j, "TableDescription.TableArn", ARN);
    json_decref(j);
}

static void test_table_operations_by_arn(void **state)
{
    (void)state;
    create_by_arn();
    json_t *j = ok(NULL, "DescribeTable", "{\"TableName\":\"" ARN "\"}");
    expect(j, "Table.TableName", "tab");
    json_decref(j);
    /* the ARN of the request's region names the same table */
    j = ok("eu-west-1", "DescribeTable", "{\"TableName\":\"" EU_ARN "\"}");
    expect(j, "Table.TableArn", EU_ARN);
    json_decref(j);
    j = ok(NULL, "UpdateTable", "{\"TableName\":\"" ARN "\",\"DeletionProtectionEnabled\":false}");
    expect(j, "TableDescription.TableName", "tab");
    json_decref(j);
    j = ok(NULL, "UpdateTimeToLive",
           "{\"TableName\":\"" ARN "\",\"TimeToLiveSpecification\":"
           "{\"Enabled\":true,\"AttributeName\":\"exp\"}}");
    expect(j, "TimeToLiveSpecification.AttributeName", "exp");
    json_decref(j);
    j = ok(NULL, "DescribeTimeToLive", "{\"TableName\":\"" ARN "\"}");
    expect(j, "TimeToLiveDescription.AttributeName", "exp");
    json_decref(j);
    j = ok(NULL, "DeleteTable", "{\"TableName\":\"" ARN "\"}");
    expect(j, "TableDescription.TableName", "tab");
    json_decref(j);
    err(NULL, "DescribeTable", "{\"TableName\":\"tab\"}", "ResourceNotFoundException",
        "Requested resource not found: Table: tab not found");
}

static void test_item_operations_by_arn(void **state)
{
    (void)state;
    create_by_arn();
    json_t *j = ok(NULL, "PutItem",
                   "{\"TableName\":\"" ARN "\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"},"
                   "\"l\":{\"S\":\"x\"},\"v\":{\"N\":\"1\"}},\"ReturnConsumedCapacity\":\"TOTAL\","
                   "\"ReturnItemCollectionMetrics\":\"SIZE\"}");
    expect(j, "ConsumedCapacity.TableName", ARN);
    expect(j, "ItemCollectionMetrics.ItemCollectionKey.pk.S", "a");
    json_decref(j);
    j = ok(NULL, "GetItem",
           "{\"TableName\":\"" ARN "\",\"Key\":" KEY ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "Item.v.N", "1");
    expect(j, "ConsumedCapacity.TableName", ARN);
    json_decref(j);
    /* named by name, the answer names it by name */
    j = ok(NULL, "GetItem",
           "{\"TableName\":\"tab\",\"Key\":" KEY ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "ConsumedCapacity.TableName", "tab");
    json_decref(j);
    j = ok(NULL, "UpdateItem",
           "{\"TableName\":\"" ARN "\",\"Key\":" KEY ",\"UpdateExpression\":\"SET v = :v\","
           "\"ExpressionAttributeValues\":{\":v\":{\"N\":\"2\"}},\"ReturnValues\":\"ALL_NEW\","
           "\"ReturnConsumedCapacity\":\"INDEXES\"}");
    expect(j, "Attributes.v.N", "2");
    expect(j, "ConsumedCapacity.TableName", ARN);
    json_decref(j);
    j = ok(NULL, "Query",
           "{\"TableName\":\"" ARN "\",\"KeyConditionExpression\":\"pk = :p\","
           "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"a\"}},"
           "\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "Items.0.v.N", "2");
    expect(j, "ConsumedCapacity.TableName", ARN);
    json_decref(j);
    j = ok(NULL, "Scan",
           "{\"TableName\":\"" ARN
           "\",\"IndexName\":\"lsi1\",\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "Items.0.l.S", "x");
    expect(j, "ConsumedCapacity.TableName", ARN);
    json_decref(j);
    j = ok(NULL, "DeleteItem",
           "{\"TableName\":\"" ARN "\",\"Key\":" KEY ",\"ReturnValues\":\"ALL_OLD\"}");
    expect(j, "Attributes.v.N", "2");
    json_decref(j);
    j = ok(NULL, "GetItem", "{\"TableName\":\"tab\",\"Key\":" KEY "}");
    assert_null(json_object_get(j, "Item"));
    json_decref(j);
    json_decref(ok(NULL, "DeleteTable", "{\"TableName\":\"tab\"}"));
}

static void test_batch_keyed_as_requested(void **state)
{
    (void)state;
    create_by_arn();
    json_t *j =
        ok(NULL, "BatchWriteItem",
           "{\"RequestItems\":{\"" ARN "\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":"
           "\"a\"},\"sk\":{\"S\":\"1\"},\"l\":{\"S\":\"x\"}}}},{\"PutRequest\":{\"Item\":"
           "{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"2\"}}}}]},"
           "\"ReturnConsumedCapacity\":\"TOTAL\",\"ReturnItemCollectionMetrics\":\"SIZE\"}");
    expect(j, "ConsumedCapacity.0.TableName", ARN);
    const json_t *m = json_object_get(json_object_get(j, "ItemCollectionMetrics"), ARN);
    assert_int_equal(json_array_size(m), 2);
    assert_null(json_object_get(json_object_get(j, "ItemCollectionMetrics"), "tab"));
    json_decref(j);
    j = ok(NULL, "BatchGetItem",
           "{\"RequestItems\":{\"" ARN "\":{\"Keys\":[" KEY "]}},"
           "\"ReturnConsumedCapacity\":\"TOTAL\"}");
    const json_t *items = json_object_get(json_object_get(j, "Responses"), ARN);
    assert_int_equal(json_array_size(items), 1);
    assert_null(json_object_get(json_object_get(j, "Responses"), "tab"));
    expect(j, "ConsumedCapacity.0.TableName", ARN);
    json_decref(j);
    /* another region's ARN: a missing table */
    err(NULL, "BatchGetItem", "{\"RequestItems\":{\"" EU_ARN "\":{\"Keys\":[" KEY "]}}}",
        "ResourceNotFoundException", "Requested resource not found");
    err(NULL, "BatchWriteItem",
        "{\"RequestItems\":{\"" ACCT_ARN "\":[{\"DeleteRequest\":{\"Key\":" KEY "}}]}}",
        "ResourceNotFoundException", "Requested resource not found");
    json_decref(ok(NULL, "DeleteTable", "{\"TableName\":\"tab\"}"));
}

static void test_transactions_by_arn(void **state)
{
    (void)state;
    create_by_arn();
    json_t *j = ok(NULL, "TransactWriteItems",
                   "{\"TransactItems\":[{\"Put\":{\"TableName\":\"" ARN "\",\"Item\":"
                   "{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"},\"v\":{\"N\":\"7\"}}}}],"
                   "\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "ConsumedCapacity.0.TableName", ARN);
    json_decref(j);
    j = ok(NULL, "TransactGetItems",
           "{\"TransactItems\":[{\"Get\":{\"TableName\":\"" ARN "\",\"Key\":" KEY "}}],"
           "\"ReturnConsumedCapacity\":\"TOTAL\"}");
    expect(j, "Responses.0.Item.v.N", "7");
    expect(j, "ConsumedCapacity.0.TableName", ARN);
    json_decref(j);
    err(NULL, "TransactGetItems",
        "{\"TransactItems\":[{\"Get\":{\"TableName\":\"" EU_ARN "\",\"Key\":" KEY "}}]}",
        "ResourceNotFoundException", "Requested resource not found");
    err(NULL, "TransactWriteItems",
        "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"" ACCT_ARN "\",\"Key\":" KEY
        ",\"ConditionExpression\":\"attribute_exists(pk)\"}}]}",
        "ResourceNotFoundException", "Requested resource not found");
    json_decref(ok(NULL, "DeleteTable", "{\"TableName\":\"tab\"}"));
}

static void test_other_scope_and_malformed(void **state)
{
    (void)state;
    create_by_arn();
    err(NULL, "GetItem", "{\"TableName\":\"" EU_ARN "\",\"Key\":" KEY "}",
        "ResourceNotFoundException", "Requested resource not found");
    err(NULL, "DescribeTable", "{\"TableName\":\"" ACCT_ARN "\"}", "ResourceNotFoundException",
        "Requested resource not found");
    err("eu-west-1", "PutItem", "{\"TableName\":\"" ARN "\",\"Item\":" KEY "}",
        "ResourceNotFoundException", "Requested resource not found");
    /* a request's own checks come before its table is looked up */
    err(NULL, "GetItem", "{\"TableName\":\"" EU_ARN "\",\"Key\":{\"pk\":{\"N\":\"x\"}}}",
        "ValidationException", "The parameter cannot be converted to a numeric value: x");
    /* not a table's ARN: checked as a name */
    err(NULL, "GetItem", "{\"TableName\":\"" ARN "/index/lsi1\",\"Key\":" KEY "}",
        "ValidationException",
        "1 validation error detected: Value '" ARN "/index/lsi1' at 'tableName' failed to "
        "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    err(NULL, "DescribeTable",
        "{\"TableName\":\"arn:aws:dynamodb:us-east-1:000000000000:table/"
        "a\"}",
        "ValidationException",
        "1 validation error detected: Value 'arn:aws:dynamodb:us-east-1:000000000000:table/a' at "
        "'tableName' failed to satisfy constraint: Member must satisfy regular expression "
        "pattern: [a-zA-Z0-9_.-]+");
    err(NULL, "BatchGetItem",
        "{\"RequestItems\":{\"arn:aws:dynamodb:us-east-1:x:table/tab\":{\"Keys\":[" KEY "]}}}",
        "ValidationException",
        "1 validation error detected: Value '{arn:aws:dynamodb:us-east-1:x:table/tab="
        "com.amazonaws.dynamodb.v20120810.KeysAndAttributes@12b7adca}' at 'requestItems' failed to satisfy constraint: Map keys must "
        "satisfy constraint: [Member must have length less than or equal to 255, Member must "
        "have length greater than or equal to 3, Member must satisfy regular expression "
        "pattern: [a-zA-Z0-9_.-]+]");
    json_decref(ok(NULL, "DeleteTable", "{\"TableName\":\"tab\"}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table_operations_by_arn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_item_operations_by_arn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_keyed_as_requested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transactions_by_arn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_scope_and_malformed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
