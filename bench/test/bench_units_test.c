/*
 * bench_units_test.c - unit tests of kura-bench's building blocks that the smoke test
 * cannot check exactly: histogram percentiles, key and value formats, JSON escaping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/hist.h"
#include "bench/json.h"
#include "bench/keys.h"

/* Asserts |got - want| <= tol * want, printing both. */
static void assert_near(double got, double want, double tol)
{
    double diff = got > want ? got - want : want - got;
    if (diff > tol * want)
        fail_msg("got %.4f, want %.4f (+-%.0f%%)", got, want, tol * 100);
}

static void test_hist_uniform(void **state)
{
    (void)state;
    bench_hist h;
    bench_hist_init(&h);
    for (uint64_t us = 1; us <= 10000; us++)
        bench_hist_add(&h, us * 1000);
    assert_int_equal(h.count, 10000);
    assert_near(bench_hist_percentile_us(&h, 50), 5000, 0.07);
    assert_near(bench_hist_percentile_us(&h, 99), 9900, 0.07);
    assert_near(bench_hist_percentile_us(&h, 100), 10000, 0.001);
}

static void test_hist_small_exact_and_merge(void **state)
{
    (void)state;
    bench_hist a, b;
    bench_hist_init(&a);
    bench_hist_init(&b);
    assert_true(bench_hist_percentile_us(&a, 50) == 0); /* empty */
    for (int i = 0; i < 100; i++)
        bench_hist_add(&a, 10); /* below BENCH_HIST_EXACT: exact buckets */
    for (int i = 0; i < 100; i++)
        bench_hist_add(&b, 1000000);
    bench_hist_merge(&a, &b);
    assert_int_equal(a.count, 200);
    assert_int_equal(a.min_ns, 10);
    assert_int_equal(a.max_ns, 1000000);
    assert_near(bench_hist_percentile_us(&a, 25), 0.010, 0.01);
    assert_near(bench_hist_percentile_us(&a, 99), 1000, 0.07);
    bench_hist_add(&a, UINT64_MAX); /* the last bucket exists */
    assert_int_equal(a.count, 201);
}

static void test_keys(void **state)
{
    (void)state;
    uint8_t k[16];
    bench_key_format(k, 16, 123);
    assert_memory_equal(k, "0000000000000123", 16);
    bench_key_missing(k, 16, 123);
    assert_memory_equal(k, "000000000000123x", 16);
    bench_key_format(k, 4, 9999);
    assert_memory_equal(k, "9999", 4);
    assert_true(bench_key_fits(16, 1000000));
    assert_true(bench_key_fits(7, 1000000)); /* 999999: 6 digits + the missing byte */
    assert_false(bench_key_fits(6, 1000000));
    assert_false(bench_key_fits(1, 1));
}

static void test_rng_below_in_range(void **state)
{
    (void)state;
    bench_rng r;
    bench_rng_seed(&r, 42);
    uint64_t seen[10] = {0};
    for (int i = 0; i < 10000; i++) {
        uint64_t v = bench_rng_below(&r, 10);
        assert_true(v < 10);
        seen[v]++;
    }
    for (int i = 0; i < 10; i++) /* each bucket near 1000 */
        assert_in_range(seen[i], 800, 1200);
    assert_int_not_equal(bench_seed_mix(1, 2, 3), bench_seed_mix(1, 2, 4));
}

static void test_values_half_compressible(void **state)
{
    (void)state;
    bench_values v;
    assert_int_equal(bench_values_init(&v, 100, 7), KURA_OK);
    size_t pos = 0;
    const uint8_t *a = bench_values_next(&v, &pos);
    assert_memory_equal(a, a + 50, 50); /* each 100-byte piece is 50 bytes twice */
    for (int i = 0; i < 100; i++)
        assert_true(a[i] >= ' ' && a[i] < 127);
    /* walking past the end wraps to the start */
    pos = v.len - 10;
    assert_ptr_equal(bench_values_next(&v, &pos), v.data);
    bench_values_free(&v);
}

static void test_json_escaping(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    bench_json j;
    bj_init(&j, f);
    bj_object_begin(&j, NULL);
    bj_string(&j, "s", "a\"b\\c\n\x01\xc3");
    bj_u64(&j, "n", 18446744073709551615ull);
    bj_double(&j, "inf", 1.0 / 0.0);
    bj_array_begin(&j, "empty");
    bj_array_end(&j);
    bj_object_end(&j);
    fclose(f);
    const char *want = "{\n"
                       "  \"s\": \"a\\\"b\\\\c\\n\\u0001\\u00c3\",\n"
                       "  \"n\": 18446744073709551615,\n"
                       "  \"inf\": null,\n"
                       "  \"empty\": []\n"
                       "}\n";
    assert_string_equal(buf, want);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_uniform),
        cmocka_unit_test(test_hist_small_exact_and_merge),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_rng_below_in_range),
        cmocka_unit_test(test_values_half_compressible),
        cmocka_unit_test(test_json_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
