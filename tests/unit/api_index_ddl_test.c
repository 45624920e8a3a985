/*
 * api_index_ddl_test.c - CreateTable's LocalSecondaryIndexes and GlobalSecondaryIndexes
 * through kura_execute: the decoding of the JSON members (key types, projections, a GSI's
 * ProvisionedThroughput, empty lists), the schema's constraint messages for them, the index
 * checks' messages arriving as ValidationExceptions, the exact LocalSecondaryIndexes /
 * GlobalSecondaryIndexes members of CreateTable and DescribeTable responses (the
 * shapes and member order of DynamoDB Local 1.25.1 plus NumberOfDecreasesToday).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_int.h"
#include "testutil.h"

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"
#define INVALID "One or more parameter values were invalid: "

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_index_ddl");
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
    return s;
}

/* Asserts a ValidationException with exactly `msg`. */
static void invalid(const char *op, const char *body, const char *msg, int line)
{
    char *out = NULL;
    kura_status s = run(op, body, &out);
    json_t *j = json_loads(out, 0, NULL);
    const char *type = json_string_value(json_object_get(j, "__type"));
    const char *got = json_string_value(json_object_get(j, "message"));
    if (s != KURA_E_INVALID || !type || strcmp(type, T "ValidationException") != 0 || !got ||
        strcmp(got, msg) != 0)
        fail_msg("line %d: %s %s\n  returned %s: %s\n  expected %s", line, op, body,
                 kura_status_str(s), out, msg);
    json_decref(j);
    kura_free(out);
}
#define CREATE_INVALID(body, msg) invalid("CreateTable", body, msg, __LINE__)

/* The response's text from member `from` up to (not including) `to`, which must both be
 * there; malloc'ed. */
static char *between(const char *out, const char *from, const char *to)
{
    const char *a = strstr(out, from), *b = a ? strstr(a, to) : NULL;
    if (!a || !b)
        fail_msg("no %s ... %s in %s", from, to, out);
    return strndup(a, (size_t)(b - a));
}

/* The body of a table "<name>" (pk, sk) with definitions pk S, sk S, x S, g N and the given
 * billing and index members (JSON text after a comma, or ""). */
static char *table_body(const char *name, const char *rest)
{
    char *b = NULL;
    int n = asprintf(&b,
                     "{\"TableName\":\"%s\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                     "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"x\",\"AttributeType\":\"S\"},{\"AttributeName\":\"g\","
                     "\"AttributeType\":\"N\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                     "\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]%s}",
                     name, rest);
    assert_true(n > 0);
    return b;
}

#define LSI1                                                                                   \
    "{\"IndexName\":\"lsi1\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"  \
    "{\"AttributeName\":\"x\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":"     \
    "\"INCLUDE\",\"NonKeyAttributes\":[\"a\",\"b\"]}}"
