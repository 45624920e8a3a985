/*
 * api_json_test.c - tests of DynamoDB JSON <-> kura_value (api/json_value.c through
 * kura_value_from_json / kura_value_to_json): round trips of every type, unicode and escapes,
 * binary, canonical numbers, and every error message an attribute value can produce, both
 * the deserializer's (wrong JSON types) and the validation's (empty, numbers, sets, NULL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Parses `in`, writes it back, and compares with `want` (NULL: the same as `in`). */
static void roundtrip(const char *in, bool item, const char *want)
{
    kura_value *v = NULL;
    kura_status s = kura_value_from_json(in, strlen(in), item, &v);
    if (s != KURA_OK) fail_msg("from_json(%s): %s: %s", in, kura_status_str(s), kura_last_error());
    char *out = NULL;
    size_t len = 0;
    assert_kura_ok(kura_value_to_json(v, item, &out, &len));
    assert_int_equal(len, strlen(out));
    assert_string_equal(out, want ? want : in);
    kura_free(out);
    kura_value_free(v);
}

/* Asserts that parsing `in` fails with exactly `msg`. */
static void rejects(const char *in, bool item, const char *msg)
{
    kura_value *v = NULL;
    kura_status s = kura_value_from_json(in, strlen(in), item, &v);
    if (s != KURA_E_INVALID)
        fail_msg("from_json(%s) returned %s, expected invalid", in, kura_status_str(s));
    assert_null(v);
    assert_string_equal(kura_last_error(), msg);
}

static void test_roundtrip_scalars(void **state)
{
    (void)state;
    roundtrip("{\"S\":\"hello\"}", false, NULL);
    roundtrip("{\"S\":\"\"}", false, NULL);
    roundtrip("{\"N\":\"12.5\"}", false, NULL);
    roundtrip("{\"N\":\"-0.001\"}", false, NULL);
    roundtrip("{\"B\":\"AAEC/w==\"}", false, NULL);
    roundtrip("{\"B\":\"\"}", false, NULL);
    roundtrip("{\"BOOL\":true}", false, NULL);
    roundtrip("{\"BOOL\":false}", false, NULL);
    roundtrip("{\"NULL\":true}", false, NULL);
}

static void test_roundtrip_numbers_canonical(void **state)
{
    (void)state;
    roundtrip("{\"N\":\"1.50\"}", false, "{\"N\":\"1.5\"}");
    roundtrip("{\"N\":\"-0\"}", false, "{\"N\":\"0\"}");
    roundtrip("{\"N\":\"1e3\"}", false, "{\"N\":\"1000\"}");
    roundtrip("{\"N\":\"+0.0100E-1\"}", false, "{\"N\":\"0.001\"}");
    roundtrip("{\"NS\":[\"1\",\"2.0\",\"-3e-2\"]}", false, "{\"NS\":[\"1\",\"2\",\"-0.03\"]}");
}

static void test_roundtrip_containers(void **state)
{
    (void)state;
    roundtrip("{\"L\":[{\"S\":\"a\"},{\"N\":\"1\"},{\"L\":[]},{\"M\":{}}]}", false, NULL);
    roundtrip("{\"M\":{\"a\":{\"SS\":[\"x\",\"y\"]},\"b\":{\"BS\":[\"AA==\",\"AQ==\"]}}}", false,
              NULL);
    /* an item: attributes come back in name order */
    roundtrip("{\"z\":{\"N\":\"1\"},\"a\":{\"S\":\"x\"},\"m\":{\"M\":{\"k\":{\"NULL\":true}}}}",
              true,
              "{\"a\":{\"S\":\"x\"},\"m\":{\"M\":{\"k\":{\"NULL\":true}}},\"z\":{\"N\":\"1\"}}");
    roundtrip("{}", true, NULL);
}

