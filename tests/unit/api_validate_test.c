/*
 * api_validate_test.c - tests of the model-driven request check (api/validate.c): the vectors
 * of tests/unit/validate_vectors.txt, which scripts/gen_model.py derives from DynamoDB's
 * service model with messages worked out by its own Python oracle (for every operation of
 * both services: a minimal and a fuller valid request, each modelled constraint broken alone,
 * every required member missing, the first constraint of every member broken at once, the
 * table-name check), run through api_check_model; then the check wired into kura_execute for
 * the operations kura implements (the message, the error type, and that the semantic
 * table-name check comes after the modelled ones).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "api/api_int.h"
#include "api/model.h"
#include "api/schema.h"

#ifndef KURA_VECTORS
#error "KURA_VECTORS: the path of tests/unit/validate_vectors.txt (tests/CMakeLists.txt)"
#endif

/* Runs one vector line "op \t request \t expected-json"; returns whether it passed (a
 * failure is printed). */
static bool run_vector(char *line, int lineno)
{
    char *op = line, *body = strchr(line, '\t');
    assert_non_null(body);
    *body++ = '\0';
    char *want_json = strchr(body, '\t');
    assert_non_null(want_json);
    *want_json++ = '\0';
    char jerr[160];
    jd_doc *doc = jd_doc_new();
    assert_non_null(doc);
    jd_t *req = jd_parse(doc, body, strlen(body), 0, jerr, sizeof jerr);
    jd_t *want = jd_parse(doc, want_json, strlen(want_json), JD_DECODE_ANY, jerr, sizeof jerr);
    if (!req || !jd_is_string(want)) fail_msg("line %d: bad vector: %s", lineno, jerr);
    kura_status s = api_check_model(op, req);
    const char *got = s == KURA_OK ? "" : api_err_msg();
    bool pass = (s == KURA_OK || s == KURA_E_INVALID) && strcmp(got, jd_string_value(want)) == 0;
    if (!pass)
        print_message("line %d: %s %s\n  got      %s\n  expected %s\n", lineno, op, body, got,
                      jd_string_value(want));
    jd_doc_free(doc);
    return pass;
}

static void test_vectors(void **state)
{
    (void)state;
    FILE *f = fopen(KURA_VECTORS, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, failed = 0, count = 0, invalid = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[0] == '#') continue;
        if (line[n - 1] == '\n') line[n - 1] = '\0';
        invalid += strstr(line, "\t\"\"") == NULL;
        count++;
        if (!run_vector(line, lineno) && ++failed > 20) break;
    }
    free(line);
    fclose(f);
    print_message("validate_vectors: %d vectors (%d expecting a ValidationException), %d failed\n",
                  count, invalid, failed);
    assert_int_equal(failed, 0);
    assert_true(count > 1000 && invalid > 800); /* the file is all there */
}

/* ---- Mutated vectors ----------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull; /* fixed seed */

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* A value of a random JSON type (what a client might send anywhere). */
static jd_t *random_value(jd_doc *d)
{
    static const char *const strs[] = {"", "a", "ab", "a!", "arn:x", "NONE", "\xc3\xa9\xc3\xa9"};
    switch (rnd(7)) {
    case 0:
        return jd_null(d);
    case 1:
        return jd_integer(d, (jd_int_t)rnd(3) - 1);
    case 2:
        return jd_array(d);
    case 3:
        return jd_object(d);
    case 4:
        return jd_true(d);
    default:
        return jd_string(d, strs[rnd(7)]);
    }
}

/* Replaces about one node in `rate` of v's tree by a random value, in place. */
static void mutate(jd_t *v, uint32_t rate, int depth)
{
    if (depth > 40) return;
    if (jd_is_array(v)) {
        for (size_t i = 0; i < jd_array_size(v); i++) {
            if (!rnd(rate)) assert_int_equal(jd_array_set(v, i, random_value(jd_doc_of(v))), 0);
            mutate(jd_array_get(v, i), rate, depth + 1);
        }
        if (!rnd(rate)) assert_int_equal(jd_array_append(v, random_value(jd_doc_of(v))), 0);
    } else if (jd_is_object(v)) {
        const char *key;
        size_t key_len;
        jd_t *val;
        jd_object_keylen_foreach(v, key, key_len, val)
        {
            if (!rnd(rate)) {
                jd_t *r = random_value(jd_doc_of(v));
                assert_int_equal(jd_object_setn(v, key, key_len, r), 0);
                val = r;
            }
            mutate(val, rate, depth + 1);
        }
        if (!rnd(rate)) assert_int_equal(jd_object_set(v, "", random_value(jd_doc_of(v))), 0);
    }
}

