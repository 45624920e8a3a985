/*
 * api_region_test.c - tests of the region and account in ARNs (engine/arn.c): every ARN and
 * awsRegion kura_execute_ctx answers is in the request context's region (and account), an
 * ARN of another region or account names nothing (tags, streams), a context without one (or
 * with a malformed one) and the C API answer in kura_options.region and account_id, whose
 * defaults are us-east-1 and 000000000000, and kura_open refuses malformed ones.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#define API_CTX_DIR "api_region"
#include "api_ctx_util.h"

#define EU "arn:aws:dynamodb:eu-west-1:000000000000:table/"
#define US "arn:aws:dynamodb:us-east-1:000000000000:table/"
#define err ctx_err

/* A table with an LSI, a GSI and a stream, created in `region`. */
static json_t *create(const char *region, const char *name)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"AttributeDefinitions\":["
             "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
             "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
             "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
             "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
             "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi1\",\"KeySchema\":["
             "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
             "{\"AttributeName\":\"g\",\"KeyType\":\"RANGE\"}],"
             "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
             "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gsi1\",\"KeySchema\":["
             "{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
             "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}],"
             "\"StreamSpecification\":{\"StreamEnabled\":true,"
             "\"StreamViewType\":\"NEW_IMAGE\"},\"BillingMode\":\"PAY_PER_REQUEST\"}",
             name);
    return ok(region, "CreateTable", body);
}

/* Every ARN of a table description is `table_arn` + its suffix. */
static void expect_desc(const json_t *d, const char *table_arn)
{
    char want[512];
    expect(d, "TableArn", table_arn);
    snprintf(want, sizeof want, "%s/index/lsi1", table_arn);
    expect(d, "LocalSecondaryIndexes.0.IndexArn", want);
    snprintf(want, sizeof want, "%s/index/gsi1", table_arn);
    expect(d, "GlobalSecondaryIndexes.0.IndexArn", want);
    snprintf(want, sizeof want, "%s/stream/%s", table_arn, str(d, "LatestStreamLabel"));
    expect(d, "LatestStreamArn", want);
}

static void test_table_arns_follow_the_request(void **state)
{
    (void)state;
    json_t *j = create("eu-west-1", "rt1");
    expect_desc(json_object_get(j, "TableDescription"), EU "rt1");
    json_decref(j);
    j = ok("ap-northeast-1", "DescribeTable", "{\"TableName\":\"rt1\"}");
    expect_desc(json_object_get(j, "Table"),
                "arn:aws:dynamodb:ap-northeast-1:000000000000:table/rt1");
    json_decref(j);
    /* no context: the database's default region */
    j = ok(NULL, "DescribeTable", "{\"TableName\":\"rt1\"}");
    expect_desc(json_object_get(j, "Table"), US "rt1");
    json_decref(j);
    /* a malformed region is not used: the default */
    j = ok("EU_WEST/1", "DescribeTable", "{\"TableName\":\"rt1\"}");
    expect_desc(json_object_get(j, "Table"), US "rt1");
    json_decref(j);
    j = ok("eu-west-1", "UpdateTable",
           "{\"TableName\":\"rt1\",\"StreamSpecification\":{\"StreamEnabled\":false}}");
    expect_desc(json_object_get(j, "TableDescription"), EU "rt1");
    json_decref(j);
    /* the account of the context */
    kura_status s;
    j = ctx_run("eu-west-1", "123456789012", "DescribeTable", "{\"TableName\":\"rt1\"}", &s);
    assert_int_equal(s, KURA_OK);
    expect_desc(json_object_get(j, "Table"), "arn:aws:dynamodb:eu-west-1:123456789012:table/rt1");
    json_decref(j);
    j = ok("eu-west-1", "DeleteTable", "{\"TableName\":\"rt1\"}");
    expect(j, "TableDescription.TableArn", EU "rt1");
    json_decref(j);
    /* the C API: the database's region and account */
    kura_table_description d;
    json_decref(create("eu-west-1", "rt2"));
    assert_kura_ok(kura_describe_table(db, "rt2", &d));
    assert_string_equal(d.table_arn, US "rt2");
    assert_string_equal(d.global_secondary_indexes[0].index_arn, US "rt2/index/gsi1");
    kura_table_description_free(&d);
}

