/*
 * api_settings_test.c - tests of the table settings and resource-based policies through
 * kura_execute (api/req_settings.c, api/req_policy.c, api/req_tables.c): DescribeTable's
 * members and their order (SSEDescription, TableClassSummary, DeletionProtectionEnabled,
 * OnDemandThroughput, WarmThroughput), the error types and exact messages of the refusals
 * (the model's constraints, DynamoDB's rules, PolicyNotFoundException), and the response
 * shapes of Put/Get/DeleteResourcePolicy.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#define API_JSON_DIR "api_settings"
#include "api_json_util.h"

#define ARN "arn:aws:dynamodb:us-east-1:000000000000:table/"
#define INVALID "One or more parameter values were invalid: "

/* A table `name` keyed by pk; TABLE_G also defines g, the key of GSI() */
#define TABLE_DEFS(name, defs)                                                                 \
    "{\"TableName\":\"" name "\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","        \
    "\"AttributeType\":\"S\"}" defs "],\"KeySchema\":[{\"AttributeName\":\"pk\","             \
    "\"KeyType\":\"HASH\"}]"
#define TABLE(name) TABLE_DEFS(name, "")
#define TABLE_G(name) TABLE_DEFS(name, ",{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}")
#define GSI(extra)                                                                             \
    ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gidx\",\"KeySchema\":[{\"AttributeName\":"  \
    "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}" extra "}]"
#define PPR ",\"BillingMode\":\"PAY_PER_REQUEST\""
#define PROV                                                                                   \
    ",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,\"WriteCapacityUnits\":1}"

/* The description's members after TableId, as "A,B,...". */
static void expect_members_after_id(json_t *d, const char *want)
{
    char got[512] = "";
    bool after = false;
    for (void *it = json_object_iter(d); it; it = json_object_iter_next(d, it)) {
        const char *k = json_object_iter_key(it);
        if (after)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", *got ? "," : "", k);
        after = after || strcmp(k, "TableId") == 0;
    }
    assert_string_equal(got, want);
}

