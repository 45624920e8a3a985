/*
 * api_streams_test.c - tests of the change streams in the JSON API (api/stream_spec.c,
 * api/req_streams.c): StreamSpecification's decoding and errors at CreateTable and
 * UpdateTable, the stream members of TableDescription and their place, the four Streams
 * operations' request errors (the schema's constraints, the Limit maxima, ShardIteratorType,
 * a SequenceNumber where none belongs) with their exact messages, the response shapes of
 * ListStreams, DescribeStream, GetShardIterator and GetRecords, the record writer byte for
 * byte (userIdentity of a Time to Live delete included), and the Streams error types
 * (ExpiredIteratorException from a database whose iterators live 1 ms).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_int.h"
#include "testutil.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"
#define INVALID "One or more parameter values were invalid: "
/* A well-formed ARN of a stream that does not exist (37..1024 characters). */
#define NO_ARN "arn:aws:dynamodb:us-east-1:000000000000:table/nope/stream/2020-01-01T00:00:00.000"
#define NO_SHARD "shardId-00000000000000000000-00000000"

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_streams");
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

/* Runs op on body in `on`; returns the status, *out the malloc'ed response. */
static kura_status run_on(kura_db *on, const char *op, const char *body, char **out)
{
    size_t len = 0;
    kura_status s = kura_execute(on, op, body, strlen(body), out, &len);
    assert_non_null(*out);
    assert_int_equal(len, strlen(*out));
    return s;
}

/* Asserts success; returns the response parsed (json_decref it). */
static json_t *ok_on(kura_db *on, const char *op, const char *body)
{
    char *out = NULL;
    kura_status s = run_on(on, op, body, &out);
    if (s != KURA_OK) fail_msg("%s %s\n  returned %s: %s", op, body, kura_status_str(s), out);
    assert_null(kura_execute_error_type());
    json_t *j = json_loads(out, 0, NULL);
    if (!j) fail_msg("%s: not JSON: %s", op, out);
    kura_free(out);
    return j;
}

static json_t *ok(const char *op, const char *body)
{
    return ok_on(db, op, body);
}

/* Asserts the error body {"__type": T type, "message": msg} exactly (msg NULL: any). */
static void err_on(kura_db *on, const char *op, const char *body, kura_status want,
                   const char *type, const char *msg)
{
    char *out = NULL;
    kura_status s = run_on(on, op, body, &out);
    json_t *j = json_loads(out, 0, NULL);
    if (s != want || !j)
        fail_msg("%s %s\n  returned %s: %s\n  expected %s %s", op, body, kura_status_str(s), out,
                 type, msg ? msg : "");
    char full[128];
    snprintf(full, sizeof full, T "%s", type);
    const char *got_type = json_string_value(json_object_get(j, "__type"));
    const char *got_msg = json_string_value(json_object_get(j, "message"));
    if (!got_type || strcmp(got_type, full) != 0 || (msg && strcmp(got_msg, msg) != 0))
        fail_msg("%s %s\n  got      %s: %s\n  expected %s: %s", op, body, got_type, got_msg, full,
                 msg ? msg : "(any)");
    assert_string_equal(kura_execute_error_type(), type);
    json_decref(j);
    kura_free(out);
}

static void err(const char *op, const char *body, kura_status want, const char *type,
                const char *msg)
{
    err_on(db, op, body, want, type, msg);
}

static void invalid(const char *op, const char *body, const char *msg)
{
    err(op, body, KURA_E_INVALID, "ValidationException", msg);
}

/* A CreateTable body for table `name` (hash key pk) with `extra` members appended. */
static char *create_body(const char *name, const char *extra)
{
    char *b = NULL;
    if (asprintf(&b,
                 "{\"TableName\":\"%s\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                 "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                 "\"KeyType\":\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"%s%s}",
                 name, *extra ? "," : "", extra) < 0)
        fail_msg("out of memory");
    return b;
}

/* CreateTable of `name` with a stream of view type `view`; returns the stream's ARN. */
static char *create_with_stream(kura_db *on, const char *name, const char *view)
{
    char spec[128];
    snprintf(spec, sizeof spec,
             "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"%s\"}", view);
    char *body = create_body(name, spec);
    json_t *j = ok_on(on, "CreateTable", body);
    free(body);
    char *arn = strdup(json_string_value(
        json_object_get(json_object_get(j, "TableDescription"), "LatestStreamArn")));
    json_decref(j);
    return arn;
}

