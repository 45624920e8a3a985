/*
 * sst_block_test.c - data blocks (builder + cursor), bloom filters and block compression.
 *
 * Blocks: round trips at several restart intervals with seeks to every key, between keys,
 * before the first and past the last; prev across restart points; malformed blocks (every
 * truncation, random garbage) never crash or read outside the block. Bloom: no false
 * negatives and a false-positive rate under 2% at 10 bits/key over 100k keys. Compression:
 * LZ4 and zlib round trips, and corrupt payloads rejected.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/block.h"
#include "sstable/block_builder.h"
#include "sstable/bloom.h"
#include "sstable/compress.h"
#include "util/buf.h"
#include "util/ikey.h"

/* Internal key number i: user key "user%06u" (even numbers only, so odd ones fall between),
 * sequence 1000 + i, type VALUE. */
static size_t make_key(uint8_t *out, unsigned i)
{
    char uk[32];
    int n = snprintf(uk, sizeof uk, "user%06u", i * 2);
    ikey_encode(out, uk, (size_t)n, 1000 + i, IKEY_TYPE_VALUE);
    return (size_t)n + IKEY_TRAILER;
}

static size_t make_val(char *out, unsigned i)
{
    return (size_t)sprintf(out, "value-%u-%.*s", i, (int)(i % 37), "abcdefghijklmnopqrstuvwxyz0123456789");
}

static void check_entry(const sst_block_iter *it, unsigned i)
{
    uint8_t want[64];
    char wv[128];
    size_t wlen = make_key(want, i), vlen = make_val(wv, i), klen, gvlen;
    assert_true(sst_block_iter_valid(it));
    const uint8_t *k = sst_block_iter_key(it, &klen);
    const uint8_t *v = sst_block_iter_value(it, &gvlen);
    if (klen != wlen || memcmp(k, want, wlen) != 0)
        fail_msg("entry %u: key mismatch (len %zu vs %zu)", i, klen, wlen);
    assert_int_equal(gvlen, vlen);
    assert_memory_equal(v, wv, vlen);
}

static void build_block(sst_block_builder *bb, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t k[64];
        char v[128];
        size_t kl = make_key(k, i), vl = make_val(v, i);
        assert_true(sst_block_builder_add(bb, k, kl, (const uint8_t *)v, vl));
    }
}

/* Seeks to every key exactly, between keys, at an older snapshot, and prev from each. */
static void check_seeks(sst_block_iter *it, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t k[64];
        size_t kl = make_key(k, i);
        sst_block_iter_seek(it, k, kl); /* exact */
        check_entry(it, i);
        /* between keys: user key "user%06u" with an odd number sorts after key i */
        char uk[32];
        int ul = snprintf(uk, sizeof uk, "user%06u", i * 2 + 1);
        ikey_encode(k, uk, (size_t)ul, IKEY_MAX_SEQ, IKEY_TYPE_SEEK);
        sst_block_iter_seek(it, k, (size_t)ul + IKEY_TRAILER);
        if (i + 1 < n)
            check_entry(it, i + 1);
        else
            assert_false(sst_block_iter_valid(it));
        /* same user key, older snapshot than the entry: lands on the next entry */
        ul = snprintf(uk, sizeof uk, "user%06u", i * 2);
        ikey_encode(k, uk, (size_t)ul, 999 + i, IKEY_TYPE_SEEK);
        sst_block_iter_seek(it, k, kl);
        if (i + 1 < n)
            check_entry(it, i + 1);
        else
            assert_false(sst_block_iter_valid(it));
        if (i + 1 < n) { /* prev from every position */
            kl = make_key(k, i + 1);
            sst_block_iter_seek(it, k, kl);
            sst_block_iter_prev(it);
            check_entry(it, i);
        }
    }
    uint8_t before[16], after[16];
    ikey_encode(before, "a", 1, 5, IKEY_TYPE_VALUE); /* before the first */
    sst_block_iter_seek(it, before, 9);
    check_entry(it, 0);
    sst_block_iter_prev(it);
    assert_false(sst_block_iter_valid(it));
    ikey_encode(after, "zzz", 3, 5, IKEY_TYPE_VALUE); /* past the last */
    sst_block_iter_seek(it, after, 11);
    assert_false(sst_block_iter_valid(it));
    assert_int_equal(it->err, KURA_OK);
}

