/*
 * lsm_memtable_test.c - the memtable: random inserts (versions, deletes) against a sorted
 * reference array, lookups at snapshots, iteration in both directions and seeks, sequential
 * loads (the insert hint), concurrent readers during a writer, usage accounting, and a small
 * throughput figure (printed, not asserted).
 */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/memtable.h"
#include "util/buf.h"
#include "util/ikey.h"
#include "util/thread.h"

/* ---- Reference model -------------------------------------------------------------------- */

typedef struct ref_entry {
    uint8_t *ikey; /* user key || trailer */
    size_t iklen;
    uint8_t *val;
    size_t vlen;
} ref_entry;

typedef struct ref_set {
    ref_entry *e;
    size_t n;
} ref_set;

static int ref_cmp(const void *a, const void *b)
{
    const ref_entry *x = a, *y = b;
    return ikey_cmp(x->ikey, x->iklen, y->ikey, y->iklen);
}

/* A random user key over a 3-letter alphabet, 0..5 letters: many versions and prefixes. */
static size_t rand_ukey(uint64_t *rng, uint8_t *out)
{
    size_t n = test_rand(rng) % 6;
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)('a' + test_rand(rng) % 3);
    return n;
}

/* n random entries with sequence numbers 1..n (in order), ~25% deletions, some big values. */
static ref_set ref_random(uint64_t *rng, size_t n)
{
    ref_set r = {calloc(n, sizeof(ref_entry)), n};
    assert_non_null(r.e);
    for (size_t i = 0; i < n; i++) {
        uint8_t uk[8];
        size_t uklen = rand_ukey(rng, uk);
        unsigned type = test_rand(rng) % 4 == 0 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE;
        ref_entry *e = &r.e[i];
        e->iklen = uklen + IKEY_TRAILER;
        e->ikey = malloc(e->iklen);
        ikey_encode(e->ikey, uk, uklen, i + 1, type);
        e->vlen = 0;
        if (type == IKEY_TYPE_VALUE)
            e->vlen = test_rand(rng) % 200 == 0 ? 9000 + test_rand(rng) % 30000
                                                : test_rand(rng) % 40;
        e->val = malloc(e->vlen + 1);
        for (size_t j = 0; j < e->vlen; j++)
            e->val[j] = (uint8_t)test_rand(rng);
    }
    return r;
}

static void ref_free(ref_set *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->e[i].ikey);
        free(r->e[i].val);
    }
    free(r->e);
}

static void mt_put_entry(memtable *m, const ref_entry *e)
{
    assert_kura_ok(mt_add(m, ikey_seq(e->ikey, e->iklen), ikey_type(e->ikey, e->iklen), e->ikey,
                          ikey_user_len(e->iklen), e->val, e->vlen));
}

/* Index of the first sorted reference entry >= key (r->n if none). */
static size_t ref_lower_bound(const ref_set *r, const uint8_t *key, size_t klen)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ikey_cmp(r->e[mid].ikey, r->e[mid].iklen, key, klen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void assert_at(kv_iter *it, const ref_set *r, size_t pos)
{
    if (pos >= r->n) {
        assert_false(kv_iter_valid(it));
        return;
    }
    assert_true(kv_iter_valid(it));
    size_t klen, vlen;
    const uint8_t *k = kv_iter_key(it, &klen);
    const uint8_t *v = kv_iter_value(it, &vlen);
    if (klen != r->e[pos].iklen || memcmp(k, r->e[pos].ikey, klen) != 0)
        fail_msg("entry %zu: key differs (len %zu vs %zu)", pos, klen, r->e[pos].iklen);
    assert_int_equal(vlen, r->e[pos].vlen);
    assert_memory_equal(v, r->e[pos].val, vlen);
}

/* Brute force: the newest entry of user key uk with seq <= snap, or NULL. */
static const ref_entry *ref_get(const ref_set *r, const uint8_t *uk, size_t uklen, uint64_t snap)
{
    const ref_entry *best = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const ref_entry *e = &r->e[i];
        if (ukey_cmp(e->ikey, ikey_user_len(e->iklen), uk, uklen) != 0)
            continue;
        uint64_t seq = ikey_seq(e->ikey, e->iklen);
        if (seq <= snap && (!best || seq > ikey_seq(best->ikey, best->iklen)))
            best = e;
    }
    return best;
}

/* ---- Checks against the reference ------------------------------------------------------- */

