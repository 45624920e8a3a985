/*
 * sst_cache_test.c - the block cache, alone and under tables.
 *
 * Alone: lookups after inserts, replacement of a pinned entry, capacity 0, and the byte
 * budget under random churn with random pins (usage never above capacity once nothing is
 * pinned; pinned values stay intact; every value freed exactly once - ASan checks that).
 * Under tables: hits after the first read, fill_cache=false, the budget during random gets,
 * an iterator holding a block while the cache churns it out, and threads sharing one cache.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/block_cache.h"
#include "sstable/table_reader.h"
#include "util/ikey.h"
#include "util/thread.h"

/* ---- the cache alone ---- */

typedef struct val {
    uint64_t id, off;
    uint64_t check; /* id ^ off, to detect a wrong or freed value */
} val;

static int live_values;

static void free_val(void *p)
{
    val *v = p;
    assert_int_equal(v->check, v->id ^ v->off);
    v->check = 0;
    live_values--;
    free(v);
}

static block_cache_handle *put(block_cache *c, uint64_t id, uint64_t off, size_t charge)
{
    val *v = malloc(sizeof *v);
    v->id = id;
    v->off = off;
    v->check = id ^ off;
    live_values++;
    block_cache_handle *h = block_cache_insert(c, id, off, v, charge, free_val);
    assert_non_null(h);
    return h;
}

static void expect_val(const block_cache_handle *h, uint64_t id, uint64_t off)
{
    const val *v = block_cache_value(h);
    assert_int_equal(v->id, id);
    assert_int_equal(v->off, off);
    assert_int_equal(v->check, id ^ off);
}

static void test_basic(void **state)
{
    (void)state;
    block_cache *c = block_cache_new(1 << 20);
    uint64_t id = block_cache_new_id(c), id2 = block_cache_new_id(c);
    assert_true(id != 0 && id2 != id);
    assert_null(block_cache_lookup(c, id, 0));
    block_cache_release(c, put(c, id, 0, 100));
    block_cache_release(c, put(c, id2, 0, 100));
    block_cache_handle *h = block_cache_lookup(c, id, 0);
    assert_non_null(h);
    expect_val(h, id, 0);
    block_cache_release(c, h);
    h = block_cache_lookup(c, id2, 0);
    expect_val(h, id2, 0);
    block_cache_release(c, h);
    assert_true(block_cache_usage(c) >= 200);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.inserts, 2);
    /* replacing an entry that is pinned: the old value lives until released */
    block_cache_handle *old = block_cache_lookup(c, id, 0);
    block_cache_handle *neu = put(c, id, 0, 100);
    assert_int_equal(live_values, 3);
    expect_val(old, id, 0);
    block_cache_release(c, old);
    assert_int_equal(live_values, 2); /* the replaced value is gone now */
    block_cache_release(c, neu);
    h = block_cache_lookup(c, id, 0);
    assert_ptr_equal(h, neu);
    block_cache_release(c, h);
    block_cache_free(c);
    assert_int_equal(live_values, 0);
    block_cache_free(NULL);
}

/* Prune drops every unpinned entry and frees its value; a pinned one stays, usable, and
 * goes when its handle is released and the cache is pruned again. */
static void test_prune(void **state)
{
    (void)state;
    block_cache *c = block_cache_new(1 << 20);
    live_values = 0;
    for (uint64_t i = 0; i < 100; i++)
        block_cache_release(c, put(c, 1, i, 100));
    block_cache_handle *pinned = put(c, 2, 7, 100);
    assert_int_equal(live_values, 101);
    assert_true(block_cache_usage(c) > 101 * 100);
    block_cache_prune(c);
    assert_int_equal(live_values, 1);
    expect_val(pinned, 2, 7);
    assert_null(block_cache_lookup(c, 1, 5));
    block_cache_handle *again = block_cache_lookup(c, 2, 7);
    assert_ptr_equal(again, pinned);
    block_cache_release(c, again);
    block_cache_release(c, pinned);
    assert_int_equal(live_values, 1); /* back on the LRU list, still cached */
    block_cache_prune(c);
    assert_int_equal(live_values, 0);
    assert_int_equal(block_cache_usage(c), 0);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 0);
    block_cache_release(c, put(c, 3, 1, 100)); /* still works after */
    assert_int_equal(live_values, 1);
    block_cache_free(c);
    assert_int_equal(live_values, 0);
}

static void test_zero_capacity(void **state)
{
    (void)state;
    block_cache *c = block_cache_new(0);
    block_cache_handle *h = put(c, 1, 0, 4096);
    expect_val(h, 1, 0); /* usable while pinned */
    block_cache_release(c, h);
    assert_int_equal(live_values, 0);
    assert_int_equal(block_cache_usage(c), 0);
    assert_null(block_cache_lookup(c, 1, 0));
    block_cache_free(c);
}