static void roundtrip(int interval, unsigned n)
{
    sst_block_builder bb;
    sst_block_builder_init(&bb, interval);
    build_block(&bb, n);
    size_t len, estimate = sst_block_builder_size(&bb);
    const uint8_t *data = sst_block_builder_finish(&bb, &len);
    assert_non_null(data);
    assert_int_equal(len, estimate);
    sst_block b;
    assert_true(sst_block_parse(&b, data, len));
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, &b);
    unsigned count = 0;
    for (sst_block_iter_seek_first(&it); sst_block_iter_valid(&it); sst_block_iter_next(&it))
        check_entry(&it, count++);
    assert_int_equal(count, n);
    assert_int_equal(it.err, KURA_OK);
    /* backward over every restart boundary */
    for (sst_block_iter_seek_last(&it); sst_block_iter_valid(&it); sst_block_iter_prev(&it))
        check_entry(&it, --count);
    assert_int_equal(count, 0);
    check_seeks(&it, n);
    sst_block_iter_destroy(&it);
    sst_block_builder_free(&bb);
}

static void test_block_roundtrip(void **state)
{
    (void)state;
    int intervals[] = {1, 2, 3, 16, 1000};
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        roundtrip(intervals[i], 1);
        roundtrip(intervals[i], 17);
        roundtrip(intervals[i], 500);
    }
}

static void test_block_empty_and_reset(void **state)
{
    (void)state;
    sst_block_builder bb;
    sst_block_builder_init(&bb, 16);
    size_t len;
    const uint8_t *data = sst_block_builder_finish(&bb, &len);
    assert_int_equal(len, 8); /* restart 0 + count 1 */
    sst_block b;
    assert_true(sst_block_parse(&b, data, len));
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, &b);
    sst_block_iter_seek_first(&it);
    assert_false(sst_block_iter_valid(&it));
    sst_block_iter_seek_last(&it);
    assert_false(sst_block_iter_valid(&it));
    uint8_t k[16];
    ikey_encode(k, "x", 1, 1, 1);
    sst_block_iter_seek(&it, k, 9);
    assert_false(sst_block_iter_valid(&it));
    /* reuse after reset */
    sst_block_builder_reset(&bb);
    build_block(&bb, 40);
    data = sst_block_builder_finish(&bb, &len);
    assert_true(sst_block_parse(&b, data, len));
    sst_block_iter_set(&it, &b);
    unsigned count = 0;
    for (sst_block_iter_seek_first(&it); sst_block_iter_valid(&it); sst_block_iter_next(&it))
        check_entry(&it, count++);
    assert_int_equal(count, 40);
    sst_block_iter_destroy(&it);
    sst_block_builder_free(&bb);
}

static void test_block_long_keys(void **state)
{
    (void)state;
    /* keys longer than the cursor's inline buffer, sharing long prefixes */
    sst_block_builder bb;
    sst_block_builder_init(&bb, 4);
    enum { N = 50, KL = 1000 };
    uint8_t *keys = malloc((size_t)N * KL);
    for (unsigned i = 0; i < N; i++) {
        uint8_t *k = keys + (size_t)i * KL;
        memset(k, 'p', KL - 12);
        snprintf((char *)k + KL - 12, 5, "%04u", i);
        enc_fixed64(k + KL - 8, ikey_pack(7, IKEY_TYPE_VALUE));
        assert_true(sst_block_builder_add(&bb, k, KL, k, i));
    }
    size_t len;
    const uint8_t *data = sst_block_builder_finish(&bb, &len);
    sst_block b;
    assert_true(sst_block_parse(&b, data, len));
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, &b);
    for (unsigned i = 0; i < N; i++) {
        sst_block_iter_seek(&it, keys + (size_t)i * KL, KL);
        size_t kl, vl;
        assert_true(sst_block_iter_valid(&it));
        const uint8_t *k = sst_block_iter_key(&it, &kl);
        const uint8_t *v = sst_block_iter_value(&it, &vl);
        assert_int_equal(kl, KL);
        assert_memory_equal(k, keys + (size_t)i * KL, KL);
        assert_int_equal(vl, i);
        if (i)
            assert_memory_equal(v, keys + (size_t)i * KL, i);
    }
    sst_block_iter_destroy(&it);
    sst_block_builder_free(&bb);
    free(keys);
}

