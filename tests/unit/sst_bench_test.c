/*
 * sst_bench_test.c - a micro benchmark of one SSTable, printed (no timed assertions).
 *
 * 200k entries shaped like the item layer's (8-byte hash prefix, partition and sort key, a
 * 100-byte value), LZ4, 4 KiB blocks, 10 bloom bits/key. Measures build speed, point gets of
 * present keys (block cache warm, and with no cache: one pread + decompress per get), gets of
 * absent keys (answered by the bloom filter), full scans forward and backward, and seeks
 * followed by short scans. Results go to stderr; the test only checks that every read was
 * right. Rates are per second of this thread's CPU time.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sstable/table_reader.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/ikey.h"
#include "util/thread.h"

enum { N = 200000, VLEN = 100 };

/* A user key: hash64(pk) big-endian || pk || sk, as the item layer builds them; make_keys
 * returns them sorted, 4 sort keys per partition key. */
typedef struct bkey {
    uint8_t k[40];
    uint8_t len;
} bkey;

static int cmp_bkey(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    return ukey_cmp(x->k, x->len, y->k, y->len);
}

static bkey *make_keys(void)
{
    bkey *keys = malloc(N * sizeof *keys);
    for (unsigned i = 0; i < N; i++) {
        char pk[256], sk[16]; /* pk: GCC's -Warray-bounds misfires on XXH3's long-input paths
                                  when inlined over a small array */
        int pl = snprintf(pk, sizeof pk, "user%06u", i / 4), sl = snprintf(sk, sizeof sk, "ord%04u", i % 4);
        enc_fixed64_be(keys[i].k, kura_hash64(pk, (size_t)pl));
        memcpy(keys[i].k + 8, pk, (size_t)pl);
        memcpy(keys[i].k + 8 + pl, sk, (size_t)sl);
        keys[i].len = (uint8_t)(8 + pl + sl);
    }
    qsort(keys, N, sizeof *keys, cmp_bkey);
    return keys;
}

static void make_val(uint8_t *v, unsigned i)
{
    static const char doc[] = "{\"name\":\"item\",\"price\":12.5,\"tags\":[\"a\",\"b\"]}";
    for (int j = 0; j < VLEN; j++)
        v[j] = (uint8_t)doc[(i + (unsigned)j) % (sizeof doc - 1)];
}

/* Rates use this thread's CPU time: the machine is shared, and wall time would measure the
 * neighbours as much as the code. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double rate(uint64_t n, uint64_t t0)
{
    return (double)n / ((double)(cpu_ns() - t0) / 1e9);
}

static void bench_gets(sst_reader *r, const bkey *keys, const char *label, bool present)
{
    enum { GETS = 200000 };
    uint64_t rs = 1;
    kbuf val = KBUF_INIT;
    uint8_t ik[64];
    uint64_t t0 = cpu_ns();
    unsigned found_n = 0;
    for (int i = 0; i < GETS; i++) {
        unsigned u = (unsigned)(test_rand(&rs) % N);
        size_t kl = keys[u].len;
        memcpy(ik, keys[u].k, kl);
        if (!present)
            ik[kl++] = '~'; /* a key between two present ones */
        enc_fixed64(ik + kl, ikey_pack(IKEY_MAX_SEQ, IKEY_TYPE_SEEK));
        bool found;
        unsigned type;
        assert_kura_ok(sst_reader_get(r, ik, kl + IKEY_TRAILER, true, &val, &type, &found));
        found_n += found;
    }
    fprintf(stderr, "  %-34s %10.0f gets/s\n", label, rate(GETS, t0));
    assert_int_equal(found_n, present ? GETS : 0);
    kbuf_free(&val);
}

static void bench_scans(sst_reader *r)
{
    kv_iter *it = sst_reader_iter(r, true);
    uint64_t t0 = cpu_ns(), n = 0, bytes = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it), n++) {
        size_t vl;
        kv_iter_value(it, &vl);
        bytes += vl;
    }
    fprintf(stderr, "  %-34s %10.0f entries/s\n", "scan forward", rate(n, t0));
    assert_int_equal(n, N);
    assert_int_equal(bytes, (uint64_t)N * VLEN);
    t0 = cpu_ns();
    n = 0;
    for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
        n++;
    fprintf(stderr, "  %-34s %10.0f entries/s\n", "scan backward", rate(n, t0));
    assert_int_equal(n, N);
    kv_iter_free(it);
}

static void bench_seeks(sst_reader *r, const bkey *keys)
{
    enum { SEEKS = 100000, NEXTS = 10 };
    kv_iter *it = sst_reader_iter(r, true);
    uint64_t rs = 3, t0 = cpu_ns(), n = 0;
    uint8_t ik[64];
    for (int i = 0; i < SEEKS; i++) {
        unsigned u = (unsigned)(test_rand(&rs) % N);
        memcpy(ik, keys[u].k, keys[u].len);
        enc_fixed64(ik + keys[u].len, ikey_pack(IKEY_MAX_SEQ, IKEY_TYPE_SEEK));
        kv_iter_seek(it, ik, keys[u].len + IKEY_TRAILER);
        for (int j = 0; j < NEXTS && kv_iter_valid(it); j++, kv_iter_next(it))
            n++;
    }
    fprintf(stderr, "  %-34s %10.0f seeks/s (%llu entries read)\n", "seek + 10 next",
            rate(SEEKS, t0), (unsigned long long)n);
    assert_true(n > (uint64_t)SEEKS * (NEXTS - 1));
    kv_iter_free(it);
}

static void test_bench(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_bench");
    char path[512];
    snprintf(path, sizeof path, "%s/b.sst", dir);
    bkey *keys = make_keys();
    sst_builder *b;
    assert_kura_ok(sst_builder_new(NULL, path, NULL, &b));
    uint8_t ik[64], v[VLEN];
    uint64_t t0 = cpu_ns();
    for (unsigned i = 0; i < N; i++) {
        memcpy(ik, keys[i].k, keys[i].len);
        enc_fixed64(ik + keys[i].len, ikey_pack(1000 + i, IKEY_TYPE_VALUE));
        make_val(v, i);
        assert_kura_ok(sst_builder_add(b, ik, keys[i].len + IKEY_TRAILER, v, VLEN));
    }
    sst_meta m;
    assert_kura_ok(sst_builder_finish(b, &m));
    fprintf(stderr, "sstable micro benchmark: %d entries, %llu bytes (LZ4, 4 KiB blocks)\n", N,
            (unsigned long long)m.file_size);
    fprintf(stderr, "  %-34s %10.0f entries/s\n", "build (CPU, excl. fdatasync wait)", rate(N, t0));

    block_cache *cache = block_cache_new(64 << 20);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, m.file_size, cache, &r));
    bench_gets(r, keys, "get present (cold cache)", true);
    bench_gets(r, keys, "get present (warm cache)", true);
    bench_gets(r, keys, "get absent (bloom)", false);
    bench_scans(r);
    bench_seeks(r, keys);
    sst_reader_close(r);
    block_cache_free(cache);
    assert_kura_ok(sst_reader_open(NULL, path, m.file_size, NULL, &r));
    bench_gets(r, keys, "get present (no cache: pread+lz4)", true);
    sst_reader_close(r);
    sst_meta_clear(&m);
    free(keys);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bench)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
