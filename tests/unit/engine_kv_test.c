/*
 * engine_kv_test.c - the raw key/value API end to end: puts, gets, deletes, batches, snapshots
 * and iterators across partitions, through flushes, compactions and reopen, checked against a
 * reference array.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/thread.h"

enum { NKEYS = 20000 };

typedef struct model {
    char *val[NKEYS]; /* NULL = absent */
} model;

static void key_of(int i, char *buf)
{
    snprintf(buf, 16, "key%08d", i);
}

static kura_options small_opts(void)
{
    kura_options o;
    kura_options_init(&o);
    o.memtable_budget_bytes = 1 << 20; /* 1 MiB per partition minimum: forces flushes */
    o.durability = KURA_RELAXED;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 256 << 10;
    o.sstable_target_bytes = 64 << 10;
    o.block_cache_bytes = 1 << 20;
    return o;
}

static void check_model(kura_tree *t, const model *m)
{
    char k[16];
    for (int i = 0; i < NKEYS; i++) {
        key_of(i, k);
        void *v = NULL;
        size_t vlen = 0;
        kura_status s = kura_get(t, NULL, k, 11, &v, &vlen);
        if (m->val[i]) {
            if (s != KURA_OK)
                fail_msg("key %s: %s (%s), expected %s", k, kura_status_str(s), kura_last_error(),
                         m->val[i]);
            assert_int_equal(vlen, strlen(m->val[i]));
            assert_memory_equal(v, m->val[i], vlen);
            kura_free(v);
        } else if (s != KURA_E_NOT_FOUND) {
            fail_msg("key %s: %s, expected not found", k, kura_status_str(s));
        }
    }
    /* forward and backward scans equal the model */
    kura_iter *it;
    assert_kura_ok(kura_iter_new(t, NULL, &it));
    int i = 0;
    for (kura_iter_seek_first(it); kura_iter_valid(it); kura_iter_next(it)) {
        while (i < NKEYS && !m->val[i])
            i++;
        assert_true(i < NKEYS);
        size_t kl, vl;
        const char *kk = kura_iter_key(it, &kl), *vv = kura_iter_value(it, &vl);
        key_of(i, k);
        assert_int_equal(kl, 11);
        assert_memory_equal(kk, k, 11);
        assert_int_equal(vl, strlen(m->val[i]));
        assert_memory_equal(vv, m->val[i], vl);
        i++;
    }
    assert_kura_ok(kura_iter_status(it));
    while (i < NKEYS && !m->val[i])
        i++;
    assert_int_equal(i, NKEYS);
    i = NKEYS - 1;
    for (kura_iter_seek_last(it); kura_iter_valid(it); kura_iter_prev(it)) {
        while (i >= 0 && !m->val[i])
            i--;
        assert_true(i >= 0);
        size_t kl;
        const char *kk = kura_iter_key(it, &kl);
        key_of(i, k);
        assert_memory_equal(kk, k, 11);
        i--;
    }
    while (i >= 0 && !m->val[i])
        i--;
    assert_int_equal(i, -1);
    kura_iter_free(it);
}

static void set_model(model *m, int i, const char *v)
{
    free(m->val[i]);
    m->val[i] = v ? strdup(v) : NULL;
}

static void test_random_ops_flush_compact_reopen(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-kv");
    uint64_t seed = test_seed();
    kura_options o = small_opts();
    kura_db *db;
    kura_tree *t;
    model *m = calloc(1, sizeof *m);
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    assert_int_equal(kura_tree_partitions(t), 4);
    char k[16], v[160];
    for (int round = 0; round < 3; round++) {
        for (int n = 0; n < 40000; n++) {
            int i = (int)(test_rand(&seed) % NKEYS);
            key_of(i, k);
            if (test_rand(&seed) % 8 == 0) {
                assert_kura_ok(kura_delete(t, NULL, k, 11));
                set_model(m, i, NULL);
            } else {
                int len = snprintf(v, sizeof v, "value-%d-%d-%0*d", round, n,
                                   (int)(test_rand(&seed) % 100), 7);
                assert_kura_ok(kura_put(t, NULL, k, 11, v, (size_t)len));
                set_model(m, i, v);
            }
        }
        check_model(t, m);
        kura_stats st;
        kura_get_stats(db, &st);
        assert_true(st.flushes > 0);
        if (round == 1) {
            assert_kura_ok(kura_tree_compact(t));
            check_model(t, m);
        }
        assert_kura_ok(kura_close(db));
        assert_kura_ok(kura_open(dir, &o, &db));
        assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
        check_model(t, m);
    }
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    for (int i = 0; i < NKEYS; i++)
        free(m->val[i]);
    free(m);
    test_rmrf(dir);
}

