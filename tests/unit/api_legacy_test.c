/*
 * api_legacy_test.c - tests of api/legacy.c: the rewrite of DynamoDB's legacy parameters into
 * expressions (the exact expression text and maps for every operator and form) and every
 * ValidationException message it produces. The expected behaviour was checked against
 * DynamoDB Local 1.25.1 and dynalite's validations (see legacy.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "api/api_int.h"
#include "api/legacy.h"
#include "testutil.h"

/* Every request of a test lives in this document, freed at the end of the test program. */
static jd_doc *doc;

/* The canonical text of a JSON document (keys sorted) for comparisons: written by api/'s
 * writer, read back and sorted by jansson. */
static char *canon(const jd_t *j)
{
    kbuf b = KBUF_INIT;
    assert_int_equal(jw_json(&b, j), KURA_OK);
    json_error_t err;
    json_t *t = json_loadb((const char *)b.data, b.len, JSON_DECODE_ANY, &err);
    if (!t) fail_msg("api/ wrote bad JSON (%s): %.*s", err.text, (int)b.len, (const char *)b.data);
    kbuf_free(&b);
    char *s = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    assert_non_null(s);
    json_decref(t);
    return s;
}

static jd_t *parse(const char *text)
{
    char err[160];
    if (!doc) assert_non_null(doc = jd_doc_new());
    jd_t *j = jd_parse(doc, text, strlen(text), 0, err, sizeof err);
    if (!j) fail_msg("bad test JSON (%s): %s", err, text);
    return j;
}

/* Rewrites `in` as operation `op` and checks the result equals `want`. */
static void check_rewrite(const char *op, const char *in, const char *want)
{
    jd_t *req = parse(in), *exp = parse(want);
    kura_status st = legacy_rewrite(op, req);
    if (st != KURA_OK) fail_msg("%s %s: %s: %s", op, in, kura_status_str(st), kura_last_error());
    char *got = canon(req), *wanted = canon(exp);
    if (strcmp(got, wanted)) fail_msg("%s %s\n   got: %s\nwanted: %s", op, in, got, wanted);
    free(got);
    free(wanted);
}

/* Checks that `in` is rejected with ValidationException `msg` and left unchanged. */
static void check_error(const char *op, const char *in, const char *msg)
{
    jd_t *req = parse(in);
    char *before = canon(req);
    kura_status st = legacy_rewrite(op, req);
    if (st != KURA_E_INVALID)
        fail_msg("%s %s: got %s (%s), wanted KURA_E_INVALID: %s", op, in, kura_status_str(st),
                 st ? kura_last_error() : "", msg);
    if (strcmp(kura_last_error(), msg))
        fail_msg("%s %s\n   got: %s\nwanted: %s", op, in, kura_last_error(), msg);
    char *after = canon(req);
    if (strcmp(before, after)) fail_msg("%s: request modified on error: %s", op, after);
    free(before);
    free(after);
}

#define KEY "\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"a\"}}"
#define PARAM "One or more parameter values were invalid: "

/* ---- Expected ------------------------------------------------------------------------------- */

static void test_expected_forms(void **state)
{
    (void)state;
    check_rewrite("PutItem", "{\"Expected\":{\"a\":{\"Value\":{\"S\":\"x\"}}}}",
                  "{\"ConditionExpression\":\"#l0 = :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"x\"}}}");
    check_rewrite("PutItem", "{\"Expected\":{\"a\":{\"Exists\":true,\"Value\":{\"N\":\"1\"}}}}",
                  "{\"ConditionExpression\":\"#l0 = :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"N\":\"1\"}}}");
    check_rewrite("DeleteItem", "{" KEY ",\"Expected\":{\"a\":{\"Exists\":false}}}",
                  "{" KEY ",\"ConditionExpression\":\"attribute_not_exists(#l0)\","
                  "\"ExpressionAttributeNames\":{\"#l0\":\"a\"}}");
    /* ComparisonOperator with Value instead of AttributeValueList */
    check_rewrite("DeleteItem",
                  "{\"Expected\":{\"a\":{\"ComparisonOperator\":\"GT\",\"Value\":{\"N\":\"1\"}}}}",
                  "{\"ConditionExpression\":\"#l0 > :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"N\":\"1\"}}}");
    /* several conditions: AND by default, OR on request, each in parentheses */
    check_rewrite("PutItem",
                  "{\"Expected\":{\"a\":{\"Exists\":false},\"b\":{\"Value\":{\"S\":\"x\"}}}}",
                  "{\"ConditionExpression\":\"(attribute_not_exists(#l0)) AND (#l1 = :l0)\","
                  "\"ExpressionAttributeNames\":{\"#l0\":\"a\",\"#l1\":\"b\"},"
                  "\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"x\"}}}");
    check_rewrite("PutItem",
                  "{\"ConditionalOperator\":\"OR\",\"Expected\":{\"a\":{\"Exists\":false},"
                  "\"b\":{\"ComparisonOperator\":\"NOT_CONTAINS\",\"AttributeValueList\":"
                  "[{\"S\":\"x\"}]}}}",
                  "{\"ConditionExpression\":\"(attribute_not_exists(#l0)) OR (attribute_exists(#l1)"
                  " AND NOT contains(#l1, :l0))\",\"ExpressionAttributeNames\":{\"#l0\":\"a\","
                  "\"#l1\":\"b\"},\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"x\"}}}");
    check_rewrite("PutItem",
                  "{\"ConditionalOperator\":\"AND\",\"Expected\":{\"a\":{\"Exists\":false},"
                  "\"b\":{\"Exists\":false}}}",
                  "{\"ConditionExpression\":\"(attribute_not_exists(#l0)) AND "
                  "(attribute_not_exists(#l1))\",\"ExpressionAttributeNames\":{\"#l0\":\"a\","
                  "\"#l1\":\"b\"}}");
    /* an empty Expected asks for no condition; null members are absent */
    check_rewrite("PutItem", "{\"Expected\":{}}", "{}");
    check_rewrite("PutItem", "{\"Expected\":null,\"ConditionExpression\":\"x\"}",
                  "{\"Expected\":null,\"ConditionExpression\":\"x\"}");
    /* reserved words and any characters go through names */
    check_rewrite("PutItem", "{\"Expected\":{\"status\":{\"Exists\":false}}}",
                  "{\"ConditionExpression\":\"attribute_not_exists(#l0)\","
                  "\"ExpressionAttributeNames\":{\"#l0\":\"status\"}}");
    check_rewrite("PutItem", "{\"Expected\":{\"a.b[1] #:\":{\"Exists\":false}}}",
                  "{\"ConditionExpression\":\"attribute_not_exists(#l0)\","
                  "\"ExpressionAttributeNames\":{\"#l0\":\"a.b[1] #:\"}}");
}

