/*
 * model_codec_test.c - the binary item codec (engine/model/codec.c, docs/format/item.md):
 * a golden encoding, seeded round trips of random deep values (decode gives an equal value,
 * re-encoding gives the same bytes), every strict prefix of an encoding rejected, and each
 * corruption path of the decoder with its status.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(test_rand(&rng) % n);
}

static void rand_bytes(uint8_t *p, size_t n, bool text)
{
    for (size_t i = 0; i < n; i++)
        p[i] = text ? (uint8_t)('a' + rnd(4)) : (uint8_t)rnd(256);
}

static void rand_scalar(kura_value *v, kura_type t)
{
    uint8_t buf[64];
    size_t len = rnd(8) == 0 ? rnd(64) : rnd(6);
    if (t == KURA_N) {
        char num[64];
        int k = snprintf(num, sizeof num, "%s%u.%ue%d", rnd(2) ? "-" : "", rnd(100000), rnd(1000),
                         (int)rnd(200) - 100);
        kura_num n;
        assert_kura_ok(num_parse(num, (size_t)k, &n));
        val_set_num(v, &n);
        return;
    }
    rand_bytes(buf, len, t == KURA_S);
    assert_kura_ok(val_set_bytes(v, t, buf, len));
}

/* A random value whose maps and lists stay within `levels_left` levels. */
static void rand_value(kura_value *v, int levels_left)
{
    kura_type t = (kura_type)(KURA_S + rnd(10));
    if ((t == KURA_M || t == KURA_L) && levels_left == 0) t = KURA_NULL;
    switch (t) {
    case KURA_S:
    case KURA_N:
    case KURA_B:
        rand_scalar(v, t);
        return;
    case KURA_BOOL:
        val_set_bool(v, rnd(2));
        return;
    case KURA_NULL:
        val_set_null(v);
        return;
    default:
        break;
    }
    val_init_container(v, t);
    uint32_t n = levels_left > 25 ? 1 : rnd(5); /* deep chains stay narrow */
    if (t == KURA_SS || t == KURA_NS || t == KURA_BS) n++;
    for (uint32_t i = 0; i < n; i++) {
        kura_value e = {0};
        if (t == KURA_M || t == KURA_L) {
            rand_value(&e, levels_left - 1);
        } else {
            rand_scalar(&e, t == KURA_SS ? KURA_S : t == KURA_NS ? KURA_N : KURA_B);
            if (val_set_contains(v, &e)) {
                val_clear(&e);
                continue;
            }
        }
        if (t == KURA_M) {
            char name[8];
            size_t len = rnd(5);
            rand_bytes((uint8_t *)name, len, true);
            assert_kura_ok(val_map_put(v, name, len, &e));
        } else {
            assert_kura_ok(val_list_push(v, &e));
        }
    }
}

/* A chain of `levels` maps/lists, innermost holding a string. */
static void deep_value(kura_value *v, int levels)
{
    kura_value inner = {0};
    assert_kura_ok(val_set_bytes(&inner, KURA_S, "x", 1));
    for (int i = 0; i < levels; i++) {
        kura_value c;
        val_init_container(&c, i % 2 ? KURA_L : KURA_M);
        if (i % 2)
            assert_kura_ok(val_list_push(&c, &inner));
        else
            assert_kura_ok(val_map_put(&c, "k", 1, &inner));
        inner = c;
    }
    *v = inner;
}

static void roundtrip(const kura_value *v)
{
    kbuf a = KBUF_INIT, b = KBUF_INIT;
    assert_kura_ok(val_encode(v, &a));
    kura_value back = {0};
    assert_kura_ok(val_decode(a.data, a.len, &back));
    if (!val_equal(v, &back)) fail_msg("decoded value differs (%zu bytes)", a.len);
    assert_kura_ok(val_encode(&back, &b));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    /* every strict prefix is corrupt, and so is the encoding with a byte more */
    for (size_t i = 0; i < a.len; i++) {
        kura_value junk = {0};
        assert_kura_status(val_decode(a.data, i, &junk), KURA_E_CORRUPTION);
        assert_int_equal(junk.type, 0);
    }
    assert_true(kbuf_put_u8(&a, 0));
    assert_kura_status(val_decode(a.data, a.len, &back), KURA_E_CORRUPTION);
    val_clear(&back);
    kbuf_free(&a);
    kbuf_free(&b);
}

