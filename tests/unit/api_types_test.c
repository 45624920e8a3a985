/*
 * api_types_test.c - tests of pass 1, the request type check (api_check_types,
 * api/schema_types.c), which walks the generated model (api/model.h): for every operation of
 * the model and every member of its input, a value of each JSON type (and, one level down, a
 * list element, map value or structure member of each JSON type) must be accepted exactly when
 * its JSON type is the member's, and be refused with one of the deserializer's
 * SerializationException messages otherwise; then known requests with their exact messages,
 * the order members are checked in, kura's extension member and the normalisation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "api/api_int.h"
#include "api/model.h"
#include "api/schema.h"

#define PARAM_TYPE_MSG                                                                             \
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "        \
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "     \
    "java.lang.Class are in module java.base of loader 'bootstrap')"

/* A value of each JSON type: for no shape are two of them both right. */
static const char *const wrong_values[] = {"\"x\"", "1.5", "7", "true", "[]", "{}"};
#define N_VALUES (sizeof wrong_values / sizeof wrong_values[0])

/* The beginnings of every message pass 1 gives. */
static bool known_message(const char *m)
{
    static const char *const starts[] = {
        "STRING_VALUE cannot be converted to ",
        "NUMBER_VALUE cannot be converted to ",
        "DECIMAL_VALUE cannot be converted to ",
        "TRUE_VALUE cannot be converted to ",
        "FALSE_VALUE cannot be converted to ",
        "Unrecognized collection type ",
        "Start of structure or map found where not expected",
        "Unexpected field type",
        "Unexpected value type in payload",
        "Unexpected token received from parser",
        "only base-64-encoded strings are convertible to bytes",
        "Base64 encoded length is expected a multiple of 4 bytes but found: ",
        "Invalid last non-pad Base64 character dectected",
        PARAM_TYPE_MSG};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (strncmp(m, starts[i], strlen(starts[i])) == 0) return true;
    return false;
}

/* Whether JSON value `text` (one of wrong_values) has the JSON type of shape `sid`. */
static bool fits(const char *text, unsigned sid)
{
    switch (model_shapes[sid].type) {
    case MT_STRING:
        return text[0] == '"';
    case MT_BOOLEAN:
        return strcmp(text, "true") == 0;
    case MT_INTEGER:
    case MT_LONG:
    case MT_DOUBLE:
    case MT_TIMESTAMP:
        return text[0] == '1' || text[0] == '7';
    case MT_BLOB:
        return false; /* "x" is not base64 */
    case MT_LIST:
        return text[0] == '[';
    default:
        return text[0] == '{';
    }
}

/* Runs pass 1 of `op` on `body`; returns the status, the message in *msg_out (static). */
static kura_status check(const char *op, const char *body, const char **msg_out)
{
    static char msg[1024];
    char jerr[160];
    jd_doc *doc = jd_doc_new();
    assert_non_null(doc);
    jd_t *req = jd_parse(doc, body, strlen(body), 0, jerr, sizeof jerr);
    if (!req) fail_msg("bad test body %s: %s", body, jerr);
    kura_status s = api_check_types(req, op);
    snprintf(msg, sizeof msg, "%s", s == KURA_OK ? "" : api_err_msg());
    jd_doc_free(doc);
    *msg_out = msg;
    return s;
}

/* The value one level inside a member of shape `sid` holding `inner`: a list's element, a
 * map's value, a structure's first member; NULL for a scalar shape. *inner_sid_out: its shape. */
static char *wrap(unsigned sid, const char *inner, unsigned *inner_sid_out)
{
    const model_shape *sh = &model_shapes[sid];
    char *out = NULL;
    if (sh->type == MT_LIST) {
        *inner_sid_out = sh->a;
        return asprintf(&out, "[%s]", inner) < 0 ? NULL : out;
    }
    if (sh->type == MT_MAP) {
        *inner_sid_out = sh->b;
        return asprintf(&out, "{\"k\":%s}", inner) < 0 ? NULL : out;
    }
    if (sh->type == MT_STRUCT && sh->f > 0) {
        const model_member *m = &model_members[model_typed[sh->e]];
        *inner_sid_out = m->shape;
        return asprintf(&out, "{\"%s\":%s}", m->name, inner) < 0 ? NULL : out;
    }
    return NULL;
}

/* One member given one value: refused with a known message exactly when it does not fit
 * (`must_fit`: whether it does; -1 when that is not known, inside an attribute value). */