/* Every operator, in Expected, ScanFilter and QueryFilter. */
static void test_operators(void **state)
{
    (void)state;
    static const struct {
        const char *op, *avl, *expr;
    } cases[] = {
        {"EQ", "[{\"S\":\"v\"}]", "#l0 = :l0"},
        {"EQ", "[{\"L\":[{\"N\":\"1\"}]}]", "#l0 = :l0"},
        {"EQ", "[{\"SS\":[\"v\"]}]", "#l0 = :l0"},
        {"NE", "[{\"M\":{}}]", "#l0 <> :l0"},
        {"NE", "[{\"N\":\"1\"}]", "#l0 <> :l0"},
        {"LE", "[{\"N\":\"1\"}]", "#l0 <= :l0"},
        {"LT", "[{\"S\":\"v\"}]", "#l0 < :l0"},
        {"GE", "[{\"B\":\"AAE=\"}]", "#l0 >= :l0"},
        {"GT", "[{\"N\":\"-1.5\"}]", "#l0 > :l0"},
        {"NOT_NULL", "[]", "attribute_exists(#l0)"},
        {"NULL", "[]", "attribute_not_exists(#l0)"},
        {"NULL", NULL, "attribute_not_exists(#l0)"},
        {"CONTAINS", "[{\"S\":\"v\"}]", "contains(#l0, :l0)"},
        {"CONTAINS", "[{\"BOOL\":true}]", "contains(#l0, :l0)"},
        {"NOT_CONTAINS", "[{\"N\":\"1\"}]", "attribute_exists(#l0) AND NOT contains(#l0, :l0)"},
        {"NOT_CONTAINS", "[{\"NULL\":true}]", "attribute_exists(#l0) AND NOT contains(#l0, :l0)"},
        {"BEGINS_WITH", "[{\"S\":\"v\"}]", "begins_with(#l0, :l0)"},
        {"BEGINS_WITH", "[{\"B\":\"AAE=\"}]", "begins_with(#l0, :l0)"},
        {"IN", "[{\"S\":\"v\"}]", "#l0 IN (:l0)"},
        {"IN", "[{\"N\":\"1\"},{\"N\":\"2\"},{\"N\":\"3\"}]", "#l0 IN (:l0, :l1, :l2)"},
        {"BETWEEN", "[{\"N\":\"1\"},{\"N\":\"1\"}]", "#l0 BETWEEN :l0 AND :l1"},
        {"BETWEEN", "[{\"S\":\"a\"},{\"S\":\"ab\"}]", "#l0 BETWEEN :l0 AND :l1"},
        {"BETWEEN", "[{\"B\":\"/w==\"},{\"B\":\"/wA=\"}]", "#l0 BETWEEN :l0 AND :l1"},
    };
    static const struct {
        const char *op, *param, *expr_param;
    } where[] = {{"PutItem", "Expected", "ConditionExpression"},
                 {"Scan", "ScanFilter", "FilterExpression"},
                 {"Query", "QueryFilter", "FilterExpression"}};
    for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            char in[512], want[1024], values[512] = "";
            jd_t *avl = parse(cases[i].avl ? cases[i].avl : "[]");
            for (size_t k = 0; k < jd_array_size(avl); k++) {
                char *v = canon(jd_array_get(avl, k));
                size_t len = strlen(values);
                snprintf(values + len, sizeof(values) - len, "%s\":l%zu\":%s", k ? "," : "", k, v);
                free(v);
            }
            snprintf(in, sizeof(in), "{\"%s\":{\"attr\":{\"ComparisonOperator\":\"%s\"%s%s}}}",
                     where[w].param, cases[i].op, cases[i].avl ? ",\"AttributeValueList\":" : "",
                     cases[i].avl ? cases[i].avl : "");
            snprintf(want, sizeof(want),
                     "{\"%s\":\"%s\",\"ExpressionAttributeNames\":{\"#l0\":\"attr\"}%s%s%s}",
                     where[w].expr_param, cases[i].expr,
                     values[0] ? ",\"ExpressionAttributeValues\":{" : "", values,
                     values[0] ? "}" : "");
            check_rewrite(where[w].op, in, want);
        }
    }
}

/* ---- AttributeUpdates ----------------------------------------------------------------------- */

static void test_attribute_updates(void **state)
{
    (void)state;
    check_rewrite("UpdateItem",
                  "{" KEY ",\"AttributeUpdates\":{\"a\":{\"Action\":\"PUT\","
                  "\"Value\":{\"S\":\"x\"}}}}",
                  "{" KEY ",\"UpdateExpression\":\"SET #l0 = :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"x\"}}}");
    /* PUT is the default action */
    check_rewrite("UpdateItem", "{\"AttributeUpdates\":{\"a\":{\"Value\":{\"NULL\":true}}}}",
                  "{\"UpdateExpression\":\"SET #l0 = :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"NULL\":true}}}");
    check_rewrite("UpdateItem", "{\"AttributeUpdates\":{\"a\":{\"Action\":\"DELETE\"}}}",
                  "{\"UpdateExpression\":\"REMOVE #l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"}}");
    check_rewrite("UpdateItem",
                  "{\"AttributeUpdates\":{\"a\":{\"Action\":\"DELETE\","
                  "\"Value\":{\"NS\":[\"1\"]}}}}",
                  "{\"UpdateExpression\":\"DELETE #l0 :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"NS\":[\"1\"]}}}");
    check_rewrite("UpdateItem",
                  "{\"AttributeUpdates\":{\"a\":{\"Action\":\"ADD\","
                  "\"Value\":{\"N\":\"2\"}}}}",
                  "{\"UpdateExpression\":\"ADD #l0 :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"N\":\"2\"}}}");
    check_rewrite("UpdateItem",
                  "{\"AttributeUpdates\":{\"a\":{\"Action\":\"ADD\","
                  "\"Value\":{\"BS\":[\"AA==\"]}}}}",
                  "{\"UpdateExpression\":\"ADD #l0 :l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ExpressionAttributeValues\":{\":l0\":{\"BS\":[\"AA==\"]}}}");
    check_rewrite("UpdateItem",
                  "{\"AttributeUpdates\":{\"a\":{\"Action\":\"ADD\","
                  "\"Value\":{\"L\":[{\"S\":\"x\"}]}}}}",
                  "{\"UpdateExpression\":\"SET #l0 = list_append(if_not_exists(#l0, :l1), :l0)\","
                  "\"ExpressionAttributeNames\":{\"#l0\":\"a\"},\"ExpressionAttributeValues\":"
                  "{\":l0\":{\"L\":[{\"S\":\"x\"}]},\":l1\":{\"L\":[]}}}");
    /* every kind at once: clauses SET REMOVE ADD DELETE, one empty list for all list ADDs,
     * the names shared with Expected */
    check_rewrite(
        "UpdateItem",
        "{\"AttributeUpdates\":{\"d\":{\"Action\":\"DELETE\",\"Value\":{\"SS\":[\"x\"]}},"
        "\"c\":{\"Action\":\"ADD\",\"Value\":{\"N\":\"1\"}},\"r\":{\"Action\":\"DELETE\"},"
        "\"l\":{\"Action\":\"ADD\",\"Value\":{\"L\":[]}},\"p\":{\"Value\":{\"S\":\"v\"}},"
        "\"m\":{\"Action\":\"ADD\",\"Value\":{\"L\":[{\"N\":\"1\"}]}},\"s\":{\"Action\":\"DELETE\"}"
        "},"
        "\"Expected\":{\"p\":{\"Exists\":false}},\"ReturnValues\":\"ALL_NEW\"}",
        "{\"UpdateExpression\":\"SET #l3 = list_append(if_not_exists(#l3, :l3), :l2), #l4 = :l4, "
        "#l5 = list_append(if_not_exists(#l5, :l3), :l5) REMOVE #l2, #l6 ADD #l1 :l1 "
        "DELETE #l0 :l0\",\"ConditionExpression\":\"attribute_not_exists(#l4)\","
        "\"ExpressionAttributeNames\":{\"#l0\":\"d\",\"#l1\":\"c\",\"#l2\":\"r\",\"#l3\":\"l\","
        "\"#l4\":\"p\",\"#l5\":\"m\",\"#l6\":\"s\"},\"ExpressionAttributeValues\":{\":l0\":"
        "{\"SS\":[\"x\"]},\":l1\":{\"N\":\"1\"},\":l2\":{\"L\":[]},\":l3\":{\"L\":[]},\":l4\":"
        "{\"S\":\"v\"},\":l5\":{\"L\":[{\"N\":\"1\"}]}},\"ReturnValues\":\"ALL_NEW\"}");
    /* no updates: no UpdateExpression (UpdateItem then only creates the key) */
    check_rewrite("UpdateItem", "{" KEY ",\"AttributeUpdates\":{}}", "{" KEY "}");
}