static void test_golden(void **state)
{
    (void)state;
    kura_value item, v = {0};
    kura_num n;
    val_init_container(&item, KURA_M);
    assert_kura_ok(val_set_bytes(&v, KURA_S, "hi", 2));
    assert_kura_ok(val_map_put(&item, "a", 1, &v));
    assert_kura_ok(num_parse("12.50", 5, &n));
    val_set_num(&v, &n);
    assert_kura_ok(val_map_put(&item, "n", 1, &v));
    val_set_bool(&v, true);
    assert_kura_ok(val_map_put(&item, "t", 1, &v));
    static const uint8_t want[] = {0x06, 0x03, 0x01, 'a',  0x01, 0x02, 'h',  'i', 0x01, 'n', 0x02,
                                   0x03, 0x80, 0x02, 0x0D, 0x33, 0x00, 0x01, 't', 0x04, 0x01};
    kbuf out = KBUF_INIT;
    assert_true(kbuf_put_u8(&out, 0xAA)); /* val_encode appends */
    assert_kura_ok(val_encode(&item, &out));
    assert_int_equal(out.len, 1 + sizeof want);
    assert_memory_equal(out.data + 1, want, sizeof want);
    roundtrip(&item);
    val_clear(&item);
    kbuf_free(&out);
}

/* val_encoded_attr on the golden item: each attribute's span, names that are not there (a
 * prefix, one past the end, one between), a value that is not a map, a truncated item. */
static void test_encoded_attr(void **state)
{
    (void)state;
    static const uint8_t item[] = {0x06, 0x03, 0x01, 'a',  0x01, 0x02, 'h',  'i', 0x01, 'n', 0x02,
                                   0x03, 0x80, 0x02, 0x0D, 0x33, 0x00, 0x01, 't', 0x04, 0x01};
    const uint8_t *vp;
    size_t vlen;
    assert_kura_ok(val_encoded_attr(item, sizeof item, "a", 1, &vp, &vlen));
    assert_ptr_equal(vp, item + 4);
    assert_int_equal(vlen, 4);
    assert_kura_ok(val_encoded_attr(item, sizeof item, "n", 1, &vp, &vlen));
    assert_ptr_equal(vp, item + 10);
    assert_int_equal(vlen, 7);
    kura_value v = {0};
    assert_kura_ok(val_decode(vp, vlen, &v));
    assert_int_equal(v.type, KURA_N);
    val_clear(&v);
    assert_kura_ok(val_encoded_attr(item, sizeof item, "t", 1, &vp, &vlen));
    assert_ptr_equal(vp, item + 19);
    assert_int_equal(vlen, 2);
    static const char *const absent[] = {"", "b", "nn", "z", "aa"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        vp = item;
        assert_kura_ok(val_encoded_attr(item, sizeof item, absent[i], strlen(absent[i]), &vp,
                                        &vlen));
        assert_null(vp);
        assert_int_equal(vlen, 0);
    }
    assert_kura_status(val_encoded_attr(item + 4, 4, "a", 1, &vp, &vlen), KURA_E_CORRUPTION);
    assert_kura_status(val_encoded_attr(item, 12, "t", 1, &vp, &vlen), KURA_E_CORRUPTION);
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    rng = test_seed();
    for (int i = 0; i < 2000; i++) {
        kura_value item;
        val_init_container(&item, KURA_M);
        uint32_t n = rnd(12);
        for (uint32_t k = 0; k < n; k++) {
            kura_value v = {0};
            rand_value(&v, i % 10 == 0 ? VAL_MAX_DEPTH - 1 : 4);
            char name[4] = {(char)('a' + rnd(26)), (char)('a' + rnd(26))};
            assert_kura_ok(val_map_put(&item, name, 1 + rnd(2), &v));
        }
        roundtrip(&item);
        val_clear(&item);
    }
    /* every type at top level too */
    for (int i = 0; i < 200; i++) {
        kura_value v = {0};
        rand_value(&v, 3);
        roundtrip(&v);
        val_clear(&v);
    }
}

