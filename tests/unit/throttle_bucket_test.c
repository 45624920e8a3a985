/*
 * throttle_bucket_test.c - the token bucket (engine/throttle/bucket.c) with a driven clock and
 * exact milli-units: refill by elapsed time with carried fractions, the burst cap of 300 s of
 * rate, all-or-nothing consume, a negative balance after consume-after, rate changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/throttle/bucket.h"

#define T0 1000000ll /* an arbitrary start of the driven clock */

static void test_refill_exact(void **state)
{
    (void)state;
    thr_bucket b;
    thr_bucket_init(&b, 100 * THR_MU, THR_BURST_S, T0);
    assert_int_equal(thr_bucket_balance(&b, T0), 100 * THR_MU); /* one second to start */
    assert_true(thr_bucket_try_consume(&b, 100 * THR_MU, T0));
    assert_int_equal(thr_bucket_balance(&b, T0), 0);
    assert_int_equal(thr_bucket_balance(&b, T0 + 250), 25 * THR_MU);
    assert_int_equal(thr_bucket_balance(&b, T0 + 1000), 100 * THR_MU);
    /* 7 milli-units a second refilled in 1 ms steps: each step carries 0.007 of a milli-unit */
    thr_bucket_init(&b, 7, THR_BURST_S, T0); /* 7 milli-units a second */
    assert_true(thr_bucket_try_consume(&b, 7, T0));
    for (int i = 1; i <= 1000; i++)
        thr_bucket_refill(&b, T0 + i); /* 1000 steps of 1 ms: 7 * 1 / 1000 each */
    assert_int_equal(thr_bucket_balance(&b, T0 + 1000), 7);
}

static void test_burst_capped_at_300s(void **state)
{
    (void)state;
    thr_bucket b;
    thr_bucket_init(&b, 100 * THR_MU, THR_BURST_S, T0);
    assert_int_equal(thr_bucket_capacity(&b), 30000 * THR_MU);
    assert_int_equal(thr_bucket_balance(&b, T0 + 299000), 30000 * THR_MU); /* 1 s + 299 s */
    assert_true(thr_bucket_try_consume(&b, 1, T0 + 299000)); /* not full: refills again */
    assert_int_equal(thr_bucket_balance(&b, T0 + 3600000), 30000 * THR_MU); /* an hour idle */
    /* the whole burst is usable at once, and not one milli-unit more */
    assert_false(thr_bucket_try_consume(&b, 30000 * THR_MU + 1, T0 + 3600000));
    assert_true(thr_bucket_try_consume(&b, 30000 * THR_MU, T0 + 3600000));
    assert_false(thr_bucket_try_consume(&b, 1, T0 + 3600000));
    /* a clock going back refills nothing and does not break the balance */
    assert_int_equal(thr_bucket_balance(&b, T0), 0);
    assert_int_equal(thr_bucket_balance(&b, T0 + 3601000), 100 * THR_MU);
}

static void test_consume_all_or_nothing(void **state)
{
    (void)state;
    thr_bucket b;
    thr_bucket_init(&b, 10 * THR_MU, THR_BURST_S, T0);
    assert_true(thr_bucket_try_consume(&b, 6 * THR_MU, T0));
    assert_false(thr_bucket_try_consume(&b, 5 * THR_MU, T0)); /* 4 left: refused whole */
    assert_int_equal(thr_bucket_balance(&b, T0), 4 * THR_MU);  /* nothing half-taken */
    assert_true(thr_bucket_try_consume(&b, 4 * THR_MU, T0));
    assert_false(thr_bucket_fits(&b, 500, T0 + 49)); /* 0.49 units accrued: not 0.5 */
    assert_true(thr_bucket_try_consume(&b, 500, T0 + 50));
}

static void test_consume_after_goes_negative(void **state)
{
    (void)state;
    thr_bucket b;
    thr_bucket_init(&b, 10 * THR_MU, THR_BURST_S, T0);
    thr_bucket_consume_after(&b, 35 * THR_MU, T0); /* a Query's bytes, known after */
    assert_int_equal(thr_bucket_balance(&b, T0), -25 * THR_MU);
    assert_false(thr_bucket_try_consume(&b, 1, T0 + 2000)); /* -5: later requests wait */
    assert_int_equal(thr_bucket_balance(&b, T0 + 2000), -5 * THR_MU);
    assert_false(thr_bucket_try_consume(&b, 5 * THR_MU, T0 + 2999));
    assert_true(thr_bucket_try_consume(&b, 5 * THR_MU, T0 + 3000));
}

static void test_set_rate_keeps_burst_rule(void **state)
{
    (void)state;
    thr_bucket b;
    thr_bucket_init(&b, 100 * THR_MU, THR_BURST_S, T0);
    assert_int_equal(thr_bucket_balance(&b, T0 + 600000), 30000 * THR_MU);
    thr_bucket_set_rate(&b, 10 * THR_MU, T0 + 600000); /* decrease: burst cut to 300 s */
    assert_int_equal(thr_bucket_capacity(&b), 3000 * THR_MU);
    assert_int_equal(thr_bucket_balance(&b, T0 + 600000), 3000 * THR_MU);
    assert_true(thr_bucket_try_consume(&b, 3000 * THR_MU, T0 + 600000));
    assert_int_equal(thr_bucket_balance(&b, T0 + 601000), 10 * THR_MU);
    /* increase: the time before the change refills at the old rate, after at the new */
    thr_bucket_set_rate(&b, 1000 * THR_MU, T0 + 602000); /* 20 at 10/s */
    assert_int_equal(thr_bucket_balance(&b, T0 + 602000), 20 * THR_MU);
    assert_int_equal(thr_bucket_balance(&b, T0 + 603000), 1020 * THR_MU);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refill_exact),
        cmocka_unit_test(test_burst_capped_at_300s),
        cmocka_unit_test(test_consume_all_or_nothing),
        cmocka_unit_test(test_consume_after_goes_negative),
        cmocka_unit_test(test_set_rate_keeps_burst_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
