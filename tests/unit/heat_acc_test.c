/*
 * heat_acc_test.c - the accumulator under concurrency (engine/heat.c): four threads record at
 * once on shared and own keys while a reader queries, and the totals and every key's units
 * come out exact; and a micro-benchmark of the record path (ns per call, 1 and 2 threads,
 * printed, not asserted).
 */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/heat.h"
#include "util/thread.h"

enum { THREADS = 4, PER_THREAD = 200000, SHARED = 50 };

typedef struct worker {
    heat_acc *acc;
    int id;
    uint64_t rd, wr; /* what this thread recorded */
    uint64_t key_wr[SHARED];
    atomic_bool *stop;
    long n;
} worker;

static void *record_loop(void *arg)
{
    worker *w = arg;
    uint64_t seed = test_seed() + (uint64_t)w->id;
    char buf[32];
    for (long i = 0; i < w->n; i++) {
        uint64_t x = test_rand(&seed);
        uint32_t k = (uint32_t)(x % SHARED);
        int len = snprintf(buf, sizeof(buf), "shared-%u", k);
        uint64_t rd = (x >> 20) % 3, wr = (x >> 30) % 4;
        heat_acc_record(w->acc, buf, (size_t)len, 5000 + i / 100000, rd, wr);
        w->rd += rd;
        w->wr += wr;
        w->key_wr[k] += wr;
    }
    return NULL;
}

static void *query_loop(void *arg)
{
    worker *w = arg;
    while (!atomic_load(w->stop)) {
        heat_top top;
        assert_int_equal(heat_acc_top(w->acc, 6000, 60, HEAT_WRITE, 10, &top), KURA_OK);
        for (size_t i = 1; i < top.n; i++)
            assert_true(top.e[i].units <= top.e[i - 1].units);
        heat_top_free(&top);
    }
    return NULL;
}

static void test_concurrent_exact(void **state)
{
    (void)state;
    heat_config cfg = {.k = 256, .stripes = 4};
    heat_acc *acc;
    assert_int_equal(heat_acc_open(&cfg, &acc), KURA_OK);
    atomic_bool stop = false;
    worker w[THREADS + 1];
    kthread t[THREADS + 1];
    memset(w, 0, sizeof(w));
    for (int i = 0; i <= THREADS; i++) {
        w[i] = (worker){.acc = acc, .id = i, .stop = &stop, .n = PER_THREAD};
        assert_true(kthread_start(&t[i], i < THREADS ? record_loop : query_loop, &w[i]));
    }
    for (int i = 0; i < THREADS; i++)
        kthread_join(t[i]);
    atomic_store(&stop, true);
    kthread_join(t[THREADS]);
    uint64_t rd = 0, wr = 0, key_wr[SHARED] = {0};
    for (int i = 0; i < THREADS; i++) {
        rd += w[i].rd;
        wr += w[i].wr;
        for (int k = 0; k < SHARED; k++)
            key_wr[k] += w[i].key_wr[k];
    }
    uint64_t grd, gwr;
    heat_acc_total(acc, 6000, 60, &grd, &gwr);
    assert_int_equal(grd, rd);
    assert_int_equal(gwr, wr);
    /* 50 keys in 256 counters: none evicted, every key's units exact, no error. */
    heat_top top;
    assert_int_equal(heat_acc_top(acc, 6000, 60, HEAT_WRITE, SHARED, &top), KURA_OK);
    assert_int_equal(top.n, SHARED);
    for (size_t i = 0; i < top.n; i++) {
        unsigned k;
        char buf[32];
        memcpy(buf, top.e[i].key, top.e[i].key_len);
        buf[top.e[i].key_len] = 0;
        assert_int_equal(sscanf(buf, "shared-%u", &k), 1);
        assert_int_equal(top.e[i].units, key_wr[k]);
        assert_int_equal(top.e[i].err, 0);
    }
    heat_top_free(&top);
    heat_acc_close(acc);
}

/* ns per heat_acc_record with `threads` threads, keys made beforehand (the loop times the
 * call alone): over `nkeys` distinct keys per thread; 500 fit the 1024 counters (every call a
 * hit, the steady state of a table's hot keys), 100,000 do not (every call an eviction, the
 * worst case). */
enum { BENCH_KEYLEN = 16 };

typedef struct bench_arg {
    heat_acc *acc;
    const char *keys;
    long n, nkeys;
} bench_arg;

