/*
 * heat_sketch_test.c - the space-saving sketch (engine/heat_sketch.c) and the top-n query of
 * the accumulator (engine/heat.c, heat_top.c): space-saving's guarantees against an exact
 * model (every key above N / k holds a counter, count - err <= true <= count, the least count
 * at most N / k, window units within err of the truth), a hot key among 100,000 cold ones at
 * the top with its rate, long keys stored by prefix and reported with their length, and
 * 10 M distinct keys through an accumulator in bounded memory (its own byte count, and the
 * heap not growing).
 */
#include "testutil.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/heat.h"
#include "engine/heat_sketch.h"
#include "util/hash.h"

static size_t key_of(uint32_t i, char *buf)
{
    return (size_t)snprintf(buf, 32, "key-%u", i);
}

/* Weighted records over NKEYS keys with a skewed distribution, against exact totals; with
 * `filter`, through an admission filter (filtered space-saving, heat_sketch_set_filter). */
static void guarantees(bool filter)
{
    enum { NKEYS = 5000, K = 64, RECORDS = 200000 };
    uint64_t *truth = calloc(NKEYS, sizeof(uint64_t));
    uint64_t *recent = calloc(NKEYS, sizeof(uint64_t)); /* units of the last 10 seconds */
    assert_non_null(truth);
    assert_non_null(recent);
    heat_sketch s;
    assert_int_equal(heat_sketch_init(&s, K, 64), KURA_OK);
    if (filter)
        assert_int_equal(heat_sketch_set_filter(&s, 1024), KURA_OK);
    uint64_t seed = test_seed(), n = 0;
    int64_t now = 0;
    char buf[32];
    for (int r = 0; r < RECORDS; r++) {
        uint64_t x = test_rand(&seed);
        /* Skewed: a quarter of the records on 10 heavy keys (2.5% each, above 1/K), the rest
         * by the product of two uniform draws (the small indexes more often). */
        uint32_t a = (uint32_t)((x >> 8) % NKEYS), b = (uint32_t)((x >> 24) % NKEYS);
        uint32_t key = x % 4 == 0 ? (uint32_t)((x >> 2) % 10)
                                  : (uint32_t)(((uint64_t)a * b) / NKEYS);
        uint64_t rd = (x >> 40) % 4, wr = (x >> 50) % 3;
        now = (int64_t)r * 1; /* 1 ms apart: 200 s in all */
        size_t len = key_of(key, buf);
        heat_sketch_record(&s, kura_hash64(buf, len), buf, len, now, rd, wr);
        truth[key] += rd + wr;
        if (now >= RECORDS - 10000)
            recent[key] += rd + wr; /* seconds 190..199 */
        n += rd + wr;
    }
    assert_int_equal(s.total, n);
    assert_true(heat_sketch_min_count(&s) <= n / K);
    int above = 0;
    for (uint32_t key = 0; key < NKEYS; key++) {
        size_t len = key_of(key, buf);
        const heat_counter *c = heat_sketch_find(&s, kura_hash64(buf, len), buf, len);
        if (truth[key] > n / K) {
            assert_non_null(c);
            above++;
        }
        if (c) {
            assert_true(c->count >= truth[key]);
            assert_true(c->count - c->err <= truth[key]);
            uint64_t rd, wr;
            heat_window_sum(&c->win, now, 10, &rd, &wr);
            assert_true(rd + wr <= recent[key]);
            assert_true(recent[key] <= rd + wr + c->err);
        }
    }
    assert_true(above >= 10); /* the test exercises the guarantee on several keys */
    if (filter) /* it kept records out of the counters */
        assert_true(s.filtered > 0);
    heat_sketch_free(&s);
    free(truth);
    free(recent);
}

static void test_guarantees(void **state)
{
    (void)state;
    guarantees(false);
}

static void test_guarantees_filtered(void **state)
{
    (void)state;
    guarantees(true);
}

/* A late record of a new key takes the counter of a key with units in a later second: the
 * new key's window does not count them, and what it drops becomes error. */
static void test_late_eviction(void **state)
{
    (void)state;
    heat_sketch s;
    assert_int_equal(heat_sketch_init(&s, 1, 16), KURA_OK);
    heat_sketch_record(&s, kura_hash64("A", 1), "A", 1, 20000, 0, 5);
    heat_sketch_record(&s, kura_hash64("B", 1), "B", 1, 19000, 0, 3);
    const heat_counter *c = heat_sketch_find(&s, kura_hash64("B", 1), "B", 1);
    assert_non_null(c);
    assert_null(heat_sketch_find(&s, kura_hash64("A", 1), "A", 1));
    uint64_t rd, wr;
    heat_window_sum(&c->win, 20000, 60, &rd, &wr);
    assert_int_equal(wr, 0);              /* none of A's 5 */
    assert_int_equal(c->count, 8);
    assert_int_equal(c->err, 8);          /* 5 inherited, 3 dropped by the window */
    heat_sketch_record(&s, kura_hash64("B", 1), "B", 1, 20000, 0, 2);
    heat_window_sum(&c->win, 20000, 60, &rd, &wr);
    assert_int_equal(wr, 2);
    heat_sketch_free(&s);
    /* A free counter has no previous key: a late record of a new key keeps its units. */
    assert_int_equal(heat_sketch_init(&s, 2, 16), KURA_OK);
    heat_sketch_record(&s, kura_hash64("A", 1), "A", 1, 20000, 0, 5);
    heat_sketch_record(&s, kura_hash64("B", 1), "B", 1, 19000, 0, 3);
    c = heat_sketch_find(&s, kura_hash64("B", 1), "B", 1);
    assert_non_null(c);
    heat_window_sum(&c->win, 20000, 60, &rd, &wr);
    assert_int_equal(wr, 3);
    assert_int_equal(c->err, 0);
    heat_sketch_free(&s);
}

