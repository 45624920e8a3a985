/*
 * throttle_key_test.c - the per-key limit (engine/throttle/key.c) with a driven clock: one
 * partition-key value written at 1,500 WCU a second is refused past 1,000 a second while the
 * same total over 100 cold keys, or over 10 shards of the hot key, all pass; reads at 3,000
 * RCU; no burst beyond one second for an idle key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "engine/throttle/key.h"

#define T0 5000000ll
#define SECONDS 10

/* Writes of 1 WCU at `total` a second for SECONDS seconds, spread evenly in time and
 * round-robin over `nkeys` keys; returns how many were refused. */
static long run_writes(int nkeys, long total)
{
    thr_key *keys = calloc((size_t)nkeys, sizeof *keys);
    assert_non_null(keys);
    for (int i = 0; i < nkeys; i++)
        thr_key_init(&keys[i], T0);
    long refused = 0;
    for (long n = 0; n < total * SECONDS; n++) {
        int64_t t = T0 + n * 1000 / total;
        if (!thr_bucket_try_consume(&keys[n % nkeys].write, 1 * THR_MU, t))
            refused++;
    }
    free(keys);
    return refused;
}

static void test_hot_key_refused_cold_keys_pass(void **state)
{
    (void)state;
    long hot = run_writes(1, 1500);
    /* at most 1,000 a second after the first second's 1,000: 5,000 of 15,000 refused
     * give or take the edges */
    assert_in_range(hot, 4000, 5000);
    assert_int_equal(run_writes(100, 1500), 0);
    assert_int_equal(run_writes(10, 1500), 0); /* write sharding: 10 suffixes */
    assert_int_equal(run_writes(1, 1000), 0);  /* exactly the limit passes */
}

static void test_read_limit_3000(void **state)
{
    (void)state;
    thr_key k;
    thr_key_init(&k, T0);
    /* 6,000 eventually consistent reads of 4 KB (0.5 RCU) in the first second: 3,000 RCU */
    int ok = 0;
    for (int i = 0; i < 7000; i++)
        ok += thr_bucket_try_consume(&k.read, 500, T0);
    assert_int_equal(ok, 6000);
    /* the write limit is its own */
    assert_true(thr_bucket_try_consume(&k.write, 1000 * THR_MU, T0));
    assert_false(thr_bucket_try_consume(&k.write, 1, T0));
}

static void test_no_burst_beyond_one_second(void **state)
{
    (void)state;
    thr_key k;
    thr_key_init(&k, T0);
    /* an hour idle saves one second of the limit, no more */
    assert_int_equal(thr_bucket_balance(&k.write, T0 + 3600000), THR_KEY_WCU_MU);
    assert_false(thr_bucket_try_consume(&k.write, THR_KEY_WCU_MU + 1, T0 + 3600000));
    assert_int_equal(thr_bucket_balance(&k.read, T0 + 3600000), THR_KEY_RCU_MU);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hot_key_refused_cold_keys_pass),
        cmocka_unit_test(test_read_limit_3000),
        cmocka_unit_test(test_no_burst_beyond_one_second),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
