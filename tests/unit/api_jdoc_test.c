/*
 * api_jdoc_test.c - tests of api/'s JSON documents (api/jdoc.c): what a parse accepts and
 * refuses, compared with jansson's json_loadb(JSON_ALLOW_NUL) (the parser api/ used before),
 * on hand-picked texts and on random ones built from JSON pieces near the edges (escapes,
 * surrogates, UTF-8 that is not, numbers at the int64 and double limits, duplicates,
 * nesting); every accepted text must read back as jansson reads it (written by jw_json, both
 * compared after jansson sorts the keys). Then the tree functions: objects past the size
 * where the hash index starts, removal and setting again, deep copies, the depth limit, and
 * the first chunks that documents on several threads pass on to each other.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/jdoc.h"
#include "testutil.h"

/* Set by jansson_canon when jansson refused a text only for a NUL in a member name, which
 * jdoc takes (DynamoDB's attribute names may hold NUL). */
static bool jansson_nul_key;

/* jansson's canonical text of json[0..n), or NULL when it refuses it. */
static char *jansson_canon(const char *json, size_t n, bool any)
{
    json_error_t err;
    json_t *j = json_loadb(json, n, JSON_ALLOW_NUL | (any ? JSON_DECODE_ANY : 0), &err);
    jansson_nul_key = !j && strstr(err.text, "NUL byte in object key");
    if (!j) return NULL;
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
                                JSON_REAL_PRECISION(15));
    json_decref(j);
    return s;
}

/* The same of a document tree: jw_json's text, sorted by jansson. */
static char *jd_canon(const jd_t *v)
{
    kbuf b = KBUF_INIT;
    assert_int_equal(jw_json(&b, v), KURA_OK);
    char *s = jansson_canon((const char *)b.data, b.len, true);
    if (!s) fail_msg("jw_json wrote what jansson cannot read: %.*s", (int)b.len, (char *)b.data);
    kbuf_free(&b);
    return s;
}

/* Parses with both and compares; returns whether jdoc accepted it. */
static bool compare(const char *json, size_t n, unsigned flags)
{
    jd_doc *d = jd_doc_new();
    assert_non_null(d);
    char err[160];
    jd_t *v = jd_parse(d, json, n, flags, err, sizeof err);
    char *want = jansson_canon(json, n, flags & JD_DECODE_ANY);
    if (v && !want && jansson_nul_key) { /* the one difference, on purpose */
        jd_doc_free(d);
        return true;
    }
    if (!v != !want)
        fail_msg("%.*s: jdoc %s (%s), jansson %s", (int)n, json, v ? "accepts" : "refuses",
                 v ? "" : err, want ? "accepts" : "refuses");
    if (v) {
        char *got = jd_canon(v);
        if (strcmp(got, want) != 0)
            fail_msg("%.*s:\n  jdoc    %s\n  jansson %s", (int)n, json, got, want);
        free(got);
    } else if (!err[0]) {
        fail_msg("%.*s: refused without a message", (int)n, json);
    }
    free(want);
    jd_doc_free(d);
    return v != NULL;
}

static void test_hand_picked(void **state)
{
    (void)state;
    static const char *const accepted[] = {
        "{}", "[]", "{\"a\":1}", "[1,-0,2.5,1e3,-1E-2,9223372036854775807,-9223372036854775808]",
        "{\"s\":\"a\\u0000b\",\"k\":\"\\u0000\"}", "{\"e\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
        "{\"u\":\"\\u00e9\\u3042\\ud83d\\ude00\"}", "{\"raw\":\"\xc3\xa9\xe3\x81\x82\xf0\x9f\x98\x80\"}",
        "{\"dup\":1,\"x\":2,\"dup\":3}", " \t\n{\"a\" : [ null , false , true ] }\n ",
        "{\"tiny\":1e-400}", "{\"big\":1.7e308}", "[[[[[[[[[[]]]]]]]]]]",
        "{\"a\":{\"a\":{\"a\":{}}}}", "{\"\":\"\"}"};
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++)
        assert_true(compare(accepted[i], strlen(accepted[i]), 0));
    static const char *const refused[] = {
        "", " ", "{", "{\"a\"}", "{\"a\":}", "[1,]", "{\"a\":1,}", "{not json", "{} {}", "{}x",
        "[9223372036854775808]", "[-9223372036854775809]", "[1e400]", "[-1e400]",
        "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800x\"]", "[\"\\ud83d|ude00\"]", "[\"\\ud800\\u0041\"]",
        "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xff\"]",
        "[\"\xe3\x81\"]", "{\"\xc0\xaf\":1}", "[\"\\x\"]", "[\"\\u12\"]", "[01]", "[.5]",
        "[+1]", "[NaN]", "[1,\v2]", "[1,\f2]", "{\"a\":\v1}", "['a']", "[\"a\nb\"]", "// c\n{}", "1", "\"s\"", "null", "true"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        assert_false(compare(refused[i], strlen(refused[i]), 0));
    /* a NUL in a member name (jansson refuses it; DynamoDB's names may hold one) */
    jd_doc *d = jd_doc_new();
    char err[160];
    jd_t *v = jd_parse(d, "{\"k\\u0000\":1,\"k\":2}", 19, 0, err, sizeof err);
    assert_non_null(v);
    assert_int_equal(jd_object_size(v), 2);
    assert_int_equal(jd_integer_value(jd_object_getn(v, "k\0", 2)), 1);
    assert_int_equal(jd_integer_value(jd_object_get(v, "k")), 2);
    jd_doc_free(d);
    /* scalars at the top with JD_DECODE_ANY */
    assert_true(compare("1", 1, JD_DECODE_ANY));
    assert_true(compare("\"s\\u0000\"", 9, JD_DECODE_ANY));
    /* a NUL byte of the text itself, inside and outside a string */
    assert_false(compare("[\"a\0b\"]", 7, 0));
    assert_false(compare("{}\0", 3, 0));
}