static void test_roundtrip_unicode_and_escapes(void **state)
{
    (void)state;
    roundtrip("{\"S\":\"caf\xc3\xa9 \xe3\x81\x82 \xf0\x9f\x98\x80\"}", false, NULL);
    roundtrip("{\"S\":\"\\u00e9\"}", false, "{\"S\":\"\xc3\xa9\"}");
    roundtrip("{\"S\":\"q\\\"b\\\\n\\n\\t\"}", false, NULL);
    roundtrip("{\"S\":\"nul\\u0000inside\"}", false, NULL);

    kura_value *v = NULL;
    const char *in = "{\"S\":\"a\\u0000b\"}";
    assert_kura_ok(kura_value_from_json(in, strlen(in), false, &v));
    size_t len = 0;
    const char *p = kura_value_bytes(v, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(p, "a\0b", 3);
    kura_value_free(v);
}

static void test_binary(void **state)
{
    (void)state;
    kura_value *v = NULL;
    const char *in = "{\"B\":\"AAEC/w==\"}";
    assert_kura_ok(kura_value_from_json(in, strlen(in), false, &v));
    size_t len = 0;
    const char *p = kura_value_bytes(v, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(p, "\x00\x01\x02\xff", 4);
    kura_value_free(v);

    kura_value *b = kura_value_b("\xfb\xff", 2);
    char *out = NULL;
    assert_kura_ok(kura_value_to_json(b, false, &out, &len));
    assert_string_equal(out, "{\"B\":\"+/8=\"}");
    kura_free(out);
    kura_value_free(b);
}

static void test_lenient_deserializer(void **state)
{
    (void)state;
    /* Boolean accepts true/1/yes and false/0/no in any case; unknown and null members go */
    roundtrip("{\"BOOL\":\"YES\"}", false, "{\"BOOL\":true}");
    roundtrip("{\"BOOL\":\"0\"}", false, "{\"BOOL\":false}");
    roundtrip("{\"NULL\":\"true\"}", false, "{\"NULL\":true}");
    roundtrip("{\"S\":\"a\",\"X\":1}", false, "{\"S\":\"a\"}");
    roundtrip("{\"S\":\"a\",\"N\":null}", false, "{\"S\":\"a\"}");
}

static void test_serialization_errors(void **state)
{
    (void)state;
    rejects("{\"S\":5}", false, "NUMBER_VALUE cannot be converted to String");
    rejects("{\"S\":5.5}", false, "DECIMAL_VALUE cannot be converted to String");
    rejects("{\"S\":true}", false, "TRUE_VALUE cannot be converted to String");
    rejects("{\"S\":[]}", false, "Unrecognized collection type class java.lang.String");
    rejects("{\"S\":{}}", false, "Start of structure or map found where not expected");
    rejects("{\"BOOL\":\"maybe\"}", false, "Unexpected token received from parser");
    rejects("{\"BOOL\":1}", false, "NUMBER_VALUE cannot be converted to Boolean");
    rejects("{\"NULL\":[]}", false, "Unrecognized collection type class java.lang.Boolean");
    rejects("{\"B\":1}", false, "only base-64-encoded strings are convertible to bytes");
    rejects("{\"B\":[]}", false, "Unrecognized collection type class java.nio.ByteBuffer");
    rejects("{\"B\":\"abc\"}", false,
            "Base64 encoded length is expected a multiple of 4 bytes but found: 3");
    rejects("{\"B\":\"ab=c\"}", false, "Invalid last non-pad Base64 character dectected");
    rejects("{\"B\":\"AB==\"}", false, "Invalid last non-pad Base64 character dectected");
    rejects("{\"L\":{}}", false, "Start of structure or map found where not expected");
    rejects("{\"L\":\"x\"}", false, "Unexpected field type");
    rejects("{\"L\":[\"x\"]}", false, "Unexpected value type in payload");
    rejects("{\"L\":[[]]}", false,
            "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue");
    rejects("{\"M\":[]}", false,
            "Unrecognized collection type java.util.Map<java.lang.String, "
            "com.amazonaws.dynamodb.v20120810.AttributeValue>");
    rejects("{\"M\":1}", false, "Unexpected field type");
    rejects("{\"SS\":[1]}", false, "NUMBER_VALUE cannot be converted to String");
    rejects("{\"BS\":[\"a\"]}", false,
            "Base64 encoded length is expected a multiple of 4 bytes but found: 1");
    rejects("\"x\"", false, "Unexpected value type in payload");
    rejects("{\"a\":\"x\"}", true, "Unexpected value type in payload");
    rejects("[]", true,
            "Unrecognized collection type java.util.Map<java.lang.String, "
            "com.amazonaws.dynamodb.v20120810.AttributeValue>");
}

static void test_validation_errors(void **state)
{
    (void)state;
    const char *empty = "Supplied AttributeValue is empty, must contain exactly one of the "
                        "supported datatypes";
    rejects("{}", false, empty);
    rejects("{\"X\":1}", false, empty);
    rejects("{\"a\":{}}", true, empty);
    rejects("{\"L\":[{}]}", false, empty);
    rejects("{\"S\":\"a\",\"BOOL\":true}", false,
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
            "of the supported datatypes");
    /* members are checked before the datatype count */
    rejects("{\"S\":\"a\",\"N\":\"x\"}", false,
            "The parameter cannot be converted to a numeric value: x");
    rejects("{\"N\":\"\"}", false, "The parameter cannot be converted to a numeric value");
    rejects("{\"N\":\"1e126\"}", false,
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");
    rejects("{\"N\":\"1e-131\"}", false,
            "Number underflow. Attempting to store a number with magnitude smaller than "
            "supported range");
    rejects("{\"N\":\"1.23456789012345678901234567890123456789\"}", false,
            "Attempting to store more than 38 significant digits in a Number");
    rejects("{\"NULL\":false}", false,
            "One or more parameter values were invalid: Null attribute value types must have "
            "the value of true");
    rejects("{\"SS\":[]}", false,
            "One or more parameter values were invalid: An string set  may not be empty");
    rejects("{\"NS\":[]}", false,
            "One or more parameter values were invalid: An number set  may not be empty");
    rejects("{\"BS\":[]}", false,
            "One or more parameter values were invalid: Binary sets should not be empty");
    rejects("{\"NS\":[\"1\",\"x\"]}", false,
            "The parameter cannot be converted to a numeric value: x");
    rejects("{\"SS\":[\"a\",\"b\",\"a\"]}", false,
            "One or more parameter values were invalid: Input collection [a, b, a] contains "
            "duplicates.");
    rejects("{\"NS\":[\"1\",\"1.0\"]}", false, "Input collection contains duplicates");
    rejects("{\"BS\":[\"YQ==\",\"YQ==\"]}", false,
            "One or more parameter values were invalid: Input collection [YQ==, YQ==]of type BS "
            "contains duplicates.");
    rejects("{\"M\":{\"a\":{\"M\":{\"b\":{\"NULL\":false}}}}}", false,
            "One or more parameter values were invalid: Null attribute value types must have "
            "the value of true");
    rejects("{not json", false, "invalid JSON: invalid string in json text");
}

static void test_large_set_duplicate_found(void **state)
{
    (void)state;
    /* 20,000 members with one duplicate at the ends: found by sorting, not pairwise */
    size_t n = 20000, cap = n * 16 + 64, off = 0;
    char *json = malloc(cap);
    off += (size_t)snprintf(json + off, cap - off, "{\"NS\":[");
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(json + off, cap - off, "%s\"%zu\"", i ? "," : "",
                                i == n - 1 ? (size_t)0 : i);
    snprintf(json + off, cap - off, "]}");
    rejects(json, false, "Input collection contains duplicates");
    free(json);
}

static void test_to_json_item_must_be_map(void **state)
{
    (void)state;
    kura_value *s = kura_value_s("x", 1);
    char *out = NULL;
    size_t len = 0;
    assert_kura_status(kura_value_to_json(s, true, &out, &len), KURA_E_INVALID);
    assert_null(out);
    kura_value_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_scalars),
        cmocka_unit_test(test_roundtrip_numbers_canonical),
        cmocka_unit_test(test_roundtrip_containers),
        cmocka_unit_test(test_roundtrip_unicode_and_escapes),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_lenient_deserializer),
        cmocka_unit_test(test_serialization_errors),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_large_set_duplicate_found),
        cmocka_unit_test(test_to_json_item_must_be_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
