/*
 * idx_runtime_test.c - the indexes of a table at run time (index/runtime.c, apply.c,
 * applier.c) over bare partitions: an LSI is current when the write returns, a GSI once the
 * applier caught up (idx_rt_wait); a crash (index memtables lost, base WALs kept) is repaired
 * at the next open from the checkpoints; WAL segments stay while an index needs them and go
 * once it has checkpointed past them; a paused applier shows its lag and blocks writers when
 * its queue is full.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/runtime.h"
#include "util/hash.h"
#include "util/pool.h"

enum { NBASE = 2, NIDX_PARTS = 2 };

typedef struct fixture {
    char *dir;
    lsm_shared sh;
    lsm_tree *base[NBASE];
    lsm_tree *lsi[NBASE];
    lsm_tree *gsi[NIDX_PARTS];
    idx_def lsi_def, gsi_def;
    idx_runtime *rt;
    key_schema ks;
} fixture;

static lsm_options opts(bool no_wal, bool retain)
{
    lsm_options o = {0};
    o.durability = KURA_SYNC;
    o.write_buffer_bytes = 256 << 10;
    o.block_size = 4096;
    o.bloom_bits_per_key = 10;
    o.compression = o.bottom_compression = KURA_COMPRESS_NONE;
    o.l0_compaction_trigger = 4;
    o.l0_slowdown_trigger = 8;
    o.l0_stop_trigger = 12;
    o.level1_bytes = 1 << 20;
    o.sstable_target_bytes = 1 << 20;
    o.no_wal = no_wal;
    o.retain_wals = retain;
    return o;
}

static void open_part(fixture *f, const char *name, uint32_t i, bool no_wal, bool create,
                      lsm_tree **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%u", f->dir, name, i);
    if (create)
        assert_kura_ok(io_mkdir(f->sh.io, path));
    lsm_options o = opts(no_wal, !no_wal);
    uint64_t max_seq = 0;
    assert_kura_ok(lsm_open(&f->sh, &o, path, create, out, &max_seq));
    if (max_seq > lsm_visible(&f->sh))
        lsm_seq_reset(&f->sh, max_seq);
}

static void open_all(fixture *f, bool create, size_t queue_bytes)
{
    for (uint32_t i = 0; i < NBASE; i++) {
        open_part(f, "base", i, false, create, &f->base[i]);
        open_part(f, "lsi", i, true, create, &f->lsi[i]);
    }
    for (uint32_t i = 0; i < NIDX_PARTS; i++)
        open_part(f, "gsi", i, true, create, &f->gsi[i]);
    idx_rt_index ix[2] = {{&f->lsi_def, f->lsi, NBASE, false}, {&f->gsi_def, f->gsi, NIDX_PARTS, false}};
    idx_rt_args a = {.table_name = "T", .ks = f->ks, .sh = &f->sh, .sync = true,
                     .base = f->base, .nbase = NBASE, .indexes = ix, .nindexes = 2,
                     .queue_bytes = queue_bytes, .switch_bytes = 16 << 10};
    assert_kura_ok(idx_rt_open(&a, &f->rt));
}

static void close_trees(fixture *f)
{
    for (uint32_t i = 0; i < NBASE; i++) {
        assert_kura_ok(lsm_close(f->base[i]));
        assert_kura_ok(lsm_close(f->lsi[i]));
    }
    for (uint32_t i = 0; i < NIDX_PARTS; i++)
        assert_kura_ok(lsm_close(f->gsi[i]));
}

static void set_attr(idx_key_attr *a, const char *name, kura_type t)
{
    a->name = strdup(name);
    a->type = t;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("idx_runtime");
    lsm_shared_init(&f->sh);
    f->sh.io = io_env_posix();
    f->sh.cache = block_cache_new(1 << 20);
    f->sh.pool = kpool_new(1);
    f->ks = (key_schema){.pk_name = "pk", .pk_type = KURA_S, .sk_name = "sk", .sk_type = KURA_S};
    f->lsi_def = (idx_def){.name = strdup("L"), .id = 1, .kind = IDX_LOCAL, .nhash = 1,
                           .nrange = 1, .projection = KURA_PROJECTION_ALL};
    set_attr(&f->lsi_def.hash[0], "pk", KURA_S);
    set_attr(&f->lsi_def.range[0], "lsk", KURA_N);
    f->gsi_def = (idx_def){.name = strdup("G"), .id = 2, .kind = IDX_GLOBAL, .nhash = 1,
                           .nrange = 1, .projection = KURA_PROJECTION_KEYS_ONLY};
    set_attr(&f->gsi_def.hash[0], "gpk", KURA_S);
    set_attr(&f->gsi_def.range[0], "gsk", KURA_N);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    idx_def_clear(&f->lsi_def);
    idx_def_clear(&f->gsi_def);
    kpool_free(f->sh.pool);
    block_cache_free(f->sh.cache);
    lsm_shared_destroy(&f->sh);
    test_rmrf(f->dir);
    free(f);
    return 0;
}

/* The item {pk, sk, lsk, gpk, gsk} (attributes with value NULL are left out). */
static kura_value *item(const char *pk, const char *sk, const char *lsk, const char *gpk,
                        const char *gsk)
{
    kura_value *m = kura_value_map();
    kura_value_map_put(m, "pk", 2, kura_value_s(pk, strlen(pk)));
    kura_value_map_put(m, "sk", 2, kura_value_s(sk, strlen(sk)));
    if (lsk)
        kura_value_map_put(m, "lsk", 3, kura_value_n(lsk, strlen(lsk)));
    if (gpk)
        kura_value_map_put(m, "gpk", 3, kura_value_s(gpk, strlen(gpk)));
    if (gsk)
        kura_value_map_put(m, "gsk", 3, kura_value_n(gsk, strlen(gsk)));
    return m;
}