static void check_iteration(memtable *m, const ref_set *sorted, uint64_t *rng)
{
    kv_iter *it = mt_iter(m);
    assert_non_null(it);
    kv_iter_seek_first(it);
    for (size_t i = 0; i < sorted->n; i++, kv_iter_next(it))
        assert_at(it, sorted, i);
    assert_false(kv_iter_valid(it));
    kv_iter_seek_last(it);
    for (size_t i = sorted->n; i-- > 0; kv_iter_prev(it))
        assert_at(it, sorted, i);
    assert_false(kv_iter_valid(it));

    /* seeks to random internal keys, then a few steps either way */
    for (int round = 0; round < 2000; round++) {
        uint8_t target[16];
        size_t uklen = rand_ukey(rng, target);
        uint64_t seq = test_rand(rng) % (sorted->n + 2);
        ikey_encode(target, target, uklen, seq, (unsigned)(test_rand(rng) % 2));
        size_t pos = ref_lower_bound(sorted, target, uklen + IKEY_TRAILER);
        kv_iter_seek(it, target, uklen + IKEY_TRAILER);
        assert_at(it, sorted, pos);
        for (int step = 0; step < 8 && pos < sorted->n; step++) {
            if (test_rand(rng) % 2) {
                kv_iter_next(it);
                pos++;
            } else {
                kv_iter_prev(it);
                pos = pos == 0 ? sorted->n : pos - 1;
            }
            assert_at(it, sorted, pos);
        }
    }
    assert_kura_ok(kv_iter_status(it));
    kv_iter_free(it);
}

static void check_gets(memtable *m, const ref_set *r, uint64_t *rng, int rounds)
{
    kbuf val = KBUF_INIT;
    for (int round = 0; round < rounds; round++) {
        uint8_t uk[8];
        size_t uklen = rand_ukey(rng, uk);
        uint64_t snap = test_rand(rng) % 8 == 0 ? UINT64_MAX : test_rand(rng) % (r->n + 2);
        const ref_entry *want = ref_get(r, uk, uklen, snap);
        unsigned type = 99;
        kbuf_clear(&val);
        bool found = mt_get(m, uk, uklen, snap, &val, &type);
        const uint8_t *vp = NULL;
        size_t vlen = 0;
        unsigned type2 = 99;
        bool found2 = mt_get_ref(m, uk, uklen, snap, &vp, &vlen, &type2);
        assert_int_equal(found, want != NULL);
        assert_int_equal(found2, want != NULL);
        if (!want)
            continue;
        unsigned want_type = ikey_type(want->ikey, want->iklen);
        assert_int_equal(type, want_type);
        assert_int_equal(type2, want_type);
        if (want_type == IKEY_TYPE_VALUE) {
            assert_int_equal(val.len, want->vlen);
            assert_memory_equal(val.data, want->val, want->vlen);
            assert_int_equal(vlen, want->vlen);
            assert_memory_equal(vp, want->val, want->vlen);
        }
    }
    kbuf_free(&val);
}

/* ---- Tests ------------------------------------------------------------------------------ */

static void test_random_in_seq_order(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    ref_set r = ref_random(&rng, 6000);
    memtable *m = mt_new();
    assert_non_null(m);
    for (size_t i = 0; i < r.n; i++)
        mt_put_entry(m, &r.e[i]);
    assert_int_equal(mt_entries(m), r.n);
    check_gets(m, &r, &rng, 3000);
    qsort(r.e, r.n, sizeof *r.e, ref_cmp);
    check_iteration(m, &r, &rng);
    mt_unref(m);
    ref_free(&r);
}

/* Inserting in a random order of sequence numbers exercises the insert hint's fallback. */
static void test_random_shuffled(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    ref_set r = ref_random(&rng, 6000);
    for (size_t i = r.n; i > 1; i--) {
        size_t j = test_rand(&rng) % i;
        ref_entry t = r.e[i - 1];
        r.e[i - 1] = r.e[j];
        r.e[j] = t;
    }
    memtable *m = mt_new();
    assert_non_null(m);
    for (size_t i = 0; i < r.n; i++)
        mt_put_entry(m, &r.e[i]);
    check_gets(m, &r, &rng, 3000);
    qsort(r.e, r.n, sizeof *r.e, ref_cmp);
    check_iteration(m, &r, &rng);
    mt_unref(m);
    ref_free(&r);
}

