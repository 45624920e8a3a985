/*
 * idx_backfill_test.c - a GSI added to a live table (idx_rt_add, idx_rt_backfill_put,
 * idx_rt_built in index/runtime.c) and a crash after its first checkpoint, over bare
 * partitions, with the GSI applier behind.
 *
 * The bug this shows (found by crash_index_ddl_test's power-loss sweep): the applier had
 * applied an older write of an item to the new index (its entry A) but not yet the later
 * write that moved the item to B (delete A, put B); the backfill's snapshot, taken after that
 * later write (engine/table_index.c backfill_main takes its s0 when the job starts, later
 * than idx_rt_add's), put B; idx_rt_built then declared every base sequence up to the
 * snapshot applied and made that durable. After a crash the replay starts past the later
 * write, so its delete of A is never applied: A stays in the index for good (an extra
 * entry). The test does what the engine does, with the applier held back by idx_rt_pause.
 *
 * And a second one (found by crash_index_ddl_test's test_backfill_under_writes, no crash
 * needed): the backfill inserts its entries at the snapshot's sequence s0, older than the
 * changes the runtime applies meanwhile. When a later write moved an item away from entry A
 * (a delete of A at w > s0), and that tombstone was flushed and compacted into the bottom
 * level (where compactions drop tombstones), the backfill's put of A at s0 arrives after it:
 * nothing is left to hide it, and A stays in the index (an extra entry).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/runtime.h"
#include "util/hash.h"
#include "util/pool.h"

enum { NBASE = 2, NPARTS = 2 };

typedef struct fixture {
    char *dir;
    lsm_shared sh;
    lsm_tree *base[NBASE], *g[NPARTS], *x[NPARTS];
    idx_def g_def, x_def;
    idx_runtime *rt;
    key_schema ks;
} fixture;

static void open_part(fixture *f, const char *name, uint32_t i, bool no_wal, bool create,
                      lsm_tree **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%u", f->dir, name, i);
    if (create)
        assert_kura_ok(io_mkdir(f->sh.io, path));
    lsm_options o = {.durability = KURA_SYNC, .write_buffer_bytes = 256 << 10,
                     .block_size = 4096, .bloom_bits_per_key = 10,
                     .compression = KURA_COMPRESS_NONE, .bottom_compression = KURA_COMPRESS_NONE,
                     .l0_compaction_trigger = 4, .l0_slowdown_trigger = 8, .l0_stop_trigger = 12,
                     .level1_bytes = 1 << 20, .sstable_target_bytes = 1 << 20,
                     .no_wal = no_wal, .retain_wals = !no_wal};
    uint64_t max_seq = 0;
    assert_kura_ok(lsm_open(&f->sh, &o, path, create, out, &max_seq));
    if (max_seq > lsm_visible(&f->sh))
        lsm_seq_reset(&f->sh, max_seq);
}

/* Opens the table and G; X too (as an index of the table) when with_x. */
static void open_all(fixture *f, bool create, bool with_x)
{
    for (uint32_t i = 0; i < NBASE; i++)
        open_part(f, "base", i, false, create, &f->base[i]);
    for (uint32_t i = 0; i < NPARTS; i++) {
        open_part(f, "g", i, true, create, &f->g[i]);
        open_part(f, "x", i, true, create || !with_x, &f->x[i]);
    }
    idx_rt_index ix[2] = {{&f->g_def, f->g, NPARTS, false}, {&f->x_def, f->x, NPARTS, false}};
    idx_rt_args a = {.table_name = "T", .ks = f->ks, .sh = &f->sh, .sync = true,
                     .base = f->base, .nbase = NBASE, .indexes = ix,
                     .nindexes = with_x ? 2 : 1};
    assert_kura_ok(idx_rt_open(&a, &f->rt));
}

static void close_trees(fixture *f)
{
    for (uint32_t i = 0; i < NBASE; i++)
        assert_kura_ok(lsm_close(f->base[i]));
    for (uint32_t i = 0; i < NPARTS; i++) {
        assert_kura_ok(lsm_close(f->g[i]));
        assert_kura_ok(lsm_close(f->x[i]));
    }
}

static void gsi_def(idx_def *d, const char *name, uint32_t id, const char *hash)
{
    *d = (idx_def){.name = strdup(name), .id = id, .kind = IDX_GLOBAL, .nhash = 1,
                   .projection = KURA_PROJECTION_KEYS_ONLY};
    d->hash[0].name = strdup(hash);
    d->hash[0].type = KURA_S;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("idx_backfill");
    lsm_shared_init(&f->sh);
    f->sh.io = io_env_posix();
    f->sh.cache = block_cache_new(1 << 20);
    f->sh.pool = kpool_new(1);
    f->ks = (key_schema){.pk_name = "pk", .pk_type = KURA_S, .sk_name = "sk", .sk_type = KURA_S};
    gsi_def(&f->g_def, "G", 1, "g");
    gsi_def(&f->x_def, "X", 2, "x");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    idx_def_clear(&f->g_def);
    idx_def_clear(&f->x_def);
    kpool_free(f->sh.pool);
    block_cache_free(f->sh.cache);
    lsm_shared_destroy(&f->sh);
    test_rmrf(f->dir);
    free(f);
    return 0;
}

static kura_value *item(const char *x)
{
    kura_value *m = kura_value_map();
    kura_value_map_put(m, "pk", 2, kura_value_s("p", 1));
    kura_value_map_put(m, "sk", 2, kura_value_s("s", 1));
    kura_value_map_put(m, "g", 1, kura_value_s("g", 1));
    kura_value_map_put(m, "x", 1, kura_value_s(x, strlen(x)));
    return m;
}