/* A write as the item layer makes it: [put|delete, image of `old`] into the item's
 * partition. `neu` NULL deletes. Consumes neither. */
static void write_item(fixture *f, const kura_value *neu, const kura_value *old)
{
    const kura_value *k = neu ? neu : old;
    kbuf key = KBUF_INIT, enc = KBUF_INIT, oenc = KBUF_INIT;
    assert_kura_ok(key_build(&f->ks, k, KEY_FROM_ITEM, &key));
    lsm_batch b;
    lsm_batch_init(&b);
    if (neu) {
        assert_kura_ok(val_encode(neu, &enc));
        assert_kura_ok(lsm_batch_put(&b, key.data, key.len, enc.data, enc.len));
    } else {
        assert_kura_ok(lsm_batch_delete(&b, key.data, key.len));
    }
    if (old)
        assert_kura_ok(val_encode(old, &oenc));
    assert_kura_ok(lsm_batch_image(&b, key.data, key.len, oenc.data, oenc.len));
    uint32_t part = kura_hash_bucket(dec_fixed64_be(key.data), NBASE);
    assert_kura_ok(lsm_write(f->base[part], &b, true));
    lsm_batch_free(&b);
    kbuf_free(&key);
    kbuf_free(&enc);
    kbuf_free(&oenc);
}

/* Whether index `d` (trees parts[0..n)) holds the entry of `it`. */
static bool has_entry(fixture *f, const idx_def *d, lsm_tree **parts, uint32_t n,
                      const kura_value *it)
{
    kbuf key = KBUF_INIT, v = KBUF_INIT;
    bool present = false;
    assert_kura_ok(idx_entry_key(d, &f->ks, it, &key, &present));
    if (!present) {
        kbuf_free(&key);
        return false;
    }
    uint32_t part = kura_hash_bucket(dec_fixed64_be(key.data), n);
    kura_status s = lsm_get(parts[part], key.data, key.len, 0, true, &v);
    assert_true(s == KURA_OK || s == KURA_E_NOT_FOUND);
    kbuf_free(&key);
    kbuf_free(&v);
    return s == KURA_OK;
}