/* Walks a (possibly malformed) block every way; must terminate without bad reads (ASan). */
static void exercise(const uint8_t *data, size_t len)
{
    sst_block b;
    if (!sst_block_parse(&b, data, len))
        return;
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, &b);
    unsigned steps = 0;
    for (sst_block_iter_seek_first(&it); sst_block_iter_valid(&it) && steps < 10000;
         sst_block_iter_next(&it))
        steps++;
    steps = 0;
    for (sst_block_iter_seek_last(&it); sst_block_iter_valid(&it) && steps < 10000;
         sst_block_iter_prev(&it))
        steps++;
    uint8_t k[64];
    for (unsigned i = 0; i < 60; i += 7) {
        size_t kl = make_key(k, i);
        sst_block_iter_seek(&it, k, kl);
        if (sst_block_iter_valid(&it))
            sst_block_iter_prev(&it);
    }
    sst_block_iter_destroy(&it);
}

static void test_block_malformed(void **state)
{
    (void)state;
    sst_block_builder bb;
    sst_block_builder_init(&bb, 4);
    build_block(&bb, 60);
    size_t len;
    const uint8_t *data = sst_block_builder_finish(&bb, &len);
    /* every truncation, copied into an exact-size buffer so ASan sees overreads */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, data, cut);
        exercise(copy, cut);
        free(copy);
    }
    /* random byte damage */
    uint64_t rs = test_seed();
    uint8_t *copy = malloc(len);
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, data, len);
        int flips = 1 + (int)(test_rand(&rs) % 4);
        for (int f = 0; f < flips; f++)
            copy[test_rand(&rs) % len] ^= (uint8_t)(1 + test_rand(&rs) % 255);
        exercise(copy, len);
    }
    /* pure garbage */
    for (int round = 0; round < 500; round++) {
        size_t n = test_rand(&rs) % 300;
        uint8_t *g = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            g[i] = (uint8_t)test_rand(&rs);
        exercise(g, n);
        free(g);
    }
    free(copy);
    sst_block_builder_free(&bb);
    /* a damaged entry is reported, not skipped */
    uint8_t bad[] = {0, 200, 1, 'x', 0, 0, 0, 0, 1, 0, 0, 0};
    sst_block b;
    assert_true(sst_block_parse(&b, bad, sizeof bad));
    sst_block_iter it;
    sst_block_iter_init(&it, IKEY_TRAILER);
    sst_block_iter_set(&it, &b);
    sst_block_iter_seek_first(&it);
    assert_false(sst_block_iter_valid(&it));
    assert_int_equal(it.err, KURA_E_CORRUPTION);
    sst_block_iter_destroy(&it);
    assert_false(sst_block_parse(&b, bad, 3));
    uint8_t many[8] = {0, 0, 0, 0, 0xff, 0xff, 0, 0};
    assert_false(sst_block_parse(&b, many, sizeof many));
}

