/*
 * api_json_write_test.c - tests of the response writer (api/json_write.c) against jansson's
 * json_dumps(JSON_COMPACT | JSON_REAL_PRECISION(15)), which it must match byte for byte:
 * random strings (control characters, quotes, backslashes, '/', DEL, UTF-8 of every length,
 * and byte sequences that are not UTF-8, which both must refuse), integers, reals of every
 * magnitude, and random attribute value trees compared with a reference encoder that builds
 * the json_t tree the API used to build. Also the lenient message writer (U+FFFD).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "api/api_int.h"
#include "testutil.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))

/* Asserts that kbuf b holds exactly the json_dumps text of j (j's reference is taken). */
static void assert_same(kbuf *b, json_t *j, const char *what)
{
    assert_non_null(j);
    char *want = json_dumps(j, DUMP_FLAGS);
    assert_non_null(want);
    if (b->len != strlen(want) || memcmp(b->data, want, b->len) != 0)
        fail_msg("%s: writer %.*s, jansson %s", what, (int)b->len, (const char *)b->data, want);
    free(want);
    json_decref(j);
    kbuf_clear(b);
}

/* ---- Strings -------------------------------------------------------------------------------- */

static size_t random_text(uint64_t *rng, char *buf, size_t cap)
{
    static const char *const pieces[] = {
        /* ASCII: plain, escaped by name, escaped as \u00XX, written as it is */
        "a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\0",
        "\x7f", "a plain run of ASCII text", "0123456789abcdef~", /* words for the 8-byte scan */
        /* UTF-8 of 2, 3 and 4 bytes, at the edges of each length and of the surrogates */
        "\xc3\xa9", "\xc2\x80", "\xdf\xbf", "\xe3\x81\x82", "\xef\xbf\xbf", "\xed\x9f\xbf",
        "\xee\x80\x80", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
        /* not UTF-8: stray continuation, overlong, surrogate, above U+10FFFF, cut short */
        "\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80", "\xff", "\xc3", "\xe3\x81", "\xf0\x9f\x98"};
    size_t npieces = sizeof pieces / sizeof pieces[0];
    size_t len = 0, n = test_rand(rng) % 12;
    bool invalid = test_rand(rng) % 4 == 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = test_rand(rng) % (invalid ? npieces : npieces - 11);
        const char *p = pieces[k];
        size_t plen = p[0] ? strlen(p) : 1; /* "\0" is one NUL byte */
        if (len + plen > cap) break;
        memcpy(buf + len, p, plen);
        len += plen;
    }
    return len;
}

static void test_strings_match_jansson(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    kbuf b = KBUF_INIT;
    char text[256];
    for (int i = 0; i < 20000; i++) {
        size_t n = random_text(&rng, text, sizeof text);
        json_t *j = json_stringn(text, n); /* NULL: jansson finds it is not UTF-8 */
        kura_status s = jw_string(&b, text, n);
        if (j) {
            assert_kura_ok(s);
            assert_same(&b, j, "string");
        } else {
            assert_int_equal(s, KURA_E_INVALID);
            kbuf_clear(&b);
        }
    }
    /* the escapes, spelled out */
    assert_kura_ok(jw_string(&b, "\"\\/\b\f\n\r\t\x01\x1f\x7f", 11));
    assert_int_equal(b.len, 30);
    assert_memory_equal(b.data, "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001F\x7f\"", 30);
    kbuf_free(&b);
}

static void test_message_replaces_invalid_bytes(void **state)
{
    (void)state;
    kbuf b = KBUF_INIT;
    assert_kura_ok(jw_message(&b, "caf\xc3\xa9 \xff\xe3\x81 \"x\""));
    const char want[] = "\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \\\"x\\\"\"";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, b.len);
    kbuf_free(&b);
}

/* ---- Numbers -------------------------------------------------------------------------------- */