/* Ascending keys (the fillseq path of the insert hint), then descending keys in between. */
static void test_sequential(void **state)
{
    (void)state;
    enum { N = 20000 };
    memtable *m = mt_new();
    assert_non_null(m);
    char key[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "%08d", 2 * i);
        assert_kura_ok(mt_add(m, (uint64_t)i + 1, IKEY_TYPE_VALUE, (uint8_t *)key, (size_t)n,
                              (uint8_t *)key, (size_t)n));
    }
    for (int i = N - 1; i >= 0; i--) {
        int n = snprintf(key, sizeof key, "%08d", 2 * i + 1);
        assert_kura_ok(mt_add(m, (uint64_t)(2 * N - i), IKEY_TYPE_VALUE, (uint8_t *)key,
                              (size_t)n, (uint8_t *)key, (size_t)n));
    }
    assert_int_equal(mt_entries(m), 2 * N);
    kv_iter *it = mt_iter(m);
    assert_non_null(it);
    int i = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it), i++) {
        size_t klen, vlen;
        const uint8_t *k = kv_iter_key(it, &klen);
        const uint8_t *v = kv_iter_value(it, &vlen);
        int n = snprintf(key, sizeof key, "%08d", i);
        assert_int_equal(klen, (size_t)n + IKEY_TRAILER);
        assert_memory_equal(k, key, (size_t)n);
        assert_int_equal(vlen, (size_t)n);
        assert_memory_equal(v, key, (size_t)n);
    }
    assert_int_equal(i, 2 * N);
    kv_iter_free(it);
    kbuf val = KBUF_INIT;
    for (i = 0; i < 2 * N; i += 7) {
        int n = snprintf(key, sizeof key, "%08d", i);
        unsigned type;
        assert_true(mt_get(m, (uint8_t *)key, (size_t)n, IKEY_MAX_SEQ, &val, &type));
        assert_int_equal(type, IKEY_TYPE_VALUE);
        assert_memory_equal(val.data, key, (size_t)n);
    }
    kbuf_free(&val);
    mt_unref(m);
}

static void test_empty_and_refs(void **state)
{
    (void)state;
    memtable *m = mt_new();
    assert_non_null(m);
    kv_iter *it = mt_iter(m);
    assert_non_null(it);
    kv_iter_seek_first(it);
    assert_false(kv_iter_valid(it));
    kv_iter_seek_last(it);
    assert_false(kv_iter_valid(it));
    uint8_t ik[IKEY_TRAILER + 1];
    ikey_encode(ik, "a", 1, 5, IKEY_TYPE_SEEK);
    kv_iter_seek(it, ik, sizeof ik);
    assert_false(kv_iter_valid(it));
    assert_kura_ok(kv_iter_status(it));
    kv_iter_free(it);
    kbuf val = KBUF_INIT;
    unsigned type;
    assert_false(mt_get(m, (const uint8_t *)"a", 1, IKEY_MAX_SEQ, &val, &type));
    assert_int_equal(mt_entries(m), 0);

    /* the empty key, a deletion hiding a value, a value invisible at an older snapshot */
    assert_kura_ok(mt_add(m, 10, IKEY_TYPE_VALUE, (const uint8_t *)"", 0,
                          (const uint8_t *)"e", 1));
    assert_kura_ok(mt_add(m, 11, IKEY_TYPE_VALUE, (const uint8_t *)"k", 1,
                          (const uint8_t *)"v1", 2));
    assert_kura_ok(mt_add(m, 12, IKEY_TYPE_DELETE, (const uint8_t *)"k", 1, NULL, 0));
    assert_true(mt_get(m, (const uint8_t *)"", 0, 10, &val, &type));
    assert_int_equal(type, IKEY_TYPE_VALUE);
    assert_int_equal(val.len, 1);
    assert_false(mt_get(m, (const uint8_t *)"", 0, 9, &val, &type));
    assert_true(mt_get(m, (const uint8_t *)"k", 1, 12, &val, &type));
    assert_int_equal(type, IKEY_TYPE_DELETE);
    assert_true(mt_get(m, (const uint8_t *)"k", 1, 11, &val, &type));
    assert_int_equal(type, IKEY_TYPE_VALUE);
    assert_memory_equal(val.data, "v1", 2);
    kbuf_free(&val);

    mt_ref(m);
    mt_unref(m);
    assert_int_equal(mt_entries(m), 3); /* still alive after one of two unrefs */
    mt_unref(m);
    mt_unref(NULL);
}