/* ---- Query, Scan, GetItem, BatchGetItem ---------------------------------------------------- */

static void test_reads(void **state)
{
    (void)state;
    check_rewrite(
        "Query",
        "{\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
        "[{\"S\":\"a\"}]},\"sk\":{\"ComparisonOperator\":\"BETWEEN\",\"AttributeValueList\":"
        "[{\"N\":\"1\"},{\"N\":\"9\"}]}}}",
        "{\"KeyConditionExpression\":\"#l0 = :l0 AND #l1 BETWEEN :l1 AND :l2\","
        "\"ExpressionAttributeNames\":{\"#l0\":\"pk\",\"#l1\":\"sk\"},"
        "\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"a\"},\":l1\":{\"N\":\"1\"},"
        "\":l2\":{\"N\":\"9\"}}}");
    static const char *const key_ops[][3] = {
        {"LE", "<= :l1", ""}, {"LT", "< :l1", ""}, {"GE", ">= :l1", ""}, {"GT", "> :l1", ""}};
    for (size_t i = 0; i < 4; i++) {
        char in[400], want[600];
        snprintf(in, sizeof(in),
                 "{\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
                 "[{\"S\":\"a\"}]},\"sk\":{\"ComparisonOperator\":\"%s\",\"AttributeValueList\":"
                 "[{\"S\":\"b\"}]}}}",
                 key_ops[i][0]);
        snprintf(
            want, sizeof(want),
            "{\"KeyConditionExpression\":\"#l0 = :l0 AND #l1 %s\",\"ExpressionAttributeNames\":"
            "{\"#l0\":\"pk\",\"#l1\":\"sk\"},\"ExpressionAttributeValues\":{\":l0\":"
            "{\"S\":\"a\"},\":l1\":{\"S\":\"b\"}}}",
            key_ops[i][1]);
        check_rewrite("Query", in, want);
    }
    /* everything at once, with the names of a key attribute shared by the filter */
    check_rewrite(
        "Query",
        "{\"TableName\":\"t\",\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\","
        "\"AttributeValueList\":[{\"S\":\"a\"}]},\"sk\":{\"ComparisonOperator\":\"BEGINS_WITH\","
        "\"AttributeValueList\":[{\"S\":\"x\"}]}},\"QueryFilter\":{\"f\":{\"ComparisonOperator\":"
        "\"NULL\"},\"sk\":{\"ComparisonOperator\":\"NE\",\"AttributeValueList\":[{\"S\":\"xy\"}]}},"
        "\"ConditionalOperator\":\"OR\",\"AttributesToGet\":[\"f\",\"sk\",\"g\"],\"Limit\":5}",
        "{\"TableName\":\"t\",\"FilterExpression\":\"(attribute_not_exists(#l0)) OR (#l1 <> :l0)\","
        "\"ProjectionExpression\":\"#l0, #l1, #l2\",\"KeyConditionExpression\":\"#l3 = :l1 AND "
        "begins_with(#l1, :l2)\",\"ExpressionAttributeNames\":{\"#l0\":\"f\",\"#l1\":\"sk\","
        "\"#l2\":\"g\",\"#l3\":\"pk\"},\"ExpressionAttributeValues\":{\":l0\":{\"S\":\"xy\"},"
        "\":l1\":{\"S\":\"a\"},\":l2\":{\"S\":\"x\"}},\"Limit\":5}");
    /* KeyConditions may go with a FilterExpression and ProjectionExpression: the generated
     * placeholders skip the request's own */
    check_rewrite(
        "Query",
        "{\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
        "[{\"S\":\"a\"}]}},\"FilterExpression\":\"#l0 = :l0\",\"ProjectionExpression\":\"#l1\","
        "\"ExpressionAttributeNames\":{\"#l0\":\"x\",\"#l1\":\"y\"},\"ExpressionAttributeValues\":"
        "{\":l0\":{\"N\":\"1\"}}}",
        "{\"KeyConditionExpression\":\"#l2 = :l1\",\"FilterExpression\":\"#l0 = :l0\","
        "\"ProjectionExpression\":\"#l1\",\"ExpressionAttributeNames\":{\"#l0\":\"x\","
        "\"#l1\":\"y\",\"#l2\":\"pk\"},\"ExpressionAttributeValues\":{\":l0\":{\"N\":\"1\"},"
        "\":l1\":{\"S\":\"a\"}}}");
    check_rewrite("Scan",
                  "{\"AttributesToGet\":[\"a\",\"status\"],\"Select\":\"SPECIFIC_ATTRIBUTES\"}",
                  "{\"ProjectionExpression\":\"#l0, #l1\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\",\"#l1\":\"status\"},\"Select\":\"SPECIFIC_ATTRIBUTES\"}");
    check_rewrite("GetItem", "{" KEY ",\"AttributesToGet\":[\"a\"],\"ConsistentRead\":true}",
                  "{" KEY ",\"ProjectionExpression\":\"#l0\",\"ExpressionAttributeNames\":"
                  "{\"#l0\":\"a\"},\"ConsistentRead\":true}");
    check_rewrite(
        "BatchGetItem",
        "{\"RequestItems\":{\"t1\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}}],\"AttributesToGet\":"
        "[\"a\",\"b\"]},\"t2\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}}],\"ProjectionExpression\":"
        "\"#p\",\"ExpressionAttributeNames\":{\"#p\":\"p\"}}}}",
        "{\"RequestItems\":{\"t1\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}}],"
        "\"ProjectionExpression\":\"#l0, #l1\",\"ExpressionAttributeNames\":"
        "{\"#l0\":\"a\",\"#l1\":\"b\"}},\"t2\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}}],"
        "\"ProjectionExpression\":\"#p\",\"ExpressionAttributeNames\":{\"#p\":\"p\"}}}}");
}

