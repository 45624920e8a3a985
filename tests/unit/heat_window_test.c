/*
 * heat_window_test.c - the sliding window of per-second units (engine/heat_window.c) with a
 * driven clock: sums are exact, seconds leave the window exactly when they are `secs` old,
 * a reused slot forgets its old second, late records land in their own second or are
 * dropped when older than the window, and the window is checked against a model of every
 * second over a random walk of the clock.
 */
#include "testutil.h"

#include <string.h>

#include "engine/heat_window.h"

static void sum(const heat_window *w, int64_t now_ms, uint32_t secs, uint64_t *rd,
                uint64_t *wr)
{
    heat_window_sum(w, now_ms, secs, rd, wr);
}

static void test_exact_and_expiry(void **state)
{
    (void)state;
    heat_window w;
    heat_window_init(&w);
    uint64_t rd, wr;
    sum(&w, 0, 60, &rd, &wr);
    assert_int_equal(rd, 0);
    assert_int_equal(wr, 0);
    /* Second 100: 3 half read units and 2 write units (4 half units) over two records. */
    heat_window_add(&w, 100000, 1, 4);
    heat_window_add(&w, 100999, 2, 0);
    /* Second 101: one eventually consistent read (1 half unit). */
    heat_window_add(&w, 101000, 1, 0);
    sum(&w, 101500, 1, &rd, &wr);
    assert_int_equal(rd, 1);
    assert_int_equal(wr, 0);
    sum(&w, 101500, 2, &rd, &wr);
    assert_int_equal(rd, 4);
    assert_int_equal(wr, 4);
    /* Second 100 is in the 10-second window up to second 109 and out of it at second 110. */
    sum(&w, 109999, 10, &rd, &wr);
    assert_int_equal(rd, 4);
    assert_int_equal(wr, 4);
    sum(&w, 110000, 10, &rd, &wr);
    assert_int_equal(rd, 1);
    assert_int_equal(wr, 0);
    /* In the 60-second window until second 159. */
    sum(&w, 159999, 60, &rd, &wr);
    assert_int_equal(rd, 4);
    sum(&w, 160000, 60, &rd, &wr);
    assert_int_equal(rd, 1);
    sum(&w, 161000, 60, &rd, &wr);
    assert_int_equal(rd, 0);
    /* secs beyond the ring are clamped, 0 means the current second. */
    sum(&w, 101000, 1000, &rd, &wr);
    assert_int_equal(rd, 4);
    sum(&w, 101000, 0, &rd, &wr);
    assert_int_equal(rd, 1);
    /* A query in the past does not count the future. */
    sum(&w, 100500, 60, &rd, &wr);
    assert_int_equal(rd, 3);
}

static void test_reuse_and_late(void **state)
{
    (void)state;
    heat_window w;
    heat_window_init(&w);
    uint64_t rd, wr;
    heat_window_add(&w, 5000, 7, 7);
    /* Second 65 reuses second 5's slot: second 5 is forgotten, not added. */
    heat_window_add(&w, 65000, 1, 0);
    sum(&w, 65000, 60, &rd, &wr);
    assert_int_equal(rd, 1);
    assert_int_equal(wr, 0);
    /* A record 30 s late lands in its own second. */
    heat_window_add(&w, 35000, 2, 0);
    sum(&w, 65000, 31, &rd, &wr);
    assert_int_equal(rd, 3);
    sum(&w, 65000, 30, &rd, &wr);
    assert_int_equal(rd, 1);
    /* A record of second 5, now older than the window, is dropped and keeps second 65. */
    heat_window_add(&w, 5000, 100, 100);
    sum(&w, 65000, 60, &rd, &wr);
    assert_int_equal(rd, 3);
    assert_int_equal(wr, 0);
}

/* A restart empties the window from its second on and refuses older records. */
static void test_restart(void **state)
{
    (void)state;
    heat_window w;
    heat_window_init(&w);
    uint64_t rd, wr;
    assert_true(heat_window_add(&w, 10000, 3, 3));
    assert_true(heat_window_add(&w, 12000, 4, 4));
    heat_window_restart(&w, 12500);
    sum(&w, 12999, 60, &rd, &wr);
    assert_int_equal(rd, 0);
    assert_int_equal(wr, 0);
    assert_false(heat_window_add(&w, 11999, 1, 1));
    assert_true(heat_window_add(&w, 12000, 1, 2));
    assert_true(heat_window_add(&w, 13000, 1, 0));
    sum(&w, 13000, 60, &rd, &wr);
    assert_int_equal(rd, 2);
    assert_int_equal(wr, 2);
    /* Slot 10 (second 10) is stale even once second 10 is back in a query's reach. */
    sum(&w, 10500, 60, &rd, &wr);
    assert_int_equal(rd, 0);
}

/* A random walk of the clock (mostly forward, small steps back), against a model keeping
 * every second's units. */
static void test_model(void **state)
{
    (void)state;
    enum { SECS = 2000 };
    static uint64_t mrd[SECS], mwr[SECS];
    memset(mrd, 0, sizeof(mrd));
    memset(mwr, 0, sizeof(mwr));
    heat_window w;
    heat_window_init(&w);
    uint64_t seed = test_seed();
    int64_t now = 0, newest = 0;
    while (now < (SECS - 1) * 1000) {
        uint64_t r = test_rand(&seed);
        int64_t t = now - (int64_t)(r % 5000); /* up to 5 s late */
        if (t < 0)
            t = 0;
        uint64_t rd = (r >> 20) % 9, wr = (r >> 30) % 5;
        heat_window_add(&w, t, rd, wr);
        mrd[t / 1000] += rd;
        mwr[t / 1000] += wr;
        if (now > newest)
            newest = now;
        now += (int64_t)((r >> 40) % 700);
        uint32_t secs = 1 + (uint32_t)((r >> 50) % 60);
        uint64_t er = 0, ew = 0, grd, gwr;
        for (int64_t s = now / 1000; s > now / 1000 - secs && s >= 0; s--) {
            er += mrd[s];
            ew += mwr[s];
        }
        sum(&w, now, secs, &grd, &gwr);
        assert_int_equal(grd, er);
        assert_int_equal(gwr, ew);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_expiry),
        cmocka_unit_test(test_reuse_and_late),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