/* kura_release_memory flushes what the memtables hold, unloads the indexes and filters of
 * tables no one uses and empties the block cache; reads, an iterator open across it (whose
 * tables stay loaded), writes and a reopen see every key. */
static void test_release_memory(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-release");
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    kura_db *db;
    kura_tree *t;
    model *m = calloc(1, sizeof *m);
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_release_memory(db)); /* nothing to release */
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    char k[16], v[160];
    for (int i = 0; i < NKEYS; i++) { /* half flushed and read into the cache, half in memory */
        key_of(i, k);
        int len = snprintf(v, sizeof v, "value-%d-%0*d", i, 100, 7);
        assert_kura_ok(kura_put(t, NULL, k, 11, v, (size_t)len));
        set_model(m, i, v);
        if (i == NKEYS / 2) {
            assert_kura_ok(kura_tree_flush(t));
            check_model(t, m);
        }
    }
    kura_stats before, after;
    kura_get_stats(db, &before);
    assert_true(before.block_cache_bytes > 0);
    assert_true(before.memtable_bytes > 1000 * 100);
    assert_true(before.table_index_bytes > 0);
    kura_iter *it;
    assert_kura_ok(kura_iter_new(t, NULL, &it));
    kura_iter_seek_first(it);
    assert_true(kura_iter_valid(it));
    assert_kura_ok(kura_release_memory(db));
    kura_get_stats(db, &after);
    assert_true(after.flushes > before.flushes);
    /* what is left of the memtables is the new ones' filters (counted, never touched) */
    assert_true(after.memtable_bytes < before.memtable_bytes - (NKEYS / 2) * 100);
    assert_true(after.block_cache_bytes < 64 * 1024); /* the blocks the iterator pins */
    /* the iterator's version holds the first tables: they keep their indexes; the tables
     * the release flushed are used by no one */
    assert_true(after.table_index_bytes > 0);
    assert_true(after.sstable_files > before.sstable_files);
    int n = 0; /* the iterator still walks every key, from the memtables it pinned */
    for (; kura_iter_valid(it); kura_iter_next(it))
        n++;
    assert_kura_ok(kura_iter_status(it));
    assert_int_equal(n, NKEYS);
    kura_iter_free(it);
    assert_kura_ok(kura_release_memory(db)); /* nothing pinned now */
    kura_get_stats(db, &after);
    assert_int_equal(after.table_index_bytes, 0);
    check_model(t, m); /* loads them again */
    kura_get_stats(db, &after);
    assert_true(after.table_index_bytes > 0);
    key_of(7, k);
    assert_kura_ok(kura_put(t, NULL, k, 11, "after", 5));
    set_model(m, 7, "after");
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    check_model(t, m);
    assert_kura_ok(kura_close(db));
    for (int i = 0; i < NKEYS; i++)
        free(m->val[i]);
    free(m);
    test_rmrf(dir);
}

/* Releases racing reads, scans and writes (which flush and compact: small_opts). Run under
 * ASan in CI, where a table unloaded under a reader would be a use after free. The releases
 * go on (100 at least) until the race has happened: tables unloaded, a compaction, and every
 * thread's operations in between, however the threads were scheduled. */
typedef struct race {
    kura_db *db;
    kura_tree *t;
    int id;
    _Atomic bool stop;
    atomic_int ops; /* written by its thread, read by the test's while it runs */
} race;