/* Random texts from pieces; most are not JSON, enough are. */
static void test_random_texts(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "{", "}", "[", "]", ",", ":", "\"", "\"k\"", "\"k\":", "\"v\"", "1", "-0", "2.5e3",
        "9223372036854775807", "9223372036854775808", "1e308", "1e309", "true", "null", " ",
        "\\u0000", "\\ud83d", "\\ude00", "\\ud83d\\ude00", "\\n", "\\\\", "\\\"", "\xc3\xa9",
        "\xed\xa0\x80", "\xc0\xaf", "\x80", "{\"a\":", "[\"", "\"]", "\"}", "\"a\":\"b\"",
        "{\"a\":1,\"a\":2}"};
    uint64_t rng = test_seed();
    char text[256];
    int accepted = 0;
    for (int i = 0; i < 40000; i++) {
        size_t len = 0, n = 1 + test_rand(&rng) % 10;
        for (size_t k = 0; k < n; k++) {
            const char *p = pieces[test_rand(&rng) % (sizeof pieces / sizeof *pieces)];
            size_t plen = strlen(p);
            if (len + plen >= sizeof text) break;
            memcpy(text + len, p, plen);
            len += plen;
        }
        accepted += compare(text, len, test_rand(&rng) % 2 ? JD_DECODE_ANY : 0);
    }
    print_message("%d of 40000 random texts were JSON\n", accepted);
    assert_true(accepted > 300);
}

static void test_duplicates_last_wins_first_place(void **state)
{
    (void)state;
    jd_doc *d = jd_doc_new();
    char err[160];
    const char *json = "{\"a\":1,\"b\":2,\"a\":3}";
    jd_t *v = jd_parse(d, json, strlen(json), 0, err, sizeof err);
    assert_non_null(v);
    assert_int_equal(jd_object_size(v), 2);
    assert_int_equal(jd_integer_value(jd_object_get(v, "a")), 3);
    kbuf b = KBUF_INIT;
    assert_int_equal(jw_json(&b, v), KURA_OK);
    assert_int_equal(b.len, strlen("{\"a\":3,\"b\":2}"));
    assert_memory_equal(b.data, "{\"a\":3,\"b\":2}", b.len);
    kbuf_free(&b);
    jd_doc_free(d);
}

/* Objects of 1..300 members (the index starts at JD_INDEX_MIN): lookups, duplicates in the
 * text, removal, setting a removed member again, appending after removal. */
static void test_objects_of_every_size(void **state)
{
    (void)state;
    for (int n = 1; n <= 300; n += n < 40 ? 1 : 37) {
        jd_doc *d = jd_doc_new();
        kbuf text = KBUF_INIT;
        assert_true(kbuf_append(&text, "{", 1));
        for (int i = 0; i < n; i++) { /* every member twice: the second value wins */
            char m[64];
            int len = snprintf(m, sizeof m, "%s\"m%d\":%d,\"m%d\":%d", i ? "," : "", i, -i, i, i);
            assert_true(kbuf_append(&text, m, (size_t)len));
        }
        assert_true(kbuf_append(&text, "}", 1));
        char err[160];
        jd_t *o = jd_parse(d, (const char *)text.data, text.len, 0, err, sizeof err);
        assert_non_null(o);
        assert_int_equal(jd_object_size(o), n);
        for (int i = 0; i < n; i++) {
            char k[16];
            snprintf(k, sizeof k, "m%d", i);
            assert_int_equal(jd_integer_value(jd_object_get(o, k)), i);
        }
        assert_null(jd_object_get(o, "absent"));
        for (int i = 0; i < n; i += 2) {
            char k[16];
            snprintf(k, sizeof k, "m%d", i);
            assert_int_equal(jd_object_del(o, k), 0);
            assert_int_equal(jd_object_del(o, k), -1);
            assert_null(jd_object_get(o, k));
        }
        assert_int_equal(jd_object_size(o), n / 2);
        const char *key;
        jd_t *val;
        int seen = 0;
        jd_object_foreach(o, key, val)
        {
            assert_int_equal(atoi(key + 1) % 2, 1);
            assert_int_equal(jd_integer_value(val), atoi(key + 1));
            seen++;
        }
        assert_int_equal(seen, n / 2);
        assert_int_equal(jd_object_set(o, "m0", jd_integer(d, 100)), 0);
        for (int i = n; i < n + 50; i++) {
            char k[16];
            snprintf(k, sizeof k, "m%d", i);
            assert_int_equal(jd_object_set(o, k, jd_integer(d, i)), 0);
        }
        assert_int_equal(jd_integer_value(jd_object_get(o, "m0")), 100);
        for (int i = n; i < n + 50; i++) {
            char k[16];
            snprintf(k, sizeof k, "m%d", i);
            assert_int_equal(jd_integer_value(jd_object_get(o, k)), i);
        }
        assert_int_equal(jd_object_size(o), n / 2 + 1 + 50);
        jd_t *copy = jd_deep_copy(d, o);
        char *a = jd_canon(o), *b = jd_canon(copy);
        assert_string_equal(a, b);
        free(a);
        free(b);
        kbuf_free(&text);
        jd_doc_free(d);
    }
}