/* ---- StreamSpecification ---------------------------------------------------------------- */

#define NO_ENABLED                                                                                 \
    "1 validation error detected: Value null at 'streamSpecification.streamEnabled' failed to "    \
    "satisfy constraint: Member must not be null"
#define VIEW_SET                                                                                   \
    "Member must satisfy enum value set: [OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]"
#define BAD_VIEW(v_)                                                                               \
    "1 validation error detected: Value '" v_ "' at 'streamSpecification.streamViewType' failed " \
    "to satisfy constraint: " VIEW_SET

static void test_stream_spec_errors(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        /* the model's constraints first: StreamEnabled is required, the view type an enum */
        {"{}", NO_ENABLED},
        {"{\"StreamViewType\":\"KEYS_ONLY\"}", NO_ENABLED},
        {"{\"StreamEnabled\":null,\"StreamViewType\":\"BAD\"}",
         "2 validation errors detected: Value null at 'streamSpecification.streamEnabled' failed "
         "to satisfy constraint: Member must not be null; Value 'BAD' at "
         "'streamSpecification.streamViewType' failed to satisfy constraint: " VIEW_SET},
        {"{\"StreamEnabled\":true,\"StreamViewType\":\"BAD\"}", BAD_VIEW("BAD")},
        {"{\"StreamEnabled\":true,\"StreamViewType\":\"keys_only\"}", BAD_VIEW("keys_only")},
        {"{\"StreamEnabled\":true,\"StreamViewType\":\"\"}", BAD_VIEW("")},
        {"{\"StreamEnabled\":false,\"StreamViewType\":\"BAD\"}", BAD_VIEW("BAD")},
        {"{\"StreamEnabled\":false,\"StreamViewType\":\"\"}", BAD_VIEW("")},
        /* then the operation's own checks */
        {"{\"StreamEnabled\":true}",
         "Invalid StreamViewType: Stream ViewType must not be null or empty when enabling "
         "streams."},
        {"{\"StreamEnabled\":false,\"StreamViewType\":\"KEYS_ONLY\"}",
         "Invalid StreamViewType: Stream StreamEnabled was false but a StreamViewType was "
         "present."},
    };
    char *body = create_body("spec_plain", "");
    json_decref(ok("CreateTable", body));
    free(body);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char member[160];
        snprintf(member, sizeof member, "\"StreamSpecification\":%s", cases[i].spec);
        invalid("CreateTable", body = create_body("spec_bad", member), cases[i].msg);
        free(body);
        /* UpdateTable: the same answers (the table has no stream) */
        if (asprintf(&body, "{\"TableName\":\"spec_plain\",%s}", member) < 0) fail_msg("nomem");
        invalid("UpdateTable", body, cases[i].msg);
        free(body);
    }
    /* refused where the engine checks the specification (a specification the model's
     * constraints accept): after the billing, for instance */
    for (int i = 0; i < 2; i++) {
        body = create_body("spec_bad", i ? "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,"
                                           "\"WriteCapacityUnits\":1},\"StreamSpecification\":{"
                                           "\"StreamEnabled\":true}"
                                         : "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,"
                                           "\"WriteCapacityUnits\":1},\"StreamSpecification\":{"
                                           "\"StreamEnabled\":false,\"StreamViewType\":"
                                           "\"KEYS_ONLY\"}");
        invalid("CreateTable", body,
                INVALID "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
                        "BillingMode is PAY_PER_REQUEST");
        free(body);
    }
    /* nothing was created by the refused requests */
    err("DescribeTable", "{\"TableName\":\"spec_bad\"}", KURA_E_RESOURCE_NOT_FOUND,
        "ResourceNotFoundException", NULL);
    /* the deserializer's types: a Boolean given as "yes" is true, a number is no String */
    body = create_body("spec_bad",
                       "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":5}");
    err("CreateTable", body, KURA_E_INVALID, "SerializationException", NULL);
    free(body);
    invalid("UpdateTable", "{\"TableName\":\"spec_plain\",\"StreamSpecification\":{"
                           "\"StreamEnabled\":\"yes\",\"StreamViewType\":\"BAD\"}}",
            "1 validation error detected: Value 'BAD' at 'streamSpecification.streamViewType' "
            "failed to satisfy constraint: Member must satisfy enum value set: [OLD_IMAGE, "
            "KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]");
    /* the engine's own checks, through UpdateTable */
    invalid("UpdateTable",
            "{\"TableName\":\"spec_plain\",\"StreamSpecification\":{\"StreamEnabled\":false}}",
            "Table has no stream to disable");
    json_decref(ok("UpdateTable", "{\"TableName\":\"spec_plain\",\"StreamSpecification\":{"
                                  "\"StreamEnabled\":true,\"StreamViewType\":\"OLD_IMAGE\"}}"));
    invalid("UpdateTable", "{\"TableName\":\"spec_plain\",\"StreamSpecification\":{"
                           "\"StreamEnabled\":true,\"StreamViewType\":\"KEYS_ONLY\"}}",
            "Table already has an enabled stream");
}