static void test_tags_in_the_request_region(void **state)
{
    (void)state;
    json_decref(create("eu-west-1", "rt3"));
    json_decref(ok("eu-west-1", "TagResource",
                   "{\"ResourceArn\":\"" EU "rt3\",\"Tags\":[{\"Key\":\"k\",\"Value\":\"v\"}]}"));
    json_t *j = ok("eu-west-1", "ListTagsOfResource", "{\"ResourceArn\":\"" EU "rt3\"}");
    expect(j, "Tags.0.Key", "k");
    json_decref(j);
    /* another region's or account's ARN: not a resource of this region */
    err("eu-west-1", NULL, "ListTagsOfResource", "{\"ResourceArn\":\"" US "rt3\"}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " US "rt3 not found");
    err(NULL, NULL, "TagResource",
        "{\"ResourceArn\":\"" EU "rt3\",\"Tags\":[{\"Key\":\"k\",\"Value\":\"w\"}]}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " EU "rt3 not found");
    err("eu-west-1", NULL, "UntagResource",
        "{\"ResourceArn\":\"arn:aws:dynamodb:eu-west-1:111111111111:table/rt3\","
        "\"TagKeys\":[\"k\"]}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: "
        "arn:aws:dynamodb:eu-west-1:111111111111:table/rt3 not found");
    /* nothing changed by the refused calls */
    j = ok("eu-west-1", "ListTagsOfResource", "{\"ResourceArn\":\"" EU "rt3\"}");
    expect(j, "Tags.0.Value", "v");
    json_decref(j);
    json_decref(
        ok("us-east-1", "UntagResource", "{\"ResourceArn\":\"" US "rt3\",\"TagKeys\":[\"k\"]}"));
    j = ok("eu-west-1", "ListTagsOfResource", "{\"ResourceArn\":\"" EU "rt3\"}");
    assert_int_equal(json_array_size(json_object_get(j, "Tags")), 0);
    json_decref(j);
}

static void test_streams_in_the_request_region(void **state)
{
    (void)state;
    json_t *j = create("eu-west-1", "rt4");
    char eu_arn[512], us_arn[512], body[1024];
    snprintf(eu_arn, sizeof eu_arn, "%s", str(j, "TableDescription.LatestStreamArn"));
    snprintf(us_arn, sizeof us_arn, US "rt4/stream/%s",
             str(j, "TableDescription.LatestStreamLabel"));
    json_decref(j);
    assert_int_equal(strncmp(eu_arn, EU "rt4/stream/", strlen(EU "rt4/stream/")), 0);
    json_decref(create("eu-west-1", "rt5"));
    json_decref(ok("eu-west-1", "PutItem",
                   "{\"TableName\":\"rt4\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"b\"}}}"));

    /* ListStreams: the request's region, paged by an ARN of that region */
    j = ok("eu-west-1", "ListStreams", "{\"Limit\":1}");
    expect(j, "Streams.0.StreamArn", eu_arn);
    snprintf(body, sizeof body, "{\"Limit\":1,\"ExclusiveStartStreamArn\":\"%s\"}",
             str(j, "LastEvaluatedStreamArn"));
    json_decref(j);
    j = ok("eu-west-1", "ListStreams", body);
    assert_int_equal(
        strncmp(str(j, "Streams.0.StreamArn"), EU "rt5/stream/", strlen(EU "rt5/stream/")), 0);
    json_decref(j);
    j = ok("us-west-2", "ListStreams", "{\"TableName\":\"rt4\"}");
    assert_int_equal(strncmp(str(j, "Streams.0.StreamArn"),
                             "arn:aws:dynamodb:us-west-2:000000000000:table/rt4/stream/", 57),
                     0);
    json_decref(j);

    /* DescribeStream and GetShardIterator take the region's ARN only */
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", eu_arn);
    j = ok("eu-west-1", "DescribeStream", body);
    expect(j, "StreamDescription.StreamArn", eu_arn);
    char shard[128];
    snprintf(shard, sizeof shard, "%s", str(j, "StreamDescription.Shards.0.ShardId"));
    json_decref(j);
    char want[1024];
    snprintf(want, sizeof want, "Requested resource not found: Stream: %s not found", eu_arn);
    err("us-east-1", NULL, "DescribeStream", body, "ResourceNotFoundException", want);
    err("eu-west-1", "123456789012", "DescribeStream", body, "ResourceNotFoundException", want);
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", us_arn);
    snprintf(want, sizeof want, "Requested resource not found: Stream: %s not found", us_arn);
    err("eu-west-1", NULL, "DescribeStream", body, "ResourceNotFoundException", want);
    snprintf(body, sizeof body,
             "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\","
             "\"ShardIteratorType\":\"TRIM_HORIZON\"}",
             us_arn, shard);
    err("eu-west-1", NULL, "GetShardIterator", body, "ResourceNotFoundException", want);

    /* GetRecords: awsRegion is the request's (the iterator is the same) */
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", eu_arn);
    json_t *desc = ok("eu-west-1", "DescribeStream", body);
    json_t *shards = json_object_get(json_object_get(desc, "StreamDescription"), "Shards");
    size_t records = 0;
    for (size_t i = 0; i < json_array_size(shards); i++) {
        snprintf(body, sizeof body,
                 "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\","
                 "\"ShardIteratorType\":\"TRIM_HORIZON\"}",
                 eu_arn, str(json_array_get(shards, i), "ShardId"));
        json_t *it = ok("eu-west-1", "GetShardIterator", body);
        char get[1024];
        snprintf(get, sizeof get, "{\"ShardIterator\":\"%s\"}", str(it, "ShardIterator"));
        json_decref(it);
        j = ok("eu-west-1", "GetRecords", get);
        json_t *r = json_object_get(j, "Records");
        for (size_t k = 0; k < json_array_size(r); k++, records++)
            expect(json_array_get(r, k), "awsRegion", "eu-west-1");
        size_t n = json_array_size(r);
        json_decref(j);
        j = ok("sa-east-1", "GetRecords", get);
        r = json_object_get(j, "Records");
        assert_int_equal(json_array_size(r), n);
        for (size_t k = 0; k < n; k++)
            expect(json_array_get(r, k), "awsRegion", "sa-east-1");
        json_decref(j);
        j = ok(NULL, "GetRecords", get);
        r = json_object_get(j, "Records");
        for (size_t k = 0; k < json_array_size(r); k++)
            expect(json_array_get(r, k), "awsRegion", "us-east-1");
        json_decref(j);
    }
    json_decref(desc);
    assert_int_equal(records, 1);
}