static void *race_reader(void *p)
{
    race *r = p;
    uint64_t rs = (uint64_t)r->id * 7919 + 1;
    char k[16];
    while (!r->stop) {
        int i = (int)(test_rand(&rs) % NKEYS);
        key_of(i, k);
        void *v = NULL;
        size_t vlen;
        kura_status s = kura_get(r->t, NULL, k, 11, &v, &vlen);
        if (s == KURA_OK) { /* every value names its key */
            char want[16];
            snprintf(want, sizeof want, "v%08d", i);
            if (vlen < 9 || memcmp(v, want, 9) != 0)
                fail_msg("key %s: value %.*s", k, (int)vlen, (const char *)v);
            kura_free(v);
        } else if (s != KURA_E_NOT_FOUND) {
            fail_msg("key %s: %s (%s)", k, kura_status_str(s), kura_last_error());
        }
        if (r->ops % 32 == 0) /* pauses, in which a release may find the tables unused */
            usleep(300);
        if (r->ops++ % 64 == 0) { /* a short scan from there */
            kura_iter *it;
            assert_kura_ok(kura_iter_new(r->t, NULL, &it));
            kura_iter_seek(it, k, 11);
            for (int n = 0; n < 50 && kura_iter_valid(it); n++)
                kura_iter_next(it);
            assert_kura_ok(kura_iter_status(it));
            kura_iter_free(it);
        }
    }
    return NULL;
}

static void *race_writer(void *p)
{
    race *r = p;
    uint64_t rs = 99;
    char k[16], v[120];
    while (!r->stop) {
        int i = (int)(test_rand(&rs) % NKEYS);
        key_of(i, k);
        int len = snprintf(v, sizeof v, "v%08d-%0*d", i, 90, r->ops);
        assert_kura_ok(kura_put(r->t, NULL, k, 11, v, (size_t)len));
        if (++r->ops % 16 == 0)
            usleep(200);
    }
    return NULL;
}