static void expect_verdict(const char *op, const char *member, const char *value, int must_fit)
{
    char body[1024];
    const char *msg;
    snprintf(body, sizeof body, "{\"%s\":%s}", member, value);
    kura_status s = check(op, body, &msg);
    if (s != KURA_OK && (s != KURA_E_INVALID || !known_message(msg)))
        fail_msg("%s %s: status %d, message \"%s\"", op, body, (int)s, msg);
    if (must_fit >= 0 && (s == KURA_OK) != (must_fit == 1))
        fail_msg("%s %s: %s (\"%s\")", op, body, s == KURA_OK ? "accepted" : "refused", msg);
}

static void test_every_member_every_type(void **state)
{
    (void)state;
    unsigned checked = 0;
    for (unsigned o = 0; o < model_op_count; o++) {
        const model_shape *in = &model_shapes[model_ops[o].input];
        for (unsigned i = 0; i < in->f; i++) {
            const model_member *m = &model_members[model_typed[in->e + i]];
            bool in_attr = strcmp(model_shapes[m->shape].name, "AttributeValue") == 0;
            for (size_t v = 0; v < N_VALUES; v++) {
                expect_verdict(model_ops[o].name, m->name, wrong_values[v],
                               fits(wrong_values[v], m->shape));
                checked++;
                unsigned inner_sid = 0;
                char *outer = wrap(m->shape, wrong_values[v], &inner_sid);
                if (!outer) continue;
                bool attr = in_attr || strcmp(model_shapes[inner_sid].name, "AttributeValue") == 0;
                /* a structure's first member: pass 1 checks it like any (an attribute value's
                 * members follow its own table, so only "no crash, a known message") */
                expect_verdict(model_ops[o].name, m->name, outer,
                               attr ? -1 : fits(wrong_values[v], inner_sid));
                free(outer);
                checked++;
            }
        }
    }
    print_message("api_types: %u operations, %u requests\n", model_op_count, checked);
    assert_true(model_op_count > 50 && checked > 1800);
}