static void test_integers_match_jansson(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    kbuf b = KBUF_INIT;
    const int64_t fixed[] = {0, 1, -1, 9, 10, -10, INT64_MAX, INT64_MIN, 1000000007};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        assert_kura_ok(jw_int(&b, fixed[i]));
        assert_same(&b, json_integer(fixed[i]), "integer");
    }
    for (int i = 0; i < 10000; i++) {
        int64_t v = (int64_t)test_rand(&rng) >> (test_rand(&rng) % 64);
        assert_kura_ok(jw_int(&b, v));
        assert_same(&b, json_integer(v), "integer");
    }
    kbuf_free(&b);
}

static void test_reals_match_jansson(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    kbuf b = KBUF_INIT;
    const double fixed[] = {0.0,
                            -0.0,
                            0.5,
                            1.0,
                            2.0,
                            1e15,
                            1e16,
                            1e17,
                            1e21,
                            1e100,
                            1e-5,
                            1e-4,
                            1e-300,
                            -1e-7,
                            123.25,
                            1.0 / 3,
                            5e-324,
                            1.7976931348623157e308,
                            4503599627370496.0,
                            0.1 + 0.2};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        assert_kura_ok(jw_real(&b, fixed[i]));
        assert_same(&b, json_real(fixed[i]), "real");
    }
    for (int i = 0; i < 20000; i++) {
        uint64_t r = test_rand(&rng);
        double d;
        if (i % 3 == 0) {
            memcpy(&d, &r, sizeof d); /* any bit pattern */
            if (!isfinite(d)) continue;
        } else if (i % 3 == 1) {
            d = (double)(int64_t)(r % 2000001) / 2.0 - 500000; /* capacity units */
        } else {
            d = (double)(r >> 11) * 0x1p-53 * pow(10, (double)(int)(r % 61) - 30);
        }
        assert_kura_ok(jw_real(&b, d));
        assert_same(&b, json_real(d), "real");
    }
    assert_int_equal(jw_real(&b, NAN), KURA_E_INVALID);
    assert_int_equal(jw_real(&b, INFINITY), KURA_E_INVALID);
    kbuf_free(&b);
}

/* ---- Attribute values ------------------------------------------------------------------------ */

/* The reference: the json_t tree of a value, as api/ built it before the writer. */
static json_t *ref_encode(const kura_value *v);

static json_t *ref_scalar(const kura_value *v)
{
    size_t len;
    const char *p = kura_value_bytes(v, &len);
    char num[200];
    switch (kura_value_type(v)) {
    case KURA_S:
        return json_stringn(p, len);
    case KURA_N:
        return json_stringn(num, kura_value_num(v, num, sizeof num));
    default: {
        size_t cap = 4 * ((len + 2) / 3) + 1;
        char *text = malloc(cap);
        int n = EVP_EncodeBlock((unsigned char *)text, (const unsigned char *)p, (int)len);
        json_t *j = json_stringn(text, (size_t)n);
        free(text);
        return j;
    }
    }
}

static json_t *ref_item(const kura_value *m)
{
    json_t *obj = json_object();
    for (size_t i = 0; i < kura_value_count(m); i++) {
        const char *name;
        size_t name_len;
        const kura_value *a = kura_value_at(m, i, &name, &name_len);
        json_object_setn_new(obj, name, name_len, ref_encode(a));
    }
    return obj;
}

static json_t *ref_encode(const kura_value *v)
{
    kura_type t = kura_value_type(v);
    json_t *inner;
    if (t == KURA_S || t == KURA_N || t == KURA_B) {
        inner = ref_scalar(v);
    } else if (t == KURA_BOOL) {
        inner = json_boolean(kura_value_boolean(v));
    } else if (t == KURA_NULL) {
        inner = json_true();
    } else if (t == KURA_M) {
        inner = ref_item(v);
    } else {
        inner = json_array();
        for (size_t i = 0; i < kura_value_count(v); i++) {
            const kura_value *e = kura_value_at(v, i, NULL, NULL);
            json_array_append_new(inner, t == KURA_L ? ref_encode(e) : ref_scalar(e));
        }
    }
    json_t *obj = json_object();
    json_object_set_new(obj, val_type_name(t), inner);
    return obj;
}

