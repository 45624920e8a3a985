/*
 * util_coding_test.c - varints, fixed-width coding, crc32c (hardware == table), hash buckets,
 * arena and kbuf.
 */
#include "testutil.h"

#include <string.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/ikey.h"

static void test_varint_roundtrip(void **state)
{
    (void)state;
    uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
                       UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t buf[VARINT64_MAX];
        size_t n = enc_varint64(buf, vals[i]);
        assert_int_equal(n, varint_len(vals[i]));
        uint64_t got = 0;
        const uint8_t *end = dec_varint64(buf, buf + n, &got);
        assert_ptr_equal(end, buf + n);
        assert_int_equal(got, vals[i]);
        /* every truncation is detected */
        for (size_t cut = 0; cut < n; cut++)
            assert_null(dec_varint64(buf, buf + cut, &got));
    }
    uint8_t over[VARINT64_MAX + 1];
    memset(over, 0xff, sizeof over);
    uint64_t v;
    assert_null(dec_varint64(over, over + sizeof over, &v));
    uint32_t v32;
    uint8_t big[VARINT64_MAX];
    size_t n = enc_varint64(big, (uint64_t)UINT32_MAX + 1);
    assert_null(dec_varint32(big, big + n, &v32));
}

static void test_fixed(void **state)
{
    (void)state;
    uint8_t b[8];
    enc_fixed64_be(b, 0x0102030405060708ull);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[7], 8);
    assert_int_equal(dec_fixed64_be(b), 0x0102030405060708ull);
    enc_fixed32(b, 0xdeadbeef);
    assert_int_equal(b[0], 0xef);
    assert_int_equal(dec_fixed32(b), 0xdeadbeef);
}

static void test_crc32c(void **state)
{
    (void)state;
    /* RFC 3720 test vectors */
    uint8_t zeros[32] = {0}, ones[32], incr[32];
    memset(ones, 0xff, sizeof ones);
    for (int i = 0; i < 32; i++)
        incr[i] = (uint8_t)i;
    assert_int_equal(crc32c(zeros, 32), 0x8a9136aa);
    assert_int_equal(crc32c(ones, 32), 0x62a8ab43);
    assert_int_equal(crc32c(incr, 32), 0x46dd794e);
    assert_int_equal(crc32c("123456789", 9), 0xe3069283);
    /* hardware and table agree on every length and alignment */
    uint8_t data[300];
    uint64_t rs = 7;
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)test_rand(&rs);
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof data; n += 7)
            assert_int_equal(crc32c_extend(0, data + off, n),
                             crc32c_extend_portable(0, data + off, n));
    /* extend == one shot */
    assert_int_equal(crc32c_extend(crc32c(data, 100), data + 100, 200), crc32c(data, 300));
    uint32_t c = crc32c(data, 10);
    assert_int_not_equal(crc32c_mask(c), c);
    assert_int_equal(crc32c_unmask(crc32c_mask(c)), c);
}

static void test_hash_bucket(void **state)
{
    (void)state;
    assert_int_equal(kura_hash_bucket(0, 4), 0);
    assert_int_equal(kura_hash_bucket(UINT64_MAX, 4), 3);
    assert_int_equal(kura_hash_bucket(UINT64_C(1) << 63, 4), 2);
    assert_int_equal(kura_hash_bucket(12345, 1), 0);
    unsigned counts[7] = {0};
    for (uint64_t i = 0; i < 70000; i++)
        counts[kura_hash_bucket(kura_hash64(&i, sizeof i), 7)]++;
    for (int i = 0; i < 7; i++)
        assert_in_range(counts[i], 9000, 11000);
}

static void test_ikey_order(void **state)
{
    (void)state;
    uint8_t a[16], b[16];
    ikey_encode(a, "abc", 3, 5, IKEY_TYPE_VALUE);
    ikey_encode(b, "abc", 3, 9, IKEY_TYPE_VALUE);
    assert_true(ikey_cmp(a, 11, b, 11) > 0); /* newer first */
    ikey_encode(b, "abd", 3, 1, IKEY_TYPE_VALUE);
    assert_true(ikey_cmp(a, 11, b, 11) < 0);
    ikey_encode(b, "ab", 2, 1, IKEY_TYPE_VALUE);
    assert_true(ikey_cmp(a, 11, b, 10) > 0); /* prefix first */
    assert_int_equal(ikey_seq(a, 11), 5);
    assert_int_equal(ikey_type(a, 11), IKEY_TYPE_VALUE);
}

static void test_arena_and_buf(void **state)
{
    (void)state;
    arena *a = arena_new(4096);
    assert_non_null(a);
    char *p = arena_alloc(a, 10);
    memset(p, 1, 10);
    char *q = arena_alloc(a, 5000); /* own block */
    memset(q, 2, 5000);
    assert_int_equal(((uintptr_t)arena_alloc(a, 3)) % 8, 0);
    assert_true(arena_usage(a) >= 4096 + 5000);
    assert_int_equal(p[9], 1);
    arena_free(a);
    arena_free(NULL);

    kbuf b = KBUF_INIT;
    for (int i = 0; i < 1000; i++)
        assert_true(kbuf_put_varint(&b, (uint64_t)i * 1000));
    const uint8_t *r = b.data, *end = b.data + b.len;
    for (int i = 0; i < 1000; i++) {
        uint64_t v;
        r = dec_varint64(r, end, &v);
        assert_non_null(r);
        assert_int_equal(v, (uint64_t)i * 1000);
    }
    kbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_roundtrip), cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_crc32c),           cmocka_unit_test(test_hash_bucket),
        cmocka_unit_test(test_ikey_order),       cmocka_unit_test(test_arena_and_buf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