/* kura_options.region and account_id: the C API's and a context-free request's; malformed
 * ones refused at kura_open. */
/* SSEDescription's KMS key ARN and the resource-policy ARNs follow the request's scope too. */
static void test_settings_in_the_request_region(void **state)
{
    (void)state;
    json_decref(ok("eu-west-1", "CreateTable",
                   "{\"TableName\":\"enc\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                   "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                   "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
                   "\"SSESpecification\":{\"Enabled\":true,\"KMSMasterKeyId\":\"k-1\"}}"));
    const char *regions[] = {"eu-west-1", "ap-south-1"};
    for (int i = 0; i < 2; i++) {
        json_t *j = ok(regions[i], "DescribeTable", "{\"TableName\":\"enc\"}");
        const char *got = json_string_value(json_object_get(
            json_object_get(json_object_get(j, "Table"), "SSEDescription"), "KMSMasterKeyArn"));
        char want[128];
        snprintf(want, sizeof want, "arn:aws:kms:%s:000000000000:key/k-1", regions[i]);
        if (!got || strcmp(got, want) != 0)
            fail_msg("KMSMasterKeyArn in %s: %s, expected %s", regions[i], got ? got : "(none)",
                     want);
        json_decref(j);
    }
    json_decref(ok("eu-west-1", "PutResourcePolicy",
                   "{\"ResourceArn\":\"" EU "enc\",\"Policy\":\"{}\"}"));
    err("us-east-1", NULL, "GetResourcePolicy", "{\"ResourceArn\":\"" EU "enc\"}",
        "ResourceNotFoundException",
        "Requested resource not found: ResourceArn: " EU "enc not found");
    json_decref(ok("eu-west-1", "GetResourcePolicy", "{\"ResourceArn\":\"" EU "enc\"}"));
    json_decref(ok(NULL, "DeleteResourcePolicy", "{\"ResourceArn\":\"" US "enc\"}"));
    err("eu-west-1", NULL, "GetResourcePolicy", "{\"ResourceArn\":\"" EU "enc\"}",
        "PolicyNotFoundException",
        "Resource-based policy not found for the provided ResourceArn: " EU "enc");
}

static void test_options(void **state)
{
    (void)state;
    assert_kura_ok(kura_close(db));
    kura_options o;
    kura_options_init(&o);
    assert_string_equal(o.region, "us-east-1");
    assert_string_equal(o.account_id, "000000000000");
    char region[] = "eu-central-1", account[] = "123456789012";
    o.region = region;
    o.account_id = account;
    assert_kura_ok(kura_open(dir, &o, &db));
    memset(region, 'x', 3); /* copied at kura_open */
    memset(account, '9', 3);
    json_t *j = create(NULL, "rt6");
    expect_desc(json_object_get(j, "TableDescription"),
                "arn:aws:dynamodb:eu-central-1:123456789012:table/rt6");
    json_decref(j);
    j = ok("eu-west-1", "DescribeTable", "{\"TableName\":\"rt6\"}");
    expect_desc(json_object_get(j, "Table"), "arn:aws:dynamodb:eu-west-1:123456789012:table/rt6");
    json_decref(j);
    kura_table_description d;
    assert_kura_ok(kura_describe_table(db, "rt6", &d));
    assert_string_equal(d.table_arn, "arn:aws:dynamodb:eu-central-1:123456789012:table/rt6");
    char want[512];
    snprintf(want, sizeof want, "%s/stream/%s", d.table_arn, d.latest_stream_label);
    assert_string_equal(d.latest_stream_arn, want);
    kura_stream_description sd;
    assert_kura_ok(kura_describe_stream(db, want, 0, NULL, &sd));
    assert_string_equal(sd.stream_arn, want);
    kura_stream_description_free(&sd);
    kura_table_description_free(&d);
    assert_kura_ok(kura_close(db));
    db = NULL;
    kura_db *bad = NULL;
    o.region = "Eu-West-1";
    o.account_id = NULL;
    assert_int_equal(kura_open(dir, &o, &bad), KURA_E_INVALID);
    o.region = "";
    o.account_id = "12345";
    assert_int_equal(kura_open(dir, &o, &bad), KURA_E_INVALID);
    /* NULL or "": the defaults */
    o.account_id = NULL;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_describe_table(db, "rt6", &d));
    assert_string_equal(d.table_arn, US "rt6");
    kura_table_description_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table_arns_follow_the_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tags_in_the_request_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_in_the_request_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settings_in_the_request_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