static void test_bloom(void **state)
{
    (void)state;
    enum { N = 100000, PROBES = 100000 };
    sst_bloom_builder bb;
    sst_bloom_builder_init(&bb, 10);
    char k[32];
    for (unsigned i = 0; i < N; i++) {
        int n = snprintf(k, sizeof k, "key-%u", i);
        assert_true(sst_bloom_builder_add(&bb, (const uint8_t *)k, (size_t)n));
    }
    kbuf out = KBUF_INIT;
    assert_true(sst_bloom_builder_finish(&bb, &out));
    assert_int_equal(out.len, N * 10 / 8 + 1);
    assert_int_equal(out.data[out.len - 1], 7);
    sst_bloom f;
    assert_true(sst_bloom_parse(&f, out.data, out.len));
    for (unsigned i = 0; i < N; i++) {
        int n = snprintf(k, sizeof k, "key-%u", i);
        if (!sst_bloom_may_contain(&f, (const uint8_t *)k, (size_t)n))
            fail_msg("false negative for %s", k);
    }
    unsigned fp = 0;
    for (unsigned i = 0; i < PROBES; i++) {
        int n = snprintf(k, sizeof k, "missing-%u", i);
        fp += sst_bloom_may_contain(&f, (const uint8_t *)k, (size_t)n);
    }
    double rate = (double)fp / PROBES;
    fprintf(stderr, "bloom 10 bits/key: false-positive rate %.3f%%\n", rate * 100);
    if (rate >= 0.02)
        fail_msg("false-positive rate %.4f >= 0.02", rate);
    /* k for other widths, and parse rejects malformed filters */
    assert_int_equal(sst_bloom_k(1), 1);
    assert_int_equal(sst_bloom_k(20), 14);
    assert_int_equal(sst_bloom_k(100), 30);
    uint8_t junk[3] = {0, 0, 0};
    assert_false(sst_bloom_parse(&f, junk, 3));
    junk[2] = 31;
    assert_false(sst_bloom_parse(&f, junk, 3));
    assert_false(sst_bloom_parse(&f, junk, 1));
    /* a filter over nothing rejects everything and still has 64 bits */
    sst_bloom_builder empty;
    sst_bloom_builder_init(&empty, 10);
    kbuf_clear(&out);
    assert_true(sst_bloom_builder_finish(&empty, &out));
    assert_int_equal(out.len, 9);
    assert_true(sst_bloom_parse(&f, out.data, out.len));
    assert_false(sst_bloom_may_contain(&f, (const uint8_t *)"a", 1));
    sst_bloom_builder_free(&empty);
    sst_bloom_builder_free(&bb);
    kbuf_free(&out);
}

static void codec_roundtrip(kura_compression c, const uint8_t *raw, size_t n, bool shrinks)
{
    kbuf out = KBUF_INIT;
    assert_true(sst_compress(c, raw, n, &out));
    if (shrinks)
        assert_true(out.len < n / 2);
    size_t ulen, hdr;
    assert_true(sst_uncompressed_size(c, out.data, out.len, &ulen, &hdr));
    assert_int_equal(ulen, n);
    uint8_t *back = malloc(n + 1);
    assert_true(sst_uncompress(c, out.data + hdr, out.len - hdr, back, ulen));
    assert_memory_equal(back, raw, n);
    /* wrong sizes and damaged streams are rejected */
    if (n > 0) {
        assert_false(sst_uncompress(c, out.data + hdr, out.len - hdr, back, ulen - 1));
        assert_false(sst_uncompress(c, out.data + hdr, out.len / 2 > hdr ? out.len / 2 - hdr : 0,
                                    back, ulen));
    }
    free(back);
    kbuf_free(&out);
}

static void test_compress(void **state)
{
    (void)state;
    enum { N = 8192 };
    uint8_t *text = malloc(N), *noise = malloc(N);
    uint64_t rs = 42;
    for (size_t i = 0; i < N; i++) {
        text[i] = (uint8_t)"the quick brown fox "[i % 20];
        noise[i] = (uint8_t)test_rand(&rs);
    }
    kura_compression cs[] = {KURA_COMPRESS_LZ4, KURA_COMPRESS_ZLIB};
    for (int i = 0; i < 2; i++) {
        codec_roundtrip(cs[i], text, N, true);
        codec_roundtrip(cs[i], noise, N, false);
        codec_roundtrip(cs[i], text, 1, false);
        codec_roundtrip(cs[i], text, 0, false);
    }
    /* a stored size the payload could never expand to is rejected before any allocation */
    uint8_t hdr[12];
    size_t n = enc_varint64(hdr, (uint64_t)1 << 30);
    hdr[n] = 0;
    size_t ulen, h;
    assert_false(sst_uncompressed_size(KURA_COMPRESS_LZ4, hdr, n + 1, &ulen, &h));
    assert_false(sst_uncompressed_size(KURA_COMPRESS_ZLIB, hdr, n + 1, &ulen, &h));
    assert_false(sst_uncompressed_size(KURA_COMPRESS_NONE, hdr, n + 1, &ulen, &h));
    free(text);
    free(noise);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_roundtrip), cmocka_unit_test(test_block_empty_and_reset),
        cmocka_unit_test(test_block_long_keys), cmocka_unit_test(test_block_malformed),
        cmocka_unit_test(test_bloom),           cmocka_unit_test(test_compress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