static const char *const nums[] = {"0",     "1.5",       "-12",
                                   "1e100", "-0.000001", "12345678901234567890123456789012345678"};
#define NNUMS (sizeof nums / sizeof nums[0])

/* random_text() when that is UTF-8, else the empty text. */
static size_t utf8_text(uint64_t *rng, char *buf, size_t cap)
{
    size_t n = random_text(rng, buf, cap);
    json_t *probe = json_stringn(buf, n);
    json_decref(probe);
    return probe ? n : 0;
}

/* A random valid value: strings of any UTF-8 text, numbers, binaries, nested containers. */
static kura_value *random_value(uint64_t *rng, int depth)
{
    char text[256];
    size_t n = utf8_text(rng, text, 64);
    const char *num = nums[test_rand(rng) % NNUMS];
    int kind = (int)(test_rand(rng) % (depth < 3 ? 10 : 6));
    switch (kind) {
    case 0:
        return kura_value_s(text, n);
    case 1:
        return kura_value_n(num, strlen(num));
    case 2:
        return kura_value_b(text, n);
    case 3:
        return kura_value_bool(test_rand(rng) % 2);
    case 4:
        return kura_value_null();
    case 5: {
        kura_value *set = kura_value_set(KURA_SS + (kura_type)(test_rand(rng) % 3));
        for (int i = 0; i < 3; i++) {
            kura_type et = kura_value_type(set) == KURA_SS   ? KURA_S
                           : kura_value_type(set) == KURA_NS ? KURA_N
                                                             : KURA_B;
            size_t k = utf8_text(rng, text, 64);
            kura_value *e = et == KURA_S   ? kura_value_s(text, k)
                            : et == KURA_N ? kura_value_n(nums[i], strlen(nums[i]))
                                           : kura_value_b(text, k);
            assert_kura_ok(kura_value_append(set, e));
        }
        return set;
    }
    case 6:
    case 7: {
        kura_value *m = kura_value_map();
        int count = (int)(test_rand(rng) % 5);
        for (int i = 0; i < count; i++) {
            char name[16];
            int len = snprintf(name, sizeof name, "a\"%d\\\n", (int)(test_rand(rng) % 100));
            assert_kura_ok(kura_value_map_put(m, name, (size_t)len, random_value(rng, depth + 1)));
        }
        return m;
    }
    default: {
        kura_value *l = kura_value_list();
        int count = (int)(test_rand(rng) % 5);
        for (int i = 0; i < count; i++)
            assert_kura_ok(kura_value_append(l, random_value(rng, depth + 1)));
        return l;
    }
    }
}

static void test_values_match_reference(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    kbuf b = KBUF_INIT;
    for (int i = 0; i < 3000; i++) {
        kura_value *v = random_value(&rng, 0);
        assert_non_null(v);
        assert_kura_ok(jw_value(&b, v));
        assert_same(&b, ref_encode(v), "value");
        if (kura_value_type(v) == KURA_M) {
            assert_kura_ok(jw_item(&b, v));
            assert_same(&b, ref_item(v), "item");
        }
        kura_value_free(v);
    }
    kbuf_free(&b);
}