/* Known requests and DynamoDB's messages for them. */
static void test_known_messages(void **state)
{
    (void)state;
    static const struct {
        const char *op, *body, *msg;
    } cases[] = {
        {"ListTables", "{\"Limit\":\"a\"}", "STRING_VALUE cannot be converted to Integer"},
        {"Query", "{\"Limit\":true}", "TRUE_VALUE cannot be converted to Integer"},
        {"CreateTable", "{\"ProvisionedThroughput\":{\"ReadCapacityUnits\":[]}}",
         "Unrecognized collection type class java.lang.Long"},
        {"CreateTable", "{\"ProvisionedThroughput\":\"x\"}", "Unexpected field type"},
        {"CreateTable", "{\"ProvisionedThroughput\":[]}",
         "Unrecognized collection type class "
         "com.amazonaws.dynamodb.v20120810.ProvisionedThroughput"},
        {"CreateTable", "{\"KeySchema\":[\"x\"]}", "Unexpected value type in payload"},
        {"CreateTable", "{\"KeySchema\":{}}", "Start of structure or map found where not expected"},
        {"GetItem", "{\"ConsistentRead\":\"maybe\"}", "Unexpected token received from parser"},
        {"GetItem", "{\"Key\":[]}",
         "Unrecognized collection type java.util.Map<java.lang.String, "
         "com.amazonaws.dynamodb.v20120810.AttributeValue>"},
        {"GetItem", "{\"ExpressionAttributeNames\":[]}",
         "Unrecognized collection type java.util.Map<java.lang.String, java.lang.String>"},
        {"PutItem", "{\"Expected\":[]}",
         "Unrecognized collection type java.util.Map<java.lang.String, "
         "com.amazonaws.dynamodb.v20120810.ExpectedAttributeValue>"},
        {"PutItem", "{\"Item\":{\"a\":{\"B\":\"abc\"}}}",
         "Base64 encoded length is expected a multiple of 4 bytes but found: 3"},
        {"BatchWriteItem", "{\"RequestItems\":[]}",
         "Unrecognized collection type java.util.Map<java.lang.String, "
         "java.util.List<com.amazonaws.dynamodb.v20120810.WriteRequest>>"},
        {"BatchWriteItem", "{\"RequestItems\":{\"T\":\"x\"}}", PARAM_TYPE_MSG},
        {"BatchWriteItem", "{\"RequestItems\":{\"T\":[\"x\"]}}",
         "Unexpected value type in payload"},
        {"BatchGetItem", "{\"RequestItems\":{\"T\":{\"Keys\":[\"x\"]}}}", PARAM_TYPE_MSG},
        {"BatchGetItem", "{\"RequestItems\":{\"T\":{\"Keys\":[[]]}}}",
         "Unrecognized collection type java.util.Map<java.lang.String, "
         "com.amazonaws.dynamodb.v20120810.AttributeValue>"},
        /* DynamoDB's order, not the model's: ReturnConsumedCapacity before Item */
        {"PutItem", "{\"Item\":\"x\",\"ReturnConsumedCapacity\":1}",
         "NUMBER_VALUE cannot be converted to String"},
        /* ... WriteCapacityUnits before ReadCapacityUnits */
        {"CreateTable",
         "{\"ProvisionedThroughput\":{\"ReadCapacityUnits\":true,\"WriteCapacityUnits\":[]}}",
         "Unrecognized collection type class java.lang.Long"},
        /* kura's extension member */
        {"CreateTable", "{\"KuraPartitions\":\"4\"}",
         "STRING_VALUE cannot be converted to Integer"},
        /* a member of the model kura does not read is typed too */
        {"UpdateTable", "{\"ReplicaUpdates\":\"x\"}", "Unexpected field type"},
        {"DescribeStream", "{\"ShardFilter\":{\"Type\":1.5}}",
         "DECIMAL_VALUE cannot be converted to String"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg;
        kura_status s = check(cases[i].op, cases[i].body, &msg);
        if (s != KURA_E_INVALID || strcmp(msg, cases[i].msg) != 0)
            fail_msg("%s %s: status %d, \"%s\", expected \"%s\"", cases[i].op, cases[i].body,
                     (int)s, msg, cases[i].msg);
    }
    const char *msg;
    assert_int_equal(check("NoSuchOperation", "{}", &msg), KURA_E_NOT_SUPPORTED);
}

/* The request as pass 1 leaves it: unknown and null members gone, Booleans and Integers
 * normalised (also below lists and maps), kura's extension kept. */
static void test_normalisation(void **state)
{
    (void)state;
    static const struct {
        const char *op, *body, *want;
    } cases[] = {
        {"GetItem", "{\"ConsistentRead\":\"YES\",\"Unknown\":1,\"TableName\":null,\"\":2}",
         "{\"ConsistentRead\":true}"},
        {"Query", "{\"Limit\":2.7,\"ScanIndexForward\":\"0\"}",
         "{\"Limit\":2,\"ScanIndexForward\":false}"},
        {"CreateTable",
         "{\"KuraPartitions\":3.9,\"GlobalSecondaryIndexes\":[{\"ProvisionedThroughput\":"
         "{\"ReadCapacityUnits\":-1.5,\"X\":1}}]}",
         "{\"KuraPartitions\":3,\"GlobalSecondaryIndexes\":[{\"ProvisionedThroughput\":"
         "{\"ReadCapacityUnits\":-2}}]}"},
        {"BatchWriteItem",
         "{\"RequestItems\":{\"T\":[{\"PutRequest\":{\"Item\":{\"a\":{\"BOOL\":\"true\"}},"
         "\"Z\":null}}]}}",
         "{\"RequestItems\":{\"T\":[{\"PutRequest\":{\"Item\":{\"a\":{\"BOOL\":true}}}}]}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char jerr[160];
        jd_doc *doc = jd_doc_new();
        assert_non_null(doc);
        jd_t *req = jd_parse(doc, cases[i].body, strlen(cases[i].body), 0, jerr, sizeof jerr);
        assert_non_null(req);
        assert_int_equal(api_check_types(req, cases[i].op), KURA_OK);
        kbuf b = KBUF_INIT;
        assert_int_equal(jw_json(&b, req), KURA_OK);
        assert_true(kbuf_put_u8(&b, '\0'));
        if (strcmp((const char *)b.data, cases[i].want) != 0)
            fail_msg("%s %s: got %s, expected %s", cases[i].op, cases[i].body, (const char *)b.data,
                     cases[i].want);
        kbuf_free(&b);
        jd_doc_free(doc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_member_every_type),
        cmocka_unit_test(test_known_messages),
        cmocka_unit_test(test_normalisation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