static void test_lsi_now_gsi_after_wait(void **state)
{
    fixture *f = *state;
    open_all(f, true, 0);
    kura_value *a1 = item("p", "a", "1", "g", "10");
    write_item(f, a1, NULL);
    assert_true(has_entry(f, &f->lsi_def, f->lsi, NBASE, a1)); /* synchronous */
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    assert_true(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, a1));
    /* move it in both indexes */
    kura_value *a2 = item("p", "a", "2", "h", "11");
    write_item(f, a2, a1);
    assert_false(has_entry(f, &f->lsi_def, f->lsi, NBASE, a1));
    assert_true(has_entry(f, &f->lsi_def, f->lsi, NBASE, a2));
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    assert_false(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, a1));
    assert_true(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, a2));
    /* sparse: drop the GSI key */
    kura_value *a3 = item("p", "a", "2", NULL, NULL);
    write_item(f, a3, a2);
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    assert_false(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, a2));
    assert_true(has_entry(f, &f->lsi_def, f->lsi, NBASE, a3));
    /* delete */
    write_item(f, NULL, a3);
    assert_false(has_entry(f, &f->lsi_def, f->lsi, NBASE, a3));
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    idx_rt_stats st;
    idx_rt_stats_get(f->rt, 1, &st);
    assert_int_equal(st.lag_writes, 0);
    assert_int_equal(st.error, KURA_OK);
    assert_kura_ok(idx_rt_close(f->rt));
    close_trees(f);
    kura_value_free(a1);
    kura_value_free(a2);
    kura_value_free(a3);
}

/* Many writes, a crash at a random point of the index's life, and the indexes come back
 * whole from the base WALs. */
static void test_crash_recovery(void **state)
{
    fixture *f = *state;
    open_all(f, true, 0);
    enum { N = 3000 };
    kura_value **cur = calloc(N / 10, sizeof *cur), **prev = calloc(N / 10, sizeof *prev);
    for (int i = 0; i < N; i++) {
        int k = i % (N / 10);
        char sk[16], lsk[16], gpk[16], gsk[16];
        snprintf(sk, sizeof sk, "k%04d", k);
        snprintf(lsk, sizeof lsk, "%d", i);
        snprintf(gpk, sizeof gpk, "g%d", i % 7);
        snprintf(gsk, sizeof gsk, "%d", i % 13);
        kura_value *it = item("p", sk, lsk, i % 5 ? gpk : NULL, gsk);
        write_item(f, it, cur[k]);
        kura_value_free(prev[k]);
        prev[k] = cur[k];
        cur[k] = it;
    }
    /* a crash: the queue unapplied, no closing checkpoint, index memtables lost (trees
     * without a WAL), base WALs kept */
    idx_rt_drop(f->rt);
    close_trees(f);
    open_all(f, false, 0);
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    for (int k = 0; k < N / 10; k++) {
        assert_true(has_entry(f, &f->lsi_def, f->lsi, NBASE, cur[k]));
        bool sparse = !kura_value_get(cur[k], "gpk", 3);
        assert_int_equal(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, cur[k]), !sparse);
        /* the version before is gone from both (its index keys differ: lsk grows) */
        assert_false(has_entry(f, &f->lsi_def, f->lsi, NBASE, prev[k]));
        kbuf a = KBUF_INIT, b = KBUF_INIT;
        bool pa = false, pb = false;
        assert_kura_ok(idx_entry_key(&f->gsi_def, &f->ks, prev[k], &a, &pa));
        assert_kura_ok(idx_entry_key(&f->gsi_def, &f->ks, cur[k], &b, &pb));
        if (pa && !(pb && a.len == b.len && !memcmp(a.data, b.data, a.len)))
            assert_false(has_entry(f, &f->gsi_def, f->gsi, NIDX_PARTS, prev[k]));
        kbuf_free(&a);
        kbuf_free(&b);
    }
    assert_kura_ok(idx_rt_close(f->rt));
    close_trees(f);
    for (int k = 0; k < N / 10; k++) {
        kura_value_free(cur[k]);
        kura_value_free(prev[k]);
    }
    free(cur);
    free(prev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lsi_now_gsi_after_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_recovery, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