static void test_depth(void **state)
{
    (void)state;
    kura_value v = {0};
    deep_value(&v, VAL_MAX_DEPTH); /* the most levels allowed */
    roundtrip(&v);
    val_clear(&v);

    deep_value(&v, VAL_MAX_DEPTH + 1);
    kbuf out = KBUF_INIT;
    assert_true(kbuf_put_u8(&out, 7));
    assert_kura_status(val_encode(&v, &out), KURA_E_INVALID);
    assert_int_equal(out.len, 1); /* nothing appended on failure */
    val_clear(&v);

    /* the decoder refuses 33 levels written by hand: 0x07 0x01 repeated, then NULL */
    kbuf_clear(&out);
    for (int i = 0; i < VAL_MAX_DEPTH + 1; i++) {
        assert_true(kbuf_put_u8(&out, KURA_L));
        assert_true(kbuf_put_u8(&out, 1));
    }
    assert_true(kbuf_put_u8(&out, KURA_NULL));
    assert_kura_status(val_decode(out.data, out.len, &v), KURA_E_CORRUPTION);
    assert_string_equal(kura_last_error(), "item: nesting too deep at byte 65");
    assert_kura_ok(val_decode(out.data + 2, out.len - 2, &v));
    val_clear(&v);
    /* a deeply nested input (far beyond the cap) stops at the cap: no deep recursion */
    kbuf_clear(&out);
    for (int i = 0; i < 100000; i++)
        assert_true(kbuf_put_u8(&out, KURA_L) && kbuf_put_u8(&out, 1));
    assert_kura_status(val_decode(out.data, out.len, &v), KURA_E_CORRUPTION);

    kura_value empty = {0};
    assert_kura_status(val_encode(&empty, &out), KURA_E_INVALID);
    kbuf_free(&out);
}

/* Expects val_decode of the given bytes to fail with corruption and `msg`. */
static void bad(const uint8_t *p, size_t len, const char *msg)
{
    kura_value v = {0};
    kura_status st = val_decode(p, len, &v);
    if (st != KURA_E_CORRUPTION || strcmp(kura_last_error(), msg) != 0)
        fail_msg("decode: %s \"%s\", expected corruption \"%s\"", kura_status_str(st),
                 kura_last_error(), msg);
    assert_int_equal(v.type, 0);
}

#define BAD(msg, ...)                                                                              \
    do {                                                                                           \
        static const uint8_t b_[] = {__VA_ARGS__};                                                 \
        bad(b_, sizeof b_, msg);                                                                   \
    } while (0)