#define GSI1(pt)                                                                               \
    "{\"IndexName\":\"gsi1\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"},"   \
    "{\"AttributeName\":\"x\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":"     \
    "\"KEYS_ONLY\"}" pt "}"
#define PROVISIONED                                                                            \
    ",\"BillingMode\":\"PROVISIONED\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":5,"     \
    "\"WriteCapacityUnits\":6}"
#define GSI_PT ",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":3,\"WriteCapacityUnits\":4}"

/* The table settings DescribeTable shows of every table and GSI (engine/table_settings.c):
 * the warm throughput (DynamoDB's on-demand default), and OnDemandThroughput without maxima
 * when the table is PAY_PER_REQUEST. */
#define WARM_DEFAULT                                                                           \
    "\"WarmThroughput\":{\"ReadUnitsPerSecond\":12000,\"WriteUnitsPerSecond\":4000,"         \
    "\"Status\":\"ACTIVE\"}"
#define OD_NONE "\"OnDemandThroughput\":{\"MaxReadRequestUnits\":-1,\"MaxWriteRequestUnits\":-1},"
#define SETTINGS_PROVISIONED "," WARM_DEFAULT
#define SETTINGS_PPR "," OD_NONE WARM_DEFAULT

/* What DescribeTable says of LSI1 and GSI1 of table `t`, and of the members after them
 * (`settings`: SETTINGS_PROVISIONED or SETTINGS_PPR). */
#define WANT_INDEXES(t, rcu, wcu, settings)                                                    \
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi1\",\"KeySchema\":[{\"AttributeName\":"   \
    "\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"x\",\"KeyType\":\"RANGE\"}],"           \
    "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"a\",\"b\"]},"      \
    "\"IndexSizeBytes\":0,\"ItemCount\":0,\"IndexArn\":\"arn:aws:dynamodb:us-east-1:"           \
    "000000000000:table/" t "/index/lsi1\"}],\"GlobalSecondaryIndexes\":[{\"IndexName\":"      \
    "\"gsi1\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"},{\"AttributeName\"" \
    ":\"x\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"},"        \
    "\"IndexStatus\":\"ACTIVE\",\"ProvisionedThroughput\":{\"NumberOfDecreasesToday\":0,"      \
    "\"ReadCapacityUnits\":" rcu ",\"WriteCapacityUnits\":" wcu "},\"IndexSizeBytes\":0,"      \
    "\"ItemCount\":0,\"IndexArn\":\"arn:aws:dynamodb:us-east-1:000000000000:table/" t           \
    "/index/gsi1\"" settings "}],\"DeletionProtectionEnabled\":false" settings "}"

/* The response's indexes must be exactly `want` (through the end of the description), and
 * the description's members must come in the order `members` ("A,B,..."). */
static void expect_indexes(const char *out, const char *want, const char *members)
{
    const char *p = strstr(out, "\"LocalSecondaryIndexes\"");
    size_t n = strlen(want);
    if (!p || strncmp(p, want, n) != 0 || strcmp(p + n, "}") != 0)
        fail_msg("response %s\n  want ...%s}", out, want);
    json_t *j = json_loads(out, 0, NULL);
    json_t *d = json_object_iter_value(json_object_iter(j));
    char got[512] = "";
    for (void *it = json_object_iter(d); it; it = json_object_iter_next(d, it))
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", *got ? "," : "",
                 json_object_iter_key(it));
    assert_string_equal(got, members);
    json_decref(j);
}

#define MEMBERS_HEAD                                                                           \
    "AttributeDefinitions,TableName,KeySchema,TableStatus,CreationDateTime,"                   \
    "ProvisionedThroughput,TableSizeBytes,ItemCount,TableArn,TableId,"
#define MEMBERS_PROVISIONED                                                                    \
    MEMBERS_HEAD "LocalSecondaryIndexes,GlobalSecondaryIndexes,DeletionProtectionEnabled,"     \
                 "WarmThroughput"
#define MEMBERS_PPR                                                                            \
    MEMBERS_HEAD "BillingModeSummary,LocalSecondaryIndexes,GlobalSecondaryIndexes,"            \
                 "DeletionProtectionEnabled,OnDemandThroughput,WarmThroughput"