/* The position of "key": in the text s (-1 when absent). */
static long key_at(const char *s, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(s, k);
    return p ? p - s : -1;
}

static void test_table_description(void **state)
{
    (void)state;
    char *body = create_body(
        "desc_st", "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gix\",\"KeySchema\":["
                   "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"Projection\":{"
                   "\"ProjectionType\":\"KEYS_ONLY\"}}],\"StreamSpecification\":{"
                   "\"StreamEnabled\":true,\"StreamViewType\":\"NEW_IMAGE\"}");
    char *out = NULL;
    assert_kura_ok(run_on(db, "CreateTable", body, &out));
    free(body);
    /* in DynamoDB's order: after the indexes, before DeletionProtectionEnabled */
    long gsi = key_at(out, "GlobalSecondaryIndexes"), spec = key_at(out, "StreamSpecification");
    long label = key_at(out, "LatestStreamLabel"), arn = key_at(out, "LatestStreamArn");
    long dp = key_at(out, "DeletionProtectionEnabled");
    if (!(gsi > 0 && gsi < spec && spec < label && label < arn && arn < dp))
        fail_msg("members out of order: %s", out);
    assert_non_null(strstr(out, "\"StreamSpecification\":{\"StreamEnabled\":true,"
                                "\"StreamViewType\":\"NEW_IMAGE\"}"));
    json_t *j = json_loads(out, 0, NULL), *d = json_object_get(j, "TableDescription");
    kura_free(out);
    const char *lbl = json_string_value(json_object_get(d, "LatestStreamLabel"));
    assert_non_null(lbl);
    assert_int_equal(strlen(lbl), 23); /* 2026-11-27T01:58:00.123 */
    assert_int_equal(lbl[10], 'T');
    char want[512];
    snprintf(want, sizeof want, "%s/stream/%s",
             json_string_value(json_object_get(d, "TableArn")), lbl);
    assert_string_equal(json_string_value(json_object_get(d, "LatestStreamArn")), want);

    json_t *dt = ok("DescribeTable", "{\"TableName\":\"desc_st\"}");
    assert_true(json_equal(json_object_get(json_object_get(dt, "Table"), "StreamSpecification"),
                           json_object_get(d, "StreamSpecification")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(dt, "Table"), "LatestStreamArn")), want);
    json_decref(dt);

    /* disabled: no StreamSpecification, the latest stream stays */
    json_t *u = ok("UpdateTable",
                   "{\"TableName\":\"desc_st\",\"StreamSpecification\":{\"StreamEnabled\":false}}");
    json_t *ud = json_object_get(u, "TableDescription");
    assert_null(json_object_get(ud, "StreamSpecification"));
    assert_string_equal(json_string_value(json_object_get(ud, "LatestStreamArn")), want);
    assert_string_equal(json_string_value(json_object_get(ud, "LatestStreamLabel")), lbl);
    json_decref(u);
    json_decref(j);

    /* a table that never had a stream has none of the members */
    j = ok("CreateTable", body = create_body("desc_plain", ""));
    free(body);
    d = json_object_get(j, "TableDescription");
    assert_null(json_object_get(d, "StreamSpecification"));
    assert_null(json_object_get(d, "LatestStreamLabel"));
    assert_null(json_object_get(d, "LatestStreamArn"));
    json_decref(j);
}

/* ---- The Streams operations' request errors ---------------------------------------------- */