static void test_corruption(void **state)
{
    (void)state;
    bad(NULL, 0, "item: truncated value at byte 0");
    BAD("item: unknown type tag at byte 0", 0x00);
    BAD("item: unknown type tag at byte 0", 0x0B);
    BAD("item: unknown type tag at byte 2", 0x07, 0x01, 0xFF);
    BAD("item: trailing bytes at byte 1", 0x05, 0x05);
    BAD("item: bad boolean at byte 1", 0x04, 0x02);
    BAD("item: bad boolean at byte 1", 0x04);
    BAD("item: bad length at byte 1", 0x01, 0x80, 0x00);                   /* non-minimal varint */
    BAD("item: bad length at byte 1", 0x01, 0x81);                         /* truncated varint */
    BAD("item: bad length at byte 1", 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F); /* > 2^32 - 2 */
    BAD("item: bad length at byte 1", 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0x01); /* overflows 64 bits */
    BAD("item: truncated bytes at byte 2", 0x01, 0x03, 'a', 'b');
    BAD("item: truncated bytes at byte 2", 0x03, 0x7F);
    BAD("item: bad number at byte 1", 0x02);
    BAD("item: bad number at byte 1", 0x02, 0x04);
    BAD("item: bad number at byte 1", 0x02, 0x03, 0x80, 0x02, 0x0D, 0x01, 0x00); /* 1.20 */
    BAD("item: bad number at byte 1", 0x02, 0x03, 0x80, 0x02, 0x0D);             /* no end */
    BAD("item: bad element count at byte 1", 0x07, 0x80, 0x80, 0x00);
    BAD("item: bad element count at byte 1", 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F);
    BAD("item: element count larger than the bytes left at byte 2", 0x07, 0x7F, 0x05);
    BAD("item: element count larger than the bytes left at byte 2", 0x06, 0x02, 0x00, 0x05,
        0x00); /* a map needs 2 bytes per attribute */
    BAD("item: map names not in ascending order at byte 5", 0x06, 0x02, 0x01, 'b', 0x05, 0x01, 'a',
        0x05);
    BAD("item: map names not in ascending order at byte 5", 0x06, 0x02, 0x01, 'a', 0x05, 0x01, 'a',
        0x05);
    BAD("item: map names not in ascending order at byte 6", 0x06, 0x02, 0x02, 'a', 'b', 0x05, 0x01,
        'a', 0x05);
    BAD("item: empty set at byte 2", 0x08, 0x00);
    BAD("item: empty set at byte 2", 0x09, 0x00);
    BAD("item: empty set at byte 2", 0x0A, 0x00);
    BAD("item: duplicate set members at byte 6", 0x08, 0x02, 0x01, 'a', 0x01, 'a');
    BAD("item: duplicate set members at byte 4", 0x09, 0x02, 0x02, 0x02);
    BAD("item: truncated bytes at byte 3", 0x0A, 0x01, 0x01);
    BAD("item: truncated value at byte 4", 0x06, 0x01, 0x01, 'a');
    BAD("item: element count larger than the bytes left at byte 2", 0x07, 0x01);
    /* well-formed neighbours of the above decode */
    static const uint8_t ok1[] = {0x06, 0x02, 0x01, 'a', 0x05, 0x02, 'a', 'b', 0x04, 0x00};
    static const uint8_t ok2[] = {0x09, 0x02, 0x02, 0x03, 0x80, 0x01, 0x0B, 0x00}; /* {0, 1} */
    static const uint8_t ok3[] = {0x06, 0x00};
    static const uint8_t ok4[] = {0x01, 0x00};
    const uint8_t *oks[] = {ok1, ok2, ok3, ok4};
    size_t lens[] = {sizeof ok1, sizeof ok2, sizeof ok3, sizeof ok4};
    for (size_t i = 0; i < 4; i++) {
        kura_value v = {0};
        assert_kura_ok(val_decode(oks[i], lens[i], &v));
        kbuf out = KBUF_INIT;
        assert_kura_ok(val_encode(&v, &out));
        assert_int_equal(out.len, lens[i]);
        assert_memory_equal(out.data, oks[i], lens[i]);
        kbuf_free(&out);
        val_clear(&v);
    }
}

/* Random byte flips of valid encodings: each decodes to something canonical or is corrupt. */
static void test_mutations(void **state)
{
    (void)state;
    rng = test_seed() ^ 0x5bd1e995;
    for (int i = 0; i < 20000; i++) {
        kura_value v = {0};
        rand_value(&v, 4);
        kbuf enc = KBUF_INIT;
        assert_kura_ok(val_encode(&v, &enc));
        enc.data[rnd((uint32_t)enc.len)] ^= (uint8_t)(1 + rnd(255));
        kura_value back = {0};
        kura_status st = val_decode(enc.data, enc.len, &back);
        if (st == KURA_OK) {
            kbuf again = KBUF_INIT;
            assert_kura_ok(val_encode(&back, &again));
            assert_int_equal(again.len, enc.len);
            assert_memory_equal(again.data, enc.data, enc.len);
            assert_kura_ok(val_validate(&back));
            kbuf_free(&again);
        } else {
            assert_int_equal(st, KURA_E_CORRUPTION);
            assert_true(strncmp(kura_last_error(), "item: ", 6) == 0);
        }
        val_clear(&back);
        val_clear(&v);
        kbuf_free(&enc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),    cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_depth),     cmocka_unit_test(test_corruption),
        cmocka_unit_test(test_mutations), cmocka_unit_test(test_encoded_attr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