/* A hot key among 100,000 cold ones: first by writes, with its exact rate. */
static void test_hot_among_cold(void **state)
{
    (void)state;
    heat_acc *acc;
    assert_int_equal(heat_acc_open(NULL, &acc), KURA_OK);
    char buf[32];
    int64_t t0 = 1000000;
    uint64_t hot_units = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        int64_t now = t0 + i / 10; /* 100,000 records over 10 seconds */
        size_t len = key_of(i, buf);
        heat_acc_record(acc, buf, len, now, 0, 2); /* one write unit each */
        if (i % 50 == 0) {
            heat_acc_record(acc, "HOT", 3, now, 1, 10); /* 5 write units, half a read */
            hot_units += 10;
        }
    }
    int64_t now = t0 + 9999;
    heat_top top;
    assert_int_equal(heat_acc_top(acc, now, 10, HEAT_WRITE, 5, &top), KURA_OK);
    assert_int_equal(top.n, 5);
    assert_int_equal(top.e[0].key_len, 3);
    assert_memory_equal(top.e[0].key, "HOT", 3);
    assert_true(top.e[0].units <= hot_units && hot_units <= top.e[0].units + top.e[0].err);
    assert_int_equal(top.e[0].rd, hot_units / 10);
    for (size_t i = 1; i < top.n; i++)
        assert_true(top.e[i].units <= top.e[i - 1].units);
    /* 2,000 records of 5 units over 10 s: 1,000 write units a second. */
    assert_true(heat_rate(top.e[0].units, top.secs) <= 1000.0);
    heat_top_free(&top);
    /* By reads, the hot key is the only one. */
    assert_int_equal(heat_acc_top(acc, now, 10, HEAT_READ, 5, &top), KURA_OK);
    assert_int_equal(top.n, 1);
    assert_memory_equal(top.e[0].key, "HOT", 3);
    heat_top_free(&top);
    uint64_t rd, wr;
    heat_acc_total(acc, now, 10, &rd, &wr);
    assert_int_equal(rd, hot_units / 10);
    assert_int_equal(wr, 200000 + hot_units);
    heat_acc_close(acc);
}

/* Keys longer than key_max: stored by prefix, reported with their length, kept apart. */
static void test_long_keys(void **state)
{
    (void)state;
    heat_config cfg = {.k = 16, .stripes = 1, .key_max = 2048};
    heat_acc *acc;
    assert_int_equal(heat_acc_open(&cfg, &acc), KURA_OK);
    static char a[3000], b[3000];
    memset(a, 'x', sizeof(a));
    memcpy(b, a, sizeof(b));
    /* Same stored prefix and length, a different key, in the same bucket of the sketch's
     * hash table (32 buckets for 16 counters): only the hash tells them apart. */
    for (int i = 0; (kura_hash64(b, sizeof(b)) & 31) != (kura_hash64(a, sizeof(a)) & 31) ||
                    !memcmp(a, b, sizeof(a));
         i++) {
        b[2999] = (char)('a' + i % 26);
        b[2998] = (char)('a' + i / 26 % 26);
        b[2997] = (char)('a' + i / 676 % 26);
    }
    heat_acc_record(acc, a, sizeof(a), 0, 0, 6);
    heat_acc_record(acc, b, sizeof(b), 0, 0, 4);
    heat_top top;
    assert_int_equal(heat_acc_top(acc, 0, 1, HEAT_WRITE, 10, &top), KURA_OK);
    assert_int_equal(top.n, 2);
    assert_int_equal(top.e[0].key_len, 3000);
    assert_int_equal(top.e[0].units, 6);
    assert_int_equal(top.e[1].units, 4);
    assert_memory_equal(top.e[0].key, a, 2048);
    heat_top_free(&top);
    heat_acc_close(acc);
}

/* 10 M distinct keys: the memory is the accumulator's from its creation on, <= 16 MiB. */
static void test_ten_million(void **state)
{
    (void)state;
    heat_acc *acc;
    assert_int_equal(heat_acc_open(NULL, &acc), KURA_OK);
    size_t bytes = heat_acc_bytes(acc);
    printf("heat: accumulator of 1024 counters, 8 stripes: %zu bytes\n", bytes);
    assert_true(bytes <= 16u << 20);
    struct mallinfo2 before = mallinfo2();
    char buf[32];
    for (uint32_t i = 0; i < 10000000; i++) {
        size_t len = key_of(i, buf);
        heat_acc_record(acc, buf, len, (int64_t)i / 100, 1, 2); /* 100 k records a second */
        if (i % 1000000 == 0)
            heat_acc_record(acc, "HOT", 3, (int64_t)i / 100, 0, 1000000);
    }
    struct mallinfo2 after = mallinfo2();
    assert_int_equal(after.uordblks, before.uordblks); /* no allocation on the record path */
    assert_int_equal(heat_acc_bytes(acc), bytes);
    int64_t now = 9999999 / 100;
    uint64_t rd, wr;
    heat_acc_total(acc, now, 60, &rd, &wr);
    assert_int_equal(rd, 60 * 100000); /* seconds 40..99 */
    assert_int_equal(wr, 60 * 200000 + 6 * 1000000ull);
    heat_top top;
    assert_int_equal(heat_acc_top(acc, now, 60, HEAT_WRITE, 3, &top), KURA_OK);
    assert_memory_equal(top.e[0].key, "HOT", 3);
    heat_top_free(&top);
    heat_acc_close(acc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guarantees),
        cmocka_unit_test(test_guarantees_filtered),
        cmocka_unit_test(test_late_eviction),
        cmocka_unit_test(test_hot_among_cold),
        cmocka_unit_test(test_long_keys),
        cmocka_unit_test(test_ten_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
