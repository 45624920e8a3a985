/*
 * engine_index_wal_test.c - the base WAL kept for a table's indexes (index/apply.c
 * rt_release_wals, engine/lsm/lsm_index.c): while the GSI applier is stopped, every WAL
 * segment the table writes stays, however often the table is flushed and the indexes are
 * checkpointed; once the applier resumes, has caught up and the indexes have checkpointed, the
 * segments go. And across a close and reopen while the applier is stopped: the segments are
 * still on disk after the close, and the reopen brings the GSIs up to date from them (every
 * index recomputed from the items matches its tree, crash/index_check.h).
 *
 * The table is crash/ixwork.h's (an LSI and two GSIs) in a database of 2 partitions; the
 * segments are counted by listing the table's partition directories (<db>/tbl-<id>/p0000/
 * *.log) and through kura_stats' wal_bytes.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/ixwork.h"
#include "crash/scratch.h"
#include "engine/table.h"
#include "engine/table_index.h"

enum { NPARTS = 2, NKEYS = 200, OPS_PER_ROUND = 150, ROUNDS = 6, WAIT_MS = 60000 };

typedef struct fixture {
    char *dir;
    kura_db *db;
    ixw *w;
} fixture;

static kura_options options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.default_partitions = NPARTS;
    o.memtable_budget_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("engine_index_wal");
    kura_options o = options();
    if (kura_open(f->dir, &o, &f->db) != KURA_OK)
        return -1;
    char why[512];
    if (ixw_create_table(f->db, why, sizeof why) != KURA_OK) {
        fprintf(stderr, "CreateTable: %s\n", why);
        return -1;
    }
    ixw_config c = {.seed = test_seed(), .nwriters = 1, .keys_per_writer = NKEYS,
                    .pad_max = 2000, .durable_acks = true};
    f->w = ixw_new(&c);
    *state = f;
    return f->w ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kura_status s = kura_close(f->db);
    ixw_free(f->w);
    test_rmrf(f->dir);
    free(f);
    return s == KURA_OK ? 0 : -1;
}

static void reopen(fixture *f)
{
    assert_kura_ok(kura_close(f->db));
    kura_options o = options();
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
}

static void write_ops(fixture *f, int n)
{
    char why[1024];
    for (int i = 0; i < n; i++)
        if (ixw_run(f->w, f->db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s", why);
}

/* Flushes the table's tree: each partition with data starts a new WAL segment. */
static void flush_table(fixture *f)
{
    kura_table *t;
    assert_kura_ok(table_acquire(f->db, IXW_TABLE, &t));
    assert_kura_ok(kura_tree_flush(t->tree));
    table_release(t);
}

/* WAL segments on disk in the table's partition directories: the total, and the fewest of
 * any partition. */
static size_t count_segments(fixture *f, size_t *min_out)
{
    kura_table *t;
    assert_kura_ok(table_acquire(f->db, IXW_TABLE, &t));
    uint64_t id = t->id;
    uint32_t nparts = t->tree->nparts;
    table_release(t);
    assert_int_equal(nparts, NPARTS);
    size_t total = 0, min = SIZE_MAX;
    for (uint32_t p = 0; p < nparts; p++) {
        char sub[64];
        snprintf(sub, sizeof sub, "tbl-%llu/p%04u", (unsigned long long)id, p);
        char *pdir = scratch_join(f->dir, sub), *paths[256];
        size_t n = scratch_find(pdir, ".log", paths, 256);
        assert_true(n > 0 && n <= 256); /* a partition always has its current segment */
        scratch_free_paths(paths, n);
        free(pdir);
        total += n;
        min = n < min ? n : min;
    }
    if (min_out)
        *min_out = min;
    return total;
}

static uint64_t wal_bytes(fixture *f)
{
    kura_stats st;
    kura_get_stats(f->db, &st);
    return st.wal_bytes;
}

static void check_all(fixture *f)
{
    char why[1600];
    if (!ixw_check(f->w, f->db, false, why, sizeof why) ||
        !ixw_check_indexes(f->db, WAIT_MS, why, sizeof why))
        fail_msg("%s", why);
}