static void test_budget_churn(void **state)
{
    (void)state;
    enum { CAP = 300 * 1024, PINS = 8 };
    block_cache *c = block_cache_new(CAP);
    uint64_t rs = test_seed();
    block_cache_handle *pinned[PINS] = {NULL};
    uint64_t pin_key[PINS][2];
    for (int round = 0; round < 200000; round++) {
        uint64_t id = 1 + test_rand(&rs) % 4, off = (test_rand(&rs) % 500) * 4096;
        size_t charge = 500 + (size_t)(test_rand(&rs) % 8000);
        block_cache_handle *h = block_cache_lookup(c, id, off);
        if (h)
            expect_val(h, id, off);
        else
            h = put(c, id, off, charge);
        int slot = (int)(test_rand(&rs) % (PINS * 4));
        if (slot < PINS) { /* keep it pinned for a while, replacing an older pin */
            if (pinned[slot]) {
                expect_val(pinned[slot], pin_key[slot][0], pin_key[slot][1]);
                block_cache_release(c, pinned[slot]);
            }
            pinned[slot] = h;
            pin_key[slot][0] = id;
            pin_key[slot][1] = off;
        } else {
            block_cache_release(c, h);
        }
        /* pinned entries may hold at most PINS x (8500 + overhead) beyond the budget */
        assert_true(block_cache_usage(c) <= CAP + PINS * 9000);
    }
    for (int i = 0; i < PINS; i++)
        if (pinned[i])
            block_cache_release(c, pinned[i]);
    assert_true(block_cache_usage(c) <= CAP);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_true(st.evictions > 0 && st.hits > 0);
    block_cache_free(c);
    assert_int_equal(live_values, 0);
}

/* ---- under tables ---- */

static size_t key_of(uint8_t *out, unsigned i, uint64_t seq)
{
    char k[32];
    int n = snprintf(k, sizeof k, "key%08u", i);
    ikey_encode(out, k, (size_t)n, seq, IKEY_TYPE_VALUE);
    return (size_t)n + IKEY_TRAILER;
}
static size_t val_of(uint8_t *out, unsigned i)
{
    return (size_t)sprintf((char *)out, "v%u|%0*u", i, (int)(i % 50), i);
}

static char *build(const char *dir, unsigned n, uint64_t *size_out)
{
    char *path = malloc(strlen(dir) + 8);
    sprintf(path, "%s/c.sst", dir);
    sst_builder *b;
    assert_kura_ok(sst_builder_new(NULL, path, NULL, &b));
    for (unsigned i = 0; i < n; i++) {
        uint8_t k[64], v[128];
        size_t kl = key_of(k, i, 5), vl = val_of(v, i);
        assert_kura_ok(sst_builder_add(b, k, kl, v, vl));
    }
    sst_meta m;
    assert_kura_ok(sst_builder_finish(b, &m));
    *size_out = m.file_size;
    sst_meta_clear(&m);
    return path;
}

static void get_ok(sst_reader *r, unsigned i, bool fill)
{
    uint8_t k[64], v[128];
    size_t kl = key_of(k, i, IKEY_MAX_SEQ), vl = val_of(v, i);
    kbuf got = KBUF_INIT;
    bool found = false;
    unsigned type;
    assert_kura_ok(sst_reader_get(r, k, kl, fill, &got, &type, &found));
    assert_true(found);
    assert_int_equal(got.len, vl);
    assert_memory_equal(got.data, v, vl);
    kbuf_free(&got);
}

static void test_table_hits(void **state)
{
    (void)state;
    enum { N = 50000 };
    char *dir = test_mkdtemp("sst_cache");
    uint64_t size;
    char *path = build(dir, N, &size);
    block_cache *c = block_cache_new(256 * 1024);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, size, c, &r));
    block_cache_stats s0, s1;
    /* fill_cache=false leaves the cache empty */
    get_ok(r, 77, false);
    assert_int_equal(block_cache_usage(c), 0);
    /* first read misses and inserts, the second hits */
    block_cache_get_stats(c, &s0);
    get_ok(r, 77, true);
    block_cache_get_stats(c, &s1);
    assert_int_equal(s1.misses, s0.misses + 1);
    assert_int_equal(s1.inserts, s0.inserts + 1);
    size_t used = block_cache_usage(c);
    assert_true(used > 4096 && used < 16384);
    get_ok(r, 78, false); /* same block: a hit even without fill_cache */
    get_ok(r, 77, true);
    block_cache_get_stats(c, &s0);
    assert_int_equal(s0.hits, s1.hits + 2);
    assert_int_equal(s0.misses, s1.misses);
    assert_int_equal(block_cache_usage(c), used);
    /* random gets over ~2 MB of blocks through a 256 KB cache */
    uint64_t rs = test_seed();
    for (int i = 0; i < 20000; i++) {
        get_ok(r, (unsigned)(test_rand(&rs) % N), true);
        assert_true(block_cache_usage(c) <= 256 * 1024);
    }
    block_cache_get_stats(c, &s1);
    assert_true(s1.evictions > 0);
    fprintf(stderr, "cache: %llu hits, %llu misses, %llu evictions, usage %zu\n",
            (unsigned long long)s1.hits, (unsigned long long)s1.misses,
            (unsigned long long)s1.evictions, block_cache_usage(c));
    sst_reader_close(r);
    block_cache_free(c);
    free(path);
    test_rmrf(dir);
}