static void *bench_loop(void *arg)
{
    bench_arg *b = arg;
    for (long i = 0; i < b->n; i++)
        heat_acc_record(b->acc, b->keys + ((i * 7919) % b->nkeys) * BENCH_KEYLEN, BENCH_KEYLEN,
                        i / 1000, 1, 2);
    return NULL;
}

static double bench(int threads, long n, long nkeys, uint32_t stripes)
{
    heat_acc *acc;
    heat_config cfg = {.stripes = stripes};
    assert_int_equal(heat_acc_open(&cfg, &acc), KURA_OK);
    char *keys[2];
    bench_arg b[2];
    kthread t[2];
    for (int i = 0; i < threads; i++) {
        keys[i] = malloc((size_t)nkeys * BENCH_KEYLEN);
        assert_non_null(keys[i]);
        for (long k = 0; k < nkeys; k++) {
            char buf[64] = {0}; /* room for any int and long: the key is its first bytes */
            snprintf(buf, sizeof(buf), "t%d-key-%08ld", i, k);
            memcpy(keys[i] + k * BENCH_KEYLEN, buf, BENCH_KEYLEN);
        }
        b[i] = (bench_arg){.acc = acc, .keys = keys[i], .n = n, .nkeys = nkeys};
    }
    uint64_t t0 = know_ns();
    for (int i = 0; i < threads; i++)
        assert_true(kthread_start(&t[i], bench_loop, &b[i]));
    for (int i = 0; i < threads; i++)
        kthread_join(t[i]);
    double ns = (double)(know_ns() - t0) / (double)n; /* wall time per call of one thread */
    uint64_t rd, wr;
    heat_acc_total(acc, 0, 60, &rd, &wr);
    assert_int_equal(rd, 1000000 * threads); /* second 0: the first 10^6 calls of each */
    for (int i = 0; i < threads; i++)
        free(keys[i]);
    heat_acc_close(acc);
    return ns;
}

/* heat_acc_record_pair: partition keys in the first sketches, their items in the second, the
 * units counted once in the totals. */
static void test_pair(void **state)
{
    (void)state;
    heat_config cfg = {.k = 64, .stripes = 4, .key_max = 64, .pair = true};
    heat_acc *acc;
    assert_int_equal(heat_acc_open(&cfg, &acc), KURA_OK);
    int64_t now = 1000000;
    for (int i = 0; i < 30; i++) /* A|1 x 20, A|2 x 10: A 30; B|1 x 5 */
        heat_acc_record_pair(acc, i < 20 ? "A|1" : "A|2", 1, 3, now, 0, 2);
    for (int i = 0; i < 5; i++)
        heat_acc_record_pair(acc, "B|1", 1, 3, now, 0, 2);
    heat_acc_record_pair(acc, "C", 1, 1, now, 0, 2); /* no second key */
    uint64_t rd, wr;
    heat_acc_total(acc, now, 60, &rd, &wr);
    assert_int_equal(wr, 72);
    heat_top top;
    assert_int_equal(heat_acc_top(acc, now, 60, HEAT_WRITE, 10, &top), KURA_OK);
    assert_int_equal(top.n, 3);
    assert_memory_equal(top.e[0].key, "A", 1);
    assert_int_equal(top.e[0].wr, 60);
    heat_top_free(&top);
    assert_int_equal(heat_acc_top_second(acc, now, 60, HEAT_WRITE, 10, &top), KURA_OK);
    assert_int_equal(top.n, 3);
    assert_int_equal(top.e[0].key_len, 3);
    assert_memory_equal(top.e[0].key, "A|1", 3);
    assert_int_equal(top.e[0].wr, 40);
    assert_memory_equal(top.e[1].key, "A|2", 3);
    assert_memory_equal(top.e[2].key, "B|1", 3);
    heat_top_free(&top);
    heat_acc_close(acc);
}

static void test_bench(void **state)
{
    (void)state;
    long n = 2000000;
    for (uint32_t stripes = 8; stripes <= 64; stripes *= 8)
        for (int threads = 1; threads <= 2; threads++)
            printf("heat bench: %u stripes, %d thread(s): %.0f ns per record (500 keys, hits), "
                   "%.0f ns (100,000 keys, evictions)\n", stripes,
                   threads, bench(threads, n, 500, stripes), bench(threads, n, 100000, stripes));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_exact),
        cmocka_unit_test(test_pair),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
