/*
 * api_insights_test.c - tests of Contributor Insights (engine/table_insights*.c,
 * api/req_insights.c) through kura_execute: UpdateContributorInsights' transitional statuses
 * and modes, DescribeContributorInsights' settled status, rule names (PK/SK, accessed and
 * throttled) and LastUpdateDateTime, GSIs (and LSIs refused), unknown tables and indexes with
 * DynamoDB's messages, ListContributorInsights (filter, order, paging, bad tokens), the
 * engine's hot-path query (table_insights_enabled), durability across a reopen (definition
 * version 7), a dropped GSI and a deleted table losing their setting.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_int.h"
#include "engine/table_insights.h"
#include "engine/table_int.h"
#include "util/coding.h"
#define API_JSON_DIR "api_insights"
#include "api_json_util.h"

#define RNF "ResourceNotFoundException"

/* A table with pk (and sk when `sk`), and the extra members `extra`. */
static void create(const char *name, bool sk, const char *extra)
{
    char body[4096];
    bool with_sk = sk || strstr(extra, "\"sk\""), with_g = *extra;
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
             "\"AttributeType\":\"S\"}%s%s],\"KeySchema\":[{\"AttributeName\":"
             "\"pk\",\"KeyType\":\"HASH\"}%s],\"BillingMode\":\"PAY_PER_REQUEST\"%s%s}",
             name, with_sk ? ",{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}" : "",
             with_g ? ",{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}" : "",
             sk ? ",{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}" : "",
             *extra ? "," : "", extra);
    json_decref(ok("CreateTable", body));
}

/* A GSI "gsi" on g (with sk as its sort key when `sk`) and an LSI "lsi" on g. */
#define GSI_LSI(sk)                                                                            \
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"gsi\",\"KeySchema\":[{\"AttributeName\":"   \
    "\"g\",\"KeyType\":\"HASH\"}" sk "],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"         \
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi\",\"KeySchema\":[{\"AttributeName\":"     \
    "\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"g\",\"KeyType\":\"RANGE\"}],"           \
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]"

static json_t *update(const char *table, const char *index, const char *action, const char *mode)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"TableName\":\"%s\"%s%s%s,\"ContributorInsightsAction\":\"%s\""
             "%s%s%s}", table, index ? ",\"IndexName\":\"" : "", index ? index : "",
             index ? "\"" : "", action, mode ? ",\"ContributorInsightsMode\":\"" : "",
             mode ? mode : "", mode ? "\"" : "");
    return ok("UpdateContributorInsights", body);
}

static json_t *describe(const char *table, const char *index)
{
    char body[512];
    snprintf(body, sizeof body, "{\"TableName\":\"%s\"%s%s%s}", table,
             index ? ",\"IndexName\":\"" : "", index ? index : "", index ? "\"" : "");
    return ok("DescribeContributorInsights", body);
}

static const char *str(const json_t *j, const char *key)
{
    return json_string_value(json_object_get(j, key));
}

/* The rule list as "PKC,SKC,..." (the kinds, each checked against the full name pattern with
 * the table name) into out; the rules' common stamp in *stamp_out. */
static void rule_kinds(const json_t *d, const char *table, char *out, size_t cap,
                       unsigned long long *stamp_out)
{
    out[0] = '\0';
    json_t *rules = json_object_get(d, "ContributorInsightsRuleList");
    for (size_t i = 0; i < json_array_size(rules); i++) {
        const char *r = json_string_value(json_array_get(rules, i));
        char kind[4], name[300];
        unsigned long long stamp;
        char prefix[320];
        assert_int_equal(sscanf(r, "DynamoDBContributorInsights-%3[A-Z]-", kind), 1);
        snprintf(prefix, sizeof prefix, "DynamoDBContributorInsights-%s-%s-", kind, table);
        if (strncmp(r, prefix, strlen(prefix)) != 0) fail_msg("rule %s", r);
        assert_int_equal(sscanf(r + strlen(prefix), "%llu%s", &stamp, name), 1);
        if (i > 0) assert_true(stamp == *stamp_out);
        *stamp_out = stamp;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", i ? "," : "", kind);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether table_insights_enabled says so for the table's index `pos` (-1: the table). */
static bool enabled(const char *table, int pos, bool *throttled_only)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, table, &t));
    bool on = table_insights_enabled(t, pos, throttled_only);
    table_release(t);
    return on;
}