static void test_request_errors(void **state)
{
    (void)state;
    /* ListStreams */
    invalid("ListStreams", "{\"Limit\":0}",
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1");
    invalid("ListStreams", "{\"Limit\":101}",
            INVALID "Limit cannot be greater than the maximum allowed size: 100");
    invalid("ListStreams", "{\"TableName\":\"ab\"}",
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3");
    invalid("ListStreams", "{\"TableName\":\"a b\"}",
            "1 validation error detected: Value 'a b' at 'tableName' failed to satisfy "
            "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    invalid("ListStreams", "{\"ExclusiveStartStreamArn\":\"short\"}",
            "1 validation error detected: Value 'short' at 'exclusiveStartStreamArn' failed to "
            "satisfy constraint: Member must have length greater than or equal to 37");
    invalid("ListStreams", "{\"TableName\":\"ab\",\"Limit\":0}",
            "2 validation errors detected: Value 'ab' at 'tableName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 3; Value '0' at "
            "'limit' failed to satisfy constraint: Member must have value greater than or "
            "equal to 1");
    err("ListStreams", "{\"Limit\":\"x\"}", KURA_E_INVALID, "SerializationException", NULL);
    err("ListStreams", "{\"TableName\":\"nosuchtable\"}", KURA_E_RESOURCE_NOT_FOUND,
        "ResourceNotFoundException", NULL);

    /* DescribeStream */
    invalid("DescribeStream", "{}",
            "1 validation error detected: Value null at 'streamArn' failed to satisfy "
            "constraint: Member must not be null");
    invalid("DescribeStream", "{\"StreamArn\":\"short\"}",
            "1 validation error detected: Value 'short' at 'streamArn' failed to satisfy "
            "constraint: Member must have length greater than or equal to 37");
    invalid("DescribeStream", "{\"StreamArn\":\"" NO_ARN "\",\"Limit\":101}",
            INVALID "Limit cannot be greater than the maximum: 100");
    invalid("DescribeStream", "{\"StreamArn\":\"" NO_ARN "\",\"ExclusiveStartShardId\":\"s\"}",
            "1 validation error detected: Value 's' at 'exclusiveStartShardId' failed to "
            "satisfy constraint: Member must have length greater than or equal to 28");
    invalid("DescribeStream",
            "{\"StreamArn\":\"" NO_ARN "\",\"ShardFilter\":{\"Type\":\"PARENT\"}}",
            "1 validation error detected: Value 'PARENT' at 'shardFilter.type' failed to "
            "satisfy constraint: Member must satisfy enum value set: [CHILD_SHARDS]");
    err("DescribeStream", "{\"StreamArn\":\"" NO_ARN "\"}", KURA_E_RESOURCE_NOT_FOUND,
        "ResourceNotFoundException",
        "Requested resource not found: Stream: " NO_ARN " not found");

    /* GetShardIterator */
    invalid("GetShardIterator", "{}",
            "3 validation errors detected: Value null at 'streamArn' failed to satisfy "
            "constraint: Member must not be null; Value null at 'shardId' failed to satisfy "
            "constraint: Member must not be null; Value null at 'shardIteratorType' failed to "
            "satisfy constraint: Member must not be null");
    invalid("GetShardIterator", "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
                                "\"ShardIteratorType\":\"BOGUS\"}",
            "1 validation error detected: Value 'BOGUS' at 'shardIteratorType' failed to satisfy "
            "constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, "
            "AT_SEQUENCE_NUMBER, TRIM_HORIZON]");
    invalid("GetShardIterator", "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
                                "\"ShardIteratorType\":\"latest\"}",
            "1 validation error detected: Value 'latest' at 'shardIteratorType' failed to satisfy "
            "constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, "
            "AT_SEQUENCE_NUMBER, TRIM_HORIZON]");
    invalid("GetShardIterator",
            "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
            "\"ShardIteratorType\":\"LATEST\",\"SequenceNumber\":\"000000000000000000001\"}",
            INVALID "SequenceNumber should not be passed for this iterator type");
    invalid("GetShardIterator",
            "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
            "\"ShardIteratorType\":\"TRIM_HORIZON\",\"SequenceNumber\":\"000000000000000000001\"}",
            INVALID "SequenceNumber should not be passed for this iterator type");
    invalid("GetShardIterator",
            "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
            "\"ShardIteratorType\":\"AT_SEQUENCE_NUMBER\",\"SequenceNumber\":\"12\"}",
            "1 validation error detected: Value '12' at 'sequenceNumber' failed to satisfy "
            "constraint: Member must have length greater than or equal to 21");
    invalid("GetShardIterator", "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"short\","
                                "\"ShardIteratorType\":\"LATEST\"}",
            "1 validation error detected: Value 'short' at 'shardId' failed to satisfy "
            "constraint: Member must have length greater than or equal to 28");
    err("GetShardIterator", "{\"StreamArn\":\"" NO_ARN "\",\"ShardId\":\"" NO_SHARD "\","
                            "\"ShardIteratorType\":\"LATEST\"}",
        KURA_E_RESOURCE_NOT_FOUND, "ResourceNotFoundException", NULL);

    /* GetRecords */
    invalid("GetRecords", "{}",
            "1 validation error detected: Value null at 'shardIterator' failed to satisfy "
            "constraint: Member must not be null");
    invalid("GetRecords", "{\"ShardIterator\":\"\"}",
            "1 validation error detected: Value '' at 'shardIterator' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1");
    invalid("GetRecords", "{\"ShardIterator\":\"garbage\",\"Limit\":0}",
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1");
    invalid("GetRecords", "{\"ShardIterator\":\"garbage\",\"Limit\":1001}",
            INVALID "Limit should be less than or equal to 1000");
    invalid("GetRecords", "{\"ShardIterator\":\"garbage\"}", "Invalid ShardIterator");
}

/* ---- Responses ----------------------------------------------------------------------------- */

/* The records of every shard of the stream, from TRIM_HORIZON, as one JSON array. */
static json_t *read_all(kura_db *on, const char *arn)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", arn);
    json_t *sd = ok_on(on, "DescribeStream", body), *all = json_array();
    json_t *shards = json_object_get(json_object_get(sd, "StreamDescription"), "Shards");
    for (size_t i = 0; i < json_array_size(shards); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(shards, i), "ShardId"));
        snprintf(body, sizeof body,
                 "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"TRIM_HORIZON\"}",
                 arn, id);
        json_t *it = ok_on(on, "GetShardIterator", body);
        char *iter = strdup(json_string_value(json_object_get(it, "ShardIterator")));
        json_decref(it);
        while (iter) {
            char *rb = NULL;
            if (asprintf(&rb, "{\"ShardIterator\":\"%s\"}", iter) < 0) fail_msg("nomem");
            json_t *page = ok_on(on, "GetRecords", rb);
            free(rb);
            free(iter);
            json_t *recs = json_object_get(page, "Records");
            json_array_extend(all, recs);
            const char *next = json_string_value(json_object_get(page, "NextShardIterator"));
            iter = next && json_array_size(recs) ? strdup(next) : NULL;
            json_decref(page);
        }
    }
    json_decref(sd);
    return all;
}

static void test_responses(void **state)
{
    (void)state;
    char *arn = create_with_stream(db, "resp_st", "NEW_AND_OLD_IMAGES");
    char body[1024];

    /* ListStreams: the table's stream */
    json_t *l = ok("ListStreams", "{\"TableName\":\"resp_st\"}");
    json_t *s0 = json_array_get(json_object_get(l, "Streams"), 0);
    assert_int_equal(json_array_size(json_object_get(l, "Streams")), 1);
    assert_string_equal(json_string_value(json_object_get(s0, "StreamArn")), arn);
    assert_string_equal(json_string_value(json_object_get(s0, "TableName")), "resp_st");
    assert_int_equal(json_object_size(s0), 3);
    assert_null(json_object_get(l, "LastEvaluatedStreamArn"));
    json_decref(l);

    /* DescribeStream: every member, the shards open */
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", arn);
    json_t *d = ok("DescribeStream", body), *sd = json_object_get(d, "StreamDescription");
    assert_string_equal(json_string_value(json_object_get(sd, "StreamArn")), arn);
    assert_string_equal(json_string_value(json_object_get(sd, "StreamStatus")), "ENABLED");
    assert_string_equal(json_string_value(json_object_get(sd, "StreamViewType")),
                        "NEW_AND_OLD_IMAGES");
    assert_string_equal(json_string_value(json_object_get(sd, "TableName")), "resp_st");
    assert_true(json_is_number(json_object_get(sd, "CreationRequestDateTime")));
    char *ks = json_dumps(json_object_get(sd, "KeySchema"), JSON_COMPACT);
    assert_string_equal(ks, "[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]");
    free(ks);
    json_t *shards = json_object_get(sd, "Shards");
    assert_true(json_array_size(shards) >= 1);
    json_t *sh = json_array_get(shards, 0);
    assert_null(json_object_get(sh, "ParentShardId"));
    assert_null(json_object_get(json_object_get(sh, "SequenceNumberRange"),
                                "EndingSequenceNumber"));
    assert_true(json_is_string(json_object_get(json_object_get(sh, "SequenceNumberRange"),
                                               "StartingSequenceNumber")));
    /* a ShardFilter asks for a shard's children: kura's shards have none */
    snprintf(body, sizeof body,
             "{\"StreamArn\":\"%s\",\"ShardFilter\":{\"Type\":\"CHILD_SHARDS\",\"ShardId\":\"%s\"}}",
             arn, json_string_value(json_object_get(sh, "ShardId")));
    json_t *f = ok("DescribeStream", body);
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(f, "StreamDescription"), "Shards")), 0);
    json_decref(f);
    json_decref(d);

    /* GetRecords: INSERT, MODIFY, REMOVE of one item, every member */
    json_decref(ok("PutItem", "{\"TableName\":\"resp_st\",\"Item\":{\"pk\":{\"S\":\"a\"},"
                              "\"v\":{\"N\":\"1\"}}}"));
    json_decref(ok("PutItem", "{\"TableName\":\"resp_st\",\"Item\":{\"pk\":{\"S\":\"a\"},"
                              "\"v\":{\"N\":\"2\"}}}"));
    json_decref(ok("DeleteItem", "{\"TableName\":\"resp_st\",\"Key\":{\"pk\":{\"S\":\"a\"}}}"));
    json_t *recs = read_all(db, arn);
    assert_int_equal(json_array_size(recs), 3);
    static const char *const names[] = {"INSERT", "MODIFY", "REMOVE"};
    static const char *const images[][2] = {
        {"{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"1\"}}", NULL},
        {"{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"2\"}}", "{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"1\"}}"},
        {NULL, "{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"2\"}}"}};
    static const int sizes[] = {9, 15, 9};
    for (size_t i = 0; i < 3; i++) {
        json_t *r = json_array_get(recs, i), *dd = json_object_get(r, "dynamodb");
        assert_string_equal(json_string_value(json_object_get(r, "eventName")), names[i]);
        assert_string_equal(json_string_value(json_object_get(r, "eventVersion")), "1.1");
        assert_string_equal(json_string_value(json_object_get(r, "eventSource")), "aws:dynamodb");
        assert_string_equal(json_string_value(json_object_get(r, "awsRegion")), "us-east-1");
        assert_true(json_is_string(json_object_get(r, "eventID")));
        assert_null(json_object_get(r, "userIdentity"));
        assert_true(json_is_number(json_object_get(dd, "ApproximateCreationDateTime")));
        char *keys = json_dumps(json_object_get(dd, "Keys"), JSON_COMPACT);
        assert_string_equal(keys, "{\"pk\":{\"S\":\"a\"}}");
        free(keys);
        for (int k = 0; k < 2; k++) {
            json_t *img = json_object_get(dd, k ? "OldImage" : "NewImage");
            char *txt = img ? json_dumps(img, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
            if ((txt == NULL) != (images[i][k] == NULL) ||
                (txt && strcmp(txt, images[i][k]) != 0))
                fail_msg("record %zu %s: %s, expected %s", i, k ? "OldImage" : "NewImage",
                         txt ? txt : "(none)", images[i][k] ? images[i][k] : "(none)");
            free(txt);
        }
        assert_int_equal(json_integer_value(json_object_get(dd, "SizeBytes")), sizes[i]);
        assert_int_equal(strlen(json_string_value(json_object_get(dd, "SequenceNumber"))), 25);
        assert_string_equal(json_string_value(json_object_get(dd, "StreamViewType")),
                            "NEW_AND_OLD_IMAGES");
    }
    json_decref(recs);
    free(arn);
}

