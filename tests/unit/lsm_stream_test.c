/*
 * lsm_stream_test.c - a partition's WAL read as a change log (engine/lsm/lsm_stream.c):
 * every record once, in order, across segment switches, from any position it handed out;
 * a reader's stop; the tail; what the writer appends meanwhile; retention by age and the
 * trimmed positions it leaves, also across a reopen.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/lsm.h"
#include "util/pool.h"

static uint64_t test_now = 1000000;

static uint64_t test_clock(void)
{
    return __atomic_load_n(&test_now, __ATOMIC_ACQUIRE);
}

typedef struct fixture {
    char *dir;
    lsm_shared sh;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("lsm_stream");
    lsm_shared_init(&f->sh);
    f->sh.io = io_env_posix();
    f->sh.cache = block_cache_new(1 << 20);
    f->sh.pool = kpool_new(1);
    f->sh.clock_ms = test_clock;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kpool_free(f->sh.pool);
    block_cache_free(f->sh.cache);
    lsm_shared_destroy(&f->sh);
    test_rmrf(f->dir);
    free(f);
    return 0;
}

enum { RETAIN_MS = 60000 };

static lsm_tree *open_tree(fixture *f, bool create, uint64_t retain_ms)
{
    lsm_options o = {0};
    o.durability = KURA_SYNC;
    o.write_buffer_bytes = 64 << 10;
    o.block_size = 4096;
    o.bloom_bits_per_key = 10;
    o.compression = o.bottom_compression = KURA_COMPRESS_NONE;
    o.l0_compaction_trigger = 4;
    o.l0_slowdown_trigger = 8;
    o.l0_stop_trigger = 12;
    o.level1_bytes = 1 << 20;
    o.sstable_target_bytes = 1 << 20;
    o.wal_retain_ms = retain_ms;
    char path[4096];
    snprintf(path, sizeof path, "%s/t", f->dir);
    if (create)
        assert_kura_ok(io_mkdir(f->sh.io, path));
    lsm_tree *t;
    uint64_t max_seq = 0;
    assert_kura_ok(lsm_open(&f->sh, &o, path, create, &t, &max_seq));
    if (max_seq > lsm_visible(&f->sh))
        lsm_seq_reset(&f->sh, max_seq);
    return t;
}

/* Writes record i: one put of key k<i>. */
static void put(lsm_tree *t, int i)
{
    char k[16];
    snprintf(k, sizeof k, "k%05d", i);
    lsm_batch b;
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_put(&b, k, strlen(k), "v", 1));
    assert_kura_ok(lsm_write(t, &b, false));
    lsm_batch_free(&b);
}

typedef struct got {
    int keys[512];
    lsm_wal_pos pos[512];
    size_t n;
    size_t stop_at; /* stop before the record that would be number stop_at (0: never) */
} got;

static kura_status entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                         size_t klen, const uint8_t *val, size_t vlen)
{
    got *g = arg;
    char k[16] = {0};
    memcpy(k, key, klen < 15 ? klen : 15);
    g->keys[g->n] = atoi(k + 1);
    return KURA_OK;
}

static kura_status on_rec(void *arg, const uint8_t *rec, size_t len, lsm_wal_pos at)
{
    got *g = arg;
    if (g->stop_at && g->n + 1 == g->stop_at)
        return KURA_E_BUSY;
    if (lsm_rep_count(rec) == 0)
        return KURA_OK; /* an empty batch (a flush's place in the queue) */
    g->pos[g->n] = at;
    kura_status s = lsm_rep_iterate(rec, len, entry, g, "test");
    g->n++;
    return s;
}

static bool before(lsm_wal_pos a, lsm_wal_pos b)
{
    return a.segment < b.segment || (a.segment == b.segment && a.offset < b.offset);
}

/* Reads everything from `from`, in calls of `step` records. */
static void read_all(lsm_tree *t, lsm_wal_pos from, size_t step, got *g, lsm_wal_pos *end)
{
    for (;;) {
        size_t n0 = g->n;
        lsm_wal_pos next;
        assert_kura_ok(lsm_wal_read(t, from, step, on_rec, g, &next));
        if (g->n == n0 && next.segment == from.segment && next.offset == from.offset)
            break;
        from = next;
    }
    *end = from;
}