static void test_describe_json(void **state)
{
    (void)state;
    char *body = table_body("idx1", PROVISIONED ",\"LocalSecondaryIndexes\":[" LSI1
                                    "],\"GlobalSecondaryIndexes\":[" GSI1(GSI_PT) "]");
    char *out = NULL;
    assert_kura_ok(run("CreateTable", body, &out));
    expect_indexes(out, WANT_INDEXES("idx1", "3", "4", SETTINGS_PROVISIONED), MEMBERS_PROVISIONED);
    kura_free(out);
    assert_kura_ok(run("DescribeTable", "{\"TableName\":\"idx1\"}", &out));
    expect_indexes(out, WANT_INDEXES("idx1", "3", "4", SETTINGS_PROVISIONED), MEMBERS_PROVISIONED);
    kura_free(out);
    assert_kura_ok(run("UpdateTable",
                       "{\"TableName\":\"idx1\",\"BillingMode\":\"PAY_PER_REQUEST\"}", &out));
    expect_indexes(out, WANT_INDEXES("idx1", "0", "0", SETTINGS_PPR), MEMBERS_PPR);
    kura_free(out);
    assert_kura_ok(run("DeleteTable", "{\"TableName\":\"idx1\"}", &out));
    /* DynamoDB's DeleteTable describes no indexes (api_mismatch_test.c) */
    assert_null(strstr(out, "SecondaryIndexes"));
    kura_free(out);
    free(body);

    /* PAY_PER_REQUEST from the start; a GSI alone; a multi-attribute key */
    body = table_body("idx2", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":"
                              "[{\"IndexName\":\"multi\",\"KeySchema\":[{\"AttributeName\":\"g\","
                              "\"KeyType\":\"HASH\"},{\"AttributeName\":\"x\",\"KeyType\":"
                              "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}},"
                              "{\"IndexName\":\"by_sk\",\"KeySchema\":[{\"AttributeName\":\"sk\","
                              "\"KeyType\":\"HASH\"},{\"AttributeName\":\"pk\",\"KeyType\":"
                              "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]");
    assert_kura_ok(run("CreateTable", body, &out));
    char *got = between(out, "\"BillingModeSummary\"", ",\"DeletionProtectionEnabled\"");
    const char *want =
        "\"BillingModeSummary\":{\"BillingMode\":\"PAY_PER_REQUEST\",\"LastUpdateToPayPerRequest"
        "DateTime\":";
    assert_int_equal(strncmp(got, want, strlen(want)), 0);
    char *gsis = between(got, "\"GlobalSecondaryIndexes\"", "{\"IndexName\":\"by_sk\"");
    assert_string_equal(
        gsis, "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"multi\",\"KeySchema\":"
              "[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"x\","
              "\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"},"
              "\"IndexStatus\":\"ACTIVE\",\"ProvisionedThroughput\":{\"NumberOfDecreasesToday\":0,"
              "\"ReadCapacityUnits\":0,\"WriteCapacityUnits\":0},\"IndexSizeBytes\":0,"
              "\"ItemCount\":0,\"IndexArn\":\"arn:aws:dynamodb:us-east-1:000000000000:table/idx2/"
              "index/multi\"" SETTINGS_PPR "},");
    assert_null(strstr(out, "LocalSecondaryIndexes"));
    assert_null(strstr(out, "Backfilling"));
    free(gsis);
    free(got);
    kura_free(out);
    free(body);

    /* a GSI being created (UpdateTable's Create, later) says so: IndexStatus CREATING and
     * Backfilling true, between IndexStatus and ProvisionedThroughput */
    kura_table *t = NULL;
    assert_kura_ok(table_acquire(db, "idx2", &t));
    kmutex_lock(&db->tables_mu);
    t->gsi[1].status = IDX_CREATING;
    kmutex_unlock(&db->tables_mu);
    assert_kura_ok(run("DescribeTable", "{\"TableName\":\"idx2\"}", &out));
    assert_non_null(strstr(out, "/index/multi\"" SETTINGS_PPR
                                "},{\"IndexName\":\"by_sk\",\"KeySchema\":"
                                "[{\"AttributeName\":\"sk\",\"KeyType\":\"HASH\"},"
                                "{\"AttributeName\":\"pk\",\"KeyType\":\"RANGE\"}],"
                                "\"Projection\":{\"ProjectionType\":\"ALL\"},\"IndexStatus\":"
                                "\"CREATING\",\"Backfilling\":true,\"ProvisionedThroughput\":"));
    assert_null(strstr(strstr(out, "Backfilling") + 1, "Backfilling")); /* that GSI only */
    kura_free(out);
    kmutex_lock(&db->tables_mu);
    t->gsi[1].status = IDX_ACTIVE;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
}

static void test_created(void **state)
{
    (void)state;
    char *body = table_body("idx3", PROVISIONED ",\"LocalSecondaryIndexes\":[" LSI1
                                    "],\"GlobalSecondaryIndexes\":[" GSI1(GSI_PT) "]");
    char *out = NULL;
    assert_kura_ok(run("CreateTable", body, &out));
    kura_free(out);
    free(body);
    assert_kura_ok(run("DescribeTable", "{\"TableName\":\"idx3\"}", &out));
    assert_non_null(strstr(out, "\"GlobalSecondaryIndexes\""));
    assert_non_null(strstr(out, "\"LocalSecondaryIndexes\""));
    kura_free(out);
}