static void test_enable_describe_disable(void **state)
{
    (void)state;
    create("ci1", true, "");
    json_t *d = describe("ci1", NULL); /* never enabled */
    assert_string_equal(str(d, "ContributorInsightsStatus"), "DISABLED");
    assert_string_equal(str(d, "TableName"), "ci1");
    assert_null(json_object_get(d, "LastUpdateDateTime"));
    assert_null(json_object_get(d, "ContributorInsightsRuleList"));
    assert_null(json_object_get(d, "ContributorInsightsMode"));
    assert_null(json_object_get(d, "FailureException"));
    json_decref(d);
    assert_false(enabled("ci1", -1, NULL));

    double before = now_s() - 0.001;
    json_t *u = update("ci1", NULL, "ENABLE", NULL);
    double after = now_s() + 0.001;
    assert_int_equal(json_object_size(u), 3);
    assert_string_equal(str(u, "TableName"), "ci1");
    assert_string_equal(str(u, "ContributorInsightsStatus"), "ENABLING");
    assert_string_equal(str(u, "ContributorInsightsMode"), "ACCESSED_AND_THROTTLED_KEYS");
    json_decref(u);

    d = describe("ci1", NULL);
    assert_string_equal(str(d, "ContributorInsightsStatus"), "ENABLED");
    assert_string_equal(str(d, "ContributorInsightsMode"), "ACCESSED_AND_THROTTLED_KEYS");
    double at = json_number_value(json_object_get(d, "LastUpdateDateTime"));
    assert_true(at >= before && at <= after);
    char kinds[64];
    unsigned long long stamp = 0, stamp2 = 0;
    rule_kinds(d, "ci1", kinds, sizeof kinds, &stamp);
    assert_string_equal(kinds, "PKC,SKC,PKT,SKT");
    assert_true(stamp >= (unsigned long long)(before * 1000) &&
                stamp <= (unsigned long long)(after * 1000));
    json_decref(d);
    bool thr = true;
    assert_true(enabled("ci1", -1, &thr));
    assert_false(thr);

    /* enabling again changes the mode; the rules keep their stamp */
    u = update("ci1", NULL, "ENABLE", "THROTTLED_KEYS");
    assert_string_equal(str(u, "ContributorInsightsMode"), "THROTTLED_KEYS");
    json_decref(u);
    d = describe("ci1", NULL);
    rule_kinds(d, "ci1", kinds, sizeof kinds, &stamp2);
    assert_string_equal(kinds, "PKT,SKT");
    assert_true(stamp2 == stamp);
    assert_string_equal(str(d, "ContributorInsightsMode"), "THROTTLED_KEYS");
    json_decref(d);
    assert_true(enabled("ci1", -1, &thr));
    assert_true(thr);

    u = update("ci1", NULL, "DISABLE", NULL);
    assert_string_equal(str(u, "ContributorInsightsStatus"), "DISABLING");
    assert_null(json_object_get(u, "ContributorInsightsMode"));
    json_decref(u);
    d = describe("ci1", NULL);
    assert_string_equal(str(d, "ContributorInsightsStatus"), "DISABLED");
    assert_non_null(json_object_get(d, "LastUpdateDateTime"));
    assert_null(json_object_get(d, "ContributorInsightsRuleList"));
    json_decref(d);
    assert_false(enabled("ci1", -1, NULL));
    json_decref(update("ci1", NULL, "DISABLE", NULL)); /* disabling twice is not an error */
}

static void test_rules_without_sort_key_and_by_arn(void **state)
{
    (void)state;
    create("ci2", false, "");
    json_decref(ok("UpdateContributorInsights", "{\"TableName\":\"arn:aws:dynamodb:us-east-1:"
                   "000000000000:table/ci2\",\"ContributorInsightsAction\":\"ENABLE\"}"));
    json_t *d = ok("DescribeContributorInsights",
                   "{\"TableName\":\"arn:aws:dynamodb:us-east-1:000000000000:table/ci2\"}");
    assert_string_equal(str(d, "TableName"), "ci2");
    char kinds[64];
    unsigned long long stamp = 0;
    rule_kinds(d, "ci2", kinds, sizeof kinds, &stamp);
    assert_string_equal(kinds, "PKC,PKT");
    json_decref(d);
}