/* Every vector mutated 8 times (any member may become any JSON type): the check answers
 * KURA_OK or a validation message, never anything else (and, under ASan, touches nothing it
 * should not). */
static void test_mutated_vectors(void **state)
{
    (void)state;
    FILE *f = fopen(KURA_VECTORS, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int count = 0, refused = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#') continue;
        char *body = strchr(line, '\t'), *end = body ? strchr(body + 1, '\t') : NULL;
        assert_non_null(end);
        *body++ = '\0';
        for (int k = 0; k < 8; k++) {
            jd_doc *doc = jd_doc_new();
            jd_t *req = jd_parse(doc, body, (size_t)(end - body), 0, NULL, 0);
            assert_non_null(req);
            mutate(req, 4, 0);
            kura_status s = api_check_model(line, req);
            if (s != KURA_OK) {
                assert_int_equal(s, KURA_E_INVALID);
                assert_non_null(strstr(api_err_msg(), " detected: Value "));
                refused++;
            }
            count++;
            jd_doc_free(doc);
        }
    }
    free(line);
    fclose(f);
    print_message("mutated vectors: %d, %d refused\n", count, refused);
    assert_true(refused > count / 4);
}

static void test_tables(void **state)
{
    (void)state;
    /* every operation of the model can be found, and the table is sorted */
    for (unsigned i = 0; i < model_op_count; i++) {
        assert_ptr_equal(model_find_op(model_ops[i].name), &model_ops[i]);
        if (i) assert_true(strcmp(model_ops[i - 1].name, model_ops[i].name) < 0);
        assert_true(model_ops[i].input < model_shape_count);
    }
    assert_null(model_find_op("NoSuchOperation"));
    assert_non_null(model_find_op("ExecuteStatement"));
    assert_non_null(model_find_op("GetRecords")); /* DynamoDB Streams' */
    /* an operation the model does not have is not checked here */
    jd_doc *doc = jd_doc_new();
    jd_t *req = jd_parse(doc, "{}", 2, 0, NULL, 0);
    assert_int_equal(api_check_model("NoSuchOperation", req), KURA_OK);
    jd_doc_free(doc);
}

/* ---- Through kura_execute ------------------------------------------------------------------ */

static kura_db *db;
static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_validate");
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

/* Asserts kura_execute's error type and message for op(body). */
static void expect(const char *op, const char *body, const char *type, const char *msg)
{
    char *out = NULL, *want = NULL;
    size_t len;
    kura_execute(db, op, body, strlen(body), &out, &len);
    assert_non_null(out);
    assert_true(asprintf(&want,
                         "{\"__type\":\"com.amazonaws.dynamodb.v20120810#%s\","
                         "\"message\":\"%s\"}",
                         type, msg ? msg : "") > 0);
    /* msg NULL: only the type is asserted (the message is another test's) */
    if (msg ? strcmp(out, want) != 0 : strncmp(out, want, strcspn(want, ",")) != 0)
        fail_msg("%s %s\n  got      %s\n  expected %s", op, body, out, want);
    free(want);
    kura_free(out);
}

#define V "ValidationException"
#define C " failed to satisfy constraint: "