static void test_usage_grows(void **state)
{
    (void)state;
    memtable *m = mt_new();
    assert_non_null(m);
    size_t prev = mt_usage(m), added = 0;
    assert_true(prev > 0);
    uint8_t val[1000];
    memset(val, 'x', sizeof val);
    for (int i = 0; i < 2000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "key%06d", i);
        size_t vlen = (size_t)(i % 10) * 100;
        assert_kura_ok(mt_add(m, (uint64_t)i + 1, IKEY_TYPE_VALUE, (uint8_t *)key, (size_t)n,
                              val, vlen));
        added += (size_t)n + IKEY_TRAILER + vlen;
        size_t u = mt_usage(m);
        assert_true(u >= prev);
        prev = u;
    }
    if (prev < added)
        fail_msg("usage %zu < %zu bytes of keys and values", prev, added);
    if (prev > 2 * added + 64 * 1024)
        fail_msg("usage %zu is far above %zu bytes of keys and values", prev, added);
    mt_unref(m);
}

/* ---- Concurrency ------------------------------------------------------------------------ */

/* Entry i of the concurrent test: key "%06u" of a random number, seq i + 1, and a value that
 * starts with i (so a reader can tell which entry it found) padded to i % 50 + 8 bytes. */
typedef struct conc_state {
    memtable *m;
    size_t n;
    uint32_t *keynum;
    size_t published; /* entries whose mt_add returned (release/acquire) */
    int done;
    unsigned long errors, reads, scans; /* atomic counters */
    uint64_t seed;
} conc_state;

static size_t conc_key(const conc_state *cs, size_t i, char *out)
{
    return (size_t)snprintf(out, 16, "%06u", cs->keynum[i]);
}

static size_t conc_value(size_t i, uint8_t *out)
{
    size_t n = 8 + i % 50;
    memset(out, (int)(i & 0xff), n);
    enc_fixed64(out, i);
    return n;
}

static void conc_error(conc_state *cs)
{
    __atomic_add_fetch(&cs->errors, 1, __ATOMIC_RELAXED);
}

/* A full scan: strictly increasing keys, every value matches its seq, at least `p` entries. */
static void conc_scan(conc_state *cs, size_t p, uint64_t *rng)
{
    kv_iter *it = mt_iter(cs->m);
    if (!it) {
        conc_error(cs);
        return;
    }
    size_t count = 0, plen = 0;
    uint8_t prevk[32], v[64];
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it), count++) {
        size_t klen, vlen;
        const uint8_t *k = kv_iter_key(it, &klen);
        const uint8_t *val = kv_iter_value(it, &vlen);
        size_t i = (size_t)ikey_seq(k, klen) - 1;
        if (i >= cs->n || klen > sizeof prevk || vlen != conc_value(i, v) ||
            memcmp(val, v, vlen) != 0 || (count && ikey_cmp(prevk, plen, k, klen) >= 0))
            conc_error(cs);
        memcpy(prevk, k, klen < sizeof prevk ? klen : sizeof prevk);
        plen = klen;
    }
    if (count < p)
        conc_error(cs);
    /* a short backward walk from a random place */
    char key[16];
    uint8_t ik[32];
    size_t klen = conc_key(cs, test_rand(rng) % p, key);
    ikey_encode(ik, key, klen, IKEY_MAX_SEQ, IKEY_TYPE_SEEK);
    kv_iter_seek(it, ik, klen + IKEY_TRAILER);
    plen = 0;
    for (int step = 0; step < 50 && kv_iter_valid(it); step++, kv_iter_prev(it)) {
        size_t n;
        const uint8_t *k = kv_iter_key(it, &n);
        if (n > sizeof prevk || (plen && ikey_cmp(k, n, prevk, plen) >= 0))
            conc_error(cs);
        memcpy(prevk, k, n < sizeof prevk ? n : sizeof prevk);
        plen = n;
    }
    kv_iter_free(it);
    __atomic_add_fetch(&cs->scans, 1, __ATOMIC_RELAXED);
}