static void test_describe_members(void **state)
{
    (void)state;
    json_t *j = ok("CreateTable", TABLE_G("full") PPR GSI(",\"OnDemandThroughput\":{"
                                                        "\"MaxReadRequestUnits\":4}")
                   ",\"TableClass\":\"STANDARD_INFREQUENT_ACCESS\",\"SSESpecification\":"
                   "{\"Enabled\":true,\"SSEType\":\"KMS\",\"KMSMasterKeyId\":\"arn:aws:kms:"
                   "us-east-1:111122223333:key/abc\"},\"DeletionProtectionEnabled\":true,"
                   "\"WarmThroughput\":{\"WriteUnitsPerSecond\":4500}}");
    json_t *d = json_object_get(j, "TableDescription");
    expect_members_after_id(d, "BillingModeSummary,GlobalSecondaryIndexes,SSEDescription,"
                               "TableClassSummary,DeletionProtectionEnabled,"
                               "OnDemandThroughput,WarmThroughput");
    char *sse = json_dumps(json_object_get(d, "SSEDescription"), JSON_COMPACT);
    assert_string_equal(sse, "{\"Status\":\"ENABLED\",\"SSEType\":\"KMS\",\"KMSMasterKeyArn\":"
                             "\"arn:aws:kms:us-east-1:111122223333:key/abc\"}");
    free(sse);
    char *cls = json_dumps(json_object_get(d, "TableClassSummary"), JSON_COMPACT);
    assert_string_equal(cls, "{\"TableClass\":\"STANDARD_INFREQUENT_ACCESS\"}");
    free(cls);
    char *w = json_dumps(json_object_get(d, "WarmThroughput"), JSON_COMPACT);
    assert_string_equal(w, "{\"ReadUnitsPerSecond\":12000,\"WriteUnitsPerSecond\":4500,"
                           "\"Status\":\"ACTIVE\"}");
    free(w);
    json_t *g = json_array_get(json_object_get(d, "GlobalSecondaryIndexes"), 0);
    char *od = json_dumps(json_object_get(g, "OnDemandThroughput"), JSON_COMPACT);
    assert_string_equal(od, "{\"MaxReadRequestUnits\":4,\"MaxWriteRequestUnits\":-1}");
    free(od);
    json_decref(j);
    err("DeleteTable", "{\"TableName\":\"full\"}", "ValidationException",
        "Resource cannot be deleted as it is currently protected against deletion. Disable "
        "deletion protection first.");
    /* a table created without a class or key: no TableClassSummary, no SSEDescription;
     * DeletionProtectionEnabled false; PROVISIONED: no OnDemandThroughput */
    j = ok("CreateTable", TABLE("bare") PROV "}");
    d = json_object_get(j, "TableDescription");
    expect_members_after_id(d, "DeletionProtectionEnabled,WarmThroughput");
    assert_true(json_is_false(json_object_get(d, "DeletionProtectionEnabled")));
    json_decref(j);
    /* UpdateTable of the class alone: TableClassSummary with LastUpdateDateTime */
    j = ok("UpdateTable", "{\"TableName\":\"bare\",\"TableClass\":\"STANDARD_INFREQUENT_ACCESS\"}");
    json_t *s = json_object_get(json_object_get(j, "TableDescription"), "TableClassSummary");
    assert_true(json_is_real(json_object_get(s, "LastUpdateDateTime")));
    json_decref(j);
    /* back from PAY_PER_REQUEST: BillingModeSummary says PROVISIONED and keeps the time */
    json_decref(ok("UpdateTable", "{\"TableName\":\"bare\",\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    j = ok("UpdateTable", "{\"TableName\":\"bare\",\"BillingMode\":\"PROVISIONED\"" PROV "}");
    s = json_object_get(json_object_get(j, "TableDescription"), "BillingModeSummary");
    assert_string_equal(json_string_value(json_object_get(s, "BillingMode")), "PROVISIONED");
    assert_true(json_is_real(json_object_get(s, "LastUpdateToPayPerRequestDateTime")));
    json_decref(j);
}

static void test_refusals(void **state)
{
    (void)state;
    err("CreateTable", TABLE("bad") PPR ",\"TableClass\":\"X\",\"SSESpecification\":"
                                        "{\"SSEType\":\"DES\"}}",
        "ValidationException",
        "2 validation errors detected: Value 'DES' at 'sSESpecification.sSEType' failed to "
        "satisfy constraint: Member must satisfy enum value set: [AES256, KMS]; Value 'X' at "
        "'tableClass' failed to satisfy constraint: Member must satisfy enum value set: "
        "[STANDARD_INFREQUENT_ACCESS, STANDARD]");
    err("CreateTable", TABLE("bad") PPR ",\"OnDemandThroughput\":{\"MaxReadRequestUnits\":\"a\"}}",
        "SerializationException", "STRING_VALUE cannot be converted to Long");
    err("CreateTable", TABLE("bad") PROV ",\"OnDemandThroughput\":{\"MaxReadRequestUnits\":5}}",
        "ValidationException", INVALID "OnDemandThroughput can only be specified when "
                               "BillingMode is PAY_PER_REQUEST");
    err("CreateTable", TABLE("bad") PPR ",\"OnDemandThroughput\":{\"MaxWriteRequestUnits\":-2}}",
        "ValidationException", INVALID "MaxWriteRequestUnits must be greater than 0 or -1 (no "
                               "maximum), not -2");
    err("CreateTable", TABLE_G("bad") PROV GSI(PROV ",\"OnDemandThroughput\":{"
                                                  "\"MaxReadRequestUnits\":5}") "}",
        "ValidationException", INVALID "OnDemandThroughput for index: gidx can only be "
                               "specified when BillingMode is PAY_PER_REQUEST");
    err("CreateTable", TABLE("bad") PPR ",\"SSESpecification\":{\"SSEType\":\"KMS\"}}",
        "ValidationException", INVALID "SSEType and KMSMasterKeyId can only be specified when "
                               "SSESpecification Enabled is true");
    err("CreateTable", TABLE("bad") PPR ",\"SSESpecification\":{\"Enabled\":true,"
                                        "\"SSEType\":\"AES256\"}}",
        "ValidationException", INVALID "Server-Side Encryption type AES256 is not supported: "
                               "the only supported SSEType is KMS");
    err("CreateTable", TABLE("bad") PPR ",\"ResourcePolicy\":\"{\\\"a\\\":\"}",
        "ValidationException", "Invalid policy document: the resource-based policy must be a "
                               "JSON object");
    err("DescribeTable", "{\"TableName\":\"bad\"}", "ResourceNotFoundException",
        "Requested resource not found: Table: bad not found"); /* nothing was created */
    json_decref(ok("CreateTable", TABLE_G("upd") PPR GSI("") "}"));
    err("UpdateTable", "{\"TableName\":\"upd\",\"WarmThroughput\":{\"ReadUnitsPerSecond\":100}}",
        "ValidationException", INVALID "Requested WarmThroughput ReadUnitsPerSecond (100) is "
                               "lower than the current value (12000): warm throughput can only "
                               "be increased");
    err("UpdateTable", "{\"TableName\":\"upd\",\"WarmThroughput\":{}}", "ValidationException",
        INVALID "WarmThroughput must specify ReadUnitsPerSecond or WriteUnitsPerSecond");
    err("UpdateTable", "{\"TableName\":\"upd\",\"SSESpecification\":{\"Enabled\":false}}",
        "ValidationException", "Table is already encrypted by default");
    err("UpdateTable", "{\"TableName\":\"upd\",\"BillingMode\":\"PROVISIONED\"" PROV "}",
        "ValidationException", INVALID "ProvisionedThroughput must be specified for index: gidx");
    err("UpdateTable", "{\"TableName\":\"upd\",\"GlobalSecondaryIndexUpdates\":[{\"Update\":"
                       "{\"IndexName\":\"gidx\"}}]}",
        "ValidationException", INVALID "One of ProvisionedThroughput, OnDemandThroughput or "
                               "WarmThroughput must be specified for index: gidx");
    json_t *j = ok("UpdateTable", "{\"TableName\":\"upd\",\"GlobalSecondaryIndexUpdates\":[{"
                                  "\"Update\":{\"IndexName\":\"gidx\",\"WarmThroughput\":{"
                                  "\"ReadUnitsPerSecond\":20000}}}]}");
    json_t *g = json_array_get(
        json_object_get(json_object_get(j, "TableDescription"), "GlobalSecondaryIndexes"), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(g, "WarmThroughput"),
                                                        "ReadUnitsPerSecond")),
                     20000);
    json_decref(j);
}