/* An item printed from its stored encoding is the text printed from the decoded item. */
static void test_encoded_items_match_values(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    kbuf enc = KBUF_INIT, want = KBUF_INIT, got = KBUF_INIT;
    int checked = 0;
    for (int i = 0; i < 3000; i++) {
        kura_value *v = random_value(&rng, 0);
        assert_non_null(v);
        if (kura_value_type(v) != KURA_M) { /* every type as an attribute, too */
            kura_value *m = kura_value_map();
            assert_kura_ok(kura_value_map_put(m, "v", 1, v));
            v = m;
        }
        kbuf_clear(&enc);
        assert_kura_ok(val_encode(v, &enc));
        kura_value back = {0};
        kura_status dec = val_decode(enc.data, enc.len, &back);
        val_clear(&back);
        /* a random set may hold two equal members, which the decoder refuses: so must the
         * check the encoded path relies on */
        assert_int_equal(val_check_encoded(enc.data, enc.len), dec);
        if (dec == KURA_OK) {
            kbuf_clear(&want);
            kbuf_clear(&got);
            assert_kura_ok(jw_item(&want, v));
            assert_kura_ok(jw_item_encoded(&got, enc.data, enc.len));
            assert_int_equal(got.len, want.len);
            assert_memory_equal(got.data, want.data, want.len);
            checked++;
        }
        kura_value_free(v);
    }
    assert_true(checked > 2000);
    /* a stored string that is not UTF-8 is refused as jw_item refuses it */
    kura_value *m = kura_value_map();
    assert_kura_ok(kura_value_map_put(m, "a", 1, kura_value_s("\xc3(", 2)));
    kbuf_clear(&enc);
    assert_kura_ok(val_encode(m, &enc));
    kbuf_clear(&got);
    assert_int_equal(jw_item_encoded(&got, enc.data, enc.len), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "a string of the response is not valid UTF-8");
    kura_value_free(m);
    /* and a value that is not an item */
    static const uint8_t not_map[] = {KURA_NULL};
    assert_int_equal(jw_item_encoded(&got, not_map, 1), KURA_E_CORRUPTION);
    kbuf_free(&enc);
    kbuf_free(&want);
    kbuf_free(&got);
}

static void test_invalid_values_refused(void **state)
{
    (void)state;
    kbuf b = KBUF_INIT;
    kura_value *m = kura_value_map();
    assert_kura_ok(kura_value_map_put(m, "a", 1, kura_value_s("\xc3(", 2)));
    assert_int_equal(jw_item(&b, m), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "a string of the response is not valid UTF-8");
    kura_value_free(m);
    m = kura_value_map();
    assert_kura_ok(kura_value_map_put(m, "\xff", 1, kura_value_null()));
    kbuf_clear(&b);
    assert_int_equal(jw_item(&b, m), KURA_E_INVALID);
    kura_value_free(m);
    /* through the public function too */
    m = kura_value_map();
    assert_kura_ok(kura_value_map_put(m, "s", 1, kura_value_s("\xed\xa0\x80", 3)));
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(kura_value_to_json(m, true, &out, &len), KURA_E_INVALID);
    assert_null(out);
    kura_value_free(m);
    kbuf_free(&b);
}

static void test_separators(void **state)
{
    (void)state;
    kbuf b = KBUF_INIT;
    assert_kura_ok(jw_raw(&b, "{"));
    assert_kura_ok(jw_key(&b, "a", 1));
    assert_kura_ok(jw_raw(&b, "["));
    assert_kura_ok(jw_sep(&b));
    assert_kura_ok(jw_int(&b, 1));
    assert_kura_ok(jw_sep(&b));
    assert_kura_ok(jw_real(&b, 2));
    assert_kura_ok(jw_raw(&b, "]"));
    assert_kura_ok(jw_key(&b, "b", 1));
    assert_kura_ok(jw_raw(&b, "{}}"));
    assert_int_equal(b.len, strlen("{\"a\":[1,2.0],\"b\":{}}"));
    assert_memory_equal(b.data, "{\"a\":[1,2.0],\"b\":{}}", b.len);
    kbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_match_jansson),
        cmocka_unit_test(test_message_replaces_invalid_bytes),
        cmocka_unit_test(test_integers_match_jansson),
        cmocka_unit_test(test_reals_match_jansson),
        cmocka_unit_test(test_values_match_reference),
        cmocka_unit_test(test_encoded_items_match_values),
        cmocka_unit_test(test_invalid_values_refused),
        cmocka_unit_test(test_separators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