static void *conc_reader(void *arg)
{
    conc_state *cs = arg;
    uint64_t rng = __atomic_add_fetch(&cs->seed, 1, __ATOMIC_RELAXED);
    uint8_t want[64];
    char key[16];
    for (unsigned long round = 0;; round++) {
        bool last = __atomic_load_n(&cs->done, __ATOMIC_ACQUIRE);
        size_t p = __atomic_load_n(&cs->published, __ATOMIC_ACQUIRE);
        if (p == 0)
            continue;
        for (int g = 0; g < 64; g++) {
            size_t i = test_rand(&rng) % p;
            size_t klen = conc_key(cs, i, key);
            const uint8_t *v;
            size_t vlen;
            unsigned type;
            /* at snapshot i + 1, entry i is the newest version of its key */
            if (!mt_get_ref(cs->m, (uint8_t *)key, klen, i + 1, &v, &vlen, &type) ||
                type != IKEY_TYPE_VALUE || vlen != conc_value(i, want) ||
                memcmp(v, want, vlen) != 0)
                conc_error(cs);
        }
        __atomic_add_fetch(&cs->reads, 64, __ATOMIC_RELAXED);
        if (round % 64 == 0 || last)
            conc_scan(cs, p, &rng);
        if (mt_usage(cs->m) == 0)
            conc_error(cs);
        if (last)
            return NULL;
    }
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    enum { READERS = 2 };
    conc_state cs = {.n = 60000, .seed = test_seed()};
    cs.m = mt_new();
    cs.keynum = malloc(cs.n * sizeof *cs.keynum);
    assert_non_null(cs.m);
    assert_non_null(cs.keynum);
    uint64_t rng = cs.seed;
    for (size_t i = 0; i < cs.n; i++)
        cs.keynum[i] = (uint32_t)(test_rand(&rng) % 20000);
    kthread th[READERS];
    for (int t = 0; t < READERS; t++)
        assert_true(kthread_start(&th[t], conc_reader, &cs));
    uint8_t v[64];
    char key[16];
    for (size_t i = 0; i < cs.n; i++) {
        size_t klen = conc_key(&cs, i, key);
        size_t vlen = conc_value(i, v);
        assert_kura_ok(mt_add(cs.m, i + 1, IKEY_TYPE_VALUE, (uint8_t *)key, klen, v, vlen));
        __atomic_store_n(&cs.published, i + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&cs.done, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < READERS; t++)
        kthread_join(th[t]);
    printf("concurrent: %lu gets and %lu scans by %d readers during %zu inserts\n", cs.reads,
           cs.scans, READERS, cs.n);
    if (cs.errors)
        fail_msg("%lu inconsistencies seen by readers", cs.errors);
    assert_true(cs.scans >= READERS);
    mt_unref(cs.m);
    free(cs.keynum);
}

/* ---- Throughput (printed only) ---------------------------------------------------------- */

static void test_throughput(void **state)
{
    (void)state;
    enum { N = 200000, VLEN = 100 };
    uint8_t (*keys)[16] = malloc((size_t)N * 16);
    assert_non_null(keys);
    uint64_t rng = 42;
    for (size_t i = 0; i < N; i++)
        for (int j = 0; j < 16; j += 8)
            enc_fixed64(keys[i] + j, test_rand(&rng));
    uint8_t val[VLEN];
    memset(val, 'v', sizeof val);

    memtable *m = mt_new();
    assert_non_null(m);
    uint64_t t0 = know_ns();
    for (size_t i = 0; i < N; i++)
        assert_kura_ok(mt_add(m, i + 1, IKEY_TYPE_VALUE, keys[i], 16, val, VLEN));
    uint64_t t1 = know_ns();
    size_t found = 0;
    for (size_t i = 0; i < N; i++) {
        const uint8_t *v;
        size_t vlen;
        unsigned type;
        found += mt_get_ref(m, keys[(i * 7919) % N], 16, IKEY_MAX_SEQ, &v, &vlen, &type);
    }
    uint64_t t2 = know_ns();
    assert_int_equal(found, N);
    mt_unref(m);

    m = mt_new();
    assert_non_null(m);
    uint64_t t3 = know_ns();
    for (size_t i = 0; i < N; i++) {
        uint8_t k[16];
        enc_fixed64_be(k, i);
        enc_fixed64_be(k + 8, 0);
        assert_kura_ok(mt_add(m, i + 1, IKEY_TYPE_VALUE, k, 16, val, VLEN));
    }
    uint64_t t4 = know_ns();
    mt_unref(m);
    free(keys);
    printf("memtable (16 B keys, 100 B values, %d entries): random insert %.0f ops/s, "
           "get %.0f ops/s, sequential insert %.0f ops/s\n",
           N, N * 1e9 / (double)(t1 - t0 + 1), N * 1e9 / (double)(t2 - t1 + 1),
           N * 1e9 / (double)(t4 - t3 + 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_in_seq_order),
        cmocka_unit_test(test_random_shuffled),
        cmocka_unit_test(test_sequential),
        cmocka_unit_test(test_empty_and_refs),
        cmocka_unit_test(test_usage_grows),
        cmocka_unit_test(test_concurrent_readers),
        cmocka_unit_test(test_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