static void test_gsi_and_errors(void **state)
{
    (void)state;
    create("ci3", true, GSI_LSI(""));
    json_t *u = update("ci3", "gsi", "ENABLE", "THROTTLED_KEYS");
    assert_string_equal(str(u, "IndexName"), "gsi");
    assert_string_equal(str(u, "ContributorInsightsStatus"), "ENABLING");
    json_decref(u);
    json_t *d = describe("ci3", "gsi");
    assert_string_equal(str(d, "IndexName"), "gsi");
    assert_string_equal(str(d, "ContributorInsightsStatus"), "ENABLED");
    char kinds[64];
    unsigned long long stamp = 0;
    rule_kinds(d, "ci3", kinds, sizeof kinds, &stamp); /* the GSI has no sort key */
    assert_string_equal(kinds, "PKT");
    json_decref(d);
    d = describe("ci3", NULL); /* the table's own setting is apart */
    assert_string_equal(str(d, "ContributorInsightsStatus"), "DISABLED");
    json_decref(d);
    /* the table and then its GSI in the same millisecond still get distinct rule names */
    json_decref(update("ci3", NULL, "ENABLE", NULL));
    d = describe("ci3", NULL);
    unsigned long long tstamp = 0;
    rule_kinds(d, "ci3", kinds, sizeof kinds, &tstamp);
    assert_true(tstamp > stamp);
    json_decref(d);
    bool thr = false;
    assert_true(enabled("ci3", 1, &thr)); /* position 1: the GSI, after the LSI */
    assert_true(thr);
    assert_false(enabled("ci3", 0, NULL)); /* the LSI */
    assert_false(enabled("ci3", 2, NULL)); /* past the end */

    err("UpdateContributorInsights", "{\"TableName\":\"ci3\",\"IndexName\":\"lsi\","
        "\"ContributorInsightsAction\":\"ENABLE\"}", RNF,
        "Requested resource not found: Index: lsi not found");
    err("DescribeContributorInsights", "{\"TableName\":\"ci3\",\"IndexName\":\"nope\"}", RNF,
        "Requested resource not found: Index: nope not found");
    err("DescribeContributorInsights", "{\"TableName\":\"nope\"}", RNF,
        "Requested resource not found: Table: nope not found");
    err("UpdateContributorInsights", "{\"TableName\":\"nope\",\"ContributorInsightsAction\":"
        "\"ENABLE\"}", RNF, "Requested resource not found: Table: nope not found");
    err("ListContributorInsights", "{\"TableName\":\"nope\"}", RNF,
        "Requested resource not found: Table: nope not found");
    /* the model's checks (api/validate.c) */
    err("UpdateContributorInsights", "{\"TableName\":\"ci3\",\"ContributorInsightsAction\":"
        "\"PAUSE\"}", "ValidationException", NULL);
    err("UpdateContributorInsights", "{\"TableName\":\"ci3\"}", "ValidationException",
        "1 validation error detected: Value null at 'contributorInsightsAction' failed to "
        "satisfy constraint: Member must not be null");
    err("UpdateContributorInsights", "{\"TableName\":\"ci3\",\"ContributorInsightsAction\":"
        "\"ENABLE\",\"ContributorInsightsMode\":\"ALL\"}", "ValidationException", NULL);
    err("ListContributorInsights", "{\"MaxResults\":101}", "ValidationException",
        "1 validation error detected: Value '101' at 'maxResults' failed to satisfy constraint: "
        "Member must have value less than or equal to 100");
}

/* ListContributorInsights' entries as "table/index:STATUS:MODE ..." (index "-" for the
 * table, mode "-" when absent); the NextToken into *next (NULL when none; free it). */
static void list(const char *body, char *out, size_t cap, char **next)
{
    json_t *j = ok("ListContributorInsights", body);
    json_t *arr = json_object_get(j, "ContributorInsightsSummaries");
    assert_true(json_is_array(arr));
    out[0] = '\0';
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        const char *ix = str(e, "IndexName"), *m = str(e, "ContributorInsightsMode");
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s/%s:%s:%s", i ? " " : "", str(e, "TableName"),
                 ix ? ix : "-", str(e, "ContributorInsightsStatus"),
                 m ? (m[0] == 'T' ? "T" : "AT") : "-");
    }
    const char *tok = str(j, "NextToken");
    *next = tok ? strdup(tok) : NULL;
    json_decref(j);
}

