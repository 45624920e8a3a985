/*
 * throttle_decide_test.c - the decision for one request (engine/throttle/decide.c) with a
 * driven clock: all or nothing across the table, its GSIs and the key; the precedence of
 * refusals (throughput before keys, table before indexes, reads before writes); a GSI's
 * back-pressure on base writes; adaptive capacity (a hot key uses the table's unused
 * throughput up to 1,000 WCU); a provisioned table's burst, then throttling; late charges.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/throttle/decide.h"

#define T0 (7000000ll * 1000)
#define U THR_MU

static void assert_verdict(const thr_verdict *v, thr_refusal r, const char *index, bool write)
{
    assert_int_equal(v->refusal, r);
    if (index)
        assert_string_equal(v->index_name, index);
    else
        assert_null(v->index_name);
    assert_int_equal(v->write, write);
}

static void test_all_or_nothing_and_gsi_backpressure(void **state)
{
    (void)state;
    thr_bucket tw, gw;
    thr_key tk, gk;
    thr_bucket_init(&tw, 100 * U, THR_BURST_S, T0);
    thr_bucket_init(&gw, 5 * U, THR_BURST_S, T0); /* an under-provisioned GSI */
    thr_key_init(&tk, T0);
    thr_key_init(&gk, T0);
    thr_target ts[2] = {
        {NULL, NULL, &tw, NULL, NULL, &tk, 0, 2 * U},
        {"StatusIndex", NULL, &gw, NULL, NULL, &gk, 0, 2 * U},
    };
    thr_verdict v;
    thr_decide(ts, 2, T0, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
    thr_decide(ts, 2, T0, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
    thr_decide(ts, 2, T0, &v); /* the GSI has 1 left: the base write is refused */
    assert_verdict(&v, THR_REFUSED_PROVISIONED, "StatusIndex", true);
    assert_false(v.ondemand);
    /* nothing taken anywhere by the refused request */
    assert_int_equal(thr_bucket_balance(&tw, T0), 96 * U);
    assert_int_equal(thr_bucket_balance(&gw, T0), 1 * U);
    assert_int_equal(thr_bucket_balance(&tk.write, T0), 996 * U);
    assert_int_equal(thr_bucket_balance(&gk.write, T0), 996 * U);
    thr_decide(ts, 2, T0 + 200, &v); /* 200 ms later the GSI has 2 */
    assert_verdict(&v, THR_ADMITTED, NULL, false);
}

static void test_precedence(void **state)
{
    (void)state;
    thr_bucket tr, tw, gw;
    thr_key tk, gk;
    thr_bucket_init(&tr, 1 * U, THR_BURST_S, T0);
    thr_bucket_init(&tw, 1 * U, THR_BURST_S, T0);
    thr_bucket_init(&gw, 1 * U, THR_BURST_S, T0);
    thr_key_init(&tk, T0);
    thr_key_init(&gk, T0);
    assert_true(thr_bucket_try_consume(&tk.read, THR_KEY_RCU_MU, T0)); /* every key spent */
    assert_true(thr_bucket_try_consume(&tk.write, THR_KEY_WCU_MU, T0));
    assert_true(thr_bucket_try_consume(&gk.write, THR_KEY_WCU_MU, T0));
    thr_target ts[2] = {
        {NULL, &tr, &tw, NULL, NULL, &tk, 2 * U, 2 * U},
        {"G", NULL, &gw, NULL, NULL, &gk, 0, 2 * U},
    };
    thr_verdict v;
    thr_decide(ts, 2, T0, &v); /* everything refuses: the table's reads first */
    assert_verdict(&v, THR_REFUSED_PROVISIONED, NULL, false);
    ts[0].read_mu = 1 * U;
    thr_decide(ts, 2, T0, &v); /* then the table's writes */
    assert_verdict(&v, THR_REFUSED_PROVISIONED, NULL, true);
    ts[0].write_mu = 1 * U;
    thr_decide(ts, 2, T0, &v); /* then the index, before any key */
    assert_verdict(&v, THR_REFUSED_PROVISIONED, "G", true);
    ts[1].write_mu = 1 * U;
    thr_decide(ts, 2, T0, &v); /* then the table's key, reads first */
    assert_verdict(&v, THR_REFUSED_KEY, NULL, false);
    ts[0].read_mu = 0;
    thr_decide(ts, 2, T0, &v);
    assert_verdict(&v, THR_REFUSED_KEY, NULL, true);
    ts[0].key = NULL; /* a Scan: no key in the table */
    thr_decide(ts, 2, T0, &v);
    assert_verdict(&v, THR_REFUSED_KEY, "G", true);
    ts[1].key = NULL;
    thr_decide(ts, 2, T0, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
}

static void test_ondemand_refusals(void **state)
{
    (void)state;
    thr_ondemand ow;
    thr_key k;
    thr_od_init(&ow, THR_OD_WARM_WCU_MU, 3 * U, T0);
    thr_key_init(&k, T0);
    thr_target t = {NULL, NULL, NULL, NULL, &ow, &k, 0, 2 * U};
    thr_verdict v;
    thr_decide(&t, 1, T0, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
    thr_decide(&t, 1, T0, &v);
    assert_verdict(&v, THR_REFUSED_OD_MAX, NULL, true);
    assert_true(v.ondemand);
    thr_od_set_max(&ow, -1);
    t.write_mu = 1001 * U; /* within the table's 4,000, past the key's 1,000 */
    thr_decide(&t, 1, T0, &v);
    assert_verdict(&v, THR_REFUSED_KEY, NULL, true);
    assert_true(v.ondemand);
    t.write_mu = 3999 * U; /* 2 taken: past the warm 4,000 of this second */
    thr_decide(&t, 1, T0, &v);
    assert_verdict(&v, THR_REFUSED_OD_PEAK, NULL, true);
}

/* Adaptive capacity: a provisioned table of 5,000 WCU; one key gets 1,000 a second of it
 * (more than a fifth, its share were throughput split over 5 partitions), not more. */
static void test_hot_key_uses_unused_throughput(void **state)
{
    (void)state;
    thr_bucket tw;
    thr_key hot;
    thr_bucket_init(&tw, 5000 * U, THR_BURST_S, T0);
    thr_key_init(&hot, T0);
    thr_target t = {NULL, NULL, &tw, NULL, NULL, &hot, 0, 1 * U};
    long ok = 0;
    for (long n = 0; n < 20000; n++) {
        thr_verdict v;
        thr_decide(&t, 1, T0 + n / 2, &v); /* 2,000 writes a second for 10 seconds */
        ok += v.refusal == THR_ADMITTED;
        if (v.refusal != THR_ADMITTED)
            assert_verdict(&v, THR_REFUSED_KEY, NULL, true);
    }
    /* the key's first second (1,000) and its refill of 1 a millisecond for 9,999 ms */
    assert_in_range(ok, 10000, 11000);
    assert_int_equal(thr_bucket_balance(&tw, T0 + 10000), 5000 * U * 11 - ok * U);
}

/* A provisioned table of 100 WCU idle for 5 minutes accepts its burst of 30,000 units, then
 * 100 a second; a Query's late bytes put it in debt and later requests wait. */
static void test_provisioned_burst_then_throttle(void **state)
{
    (void)state;
    thr_bucket tr, tw;
    thr_bucket_init(&tr, 100 * U, THR_BURST_S, T0);
    thr_bucket_init(&tw, 100 * U, THR_BURST_S, T0);
    int64_t t = T0 + 300 * 1000;
    thr_target w = {NULL, NULL, &tw, NULL, NULL, NULL, 0, 1 * U};
    long ok = 0;
    thr_verdict v;
    for (int i = 0; i < 40000; i++) {
        thr_decide(&w, 1, t, &v);
        ok += v.refusal == THR_ADMITTED;
    }
    assert_int_equal(ok, 30000);
    thr_target r = {NULL, &tr, NULL, NULL, NULL, NULL, 1 * U, 0};
    thr_decide(&r, 1, t, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
    r.read_mu = 29999 * U + 100 * U; /* the rest of the burst and one second more */
    thr_charge_after(&r, 1, t);
    r.read_mu = 1 * U;
    thr_decide(&r, 1, t + 999, &v);
    assert_verdict(&v, THR_REFUSED_PROVISIONED, NULL, false);
    thr_decide(&r, 1, t + 1010, &v);
    assert_verdict(&v, THR_ADMITTED, NULL, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_or_nothing_and_gsi_backpressure),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_ondemand_refusals),
        cmocka_unit_test(test_hot_key_uses_unused_throughput),
        cmocka_unit_test(test_provisioned_burst_then_throttle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
