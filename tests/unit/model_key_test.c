/*
 * model_key_test.c - key encoding and storage keys (engine/model/key.c, docs/format/keys.md).
 *
 * A seeded property test over random S, B and N values (bytes biased towards 0x00, 0x01 and
 * 0xFF, the escape's edge cases): memcmp order of the encodings equals DynamoDB's order of
 * the values, no encoding is a prefix of another, encodings concatenate (pk || sk compare
 * part by part), decoding gives the value back and reports the bytes used, and the
 * begins_with prefix matches exactly the values that start with it. Then the storage key
 * layout, key_parse, decoder corruption paths and every key_build message.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "util/hash.h"

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(test_rand(&rng) % n);
}

static void rand_key_value(kura_value *v, kura_type t)
{
    if (t == KURA_N) {
        char num[80];
        int k;
        if (rnd(4) == 0) /* long, extreme numbers */
            k = snprintf(num, sizeof num, "%s%u%u%ue%d", rnd(2) ? "-" : "", rnd(1000000000),
                         rnd(1000000000), rnd(100000), (int)rnd(200) - 140);
        else
            k = snprintf(num, sizeof num, "%s%u.%ue%d", rnd(2) ? "-" : "", rnd(1000), rnd(100),
                         (int)rnd(7) - 3);
        kura_num n;
        assert_kura_ok(num_parse(num, (size_t)k, &n));
        val_set_num(v, &n);
        return;
    }
    static const uint8_t alphabet[] = {0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF, 'a', 'b'};
    uint8_t buf[12];
    size_t len = rnd(sizeof buf + 1);
    for (size_t i = 0; i < len; i++)
        buf[i] = rnd(4) ? alphabet[rnd(sizeof alphabet)] : (uint8_t)rnd(256);
    assert_kura_ok(val_set_bytes(v, t, buf, len));
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static int bytes_cmp(const kbuf *a, const kbuf *b)
{
    int c = memcmp(a->data, b->data, a->len < b->len ? a->len : b->len);
    return c ? sign(c) : sign((int)(a->len > b->len) - (int)(a->len < b->len));
}

static bool is_prefix(const kbuf *p, const kbuf *of)
{
    return p->len <= of->len && memcmp(p->data, of->data, p->len) == 0;
}

#define NVALS 160

static void check_pairs(kura_type t)
{
    kura_value v[NVALS];
    kbuf e[NVALS];
    for (int i = 0; i < NVALS; i++) {
        memset(&v[i], 0, sizeof v[i]);
        rand_key_value(&v[i], t);
        e[i] = (kbuf)KBUF_INIT;
        assert_kura_ok(key_enc_value(&v[i], &e[i]));
        /* round trip, also with bytes following */
        kura_value back = {0};
        size_t used = 0;
        assert_true(kbuf_append(&e[i], "\x00\x01\xff", 3));
        assert_kura_ok(key_dec_value(e[i].data, e[i].len, t, &back, &used));
        e[i].len -= 3;
        assert_int_equal(used, e[i].len);
        assert_true(val_equal(&back, &v[i]));
        val_clear(&back);
    }
    for (int i = 0; i < NVALS; i++)
        for (int j = 0; j < NVALS; j++) {
            int want = sign(val_cmp_scalar(&v[i], &v[j]));
            int got = bytes_cmp(&e[i], &e[j]);
            if (want != got)
                fail_msg("type %d: value order %d but encoding order %d", t, want, got);
            if (want != 0 && is_prefix(&e[i], &e[j])) fail_msg("encoding %d prefixes %d", i, j);
        }
    /* pk || sk pairs compare part by part */
    for (int k = 0; k < 2000; k++) {
        int a1 = (int)rnd(NVALS), a2 = (int)rnd(NVALS), b1 = (int)rnd(NVALS), b2 = (int)rnd(NVALS);
        if (rnd(2)) a2 = a1;
        kbuf x = KBUF_INIT, y = KBUF_INIT;
        assert_true(kbuf_append(&x, e[a1].data, e[a1].len) &&
                    kbuf_append(&x, e[b1].data, e[b1].len));
        assert_true(kbuf_append(&y, e[a2].data, e[a2].len) &&
                    kbuf_append(&y, e[b2].data, e[b2].len));
        int want = sign(val_cmp_scalar(&v[a1], &v[a2]));
        if (want == 0) want = sign(val_cmp_scalar(&v[b1], &v[b2]));
        assert_int_equal(bytes_cmp(&x, &y), want);
        kbuf_free(&x);
        kbuf_free(&y);
    }
    for (int i = 0; i < NVALS; i++) {
        val_clear(&v[i]);
        kbuf_free(&e[i]);
    }
}