static void test_release_memory_races_reads(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-release-race");
    kura_options o = small_opts();
    kura_db *db;
    kura_tree *t;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    char k[16], v[120];
    for (int i = 0; i < NKEYS; i += 2) {
        key_of(i, k);
        int len = snprintf(v, sizeof v, "v%08d-%0*d", i, 90, 0);
        assert_kura_ok(kura_put(t, NULL, k, 11, v, (size_t)len));
    }
    race rr[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        rr[i] = (race){.db = db, .t = t, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, i == 2 ? race_writer : race_reader,
                                        &rr[i]), 0);
    }
    int releases = 0;
    kura_stats st;
    uint64_t deadline = know_ns() + 60 * 1000000000ull; /* only a hang reaches it */
    for (;; releases++) {
        kura_get_stats(db, &st);
        bool raced = st.table_unloads > 0 && st.compactions > 0 && rr[0].ops > 0 &&
                     rr[1].ops > 0 && rr[2].ops > 0;
        if ((releases >= 100 && raced) || know_ns() > deadline)
            break;
        assert_kura_ok(kura_release_memory(db));
        usleep(2000);
    }
    for (int i = 0; i < 3; i++) {
        rr[i].stop = true;
        pthread_join(th[i], NULL);
    }
    kura_get_stats(db, &st);
    fprintf(stderr, "%d releases unloaded %llu tables; %d+%d reads, %d writes, %llu flushes, "
            "%llu compactions\n", releases, (unsigned long long)st.table_unloads,
            atomic_load(&rr[0].ops), atomic_load(&rr[1].ops), atomic_load(&rr[2].ops),
            (unsigned long long)st.flushes, (unsigned long long)st.compactions);
    assert_true(st.table_unloads > 0 && st.compactions > 0 && rr[0].ops > 0 && rr[1].ops > 0 &&
                rr[2].ops > 0);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_snapshot_survives_compaction(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-snap");
    kura_options o = small_opts();
    kura_db *db;
    kura_tree *t;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    assert_kura_ok(kura_put(t, NULL, "a", 1, "old", 3));
    assert_kura_ok(kura_put(t, NULL, "b", 1, "gone-later", 10));
    const kura_snapshot *snap = kura_snapshot_new(db);
    assert_non_null(snap);
    assert_kura_ok(kura_put(t, NULL, "a", 1, "new", 3));
    assert_kura_ok(kura_delete(t, NULL, "b", 1));
    assert_kura_ok(kura_tree_compact(t));
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.snapshot = snap;
    void *v;
    size_t n;
    assert_kura_ok(kura_get(t, &ro, "a", 1, &v, &n));
    assert_memory_equal(v, "old", 3);
    kura_free(v);
    assert_kura_ok(kura_get(t, &ro, "b", 1, &v, &n));
    assert_memory_equal(v, "gone-later", 10);
    kura_free(v);
    assert_kura_ok(kura_get(t, NULL, "a", 1, &v, &n));
    assert_memory_equal(v, "new", 3);
    kura_free(v);
    assert_kura_status(kura_get(t, NULL, "b", 1, &v, &n), KURA_E_NOT_FOUND);
    kura_snapshot_free(db, snap);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_batches_and_validation(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-batch");
    kura_db *db;
    kura_tree *t, *t1;
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "multi", NULL, &t));
    kura_tree_options to = {.partitions = 1};
    assert_kura_ok(kura_tree_open(db, "single", &to, &t1));
    kura_batch *b = kura_batch_new();
    /* find two keys in different partitions of the 4-partition tree */
    char k1[16] = "key00000000", k2[16];
    int j = 1;
    do
        key_of(j++, k2);
    while (kura_tree_partition_of(t, k2, 11) == kura_tree_partition_of(t, k1, 11));
    assert_kura_ok(kura_batch_put(b, k1, 11, "1", 1));
    assert_kura_ok(kura_batch_put(b, k2, 11, "2", 1));
    assert_kura_status(kura_write(t, NULL, b), KURA_E_INVALID);
    assert_kura_ok(kura_write(t1, NULL, b)); /* one partition: fine */
    kura_batch_clear(b);
    assert_kura_ok(kura_batch_delete(b, k1, 11));
    assert_kura_ok(kura_batch_put(b, "zz", 2, "3", 1));
    assert_kura_ok(kura_write(t1, NULL, b));
    void *v;
    size_t n;
    assert_kura_status(kura_get(t1, NULL, k1, 11, &v, &n), KURA_E_NOT_FOUND);
    assert_kura_ok(kura_get(t1, NULL, k2, 11, &v, &n));
    kura_free(v);
    kura_batch_free(b);
    assert_kura_status(kura_put(t, NULL, "", 0, "x", 1), KURA_E_INVALID);
    assert_kura_status(kura_tree_open(db, "bad/name", NULL, &t), KURA_E_INVALID);
    kura_tree_options hp = {.hash_prefixed_keys = true};
    kura_tree *th;
    assert_kura_ok(kura_tree_open(db, "hashed", &hp, &th));
    assert_kura_status(kura_put(th, NULL, "short", 5, "x", 1), KURA_E_INVALID);
    const char *names[8];
    assert_int_equal(kura_tree_list(db, names, 8), 3);
    assert_kura_ok(kura_tree_drop(db, th));
    assert_int_equal(kura_tree_list(db, names, 8), 2);
    assert_kura_ok(kura_close(db));
    /* the catalog remembers the trees and their partition counts */
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_int_equal(kura_tree_list(db, names, 8), 2);
    assert_kura_ok(kura_tree_open(db, "single", NULL, &t1));
    assert_int_equal(kura_tree_partitions(t1), 1);
    assert_kura_ok(kura_get(t1, NULL, "zz", 2, &v, &n));
    kura_free(v);
    /* a second open of the same directory is refused while the first holds it */
    kura_db *db2;
    assert_kura_status(kura_open(dir, NULL, &db2), KURA_E_BUSY);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_catalog_checksum(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-catalog");
    kura_db *db;
    kura_tree *t;
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "orders", NULL, &t));
    assert_kura_ok(kura_close(db));
    char path[4096];
    snprintf(path, sizeof path, "%s/KURA", dir);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    assert_true(n > 20);
    for (size_t off = 0; off < n; off++) {
        char orig = buf[off];
        buf[off] = (char)(orig ^ 0x04); /* e.g. a partition count 4 -> 0, a letter's case */
        fseek(f, 0, SEEK_SET);
        fwrite(buf, 1, n, f);
        fflush(f);
        kura_status s = kura_open(dir, NULL, &db);
        if (s == KURA_OK)
            fail_msg("a flipped bit at offset %zu of KURA went unnoticed", off);
        assert_int_equal(s, KURA_E_CORRUPTION);
        assert_non_null(strstr(kura_last_error(), "KURA"));
        buf[off] = orig;
    }
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, n, f);
    fclose(f);
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* A tree made under the name of files no catalog entry names (left by a crash before a
 * tree's catalog entry, or the end of its drop, was durable) starts empty: it does not
 * recover them. */
static void test_new_tree_ignores_leftovers(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-leftovers");
    kura_db *db;
    kura_tree *t;
    kura_write_options wo;
    kura_write_options_init(&wo);
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "lt", NULL, &t));
    assert_kura_ok(kura_put(t, &wo, "old", 3, "value", 5));
    assert_kura_ok(kura_close(db)); /* "lt" flushed and in the catalog */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cp -a '%s/lt' '%s/lt.saved'", dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "lt", NULL, &t));
    assert_kura_ok(kura_tree_drop(db, t));
    assert_kura_ok(kura_close(db));
    /* the drop's files back, as a crash before it ended would leave them */
    snprintf(cmd, sizeof cmd, "mv '%s/lt.saved' '%s/lt'", dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "lt", NULL, &t));
    void *val = NULL;
    size_t vlen = 0;
    assert_int_equal(kura_get(t, NULL, "old", 3, &val, &vlen), KURA_E_NOT_FOUND);
    assert_kura_ok(kura_put(t, &wo, "new", 3, "v", 1));
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, NULL, &db));
    assert_kura_ok(kura_tree_open(db, "lt", NULL, &t));
    assert_int_equal(kura_get(t, NULL, "old", 3, &val, &vlen), KURA_E_NOT_FOUND);
    assert_kura_ok(kura_get(t, NULL, "new", 3, &val, &vlen));
    kura_free(val);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* The opt-in WAL buffer of relaxed durability: writes are readable at once, reach the disk at
 * kura_sync or close, and survive a reopen. */