static void test_iterator_pins_block(void **state)
{
    (void)state;
    enum { N = 20000 };
    char *dir = test_mkdtemp("sst_pin");
    uint64_t size;
    char *path = build(dir, N, &size);
    /* a cache smaller than one block: everything not pinned is evicted at once */
    size_t caps[] = {0, 2048, 64 * 1024};
    for (size_t ci = 0; ci < 3; ci++) {
        block_cache *c = block_cache_new(caps[ci]);
        sst_reader *r;
        assert_kura_ok(sst_reader_open(NULL, path, size, c, &r));
        kv_iter *it = sst_reader_iter(r, true);
        kv_iter_seek_first(it);
        uint64_t rs = 11;
        for (unsigned i = 0; i < N; i++) {
            assert_true(kv_iter_valid(it));
            size_t kl, vl;
            const uint8_t *k = kv_iter_key(it, &kl), *v = kv_iter_value(it, &vl);
            /* churn the cache while the iterator holds its block */
            for (int j = 0; j < 2; j++)
                get_ok(r, (unsigned)(test_rand(&rs) % N), true);
            uint8_t wk[64], wv[128];
            size_t wkl = key_of(wk, i, 5), wvl = val_of(wv, i);
            assert_int_equal(kl, wkl);
            assert_memory_equal(k, wk, kl);
            assert_int_equal(vl, wvl);
            assert_memory_equal(v, wv, vl);
            kv_iter_next(it);
        }
        assert_false(kv_iter_valid(it));
        assert_kura_ok(kv_iter_status(it));
        kv_iter_free(it);
        assert_true(block_cache_usage(c) <= caps[ci]);
        sst_reader_close(r);
        block_cache_free(c);
    }
    free(path);
    test_rmrf(dir);
}

typedef struct worker {
    sst_reader *r;
    uint64_t seed;
    unsigned n;
    int errors;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    kbuf got = KBUF_INIT;
    for (int i = 0; i < 20000; i++) {
        unsigned u = (unsigned)(test_rand(&w->seed) % w->n);
        uint8_t k[64], v[128];
        size_t kl = key_of(k, u, IKEY_MAX_SEQ), vl = val_of(v, u);
        bool found = false;
        unsigned type;
        if (sst_reader_get(w->r, k, kl, true, &got, &type, &found) != KURA_OK || !found ||
            got.len != vl || memcmp(got.data, v, vl) != 0)
            w->errors++;
        if (i % 1000 == 0) { /* and a short scan */
            kv_iter *it = sst_reader_iter(w->r, true);
            kv_iter_seek(it, k, kl);
            for (unsigned j = u; j < u + 200 && j < w->n; j++, kv_iter_next(it)) {
                size_t gkl;
                uint8_t wk[64];
                size_t wkl = key_of(wk, j, 5);
                const uint8_t *gk = kv_iter_valid(it) ? kv_iter_key(it, &gkl) : NULL;
                if (!gk || gkl != wkl || memcmp(gk, wk, wkl) != 0)
                    w->errors++;
            }
            kv_iter_free(it);
        }
    }
    kbuf_free(&got);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    enum { N = 30000, T = 4 };
    char *dir = test_mkdtemp("sst_threads");
    uint64_t size;
    char *path = build(dir, N, &size);
    block_cache *c = block_cache_new(128 * 1024);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, size, c, &r));
    worker w[T];
    kthread th[T];
    uint64_t seed = test_seed();
    for (int i = 0; i < T; i++) {
        w[i] = (worker){r, seed + (uint64_t)i, N, 0};
        assert_true(kthread_start(&th[i], work, &w[i]));
    }
    for (int i = 0; i < T; i++) {
        kthread_join(th[i]);
        assert_int_equal(w[i].errors, 0);
    }
    assert_true(block_cache_usage(c) <= 128 * 1024);
    sst_reader_close(r);
    block_cache_free(c);
    free(path);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),         cmocka_unit_test(test_prune),
        cmocka_unit_test(test_zero_capacity),
        cmocka_unit_test(test_budget_churn),  cmocka_unit_test(test_table_hits),
        cmocka_unit_test(test_iterator_pins_block), cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