static void test_depth_limit(void **state)
{
    (void)state;
    for (int depth = JD_MAX_DEPTH - 1; depth <= JD_MAX_DEPTH + 1; depth++) {
        size_t n = 2 * (size_t)depth;
        char *text = malloc(n);
        memset(text, '[', (size_t)depth);
        memset(text + depth, ']', (size_t)depth);
        jd_doc *d = jd_doc_new();
        char err[160];
        jd_t *v = jd_parse(d, text, n, 0, err, sizeof err);
        if (depth <= JD_MAX_DEPTH) {
            assert_non_null(v);
        } else {
            assert_null(v);
            assert_string_equal(err, "maximum parsing depth reached");
        }
        jd_doc_free(d);
        free(text);
    }
}

/* Long strings and many values: pieces larger than a chunk, many chunks. */
static void test_large_documents(void **state)
{
    (void)state;
    kbuf text = KBUF_INIT;
    assert_true(kbuf_append(&text, "[", 1));
    for (int i = 0; i < 2000; i++) {
        char m[32];
        int len = snprintf(m, sizeof m, "%s\"", i ? "," : "");
        assert_true(kbuf_append(&text, m, (size_t)len));
        for (int k = 0; k < i; k++)
            assert_true(kbuf_append(&text, k % 50 == 0 ? "\\n" : "x", k % 50 == 0 ? 2 : 1));
        assert_true(kbuf_append(&text, "\"", 1));
    }
    assert_true(kbuf_append(&text, "]", 1));
    assert_true(compare((const char *)text.data, text.len, 0));
    kbuf_free(&text);
}

/* Documents made and freed on 4 threads at once, two alive per thread, so that first chunks
 * go through the spare slots (jdoc.c) between threads: a chunk handed to two documents at once
 * would show as one thread reading another's values (and under ASan as a use after free). */
typedef struct spare_arg {
    unsigned id;
    unsigned bad;
} spare_arg;

static void *spare_worker(void *p)
{
    spare_arg *a = p;
    for (unsigned i = 0; i < 3000; i++) {
        char text[2][256];
        jd_doc *d[2];
        const jd_t *v[2];
        for (int k = 0; k < 2; k++) {
            /* every 7th document larger than its first chunk */
            unsigned pad = i % 7 == 0 ? 200 : 0;
            int n = snprintf(text[k], sizeof text[k], "{\"t\":%u,\"i\":%u,\"k\":%d,\"p\":\"%*s\"}",
                             a->id, i, k, (int)pad, "");
            d[k] = jd_doc_new();
            char err[160];
            v[k] = d[k] ? jd_parse(d[k], text[k], (size_t)n, 0, err, sizeof err) : NULL;
            if (pad) /* more than the first chunk holds: many small pieces */
                for (int j = 0; v[k] && j < 400; j++)
                    if (!jd_stringn(d[k], "0123456789abcdef0123456789abcdef", 32)) a->bad++;
        }
        for (int k = 0; k < 2; k++) {
            const jd_t *t = v[k] ? jd_object_get(v[k], "t") : NULL;
            const jd_t *it = v[k] ? jd_object_get(v[k], "i") : NULL;
            const jd_t *kk = v[k] ? jd_object_get(v[k], "k") : NULL;
            if (!t || !it || !kk || t->u.i != (int64_t)a->id || it->u.i != (int64_t)i ||
                kk->u.i != k)
                a->bad++;
            jd_doc_free(d[k]);
        }
    }
    return NULL;
}

static void test_spare_chunks_across_threads(void **state)
{
    (void)state;
    pthread_t th[4];
    spare_arg args[4];
    for (unsigned t = 0; t < 4; t++) {
        args[t] = (spare_arg){t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, spare_worker, &args[t]), 0);
    }
    for (unsigned t = 0; t < 4; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(args[t].bad, 0);
    }
    jd_free_spares();
    jd_free_spares(); /* nothing left: a no-op */
    assert_true(compare("{\"a\":[1,2,{\"b\":null}]}", 22, 0)); /* allocates again */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_picked),
        cmocka_unit_test(test_random_texts),
        cmocka_unit_test(test_duplicates_last_wins_first_place),
        cmocka_unit_test(test_objects_of_every_size),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_large_documents),
        cmocka_unit_test(test_spare_chunks_across_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