static void test_relaxed_wal_buffer(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine-walbuf");
    kura_options o = small_opts();
    o.wal_buffer_bytes = 32 << 10;
    kura_db *db;
    kura_tree *t;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    char k[16], v[64];
    for (int i = 0; i < 3000; i++) {
        key_of(i, k);
        int n = snprintf(v, sizeof v, "buffered-%d", i);
        assert_kura_ok(kura_put(t, NULL, k, 11, v, (size_t)n));
    }
    void *got;
    size_t n;
    key_of(2999, k);
    assert_kura_ok(kura_get(t, NULL, k, 11, &got, &n));
    assert_memory_equal(got, "buffered-2999", n);
    kura_free(got);
    assert_kura_ok(kura_sync(db));
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &t));
    for (int i = 0; i < 3000; i++) {
        key_of(i, k);
        assert_kura_ok(kura_get(t, NULL, k, 11, &got, &n));
        int want = snprintf(v, sizeof v, "buffered-%d", i);
        assert_int_equal(n, (size_t)want);
        assert_memory_equal(got, v, n);
        kura_free(got);
    }
    assert_kura_ok(kura_close(db));
    o.wal_buffer_bytes = 65u << 20;
    assert_kura_status(kura_open(dir, &o, &db), KURA_E_INVALID);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ops_flush_compact_reopen),
        cmocka_unit_test(test_release_memory),
        cmocka_unit_test(test_release_memory_races_reads),
        cmocka_unit_test(test_snapshot_survives_compaction),
        cmocka_unit_test(test_batches_and_validation),
        cmocka_unit_test(test_catalog_checksum),
        cmocka_unit_test(test_new_tree_ignores_leftovers),
        cmocka_unit_test(test_relaxed_wal_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
