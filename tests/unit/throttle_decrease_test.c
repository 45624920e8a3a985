/*
 * throttle_decrease_test.c - DynamoDB's limit on provisioned throughput decreases
 * (engine/throttle/decrease.c) across UTC days with a driven clock: 4 at once, then one an
 * hour, 27 in a day at most, a fresh allowance at midnight UTC.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/throttle/decrease.h"

#define DAY0 (20000ll * THR_DAY_MS) /* midnight UTC of some day in 2024 */
#define H THR_DECREASE_GAP_MS

/* Decreases as often as allowed, trying every minute of the UTC day starting at `day_ms`. */
static int greedy_day(thr_decrease *d, int64_t day_ms)
{
    int made = 0;
    for (int64_t t = day_ms; t < day_ms + THR_DAY_MS; t += 60000) {
        while (thr_decrease_allowed(d, t, NULL)) {
            thr_decrease_record(d, t);
            made++;
        }
    }
    return made;
}

static void test_four_then_hourly(void **state)
{
    (void)state;
    thr_decrease d;
    thr_decrease_init(&d);
    int64_t t = DAY0 + 10 * 60000; /* 00:10 UTC */
    for (int i = 0; i < 4; i++) {
        assert_true(thr_decrease_allowed(&d, t + i, NULL));
        thr_decrease_record(&d, t + i);
    }
    int64_t next = 0;
    assert_false(thr_decrease_allowed(&d, t + 4, &next));
    assert_int_equal(next, t + 3 + H); /* an hour after the last one */
    assert_false(thr_decrease_allowed(&d, t + 3 + H - 1, NULL));
    assert_true(thr_decrease_allowed(&d, t + 3 + H, NULL));
    thr_decrease_record(&d, t + 3 + H);
    assert_int_equal(thr_decrease_count(&d, t + 3 + H), 5);
    assert_false(thr_decrease_allowed(&d, t + 3 + 2 * H - 1, NULL));
}

static void test_27_a_day_and_midnight(void **state)
{
    (void)state;
    thr_decrease d;
    thr_decrease_init(&d);
    assert_int_equal(greedy_day(&d, DAY0), 27); /* 4 at 00:00, then 01:00 ... 23:00 */
    assert_int_equal(thr_decrease_count(&d, DAY0 + THR_DAY_MS - 1), 27);
    /* the next UTC day starts afresh, though the last decrease was an hour ago only */
    assert_int_equal(thr_decrease_count(&d, DAY0 + THR_DAY_MS), 0);
    assert_int_equal(greedy_day(&d, DAY0 + THR_DAY_MS), 27);
}

static void test_next_is_capped_at_midnight(void **state)
{
    (void)state;
    thr_decrease d;
    thr_decrease_init(&d);
    int64_t t = DAY0 + THR_DAY_MS - 30 * 60000; /* 23:30 UTC */
    for (int i = 0; i < 4; i++)
        thr_decrease_record(&d, t);
    int64_t next = 0;
    assert_false(thr_decrease_allowed(&d, t + 60000, &next));
    assert_int_equal(next, DAY0 + THR_DAY_MS); /* a new day's four, before the hour is up */
    assert_true(thr_decrease_allowed(&d, DAY0 + THR_DAY_MS, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_then_hourly),
        cmocka_unit_test(test_27_a_day_and_midnight),
        cmocka_unit_test(test_next_is_capped_at_midnight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