static void test_execute(void **state)
{
    (void)state;
    expect("GetItem", "{\"TableName\":\"ab\",\"Key\":{}}", V,
           "1 validation error detected: Value 'ab' at 'tableName'" C
           "Member must have length greater than or equal to 3");
    expect("DescribeTable", "{\"TableName\":\"a!\"}", V,
           "2 validation errors detected: Value 'a!' at 'tableName'" C
           "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value 'a!' at "
           "'tableName'" C "Member must have length greater than or equal to 3");
    /* the modelled checks first: the name check is not reported with them */
    expect("Query", "{\"TableName\":\"ab\",\"Limit\":0}", V,
           "1 validation error detected: Value '0' at 'limit'" C
           "Member must have value greater than or equal to 1");
    expect("DeleteTable", "{}", V,
           "1 validation error detected: Value null at 'tableName'" C "Member must not be null");
    /* the model requires only TableName of CreateTable (a table may come from a global table
     * source); what it does require inside a key schema element it checks */
    expect("CreateTable", "{\"TableName\":\"Tbl\",\"KeySchema\":[{\"AttributeName\":\"a\"}]}", V,
           "1 validation error detected: Value null at 'keySchema.1.member.keyType'" C
           "Member must not be null");
    /* a map value's constraints name the map; its keys' too */
    expect("BatchWriteItem", "{\"RequestItems\":{\"Tbl\":[]}}", V,
           "1 validation error detected: Value '{Tbl=[]}' at 'requestItems'" C
           "Map value must satisfy constraint: [Member must have length less than or equal to "
           "25, Member must have length greater than or equal to 1]");
    expect("BatchGetItem", "{\"RequestItems\":{\"ab\":{\"Keys\":[{}]}}}", V,
           "1 validation error detected: Value '{ab=com.amazonaws.dynamodb.v20120810."
           "KeysAndAttributes@09626603}' at 'requestItems'" C
           "Map keys must satisfy constraint: [Member must have length less than or equal to "
           "255, Member must have length greater than or equal to 3, Member must satisfy "
           "regular expression pattern: [a-zA-Z0-9_.-]+]");
    /* members of the model that kura's operation does not read are checked all the same */
    expect("CreateTable",
           "{\"TableName\":\"abc\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
           "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
           "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\",\"TableClass\":\"BAD\","
           "\"SSESpecification\":{\"SSEType\":\"X\"},\"NotInTheModel\":{\"SSEType\":\"X\"}}",
           V,
           "2 validation errors detected: Value 'X' at 'sSESpecification.sSEType'" C
           "Member must satisfy enum value set: [AES256, KMS]; Value 'BAD' at 'tableClass'" C
           "Member must satisfy enum value set: [STANDARD_INFREQUENT_ACCESS, STANDARD]");
    /* ten violations, in model order */
    expect("Scan",
           "{\"TableName\":\"\",\"Limit\":0,\"Segment\":-1,\"TotalSegments\":0,"
           "\"Select\":\"x\",\"ReturnConsumedCapacity\":\"x\",\"ConditionalOperator\":\"x\","
           "\"IndexName\":\"\",\"AttributesToGet\":[]}",
           V,
           "10 validation errors detected: Value '' at 'tableName'" C
           "Member must have length greater than or equal to 1; Value '' at 'indexName'" C
           "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value '' at "
           "'indexName'" C "Member must have length greater than or equal to 3; Value '[]' at "
           "'attributesToGet'" C "Member must have length greater than or equal to 1; Value '0' "
           "at 'limit'" C "Member must have value greater than or equal to 1; Value 'x' at "
           "'select'" C
           "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
           "ALL_PROJECTED_ATTRIBUTES]; Value 'x' at "
           "'conditionalOperator'" C "Member must satisfy enum value set: [OR, AND]; Value 'x' "
           "at 'returnConsumedCapacity'" C "Member must satisfy enum value set: [INDEXES, TOTAL, "
           "NONE]; Value '0' at 'totalSegments'" C "Member must have value greater than or equal "
           "to 1; Value '-1' at 'segment'" C "Member must have value greater than or equal to 0");
}

/* Every vector a request passes the model's checks with, through kura_execute: whatever the
 * model leaves optional, the operations answer (the model's required members are fewer than
 * kura's old hand-written ones: CreateTable needs only TableName). Printed for the log. */
static void test_execute_valid_vectors(void **state)
{
    (void)state;
    FILE *f = fopen(KURA_VECTORS, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int count = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#' || !strstr(line, "\t\"\"\n")) continue;
        line[n - 4] = '\0'; /* the tab and "" */
        char *body = strchr(line, '\t'), *out = NULL;
        *body++ = '\0';
        size_t len;
        kura_execute(db, line, body, strlen(body), &out, &len);
        assert_non_null(out);
        const char *type = kura_execute_error_type();
        if (!type || strcmp(type, "UnknownOperationException") != 0) {
            print_message("%s %s -> %s\n", line, body, out);
            count++;
        }
        kura_free(out);
    }
    free(line);
    fclose(f);
    assert_true(count > 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_mutated_vectors),
        cmocka_unit_test(test_tables),
        cmocka_unit_test_setup_teardown(test_execute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execute_valid_vectors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