static void test_order_property(void **state)
{
    (void)state;
    rng = test_seed();
    for (int round = 0; round < 10; round++) {
        check_pairs(KURA_S);
        check_pairs(KURA_B);
        check_pairs(KURA_N);
    }
}

static void test_prefix_property(void **state)
{
    (void)state;
    rng = test_seed() ^ 0x9e3779b9;
    for (int k = 0; k < 20000; k++) {
        kura_value p = {0}, v = {0};
        rand_key_value(&p, KURA_B);
        rand_key_value(&v, KURA_B);
        if (rnd(3) == 0 && v.u.bytes.len >= p.u.bytes.len) /* make prefixes common */
            memcpy(v.u.bytes.p, p.u.bytes.p, p.u.bytes.len);
        kbuf pe = KBUF_INIT, ve = KBUF_INIT;
        assert_kura_ok(key_enc_prefix(&p, &pe));
        assert_kura_ok(key_enc_value(&v, &ve));
        bool starts =
            v.u.bytes.len >= p.u.bytes.len && memcmp(v.u.bytes.p, p.u.bytes.p, p.u.bytes.len) == 0;
        if (starts != is_prefix(&pe, &ve)) fail_msg("begins_with mismatch at iteration %d", k);
        /* the prefix encoding sorts at or before every value it prefixes */
        if (starts) assert_true(bytes_cmp(&pe, &ve) <= 0);
        val_clear(&p);
        val_clear(&v);
        kbuf_free(&pe);
        kbuf_free(&ve);
    }
    kura_value n = {0};
    rand_key_value(&n, KURA_N);
    kbuf out = KBUF_INIT;
    assert_kura_status(key_enc_prefix(&n, &out), KURA_E_INVALID);
    assert_int_equal(out.len, 0);
    kura_value t = {0};
    val_set_bool(&t, true);
    assert_kura_status(key_enc_value(&t, &out), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "key: a BOOL value cannot be a key");
    kbuf_free(&out);
}