static void test_policies(void **state)
{
    (void)state;
    json_decref(ok("CreateTable", TABLE("pol") PPR "}"));
    err("GetResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\"}", "PolicyNotFoundException",
        "Resource-based policy not found for the provided ResourceArn: " ARN "pol");
    err("PutResourcePolicy", "{}", "ValidationException",
        "2 validation errors detected: Value null at 'resourceArn' failed to satisfy "
        "constraint: Member must not be null; Value null at 'policy' failed to satisfy "
        "constraint: Member must not be null");
    err("PutResourcePolicy", "{\"ResourceArn\":\"" ARN "nope\",\"Policy\":\"{}\"}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " ARN "nope not found");
    err("PutResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\",\"Policy\":\"{}\","
                             "\"ExpectedRevisionId\":\"\"}",
        "ValidationException",
        "1 validation error detected: Value '' at 'expectedRevisionId' failed to satisfy "
        "constraint: Member must have length greater than or equal to 1");
    json_t *j = ok("PutResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\",\"Policy\":\"{}\","
                                        "\"ExpectedRevisionId\":\"NO_POLICY\","
                                        "\"ConfirmRemoveSelfResourceAccess\":true}");
    assert_int_equal(json_object_size(j), 1);
    const char *rev = json_string_value(json_object_get(j, "RevisionId"));
    assert_non_null(rev);
    char body[512], msg[512];
    snprintf(body, sizeof body, "{\"ResourceArn\":\"" ARN "pol\",\"Policy\":\"{\\\"x\\\":1}\","
                                "\"ExpectedRevisionId\":\"7\"}");
    snprintf(msg, sizeof msg, "Resource-based policy not found for the provided ResourceArn: "
                              "Requested update for policy with revision id 7, but the policy "
                              "associated to target resource " ARN "pol has revision id %s.",
             rev);
    err("PutResourcePolicy", body, "PolicyNotFoundException", msg);
    json_t *g = ok("GetResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\"}");
    assert_string_equal(json_string_value(json_object_get(g, "Policy")), "{}");
    assert_string_equal(json_string_value(json_object_get(g, "RevisionId")), rev);
    json_decref(g);
    json_t *d = ok("DeleteResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\"}");
    assert_string_equal(json_string_value(json_object_get(d, "RevisionId")), rev);
    json_decref(d);
    d = ok("DeleteResourcePolicy", "{\"ResourceArn\":\"" ARN "pol\"}");
    assert_int_equal(json_object_size(d), 0); /* no policy: {} */
    json_decref(d);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_describe_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policies, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