static void test_list_filter_paging(void **state)
{
    (void)state;
    create("lsb", true, GSI_LSI(""));
    create("lsa", false, "");
    create("lsc", false, "");
    char got[1024], body[1024], *next;
    list("{}", got, sizeof got, &next);
    assert_string_equal(got, ""); /* nothing enabled */
    assert_null(next);
    json_decref(update("lsb", "gsi", "ENABLE", "THROTTLED_KEYS"));
    json_decref(update("lsb", NULL, "ENABLE", NULL));
    json_decref(update("lsa", NULL, "ENABLE", NULL));
    json_decref(update("lsc", NULL, "ENABLE", NULL));
    json_decref(update("lsc", NULL, "DISABLE", NULL));
    list("{}", got, sizeof got, &next);
    assert_string_equal(got, "lsa/-:ENABLED:AT lsb/-:ENABLED:AT lsb/gsi:ENABLED:T");
    assert_null(next);
    /* a table's listing has every entry, DISABLED ones too */
    list("{\"TableName\":\"lsc\"}", got, sizeof got, &next);
    assert_string_equal(got, "lsc/-:DISABLED:-");
    json_decref(update("lsb", NULL, "DISABLE", NULL));
    list("{\"TableName\":\"lsb\"}", got, sizeof got, &next);
    assert_string_equal(got, "lsb/-:DISABLED:- lsb/gsi:ENABLED:T");
    json_decref(update("lsb", NULL, "ENABLE", NULL));
    /* pages of one */
    const char *want[] = {"lsa/-:ENABLED:AT", "lsb/-:ENABLED:AT", "lsb/gsi:ENABLED:T"};
    next = NULL;
    for (int i = 0; i < 3; i++) {
        char *tok = next;
        snprintf(body, sizeof body, "{\"MaxResults\":1%s%s%s}", tok ? ",\"NextToken\":\"" : "",
                 tok ? tok : "", tok ? "\"" : "");
        free(tok);
        list(body, got, sizeof got, &next);
        assert_string_equal(got, want[i]);
        if (i < 2) assert_non_null(next);
    }
    assert_null(next);
    /* pages of two, resuming after an entry removed in between */
    list("{\"MaxResults\":2}", got, sizeof got, &next);
    assert_string_equal(got, "lsa/-:ENABLED:AT lsb/-:ENABLED:AT");
    json_decref(update("lsb", NULL, "DISABLE", NULL));
    snprintf(body, sizeof body, "{\"MaxResults\":2,\"NextToken\":\"%s\"}", next);
    free(next);
    list(body, got, sizeof got, &next);
    assert_string_equal(got, "lsb/gsi:ENABLED:T");
    assert_null(next);
    err("ListContributorInsights", "{\"NextToken\":\"zz\"}", "ValidationException",
        "Invalid NextToken");
    err("ListContributorInsights", "{\"NextToken\":\"6c.\"}", "ValidationException",
        "Invalid NextToken");
}

