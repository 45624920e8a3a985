/*
 * throttle_ondemand_test.c - the on-demand rule (engine/throttle/ondemand.c) with a driven
 * clock: a new table's warm throughput, double the previous peak at once, no second doubling
 * within 30 minutes, the OnDemandThroughput maximum and which limit refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/throttle/ondemand.h"

#define T0 (1000000ll * 1000) /* a whole second, a whole minute */
#define S 1000ll
#define MIN (60 * S)

/* Admits `units` WCU in 1-unit writes in the second starting at `t`; returns how many fit. */
static long fill_second(thr_ondemand *od, long units, int64_t t)
{
    long ok = 0;
    for (long i = 0; i < units; i++) {
        if (thr_od_check(od, THR_MU, t) == THR_OD_FITS) {
            thr_od_add(od, THR_MU, t);
            ok++;
        }
    }
    return ok;
}

static void test_warm_throughput(void **state)
{
    (void)state;
    thr_ondemand od;
    thr_od_init(&od, THR_OD_WARM_WCU_MU, -1, T0);
    assert_int_equal(thr_od_limit_at(&od, T0), 4000 * THR_MU);
    assert_int_equal(fill_second(&od, 5000, T0), 4000);
    assert_int_equal(thr_od_check(&od, THR_MU, T0 + 999), THR_OD_OVER_PEAK);
    assert_int_equal(thr_od_check(&od, 4000 * THR_MU, T0 + S), THR_OD_FITS); /* next second */
    assert_int_equal(thr_od_check(&od, 4000 * THR_MU + 1, T0 + S), THR_OD_OVER_PEAK);
}

static void test_doubling_takes_30_minutes(void **state)
{
    (void)state;
    thr_ondemand od;
    thr_od_init(&od, 100 * THR_MU, -1, T0); /* a small warm throughput: 100 WCU */
    assert_int_equal(fill_second(&od, 100, T0), 100);
    /* the peak of 100 is not the previous peak until its minute ended 30 minutes ago */
    assert_int_equal(thr_od_limit_at(&od, T0 + 30 * MIN - 1), 100 * THR_MU);
    assert_int_equal(thr_od_limit_at(&od, T0 + 31 * MIN), 200 * THR_MU);
    /* double at once; sustained, 200 becomes the previous peak 30 minutes later, not before */
    int64_t t = T0 + 31 * MIN;
    assert_int_equal(fill_second(&od, 300, t), 200);
    assert_int_equal(thr_od_limit_at(&od, t + 10 * MIN), 200 * THR_MU);
    assert_int_equal(fill_second(&od, 300, t + 10 * MIN), 200);
    assert_int_equal(thr_od_limit_at(&od, t + 31 * MIN), 400 * THR_MU);
    assert_int_equal(thr_od_limit_at(&od, t + 41 * MIN), 400 * THR_MU);
    /* the peak does not decay after a quiet day */
    assert_int_equal(thr_od_limit_at(&od, t + 24 * 60 * MIN), 400 * THR_MU);
}

static void test_maximum_first(void **state)
{
    (void)state;
    thr_ondemand od;
    thr_od_init(&od, THR_OD_WARM_WCU_MU, 50 * THR_MU, T0);
    assert_int_equal(thr_od_limit_at(&od, T0), 50 * THR_MU);
    assert_int_equal(fill_second(&od, 60, T0), 50);
    assert_int_equal(thr_od_check(&od, THR_MU, T0), THR_OD_OVER_MAX);
    /* a request past both limits is refused by the maximum */
    assert_int_equal(thr_od_check(&od, 5000 * THR_MU, T0 + S), THR_OD_OVER_MAX);
    thr_od_set_max(&od, -1);
    assert_int_equal(thr_od_check(&od, 5000 * THR_MU, T0 + S), THR_OD_OVER_PEAK);
    assert_int_equal(thr_od_check(&od, 4000 * THR_MU, T0 + S), THR_OD_FITS);
    /* a cost known late is counted even past the limit, and the second is full */
    thr_od_add(&od, 4500 * THR_MU, T0 + S);
    assert_int_equal(thr_od_check(&od, 1, T0 + S), THR_OD_OVER_PEAK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warm_throughput),
        cmocka_unit_test(test_doubling_takes_30_minutes),
        cmocka_unit_test(test_maximum_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