/* The GSIs are behind: their waits time out at once and they report a lag. */
static void expect_gsis_behind(fixture *f)
{
    for (int i = 0; i < 2; i++) {
        assert_kura_status(kura_index_wait(f->db, IXW_TABLE, IXW_GSIS[i], 0), KURA_E_BUSY);
        kura_index_stats st;
        assert_kura_ok(kura_index_stats_get(f->db, IXW_TABLE, IXW_GSIS[i], &st));
        assert_true(st.lag_writes > 0);
        assert_int_equal(st.error, KURA_OK);
    }
    assert_kura_ok(kura_index_wait(f->db, IXW_TABLE, "ByLsk", 0)); /* applied on commit */
}

/* Writes and flushes ROUNDS times with the applier stopped: every round's segments stay,
 * also through index checkpoints. Returns the segments at the end. */
static size_t write_paused(fixture *f)
{
    assert_kura_ok(table_index_pause(f->db, IXW_TABLE, true));
    size_t segs = count_segments(f, NULL), min = 0;
    uint64_t bytes = wal_bytes(f);
    for (int r = 0; r < ROUNDS; r++) {
        write_ops(f, OPS_PER_ROUND);
        flush_table(f);
        size_t now = count_segments(f, &min);
        if (now <= segs)
            fail_msg("round %d: %zu WAL segments after a flush, %zu before: a segment the "
                     "stopped GSIs need was deleted", r, now, segs);
        segs = now;
        if (r % 2) { /* a checkpoint cannot release what the stopped GSIs have not applied */
            assert_kura_ok(table_index_checkpoint(f->db, IXW_TABLE));
            now = count_segments(f, &min);
            if (now != segs)
                fail_msg("round %d: an index checkpoint with the GSIs stopped left %zu of %zu "
                         "segments", r, now, segs);
        }
    }
    assert_true(min >= ROUNDS); /* every partition kept a segment per flush */
    assert_true(wal_bytes(f) > bytes);
    expect_gsis_behind(f);
    return segs;
}

/* The GSIs catch up, the table is flushed and the indexes checkpoint: one segment (the
 * current one) per partition is left. (A few writes first: a partition whose memtable is
 * empty is not flushed, and keeps the segment it replayed at open until it is.) */
static void release_and_check(fixture *f, size_t segs_before)
{
    write_ops(f, 50);
    uint64_t bytes_before = wal_bytes(f);
    for (int i = 0; i < 2; i++)
        assert_kura_ok(kura_index_wait(f->db, IXW_TABLE, IXW_GSIS[i], WAIT_MS));
    flush_table(f);
    assert_kura_ok(table_index_checkpoint(f->db, IXW_TABLE));
    size_t min = 0, now = count_segments(f, &min);
    uint64_t bytes = wal_bytes(f);
    fprintf(stderr, "engine_index_wal: %zu segments (%llu bytes) kept for the GSIs, %zu "
                    "(%llu bytes) after they caught up\n",
            segs_before, (unsigned long long)bytes_before, now, (unsigned long long)bytes);
    assert_true(bytes < bytes_before);
    if (now != NPARTS)
        fail_msg("%zu WAL segments left after the GSIs caught up and checkpointed (%zu "
                 "before); expected the %d current ones", now, segs_before, NPARTS);
    check_all(f);
}

static void test_stopped_applier_keeps_wal(void **state)
{
    fixture *f = *state;
    size_t segs = write_paused(f);
    assert_kura_ok(table_index_pause(f->db, IXW_TABLE, false));
    release_and_check(f, segs);
    /* and the retention goes on working after the release */
    segs = write_paused(f);
    assert_kura_ok(table_index_pause(f->db, IXW_TABLE, false));
    release_and_check(f, segs);
}

static void test_reopen_while_stopped(void **state)
{
    fixture *f = *state;
    size_t segs = write_paused(f);
    /* close with the applier stopped: the GSIs' checkpoint is where they stopped */
    assert_kura_ok(kura_close(f->db));
    f->db = NULL;
    kura_options o = options();
    assert_kura_ok(kura_open(f->dir, &o, &f->db)); /* replays the kept WAL into the GSIs */
    size_t after = count_segments(f, NULL);
    if (after < segs)
        fail_msg("%zu WAL segments after the close and reopen, %zu before", after, segs);
    check_all(f);
    release_and_check(f, after);
    reopen(f);
    check_all(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stopped_applier_keeps_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_while_stopped, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