/* Requests without legacy parameters and other operations are left alone. */
static void test_untouched(void **state)
{
    (void)state;
    static const char *const reqs[][2] = {
        {"PutItem", "{\"TableName\":\"t\",\"Item\":{\"a\":{\"S\":\"x\"}},\"ConditionExpression\":"
                    "\"#a = :a\",\"ExpressionAttributeNames\":{\"#a\":\"a\"},"
                    "\"ExpressionAttributeValues\":{\":a\":{\"S\":\"x\"}}}"},
        {"UpdateItem", "{" KEY ",\"UpdateExpression\":\"SET a = :a\",\"ExpressionAttributeValues\":"
                       "{\":a\":{\"S\":\"x\"}}}"},
        {"Query", "{\"KeyConditionExpression\":\"pk = :a\",\"ExpressionAttributeValues\":"
                  "{\":a\":{\"S\":\"x\"}}}"},
        {"Scan",
         "{\"TableName\":\"t\",\"ProjectionExpression\":\"#a\",\"ExpressionAttributeNames\":"
         "{\"#a\":\"a\"}}"},
        {"GetItem", "{" KEY "}"},
        {"BatchGetItem", "{\"RequestItems\":{\"t\":{\"Keys\":[]}}}"},
        {"BatchGetItem", "{\"RequestItems\":[]}"},
        {"BatchWriteItem", "{\"RequestItems\":{\"t\":[{\"PutRequest\":{\"Expected\":{}}}]}}"},
        {"CreateTable", "{\"AttributesToGet\":[\"a\"],\"Expected\":{\"a\":{}}}"},
        {"TransactWriteItems", "{\"TransactItems\":[]}"},
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
        check_rewrite(reqs[i][0], reqs[i][1], reqs[i][1]);
    jd_t *arr = parse("[]");
    assert_int_equal(legacy_rewrite("PutItem", arr), KURA_OK);
}

/* ---- Errors --------------------------------------------------------------------------------- */

static void test_errors_params(void **state)
{
    (void)state;
    check_error("PutItem",
                "{\"Expected\":{\"a\":{\"Exists\":false}},\"ConditionExpression\":\"x\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {Expected} Expression parameters: "
                "{ConditionExpression}");
    check_error("DeleteItem", "{\"Expected\":{},\"ConditionExpression\":\"x\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {Expected} Expression parameters: "
                "{ConditionExpression}");
    check_error("UpdateItem", "{\"Expected\":{},\"UpdateExpression\":\"SET a = :a\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {Expected} Expression parameters: {UpdateExpression}");
    check_error("UpdateItem",
                "{\"AttributeUpdates\":{},\"Expected\":{},\"UpdateExpression\":\"x\","
                "\"ConditionExpression\":\"y\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {AttributeUpdates, Expected} Expression parameters: "
                "{UpdateExpression, ConditionExpression}");
    check_error("Scan",
                "{\"ScanFilter\":{},\"FilterExpression\":\"x\",\"ConditionalOperator\":"
                "\"OR\",\"AttributesToGet\":[\"x\"],\"ProjectionExpression\":\"x\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {AttributesToGet, ScanFilter, ConditionalOperator} "
                "Expression parameters: {ProjectionExpression, FilterExpression}");
    check_error("Query", "{\"KeyConditions\":{},\"KeyConditionExpression\":\"x\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {KeyConditions} Expression parameters: "
                "{KeyConditionExpression}");
    check_error("Query", "{\"KeyConditions\":{},\"QueryFilter\":{},\"ProjectionExpression\":\"x\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {QueryFilter} Expression parameters: "
                "{ProjectionExpression}");
    check_error("GetItem", "{\"AttributesToGet\":[\"a\"],\"ProjectionExpression\":\"a\"}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {AttributesToGet} Expression parameters: "
                "{ProjectionExpression}");
    check_error("BatchGetItem",
                "{\"RequestItems\":{\"t\":{\"AttributesToGet\":[\"a\"],\"ProjectionExpression\":"
                "\"a\"}}}",
                "Can not use both expression and non-expression parameters in the same request: "
                "Non-expression parameters: {AttributesToGet} Expression parameters: "
                "{ProjectionExpression}");
    check_error("GetItem",
                "{\"AttributesToGet\":[\"x\"],\"ExpressionAttributeNames\":{\"#x\":\"x\"}}",
                "ExpressionAttributeNames can only be specified when using expressions");
    check_error("Query", "{\"KeyConditions\":{},\"ExpressionAttributeNames\":{\"#x\":\"x\"}}",
                "ExpressionAttributeNames can only be specified when using expressions");
    check_error("PutItem", "{\"ExpressionAttributeValues\":{\":a\":{\"S\":\"a\"}}}",
                "ExpressionAttributeValues can only be specified when using expressions: "
                "ConditionExpression is null");
    check_error("UpdateItem", "{\"AttributeUpdates\":{},\"ExpressionAttributeValues\":{}}",
                "ExpressionAttributeValues can only be specified when using expressions: "
                "UpdateExpression and ConditionExpression are null");
    check_error("Query", "{\"KeyConditions\":{},\"ExpressionAttributeValues\":{}}",
                "ExpressionAttributeValues can only be specified when using expressions: "
                "FilterExpression and KeyConditionExpression are null");
    check_error("Scan", "{\"ProjectionExpression\":\"a\",\"ExpressionAttributeValues\":{}}",
                "ExpressionAttributeValues can only be specified when using expressions: "
                "FilterExpression is null");
    /* ConditionalOperator */
    check_error("Scan", "{\"ConditionalOperator\":\"XOR\"}",
                "1 validation error detected: Value 'XOR' at 'conditionalOperator' failed to "
                "satisfy constraint: Member must satisfy enum value set: [OR, AND]");
    check_error("Scan", "{\"ConditionalOperator\":\"OR\"}",
                "ConditionalOperator cannot be used without Filter or Expected");
    check_error("PutItem", "{\"ConditionalOperator\":\"AND\",\"Expected\":{}}",
                "ConditionalOperator cannot be used without Filter or Expected");
    check_error("Query", "{\"ConditionalOperator\":\"OR\",\"KeyConditions\":{\"a\":{}}}",
                "ConditionalOperator cannot be used without Filter or Expected");
    check_error("Query",
                "{\"ConditionalOperator\":\"AND\",\"QueryFilter\":{\"a\":"
                "{\"ComparisonOperator\":\"NULL\"}}}",
                "ConditionalOperator can only be used when Filter or Expected has two or more "
                "elements");
    /* Select with AttributesToGet */
    check_error("Scan", "{\"AttributesToGet\":[\"a\"],\"Select\":\"ALL_ATTRIBUTES\"}",
                "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES");
    check_error("Query", "{\"AttributesToGet\":[\"a\"],\"Select\":\"ALL_PROJECTED_ATTRIBUTES\"}",
                "Cannot specify the AttributesToGet when choosing to get ALL_PROJECTED_ATTRIBUTES");
    check_error("Scan", "{\"AttributesToGet\":[\"a\"],\"Select\":\"COUNT\"}",
                "Cannot specify the AttributesToGet when choosing to get only the Count");
    /* AttributesToGet itself */
    check_error("GetItem", "{\"AttributesToGet\":[]}",
                "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy "
                "constraint: Member must have length greater than or equal to 1");
    check_error("Scan", "{\"AttributesToGet\":[\"a\",\"b\",\"a\"]}",
                PARAM "Duplicate value in attribute name: a");
    check_error("BatchGetItem",
                "{\"RequestItems\":{\"ok\":{\"AttributesToGet\":[\"a\"]},\"bad\":"
                "{\"AttributesToGet\":[]}}}",
                "1 validation error detected: Value '[]' at 'requestItems.bad.member."
                "attributesToGet' failed to satisfy constraint: Member must have length greater "
                "than or equal to 1");
    jd_t *req = parse("{}"), *many = jd_array(doc);
    for (int i = 0; i < 256; i++) {
        char name[8];
        snprintf(name, sizeof name, "a%d", i);
        assert_int_equal(jd_array_append(many, jd_string(doc, name)), 0);
    }
    assert_int_equal(jd_object_set(req, "AttributesToGet", many), 0);
    assert_int_equal(legacy_rewrite("GetItem", req), KURA_E_INVALID);
    /* the message lists all 256 names, then "at 'attributesToGet' failed to satisfy constraint:
     * Member must have length less than or equal to 255"; kura_err keeps its first 511 bytes */
    assert_non_null(strstr(kura_last_error(), "1 validation error detected: Value '[a0, a1, a2,"));
}

static void test_errors_expected(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{\"a\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}],"
         "\"Value\":{\"S\":\"b\"}}}",
         PARAM "Value and AttributeValueList cannot be used together for Attribute: a"},
        {"{\"a\":{\"ComparisonOperator\":\"EQ\",\"Exists\":true,\"Value\":{\"S\":\"b\"}}}",
         PARAM "Exists and ComparisonOperator cannot be used together for Attribute: a"},
        {"{\"a\":{\"ComparisonOperator\":\"EQ\"}}",
         PARAM "Value or AttributeValueList must be used with ComparisonOperator: EQ for "
               "Attribute: a"},
        {"{\"a\":{\"AttributeValueList\":[{\"S\":\"a\"}]}}",
         PARAM "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"},
        {"{\"a\":{}}", PARAM "Value must be provided when Exists is null for Attribute: a"},
        {"{\"a\":{\"Exists\":true}}", PARAM "Value must be provided when Exists is true for "
                                            "Attribute: a"},
        {"{\"a\":{\"Exists\":false,\"Value\":{\"S\":\"a\"}}}",
         PARAM "Value cannot be used when Exists is false for Attribute: a"},
        {"{\"a\":{\"ComparisonOperator\":\"FOO\",\"AttributeValueList\":[]}}",
         "1 validation error detected: Value 'FOO' at 'expected.a.member.comparisonOperator' "
         "failed to satisfy constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, "
         "LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"},
        {"{\"a\":{\"ComparisonOperator\":\"NULL\",\"Value\":{\"S\":\"a\"}}}",
         PARAM "Invalid number of argument(s) for the NULL ComparisonOperator"},
        {"{\"a\":{\"ComparisonOperator\":\"BETWEEN\",\"Value\":{\"S\":\"a\"}}}",
         PARAM "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
        {"{\"a\":{\"ComparisonOperator\":\"LT\",\"AttributeValueList\":[{\"SS\":[\"a\"]}]}}",
         PARAM "ComparisonOperator LT is not valid for SS AttributeValue type"},
        {"{\"a\":{\"Value\":{}}}",
         "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
        {"{\"a\":{\"Value\":{\"S\":\"a\",\"N\":\"1\"}}}",
         "Supplied AttributeValue has more than one datatypes set, must contain exactly one of "
         "the supported datatypes"},
        {"{\"a\":{\"Value\":{\"N\":\"abc\"}}}",
         "The parameter cannot be converted to a numeric value: abc"},
        {"{\"a\":{\"Value\":{\"N\":\"1e126\"}}}",
         "Number overflow. Attempting to store a number with magnitude larger than supported "
         "range"},
        {"{\"a\":{\"Exists\":false},\"b\":{\"Exists\":\"yes\"}}",
         "Unexpected token received from parser"},
        {"{\"a\":[]}", "Start of list found where not expected"},
        {"{\"a\":{\"ComparisonOperator\":\"IN\",\"AttributeValueList\":{}}}",
         "Start of structure or map found where not expected"},
        {"{\"a\":{\"ComparisonOperator\":1,\"AttributeValueList\":[]}}",
         "NUMBER_VALUE cannot be converted to String"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char in[512];
        snprintf(in, sizeof(in), "{" KEY ",\"Expected\":%s}", cases[i][0]);
        check_error(i % 2 ? "DeleteItem" : "UpdateItem", in, cases[i][1]);
    }
    check_error("PutItem", "{\"Expected\":[]}", "Start of list found where not expected");
    check_error("PutItem",
                "{\"Expected\":{\"a\":{\"Exists\":false}},\"ExpressionAttributeNames\":3}",
                "ExpressionAttributeNames can only be specified when using expressions");
}

/* Argument rules of the operators (the same in Expected, QueryFilter, ScanFilter,
 * KeyConditions). */
static void test_errors_arguments(void **state)
{
    (void)state;
    static const struct {
        const char *op, *avl, *msg;
    } cases[] = {
        {"EQ", "[{\"S\":\"a\"},{\"S\":\"b\"}]",
         PARAM "Invalid number of argument(s) for the EQ ComparisonOperator"},
        {"EQ", "[]", PARAM "Invalid number of argument(s) for the EQ ComparisonOperator"},
        {"NE", "[]", PARAM "Invalid number of argument(s) for the NE ComparisonOperator"},
        {"LE", "[]", PARAM "Invalid number of argument(s) for the LE ComparisonOperator"},
        {"NOT_NULL", "[{\"S\":\"a\"}]",
         PARAM "Invalid number of argument(s) for the NOT_NULL ComparisonOperator"},
        {"IN", "[]", PARAM "Invalid number of argument(s) for the IN ComparisonOperator"},
        {"BETWEEN", "[{\"N\":\"1\"}]",
         PARAM "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
        {"BETWEEN", "[{\"N\":\"1\"},{\"N\":\"2\"},{\"N\":\"3\"}]",
         PARAM "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
        {"IN", "[{\"S\":\"a\"},{\"N\":\"1\"}]",
         PARAM "AttributeValues inside AttributeValueList must be of same type"},
        {"BETWEEN", "[{\"S\":\"a\"},{\"N\":\"1\"}]",
         PARAM "AttributeValues inside AttributeValueList must be of same type"},
        {"GT", "[{\"BOOL\":true}]",
         PARAM "ComparisonOperator GT is not valid for BOOL AttributeValue type"},
        {"GE", "[{\"L\":[]}]",
         PARAM "ComparisonOperator GE is not valid for L AttributeValue type"},
        {"LT", "[{\"NULL\":true}]",
         PARAM "ComparisonOperator LT is not valid for NULL AttributeValue type"},
        {"LE", "[{\"NS\":[\"1\"]}]",
         PARAM "ComparisonOperator LE is not valid for NS AttributeValue type"},
        {"CONTAINS", "[{\"M\":{}}]",
         PARAM "ComparisonOperator CONTAINS is not valid for M AttributeValue type"},
        {"NOT_CONTAINS", "[{\"BS\":[\"AA==\"]}]",
         PARAM "ComparisonOperator NOT_CONTAINS is not valid for BS AttributeValue type"},
        {"BEGINS_WITH", "[{\"N\":\"1\"}]",
         PARAM "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"},
        {"IN", "[{\"SS\":[\"a\"]}]",
         PARAM "ComparisonOperator IN is not valid for SS AttributeValue type"},
        {"BETWEEN", "[{\"BOOL\":true},{\"BOOL\":false}]",
         PARAM "ComparisonOperator BETWEEN is not valid for BOOL AttributeValue type"},
        {"BETWEEN", "[{\"N\":\"10\"},{\"N\":\"9.5\"}]",
         "The BETWEEN condition was provided a range where the lower bound is greater than the "
         "upper bound"},
        {"BETWEEN", "[{\"S\":\"b\"},{\"S\":\"abc\"}]",
         "The BETWEEN condition was provided a range where the lower bound is greater than the "
         "upper bound"},
        {"BETWEEN", "[{\"S\":\"ab\"},{\"S\":\"a\"}]",
         "The BETWEEN condition was provided a range where the lower bound is greater than the "
         "upper bound"},
        /* B compares the bytes, not the base64 text: 0xff > 0x00 although "/" < "A" */
        {"BETWEEN", "[{\"B\":\"/w==\"},{\"B\":\"AA==\"}]",
         "The BETWEEN condition was provided a range where the lower bound is greater than the "
         "upper bound"},
        {"EQ", "[{\"S\":\"a\",\"B\":\"AA==\"}]",
         "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "
         "supported datatypes"},
        {"EQ", "[{\"X\":\"a\"}]",
         "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
        {"EQ", "[\"a\"]", "Unexpected value type in payload"},
        {"EQ", "[{\"N\":\"1.2.3\"}]",
         "The parameter cannot be converted to a numeric value: 1.2.3"},
        {"EQ", "[{\"N\":1}]", "NUMBER_VALUE cannot be converted to String"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char cond[300], in[400];
        snprintf(cond, sizeof(cond), "{\"a\":{\"ComparisonOperator\":\"%s\"%s%s}}", cases[i].op,
                 cases[i].avl ? ",\"AttributeValueList\":" : "", cases[i].avl ? cases[i].avl : "");
        snprintf(in, sizeof(in), "{\"Expected\":%s}", cond);
        check_error("PutItem", in, cases[i].msg);
        snprintf(in, sizeof(in), "{\"ScanFilter\":%s}", cond);
        check_error("Scan", in, cases[i].msg);
        snprintf(in, sizeof(in), "{\"QueryFilter\":%s}", cond);
        check_error("Query", in, cases[i].msg);
    }
    check_error("Scan", "{\"ScanFilter\":{\"x\":{\"AttributeValueList\":[]}}}",
                "1 validation error detected: Value null at 'scanFilter.x.member."
                "comparisonOperator' failed to satisfy constraint: Member must not be null");
    check_error("Query", "{\"QueryFilter\":{\"x\":{\"ComparisonOperator\":\"eq\"}}}",
                "1 validation error detected: Value 'eq' at 'queryFilter.x.member."
                "comparisonOperator' failed to satisfy constraint: Member must satisfy enum value "
                "set: "
                "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, "
                "BEGINS_WITH, GE, CONTAINS]");
    /* a filter condition without AttributeValueList has no arguments */
    check_error("Scan", "{\"ScanFilter\":{\"x\":{\"ComparisonOperator\":\"CONTAINS\"}}}",
                PARAM "Invalid number of argument(s) for the CONTAINS ComparisonOperator");
    /* a filter's condition has no Value member: it is ignored */
    check_error("Scan",
                "{\"ScanFilter\":{\"x\":{\"ComparisonOperator\":\"EQ\",\"Value\":"
                "{\"S\":\"a\"}}}}",
                PARAM "Invalid number of argument(s) for the EQ ComparisonOperator");
}

static void test_errors_key_conditions(void **state)
{
    (void)state;
    static const char *const bad_ops[][2] = {{"NE", "[{\"S\":\"a\"}]"},
                                             {"IN", "[{\"S\":\"a\"}]"},
                                             {"NULL", "[]"},
                                             {"NOT_NULL", "[]"},
                                             {"CONTAINS", "[{\"S\":\"a\"}]"},
                                             {"NOT_CONTAINS", "[{\"S\":\"a\"}]"}};
    for (size_t i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
        char in[300];
        snprintf(in, sizeof(in),
                 "{\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\","
                 "\"AttributeValueList\":[{\"S\":\"a\"}]},\"sk\":"
                 "{\"ComparisonOperator\":\"%s\",\"AttributeValueList\":%s}}}",
                 bad_ops[i][0], bad_ops[i][1]);
        check_error("Query", in, "Attempted conditional constraint is not an indexable operation");
    }
    check_error("Query", "{\"KeyConditions\":{}}", "Conditions can be of length 1 or 2 only");
    check_error("Query",
                "{\"KeyConditions\":{\"a\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
                "[{\"S\":\"a\"}]},\"b\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
                "[{\"S\":\"a\"}]},\"c\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":"
                "[{\"S\":\"a\"}]}}}",
                "Conditions can be of length 1 or 2 only");
    check_error("Query", "{\"KeyConditions\":{\"pk\":{\"AttributeValueList\":[{\"S\":\"a\"}]}}}",
                "1 validation error detected: Value null at 'keyConditions.pk.member."
                "comparisonOperator' failed to satisfy constraint: Member must not be null");
    check_error("Query",
                "{\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"BETWEEN\","
                "\"AttributeValueList\":[{\"N\":\"2\"},{\"N\":\"1\"}]}}}",
                "The BETWEEN condition was provided a range where the lower bound is greater "
                "than the upper bound");
    check_error("Query", "{\"KeyConditions\":\"pk\"}", "Unexpected field type");
}

static void test_errors_updates(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{\"a\":{\"Action\":\"PUT\"}}",
         PARAM "Only DELETE action is allowed when no attribute value is specified"},
        {"{\"a\":{}}", PARAM "Only DELETE action is allowed when no attribute value is specified"},
        {"{\"a\":{\"Action\":\"ADD\"}}",
         PARAM "Only DELETE action is allowed when no attribute value is specified"},
        {"{\"a\":{\"Action\":\"DELETE\",\"Value\":{\"S\":\"x\"}}}",
         PARAM "DELETE action with value is not supported for the type S"},
        {"{\"a\":{\"Action\":\"DELETE\",\"Value\":{\"L\":[]}}}",
         PARAM "DELETE action with value is not supported for the type L"},
        {"{\"a\":{\"Action\":\"DELETE\",\"Value\":{\"N\":\"1\"}}}",
         PARAM "DELETE action with value is not supported for the type N"},
        {"{\"a\":{\"Action\":\"ADD\",\"Value\":{\"S\":\"x\"}}}",
         PARAM "ADD action is not supported for the type S"},
        {"{\"a\":{\"Action\":\"ADD\",\"Value\":{\"M\":{}}}}",
         PARAM "ADD action is not supported for the type M"},
        {"{\"a\":{\"Action\":\"ADD\",\"Value\":{\"BOOL\":true}}}",
         PARAM "ADD action is not supported for the type BOOL"},
        {"{\"a\":{\"Action\":\"ADD\",\"Value\":{\"NULL\":true}}}",
         PARAM "ADD action is not supported for the type NULL"},
        {"{\"a\":{\"Action\":\"ADD\",\"Value\":{\"B\":\"AA==\"}}}",
         PARAM "ADD action is not supported for the type B"},
        {"{\"a\":{\"Action\":\"FOO\",\"Value\":{\"S\":\"x\"}}}",
         "1 validation error detected: Value 'FOO' at 'attributeUpdates.a.member.action' "
         "failed to satisfy constraint: Member must satisfy enum value set: [ADD, PUT, DELETE]"},
        {"{\"a\":{\"Action\":\"PUT\",\"Value\":{}}}",
         "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
        {"{\"a\":{\"Action\":true,\"Value\":{\"S\":\"x\"}}}",
         "TRUE_VALUE cannot be converted to String"},
        {"{\"a\":\"x\"}", "Unexpected field type"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char in[400];
        snprintf(in, sizeof(in), "{" KEY ",\"AttributeUpdates\":%s}", cases[i][0]);
        check_error("UpdateItem", in, cases[i][1]);
    }
    /* the updates are checked before Expected, and a later error leaves the request as it was */
    check_error("UpdateItem",
                "{\"AttributeUpdates\":{\"ok\":{\"Value\":{\"S\":\"x\"}},\"a\":{\"Action\":\"ADD\","
                "\"Value\":{\"S\":\"x\"}}},\"Expected\":{\"a\":{}}}",
                PARAM "ADD action is not supported for the type S");
    check_error("UpdateItem",
                "{\"AttributeUpdates\":{\"ok\":{\"Value\":{\"S\":\"x\"}}},\"Expected\":{\"a\":{}}}",
                PARAM "Value must be provided when Exists is null for Attribute: a");
}

/* ---- End to end through kura_execute ------------------------------------------------------ */

/* Runs `op` on `json`; returns the response body (free it) and sets *st_out. */
static char *exec_json(kura_db *db, const char *op, const char *json, kura_status *st_out)
{
    char *out = NULL;
    size_t len = 0;
    *st_out = kura_execute(db, op, json, strlen(json), &out, &len);
    assert_non_null(out);
    return out;
}

/* Replaces every "@" in `tmpl` with the table name. */
static char *with_table(const char *tmpl, const char *table)
{
    size_t n = strlen(tmpl), tl = strlen(table);
    char *s = malloc(n * (tl + 1) + 1), *p = s;
    assert_non_null(s);
    for (; *tmpl; tmpl++) {
        if (*tmpl == '@') {
            memcpy(p, table, tl);
            p += tl;
        } else {
            *p++ = *tmpl;
        }
    }
    *p = 0;
    return s;
}

/* Runs the legacy request on table "lgy" and its expression twin on table "exp" (twin tables
 * with the same items) and checks both give the same status and response; returns the status. */
static kura_status check_twin(kura_db *db, const char *op, const char *legacy, const char *twin)
{
    char *l = with_table(legacy, "lgy"), *x = with_table(twin, "exp");
    kura_status sl, sx;
    char *rl = exec_json(db, op, l, &sl), *rx = exec_json(db, op, x, &sx);
    /* responses that name the table (BatchGetItem) name the twin: same length, swap it */
    for (char *p = rx; (p = strstr(p, "\"exp\"")) != NULL; p += 5)
        memcpy(p + 1, "lgy", 3);
    if (sl != sx || strcmp(rl, rx))
        fail_msg("%s\nlegacy: %s\n -> %s %s\n  twin: %s\n -> %s %s", op, l, kura_status_str(sl), rl,
                 x, kura_status_str(sx), rx);
    free(l);
    free(x);
    free(rl);
    free(rx);
    return sl;
}

static void test_execute_twins(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("api_legacy");
    kura_db *db = NULL;
    assert_kura_ok(kura_open(dir, NULL, &db));
    static const char *const tables[] = {"lgy", "exp"};
    for (int i = 0; i < 2; i++) {
        char *ct = with_table(
            "{\"TableName\":\"@\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
            "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"
            "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
            "\"sk\",\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}",
            tables[i]);
        kura_status st;
        char *res = exec_json(db, "CreateTable", ct, &st);
        if (st != KURA_OK) fail_msg("CreateTable: %s", res);
        free(res);
        free(ct);
    }
#define T "\"TableName\":\"@\""
#define K1 "\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}"
#define ITEM1                                                                                      \
    "\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"s\":{\"S\":\"hello\"},\"n\":{\"N\":"    \
    "\"5\"}}"
    /* PutItem: Exists false, then the same again fails */
    assert_int_equal(
        check_twin(db, "PutItem", "{" T "," ITEM1 ",\"Expected\":{\"pk\":{\"Exists\":false}}}",
                   "{" T "," ITEM1 ",\"ConditionExpression\":\"attribute_not_exists(pk)\"}"),
        KURA_OK);
    assert_int_equal(
        check_twin(db, "PutItem", "{" T "," ITEM1 ",\"Expected\":{\"pk\":{\"Exists\":false}}}",
                   "{" T "," ITEM1 ",\"ConditionExpression\":\"attribute_not_exists(pk)\"}"),
        KURA_E_CONDITION_FAILED);
    for (int sk = 2; sk <= 4; sk++) {
        char legacy[300], twin[300];
        snprintf(legacy, sizeof(legacy),
                 "{" T ",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"%d\"},"
                 "\"n\":{\"N\":\"%d\"},\"tags\":{\"SS\":[\"x\",\"y%d\"]}}}",
                 sk, sk * 10, sk);
        snprintf(twin, sizeof(twin), "%s", legacy);
        assert_int_equal(check_twin(db, "PutItem", legacy, twin), KURA_OK);
    }
    /* NE, NOT_CONTAINS, NULL on a missing attribute, with ALL_OLD */
    assert_int_equal(
        check_twin(db, "PutItem",
                   "{" T "," ITEM1 ",\"Expected\":{\"zz\":{\"ComparisonOperator\":\"NE\","
                   "\"AttributeValueList\":[{\"S\":\"q\"}]}},\"ReturnValues\":\"ALL_OLD\"}",
                   "{" T "," ITEM1 ",\"ConditionExpression\":\"zz <> :q\","
                   "\"ExpressionAttributeValues\":{\":q\":{\"S\":\"q\"}},"
                   "\"ReturnValues\":\"ALL_OLD\"}"),
        KURA_OK);
    assert_int_equal(check_twin(db, "DeleteItem",
                                "{" T "," K1 ",\"Expected\":{\"zz\":{\"ComparisonOperator\":"
                                "\"NOT_CONTAINS\",\"AttributeValueList\":[{\"S\":\"q\"}]}}}",
                                "{" T "," K1 ",\"ConditionExpression\":\"attribute_exists(zz) AND "
                                "NOT contains(zz, :q)\",\"ExpressionAttributeValues\":{\":q\":"
                                "{\"S\":\"q\"}}}"),
                     KURA_E_CONDITION_FAILED);
    /* UpdateItem: every action, with a condition on two attributes joined by OR */
    assert_int_equal(
        check_twin(
            db, "UpdateItem",
            "{" T "," K1 ",\"AttributeUpdates\":{\"s\":{\"Action\":\"DELETE\"},\"n\":"
            "{\"Action\":\"ADD\",\"Value\":{\"N\":\"2.5\"}},\"l\":{\"Action\":\"ADD\","
            "\"Value\":{\"L\":[{\"S\":\"e\"}]}},\"ss\":{\"Action\":\"ADD\",\"Value\":"
            "{\"SS\":[\"a\",\"b\"]}},\"p\":{\"Value\":{\"BOOL\":true}}},\"Expected\":"
            "{\"n\":{\"ComparisonOperator\":\"GE\",\"AttributeValueList\":[{\"N\":\"100\"}]},"
            "\"s\":{\"ComparisonOperator\":\"BEGINS_WITH\",\"AttributeValueList\":"
            "[{\"S\":\"he\"}]}},\"ConditionalOperator\":\"OR\",\"ReturnValues\":\"ALL_NEW\"}",
            "{" T "," K1 ",\"UpdateExpression\":\"SET l = list_append(if_not_exists(l, :e), "
            ":l), p = :p REMOVE s ADD n :n, ss :ss\",\"ConditionExpression\":\"n >= :h OR "
            "begins_with(s, :he)\",\"ExpressionAttributeValues\":{\":e\":{\"L\":[]},\":l\":"
            "{\"L\":[{\"S\":\"e\"}]},\":p\":{\"BOOL\":true},\":n\":{\"N\":\"2.5\"},\":ss\":"
            "{\"SS\":[\"a\",\"b\"]},\":h\":{\"N\":\"100\"},\":he\":{\"S\":\"he\"}},"
            "\"ReturnValues\":\"ALL_NEW\"}"),
        KURA_OK);
    assert_int_equal(
        check_twin(
            db, "UpdateItem",
            "{" T "," K1 ",\"AttributeUpdates\":{\"ss\":{\"Action\":\"DELETE\",\"Value\":"
            "{\"SS\":[\"a\"]}},\"l\":{\"Action\":\"ADD\",\"Value\":{\"L\":[{\"N\":\"1\"}]}}},"
            "\"Expected\":{\"ss\":{\"ComparisonOperator\":\"CONTAINS\",\"AttributeValueList\":"
            "[{\"S\":\"b\"}]}},\"ReturnValues\":\"UPDATED_NEW\"}",
            "{" T "," K1 ",\"UpdateExpression\":\"SET l = list_append(if_not_exists(l, :e), "
            ":l) DELETE ss :ss\",\"ConditionExpression\":\"contains(ss, :b)\","
            "\"ExpressionAttributeValues\":{\":e\":{\"L\":[]},\":l\":{\"L\":[{\"N\":\"1\"}]},"
            "\":ss\":{\"SS\":[\"a\"]},\":b\":{\"S\":\"b\"}},\"ReturnValues\":\"UPDATED_NEW\"}"),
        KURA_OK);
    /* reads */
    assert_int_equal(check_twin(db, "GetItem",
                                "{" T "," K1 ",\"AttributesToGet\":[\"n\",\"l\",\"zz\"]}",
                                "{" T "," K1 ",\"ProjectionExpression\":\"n, l, zz\"}"),
                     KURA_OK);
    assert_int_equal(
        check_twin(
            db, "Query",
            "{" T ",\"KeyConditions\":{\"pk\":{\"ComparisonOperator\":\"EQ\","
            "\"AttributeValueList\":[{\"S\":\"a\"}]},\"sk\":{\"ComparisonOperator\":"
            "\"BETWEEN\",\"AttributeValueList\":[{\"N\":\"1\"},{\"N\":\"3\"}]}},\"QueryFilter\":"
            "{\"n\":{\"ComparisonOperator\":\"IN\",\"AttributeValueList\":[{\"N\":\"20\"},"
            "{\"N\":\"7.5\"}]},\"tags\":{\"ComparisonOperator\":\"NULL\"}},"
            "\"ConditionalOperator\":\"OR\",\"AttributesToGet\":[\"sk\",\"n\"],"
            "\"ScanIndexForward\":false}",
            "{" T ",\"KeyConditionExpression\":\"pk = :a AND sk BETWEEN :x AND :y\","
            "\"FilterExpression\":\"n IN (:n1, :n2) OR attribute_not_exists(tags)\","
            "\"ProjectionExpression\":\"sk, n\",\"ExpressionAttributeValues\":{\":a\":"
            "{\"S\":\"a\"},\":x\":{\"N\":\"1\"},\":y\":{\"N\":\"3\"},\":n1\":{\"N\":\"20\"},"
            "\":n2\":{\"N\":\"7.5\"}},\"ScanIndexForward\":false}"),
        KURA_OK);
    assert_int_equal(check_twin(db, "Scan",
                                "{" T ",\"ScanFilter\":{\"tags\":{\"ComparisonOperator\":"
                                "\"NOT_CONTAINS\",\"AttributeValueList\":[{\"S\":\"y3\"}]}},"
                                "\"Select\":\"COUNT\"}",
                                "{" T ",\"FilterExpression\":\"attribute_exists(tags) AND NOT "
                                "contains(tags, :v)\",\"ExpressionAttributeValues\":{\":v\":"
                                "{\"S\":\"y3\"}},\"Select\":\"COUNT\"}"),
                     KURA_OK);
    assert_int_equal(check_twin(db, "BatchGetItem",
                                "{\"RequestItems\":{\"@\":{\"Keys\":[{\"pk\":{\"S\":\"a\"},\"sk\":"
                                "{\"N\":\"2\"}}],\"AttributesToGet\":[\"tags\"]}}}",
                                "{\"RequestItems\":{\"@\":{\"Keys\":[{\"pk\":{\"S\":\"a\"},\"sk\":"
                                "{\"N\":\"2\"}}],\"ProjectionExpression\":\"tags\"}}}"),
                     KURA_OK);
    /* the twin tables hold the same items */
    check_twin(db, "Scan", "{" T "}", "{" T "}");
    /* a legacy error comes back as DynamoDB's error body */
    kura_status st;
    char *res = exec_json(db, "PutItem",
                          "{\"TableName\":\"lgy\"," ITEM1 ",\"Expected\":{\"a\":{}},"
                          "\"ConditionExpression\":\"attribute_exists(a)\"}",
                          &st);
    assert_int_equal(st, KURA_E_INVALID);
    assert_string_equal(res, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ValidationException\","
                             "\"message\":\"Can not use both expression and non-expression "
                             "parameters in the same request: Non-expression parameters: "
                             "{Expected} Expression parameters: {ConditionExpression}\"}");
    free(res);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_forms),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_attribute_updates),
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_untouched),
        cmocka_unit_test(test_errors_params),
        cmocka_unit_test(test_errors_expected),
        cmocka_unit_test(test_errors_arguments),
        cmocka_unit_test(test_errors_key_conditions),
        cmocka_unit_test(test_errors_updates),
        cmocka_unit_test(test_execute_twins),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    jd_doc_free(doc);
    return failed;
}