static void test_durable_drop_delete(void **state)
{
    (void)state;
    create("cdt", true, GSI_LSI(",{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}"));
    json_decref(update("cdt", "gsi", "ENABLE", NULL));
    json_decref(update("cdt", NULL, "ENABLE", "THROTTLED_KEYS"));
    json_t *before_t = describe("cdt", NULL), *before_g = describe("cdt", "gsi");
    char kinds[64];
    unsigned long long stamp = 0;
    rule_kinds(before_g, "cdt", kinds, sizeof kinds, &stamp);
    assert_string_equal(kinds, "PKC,SKC,PKT,SKT");
    reopen();
    json_t *after_t = describe("cdt", NULL), *after_g = describe("cdt", "gsi");
    assert_true(json_equal(before_t, after_t));
    assert_true(json_equal(before_g, after_g));
    json_decref(before_t);
    json_decref(before_g);
    json_decref(after_t);
    json_decref(after_g);
    bool thr = false;
    assert_true(enabled("cdt", -1, &thr) && thr);
    assert_true(enabled("cdt", 1, &thr) && !thr);

    /* a disabled setting is durable too */
    json_decref(update("cdt", NULL, "DISABLE", NULL));
    reopen();
    json_t *d = describe("cdt", NULL);
    assert_string_equal(str(d, "ContributorInsightsStatus"), "DISABLED");
    assert_non_null(json_object_get(d, "LastUpdateDateTime"));
    json_decref(d);

    /* dropping the GSI drops its setting, at once and after a reopen */
    json_decref(ok("UpdateTable", "{\"TableName\":\"cdt\",\"GlobalSecondaryIndexUpdates\":"
                                  "[{\"Delete\":{\"IndexName\":\"gsi\"}}]}"));
    err("DescribeContributorInsights", "{\"TableName\":\"cdt\",\"IndexName\":\"gsi\"}", RNF,
        "Requested resource not found: Index: gsi not found");
    char got[256], *next;
    list("{\"TableName\":\"cdt\"}", got, sizeof got, &next);
    assert_string_equal(got, "cdt/-:DISABLED:-");
    reopen();
    list("{\"TableName\":\"cdt\"}", got, sizeof got, &next);
    assert_string_equal(got, "cdt/-:DISABLED:-");

    /* DeleteTable drops the table's: a new table of the name starts without */
    create("cet", false, "");
    json_decref(update("cet", NULL, "ENABLE", NULL));
    json_decref(ok("DeleteTable", "{\"TableName\":\"cet\"}"));
    create("cet", false, "");
    d = describe("cet", NULL);
    assert_string_equal(str(d, "ContributorInsightsStatus"), "DISABLED");
    assert_null(json_object_get(d, "LastUpdateDateTime"));
    json_decref(d);
    list("{}", got, sizeof got, &next);
    assert_string_equal(got, "");
}

/* The definition record of `table` encoded and decoded again into a new table: the status of
 * the decoding, the version byte in *version_out; `corrupt_status` sets the last Contributor
 * Insights entry's status byte to 9 first; *gsi_on_out (may be NULL): the decoded first GSI's
 * setting is ENABLED. */
static kura_status roundtrip(const char *table, uint8_t *version_out, bool corrupt_status,
                             bool *gsi_on_out)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, table, &t));
    kbuf b = KBUF_INIT;
    assert_kura_ok(def_encode(t, &b));
    table_release(t);
    *version_out = b.data[0];
    if (corrupt_status) /* the last entry ends with status, mode, stamp, changed: 18 bytes */
        b.data[b.len - 18] = 9;
    kura_table *u = table_new();
    assert_non_null(u);
    kura_status s = def_decode(b.data, b.len, u);
    if (s == KURA_OK && gsi_on_out)
        *gsi_on_out = u->ngsi > 0 && u->gsi[0].ci.status == INSIGHTS_ENABLED;
    table_free(u);
    kbuf_free(&b);
    return s;
}

static void test_format_version(void **state)
{
    (void)state;
    create("fv1", false, "");
    uint8_t v = 0;
    assert_kura_ok(roundtrip("fv1", &v, false, NULL));
    assert_int_equal(v, 1); /* never enabled: the version it had */
    json_decref(update("fv1", NULL, "ENABLE", NULL));
    assert_kura_ok(roundtrip("fv1", &v, false, NULL));
    assert_int_equal(v, 7);
    json_decref(update("fv1", NULL, "DISABLE", NULL));
    assert_kura_ok(roundtrip("fv1", &v, false, NULL));
    assert_int_equal(v, 7); /* the disabled setting is kept */
    assert_int_equal(roundtrip("fv1", &v, true, NULL), KURA_E_CORRUPTION);

    create("fv2", true, GSI_LSI(""));
    json_decref(update("fv2", "gsi", "ENABLE", NULL));
    bool gsi_on = false;
    assert_kura_ok(roundtrip("fv2", &v, false, &gsi_on));
    assert_int_equal(v, 7);
    assert_true(gsi_on);
    assert_int_equal(roundtrip("fv2", &v, true, NULL), KURA_E_CORRUPTION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_enable_describe_disable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_without_sort_key_and_by_arn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gsi_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_filter_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durable_drop_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_version, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