static void test_records_in_order_across_segments(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, true, RETAIN_MS);
    lsm_wal_pos head;
    assert_kura_ok(lsm_wal_head(t, &head));
    for (int i = 0; i < 300; i++) {
        put(t, i);
        if (i % 70 == 69)
            assert_kura_ok(lsm_flush(t)); /* a new segment; the old one stays for its age */
    }
    got g = {.n = 0};
    lsm_wal_pos end;
    read_all(t, head, 1000, &g, &end);
    assert_int_equal(g.n, 280); /* (relaxed) the current segment: up to its last sync */
    assert_kura_ok(lsm_sync_wal(t));
    g.n = 0;
    read_all(t, head, 1000, &g, &end);
    assert_int_equal(g.n, 300);
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(g.keys[i], (int)i);
        if (i)
            assert_true(before(g.pos[i - 1], g.pos[i]));
    }
    assert_true(g.pos[299].segment > g.pos[0].segment);
    /* in steps of 7, resuming where each call ended: the same records */
    got g7 = {.n = 0};
    read_all(t, head, 7, &g7, &end);
    assert_int_equal(g7.n, 300);
    assert_memory_equal(g7.keys, g.keys, sizeof g.keys);
    /* from any record's position: that record and the rest */
    for (size_t i = 0; i < 300; i += 37) {
        got gi = {.n = 0};
        read_all(t, g.pos[i], 1000, &gi, &end);
        assert_int_equal(gi.n, 300 - i);
        assert_int_equal(gi.keys[0], (int)i);
    }
    /* a stop: the position handed back is the record stopped at */
    got gs = {.n = 0, .stop_at = 101};
    lsm_wal_pos next;
    assert_kura_ok(lsm_wal_read(t, head, 1000, on_rec, &gs, &next));
    assert_int_equal(gs.n, 100);
    assert_int_equal(next.segment, g.pos[100].segment);
    assert_int_equal(next.offset, g.pos[100].offset);
    /* the tail: nothing yet; then what is appended */
    lsm_wal_pos tail = lsm_wal_tail(t);
    got gt = {.n = 0};
    assert_kura_ok(lsm_wal_read(t, tail, 1000, on_rec, &gt, &next));
    assert_int_equal(gt.n, 0);
    put(t, 300);
    assert_kura_ok(lsm_wal_read(t, tail, 1000, on_rec, &gt, &next));
    assert_int_equal(gt.n, 0); /* not durable yet */
    assert_kura_ok(lsm_sync_wal(t));
    assert_kura_ok(lsm_wal_read(t, tail, 1000, on_rec, &gt, &next));
    assert_int_equal(gt.n, 1);
    assert_int_equal(gt.keys[0], 300);
    /* a position past the end */
    lsm_wal_pos past = {next.segment, next.offset + 1000};
    assert_int_equal(lsm_wal_read(t, past, 1, on_rec, &gt, &next), KURA_E_INVALID);
    assert_kura_ok(lsm_close(t));
}

static void test_retention_by_age(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, true, RETAIN_MS);
    lsm_wal_pos head;
    assert_kura_ok(lsm_wal_head(t, &head));
    for (int i = 0; i < 100; i++) {
        put(t, i);
        if (i % 25 == 24)
            assert_kura_ok(lsm_flush(t));
    }
    got g = {.n = 0};
    lsm_wal_pos end;
    read_all(t, head, 1000, &g, &end);
    assert_int_equal(g.n, 100);
    /* young: kept */
    __atomic_add_fetch(&test_now, RETAIN_MS - 1, __ATOMIC_RELEASE);
    lsm_trim_wals(t);
    lsm_wal_pos h2;
    assert_kura_ok(lsm_wal_head(t, &h2));
    assert_int_equal(h2.segment, head.segment);
    /* reopened: the flushed segments are kept, their age counted from the open */
    assert_kura_ok(lsm_close(t));
    t = open_tree(f, false, RETAIN_MS);
    got g2 = {.n = 0};
    read_all(t, head, 1000, &g2, &end);
    assert_int_equal(g2.n, 100);
    __atomic_add_fetch(&test_now, 2, __ATOMIC_RELEASE); /* past the first age, not the new */
    lsm_trim_wals(t);
    assert_kura_ok(lsm_wal_head(t, &h2));
    assert_int_equal(h2.segment, head.segment);
    /* old: the flushed ones go; a reader still there is trimmed */
    __atomic_add_fetch(&test_now, RETAIN_MS, __ATOMIC_RELEASE);
    lsm_trim_wals(t);
    assert_kura_ok(lsm_wal_head(t, &h2));
    assert_true(h2.segment > head.segment);
    lsm_wal_pos next;
    got g3 = {.n = 0};
    assert_int_equal(lsm_wal_read(t, head, 1000, on_rec, &g3, &next), KURA_E_NOT_FOUND);
    assert_int_equal(g3.n, 0);
    /* without retention, flushed segments go at once */
    lsm_set_wal_retain_ms(t, 0);
    put(t, 100);
    assert_kura_ok(lsm_flush(t));
    lsm_wal_pos h3;
    assert_kura_ok(lsm_wal_head(t, &h3));
    assert_true(h3.segment > h2.segment);
    assert_kura_ok(lsm_close(t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_records_in_order_across_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention_by_age, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