/* [put neu, image of old] into the item's partition, as the item layer writes it. */
static void write_item(fixture *f, const kura_value *neu, const kura_value *old)
{
    kbuf key = KBUF_INIT, enc = KBUF_INIT, oenc = KBUF_INIT;
    assert_kura_ok(key_build(&f->ks, neu, KEY_FROM_ITEM, &key));
    assert_kura_ok(val_encode(neu, &enc));
    if (old)
        assert_kura_ok(val_encode(old, &oenc));
    lsm_batch b;
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_put(&b, key.data, key.len, enc.data, enc.len));
    assert_kura_ok(lsm_batch_image(&b, key.data, key.len, oenc.data, oenc.len));
    assert_kura_ok(lsm_write(f->base[kura_hash_bucket(dec_fixed64_be(key.data), NBASE)], &b,
                             true));
    lsm_batch_free(&b);
    kbuf_free(&key);
    kbuf_free(&enc);
    kbuf_free(&oenc);
}

static bool x_has(fixture *f, const kura_value *it)
{
    kbuf key = KBUF_INIT, v = KBUF_INIT;
    bool present = false;
    assert_kura_ok(idx_entry_key(&f->x_def, &f->ks, it, &key, &present));
    assert_true(present);
    kura_status s = lsm_get(f->x[kura_hash_bucket(dec_fixed64_be(key.data), NPARTS)], key.data,
                            key.len, 0, true, &v);
    assert_true(s == KURA_OK || s == KURA_E_NOT_FOUND);
    kbuf_free(&key);
    kbuf_free(&v);
    return s == KURA_OK;
}

/* What the engine's backfill does for the one item, at s0. */
static void backfill(fixture *f, uint32_t pos, uint64_t s0, const kura_value *it)
{
    kbuf key = KBUF_INIT, v = KBUF_INIT;
    bool present = false;
    assert_kura_ok(idx_entry_key(&f->x_def, &f->ks, it, &key, &present));
    assert_kura_ok(idx_entry_value(&f->x_def, &f->ks, it, &v));
    assert_kura_ok(idx_rt_backfill_put(f->rt, pos, s0, key.data, key.len, v.data, v.len));
    kbuf_free(&key);
    kbuf_free(&v);
}

static void test_built_with_applier_behind_then_crash(void **state)
{
    fixture *f = *state;
    open_all(f, true, false);
    kura_value *a = item("A"), *b = item("B");
    /* write A; X is added; the applier applies A to X (entry A) */
    idx_rt_pause(f->rt, true);
    write_item(f, a, NULL);
    idx_rt_index xi = {&f->x_def, f->x, NPARTS, true};
    uint32_t pos;
    uint64_t s0_add;
    assert_kura_ok(idx_rt_add(f->rt, &xi, &pos, &s0_add));
    idx_rt_pause(f->rt, false);
    assert_kura_ok(idx_rt_wait(f->rt, pos, 10000));
    /* the item moves to B while the applier is behind; the backfill starts after that */
    idx_rt_pause(f->rt, true);
    write_item(f, b, a);
    uint64_t s0 = idx_rt_seq_now(f->rt); /* as backfill_main takes it */
    backfill(f, pos, s0, b);
    assert_kura_ok(idx_rt_built(f->rt, pos, s0));
    /* a crash: the queued write is lost with the memtables; the replay starts at X's
     * checkpoint */
    idx_rt_drop(f->rt);
    close_trees(f);
    open_all(f, false, true);
    assert_kura_ok(idx_rt_wait(f->rt, 1, 10000));
    assert_true(x_has(f, b));
    if (x_has(f, a))
        fail_msg("index X still has the entry of the item's older version after the crash: "
                 "its first checkpoint claimed the write that deleted it");
    assert_kura_ok(idx_rt_close(f->rt));
    close_trees(f);
    kura_value_free(a);
    kura_value_free(b);
}

static void test_backfill_after_tombstone_compacted(void **state)
{
    fixture *f = *state;
    open_all(f, true, false);
    kura_value *a = item("A"), *b = item("B");
    write_item(f, a, NULL);
    idx_rt_index xi = {&f->x_def, f->x, NPARTS, true};
    uint32_t pos;
    uint64_t s0;
    assert_kura_ok(idx_rt_add(f->rt, &xi, &pos, &s0)); /* the snapshot at s0 holds A */
    write_item(f, b, a);                                 /* delete A, put B at w > s0 */
    assert_kura_ok(idx_rt_wait(f->rt, pos, 10000));
    for (uint32_t p = 0; p < NPARTS; p++) /* background compactions do this too */
        assert_kura_ok(lsm_compact_all(f->x[p]));
    backfill(f, pos, s0, a);
    assert_kura_ok(idx_rt_built(f->rt, pos, s0));
    for (uint32_t p = 0; p < NPARTS; p++) /* every version of A merged */
        assert_kura_ok(lsm_compact_all(f->x[p]));
    assert_true(x_has(f, b));
    if (x_has(f, a))
        fail_msg("index X has the entry of the item's older version: the backfill's put at "
                 "s0 came after the newer delete had been compacted away");
    assert_kura_ok(idx_rt_close(f->rt));
    close_trees(f);
    kura_value_free(a);
    kura_value_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_built_with_applier_behind_then_crash, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_backfill_after_tombstone_compacted, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