static void test_errors(void **state)
{
    (void)state;
    char *b;
    /* the schema: KeyType is an enum in index key schemas too; lengths; nulls */
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":["
                           "{\"IndexName\":\"g1\",\"KeySchema\":[{\"AttributeName\":\"g\","
                           "\"KeyType\":\"PARTITION\"}],\"Projection\":{\"ProjectionType\":"
                           "\"SOME\",\"NonKeyAttributes\":[]}}]");
    CREATE_INVALID(b, "4 validation errors detected: Value 'g1' at "
                      "'globalSecondaryIndexes.1.member.indexName' failed to satisfy constraint: "
                      "Member must have length greater than or equal to 3; Value 'PARTITION' at "
                      "'globalSecondaryIndexes.1.member.keySchema.1.member.keyType' failed to "
                      "satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]; "
                      "Value 'SOME' at 'globalSecondaryIndexes.1.member.projection.projectionType' "
                      "failed to satisfy constraint: Member must satisfy enum value set: [ALL, "
                      "INCLUDE, KEYS_ONLY]; Value '[]' at "
                      "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed to "
                      "satisfy constraint: Member must have length greater than or equal to 1");
    free(b);
    /* empty lists are given lists */
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":[]");
    CREATE_INVALID(b, INVALID "List of LocalSecondaryIndexes is empty");
    free(b);
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"GlobalSecondaryIndexes\":[]");
    CREATE_INVALID(b, INVALID "List of GlobalSecondaryIndexes is empty");
    free(b);
    /* RANGE decoded as RANGE, the projection, the GSI's throughput */
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":["
                           "{\"IndexName\":\"lsi1\",\"KeySchema\":[{\"AttributeName\":\"x\","
                           "\"KeyType\":\"RANGE\"},{\"AttributeName\":\"pk\",\"KeyType\":"
                           "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]");
    CREATE_INVALID(b, "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    free(b);
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":["
                           "{\"IndexName\":\"lsi1\",\"KeySchema\":[{\"AttributeName\":\"pk\","
                           "\"KeyType\":\"HASH\"},{\"AttributeName\":\"x\",\"KeyType\":"
                           "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\","
                           "\"NonKeyAttributes\":[\"a\"]}}]");
    CREATE_INVALID(b, INVALID "ProjectionType is ALL, but NonKeyAttributes is specified");
    free(b);
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":["
                           "{\"IndexName\":\"lsi1\",\"KeySchema\":[{\"AttributeName\":\"pk\","
                           "\"KeyType\":\"HASH\"},{\"AttributeName\":\"x\",\"KeyType\":"
                           "\"RANGE\"}],\"Projection\":{}}]");
    CREATE_INVALID(b, INVALID "Unknown ProjectionType: null");
    free(b);
    b = table_body("idx4", ",\"BillingMode\":\"PAY_PER_REQUEST\",\"LocalSecondaryIndexes\":["
                           LSI1 "],\"GlobalSecondaryIndexes\":[" GSI1(GSI_PT) "]");
    CREATE_INVALID(b, INVALID "ProvisionedThroughput should not be specified for index: gsi1 "
                              "when BillingMode is PAY_PER_REQUEST");
    free(b);
    b = table_body("idx4", PROVISIONED ",\"LocalSecondaryIndexes\":[" LSI1
                                       "],\"GlobalSecondaryIndexes\":[" GSI1("") "]");
    CREATE_INVALID(b, "No provisioned throughput specified for the global secondary index");
    free(b);
    b = table_body("idx4", PROVISIONED ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gsi1\","
                           "\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
                           "\"Projection\":{\"ProjectionType\":\"ALL\"}" GSI_PT "}]");
    CREATE_INVALID(b, INVALID "Some AttributeDefinitions are not used. AttributeDefinitions: "
                              "[pk, sk, x, g], keys used: [pk, sk, g]");
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe_json),
        cmocka_unit_test(test_created),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