/* The writer byte for byte, on a record built here: a Time to Live delete (userIdentity),
 * KEYS_ONLY (no images). */
static void test_record_writer(void **state)
{
    (void)state;
    kura_stream_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.event_id, "0123456789abcdef");
    r.event_name = "REMOVE";
    r.approximate_creation_date_time = 1795750860.0;
    r.keys = kura_value_map();
    assert_kura_ok(kura_value_map_put(r.keys, "pk", 2, kura_value_s("a\"b", 3)));
    strcpy(r.sequence_number, "0000000000000000000000042");
    r.size_bytes = 5;
    r.stream_view_type = KURA_STREAM_KEYS_ONLY;
    r.service = true;
    kbuf b = KBUF_INIT;
    assert_kura_ok(api_write_stream_record(&b, &r, "ap-south-2"));
    const char *want =
        "{\"eventID\":\"0123456789abcdef\",\"eventName\":\"REMOVE\",\"eventVersion\":\"1.1\","
        "\"eventSource\":\"aws:dynamodb\",\"awsRegion\":\"ap-south-2\",\"dynamodb\":{"
        "\"ApproximateCreationDateTime\":1795750860.0,\"Keys\":{\"pk\":{\"S\":\"a\\\"b\"}},"
        "\"SequenceNumber\":\"0000000000000000000000042\",\"SizeBytes\":5,"
        "\"StreamViewType\":\"KEYS_ONLY\"},\"userIdentity\":{"
        "\"PrincipalId\":\"dynamodb.amazonaws.com\",\"Type\":\"Service\"}}";
    if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
        fail_msg("record\n  got      %.*s\n  expected %s", (int)b.len, (const char *)b.data, want);
    /* with images, as a user's write: no userIdentity */
    kbuf_clear(&b);
    r.service = false;
    r.event_name = "MODIFY";
    r.stream_view_type = KURA_STREAM_NEW_AND_OLD_IMAGES;
    r.new_image = kura_value_clone(r.keys);
    r.old_image = kura_value_map();
    assert_kura_ok(kura_value_map_put(r.old_image, "pk", 2, kura_value_s("x", 1)));
    assert_kura_ok(api_write_stream_record(&b, &r, "ap-south-2"));
    want = "{\"eventID\":\"0123456789abcdef\",\"eventName\":\"MODIFY\",\"eventVersion\":\"1.1\","
           "\"eventSource\":\"aws:dynamodb\",\"awsRegion\":\"ap-south-2\",\"dynamodb\":{"
           "\"ApproximateCreationDateTime\":1795750860.0,\"Keys\":{\"pk\":{\"S\":\"a\\\"b\"}},"
           "\"NewImage\":{\"pk\":{\"S\":\"a\\\"b\"}},\"OldImage\":{\"pk\":{\"S\":\"x\"}},"
           "\"SequenceNumber\":\"0000000000000000000000042\",\"SizeBytes\":5,"
           "\"StreamViewType\":\"NEW_AND_OLD_IMAGES\"}}";
    if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
        fail_msg("record\n  got      %.*s\n  expected %s", (int)b.len, (const char *)b.data, want);
    kbuf_free(&b);
    kura_value_free(r.keys);
    kura_value_free(r.new_image);
    kura_value_free(r.old_image);
}