static void test_encoding_bytes(void **state)
{
    (void)state;
    kura_value v = {0};
    assert_kura_ok(val_set_bytes(&v, KURA_B, "a\0\xff", 3));
    kbuf out = KBUF_INIT;
    assert_kura_ok(key_enc_value(&v, &out));
    assert_int_equal(out.len, 6);
    assert_memory_equal(out.data, "a\x00\xff\xff\x00\x01", 6);
    kbuf_clear(&out);
    assert_kura_ok(key_enc_prefix(&v, &out));
    assert_int_equal(out.len, 4);
    assert_memory_equal(out.data, "a\x00\xff\xff", 4);
    val_clear(&v);
    kbuf_free(&out);

    kura_value back = {0};
    size_t used;
    static const struct {
        const char *bytes;
        size_t len;
        const char *msg;
    } bad[] = {
        {"", 0, "key: missing terminator"},
        {"abc", 3, "key: missing terminator"},
        {"ab\x00", 3, "key: missing terminator"},
        {"ab\x00\x02", 4, "key: bad escape byte 0x02"},
        {"\x00\x00", 2, "key: bad escape byte 0x00"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_kura_status(
            key_dec_value((const uint8_t *)bad[i].bytes, bad[i].len, KURA_S, &back, &used),
            KURA_E_CORRUPTION);
        assert_string_equal(kura_last_error(), bad[i].msg);
    }
    assert_kura_status(key_dec_value((const uint8_t *)"\x04", 1, KURA_N, &back, &used),
                       KURA_E_CORRUPTION);
    assert_kura_status(key_dec_value((const uint8_t *)"\x00\x01", 2, KURA_BOOL, &back, &used),
                       KURA_E_INVALID);
    assert_kura_ok(key_dec_value((const uint8_t *)"\x00\x01", 2, KURA_S, &back, &used));
    assert_int_equal(used, 2);
    assert_int_equal(back.u.bytes.len, 0);
    val_clear(&back);
}

static const key_schema ks_ps = {"pk", KURA_S, "sk", KURA_N};
static const key_schema ks_b = {"id", KURA_B, NULL, 0};

static void put_s(kura_value *m, const char *name, kura_type t, const char *s, size_t len)
{
    kura_value v = {0};
    assert_kura_ok(val_set_bytes(&v, t, s, len));
    assert_kura_ok(val_map_put(m, name, strlen(name), &v));
}

static void put_n(kura_value *m, const char *name, const char *num)
{
    kura_num n;
    kura_value v = {0};
    assert_kura_ok(num_parse(num, strlen(num), &n));
    val_set_num(&v, &n);
    assert_kura_ok(val_map_put(m, name, strlen(name), &v));
}

static void test_storage_key(void **state)
{
    (void)state;
    kura_value item;
    val_init_container(&item, KURA_M);
    put_s(&item, "pk", KURA_S, "user\0x", 6);
    put_n(&item, "sk", "-12.5");
    put_s(&item, "other", KURA_S, "ignored", 7);
    kbuf key = KBUF_INIT;
    assert_true(kbuf_put_u8(&key, 0x55)); /* key_build appends */
    assert_kura_ok(key_build(&ks_ps, &item, KEY_FROM_ITEM, &key));
    static const uint8_t pk_enc[] = {'u', 's', 'e', 'r', 0x00, 0xFF, 'x', 0x00, 0x01};
    static const uint8_t sk_enc[] = {0x01, 0x7F, 0xFD, 0xF2, 0xCC, 0xFF}; /* keys.md example */
    assert_int_equal(key.len, 1 + 8 + sizeof pk_enc + sizeof sk_enc);
    assert_int_equal(dec_fixed64_be(key.data + 1), kura_hash64(pk_enc, sizeof pk_enc));
    assert_int_equal(key_hash(pk_enc, sizeof pk_enc), kura_hash64(pk_enc, sizeof pk_enc));
    assert_memory_equal(key.data + 9, pk_enc, sizeof pk_enc);
    assert_memory_equal(key.data + 9 + sizeof pk_enc, sk_enc, sizeof sk_enc);

    kura_value parsed = {0};
    assert_kura_ok(key_parse(&ks_ps, key.data + 1, key.len - 1, &parsed));
    assert_true(val_map_remove(&item, "other", 5));
    assert_true(val_equal(&parsed, &item));
    val_clear(&parsed);

    /* the same key through a Key parameter */
    kbuf key2 = KBUF_INIT;
    assert_kura_ok(key_build(&ks_ps, &item, KEY_FROM_KEY, &key2));
    assert_int_equal(key2.len, key.len - 1);
    assert_memory_equal(key2.data, key.data + 1, key2.len);

    /* key_parse corruption: short, hash mismatch, trailing bytes, bad parts */
    assert_kura_status(key_parse(&ks_ps, key2.data, 7, &parsed), KURA_E_CORRUPTION);
    assert_string_equal(kura_last_error(), "key: shorter than its hash");
    key2.data[0] ^= 1;
    assert_kura_status(key_parse(&ks_ps, key2.data, key2.len, &parsed), KURA_E_CORRUPTION);
    assert_string_equal(kura_last_error(), "key: hash prefix does not match the partition key");
    key2.data[0] ^= 1;
    assert_true(kbuf_put_u8(&key2, 0));
    assert_kura_status(key_parse(&ks_ps, key2.data, key2.len, &parsed), KURA_E_CORRUPTION);
    assert_string_equal(kura_last_error(), "key: 1 trailing bytes");
    assert_kura_status(key_parse(&ks_ps, key2.data, key2.len - 2, &parsed), KURA_E_CORRUPTION);
    assert_kura_status(key_parse(&ks_ps, key2.data, 8 + 5, &parsed), KURA_E_CORRUPTION);
    assert_int_equal(parsed.type, 0);

    /* a partition-key-only binary schema */
    kura_value k;
    val_init_container(&k, KURA_M);
    put_s(&k, "id", KURA_B, "\x00", 1);
    kbuf_clear(&key2);
    assert_kura_ok(key_build(&ks_b, &k, KEY_FROM_KEY, &key2));
    assert_int_equal(key2.len, 8 + 4);
    assert_kura_ok(key_parse(&ks_b, key2.data, key2.len, &parsed));
    assert_true(val_equal(&parsed, &k));
    val_clear(&parsed);
    val_clear(&k);
    val_clear(&item);
    kbuf_free(&key);
    kbuf_free(&key2);
}

/* key_build of `m` must fail with KURA_E_INVALID and exactly `msg`, appending nothing. */
static void check_build(const key_schema *ks, const kura_value *m, key_source src, const char *msg)
{
    kbuf out = KBUF_INIT;
    assert_true(kbuf_put_u8(&out, 1));
    kura_status st = key_build(ks, m, src, &out);
    if (st != KURA_E_INVALID || strcmp(kura_last_error(), msg) != 0)
        fail_msg("key_build: %s \"%s\", expected \"%s\"", kura_status_str(st), kura_last_error(),
                 msg);
    assert_int_equal(out.len, 1);
    kbuf_free(&out);
}

#define INVALID "One or more parameter values were invalid: "
#define SCHEMA "The provided key element does not match the schema"

static void test_build_messages(void **state)
{
    (void)state;
    kura_value m;
    val_init_container(&m, KURA_M);
    check_build(&ks_ps, &m, KEY_FROM_ITEM, INVALID "Missing the key pk in the item");
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA);
    check_build(&ks_ps, NULL, KEY_FROM_KEY, SCHEMA);
    put_n(&m, "pk", "1");
    check_build(&ks_ps, &m, KEY_FROM_ITEM,
                INVALID "Type mismatch for key pk expected: S actual: N");
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA); /* count first */
    put_n(&m, "sk", "1");
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA); /* wrong type */
    put_s(&m, "pk", KURA_S, "", 0);
    check_build(&ks_ps, &m, KEY_FROM_ITEM,
                "One or more parameter values are not valid. The AttributeValue for a key "
                "attribute cannot contain an empty string value. Key: pk");
    check_build(&ks_ps, &m, KEY_FROM_KEY,
                INVALID "The AttributeValue for a key attribute cannot contain an empty string "
                        "value. Key: pk");
    char *big = malloc(2049);
    assert_non_null(big);
    memset(big, 'x', 2049);
    put_s(&m, "pk", KURA_S, big, 2049);
    const char *pk_msg = INVALID "Size of hashkey has exceeded the maximum size limit of2048 bytes";
    check_build(&ks_ps, &m, KEY_FROM_ITEM, pk_msg);
    check_build(&ks_ps, &m, KEY_FROM_KEY, pk_msg);
    put_s(&m, "pk", KURA_S, big, 2048); /* the limit itself is fine */
    kbuf out = KBUF_INIT;
    assert_kura_ok(key_build(&ks_ps, &m, KEY_FROM_KEY, &out));
    put_s(&m, "x", KURA_S, "extra", 5);
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA);
    kbuf_clear(&out);
    assert_kura_ok(key_build(&ks_ps, &m, KEY_FROM_ITEM, &out)); /* items may hold more */
    assert_true(val_map_remove(&m, "sk", 2));
    check_build(&ks_ps, &m, KEY_FROM_ITEM, INVALID "Missing the key sk in the item");
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA); /* pk + x: sk missing */
    assert_true(val_map_remove(&m, "x", 1));
    check_build(&ks_ps, &m, KEY_FROM_KEY, SCHEMA);

    /* binary keys: empty, sort key size (1024 ok, 1025 not) */
    static const key_schema ks_bb = {"h", KURA_S, "r", KURA_B};
    kura_value k;
    val_init_container(&k, KURA_M);
    put_s(&k, "h", KURA_S, "x", 1);
    put_s(&k, "r", KURA_B, "", 0);
    check_build(&ks_bb, &k, KEY_FROM_ITEM,
                "One or more parameter values are not valid. The AttributeValue for a key "
                "attribute cannot contain an empty binary value. Key: r");
    check_build(&ks_bb, &k, KEY_FROM_KEY,
                INVALID "The AttributeValue for a key attribute cannot contain an empty binary "
                        "value. Key: r");
    put_s(&k, "r", KURA_B, big, 1025);
    const char *sk_msg =
        INVALID "Aggregated size of all range keys has exceeded the size limit of 1024 bytes";
    check_build(&ks_bb, &k, KEY_FROM_ITEM, sk_msg);
    check_build(&ks_bb, &k, KEY_FROM_KEY, sk_msg);
    put_s(&k, "r", KURA_B, big, 1024);
    kbuf_clear(&out);
    assert_kura_ok(key_build(&ks_bb, &k, KEY_FROM_ITEM, &out));
    /* partition key errors come before sort key errors */
    put_s(&k, "h", KURA_S, "", 0);
    put_s(&k, "r", KURA_B, "", 0);
    check_build(&ks_bb, &k, KEY_FROM_ITEM,
                "One or more parameter values are not valid. The AttributeValue for a key "
                "attribute cannot contain an empty string value. Key: h");
    /* 683 three-byte characters are 2049 bytes: sizes count UTF-8 bytes */
    char *wide = malloc(683 * 3);
    assert_non_null(wide);
    for (int i = 0; i < 683; i++)
        memcpy(wide + 3 * i, "\xe3\x81\x82", 3);
    put_s(&k, "h", KURA_S, wide, 683 * 3);
    check_build(&ks_bb, &k, KEY_FROM_ITEM, pk_msg);
    /* numbers have no size limit and no empty form */
    static const key_schema ks_n = {"n", KURA_N, NULL, 0};
    kura_value kn;
    val_init_container(&kn, KURA_M);
    put_n(&kn, "n", "-0");
    kbuf_clear(&out);
    assert_kura_ok(key_build(&ks_n, &kn, KEY_FROM_KEY, &out));
    assert_int_equal(out.len, 9);
    assert_int_equal(out.data[8], 0x02);
    val_clear(&kn);
    free(wide);
    free(big);
    kbuf_free(&out);
    val_clear(&k);
    val_clear(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_property), cmocka_unit_test(test_prefix_property),
        cmocka_unit_test(test_encoding_bytes), cmocka_unit_test(test_storage_key),
        cmocka_unit_test(test_build_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