/* ExpiredIteratorException: a database whose iterators live 1 ms. */
static void test_expired_iterator(void **state)
{
    (void)state;
    char *d2 = test_mkdtemp("api_streams_exp");
    kura_options o;
    kura_options_init(&o);
    o.stream_iterator_ttl_ms = 1;
    kura_db *db2;
    assert_kura_ok(kura_open(d2, &o, &db2));
    char *arn = create_with_stream(db2, "exp_st", "KEYS_ONLY");
    char body[1024];
    snprintf(body, sizeof body, "{\"StreamArn\":\"%s\"}", arn);
    json_t *d = ok_on(db2, "DescribeStream", body);
    const char *shard = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(d, "StreamDescription"), "Shards"), 0),
        "ShardId"));
    snprintf(body, sizeof body,
             "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"LATEST\"}", arn,
             shard);
    json_decref(d);
    json_t *it = ok_on(db2, "GetShardIterator", body);
    char *rb = NULL;
    if (asprintf(&rb, "{\"ShardIterator\":\"%s\"}",
                 json_string_value(json_object_get(it, "ShardIterator"))) < 0)
        fail_msg("nomem");
    json_decref(it);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    err_on(db2, "GetRecords", rb, KURA_E_EXPIRED_ITERATOR, "ExpiredIteratorException", NULL);
    free(rb);
    free(arn);
    assert_kura_ok(kura_close(db2));
    test_rmrf(d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_spec_errors), cmocka_unit_test(test_table_description),
        cmocka_unit_test(test_request_errors),     cmocka_unit_test(test_responses),
        cmocka_unit_test(test_record_writer),      cmocka_unit_test(test_expired_iterator),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
