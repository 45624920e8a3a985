/*
 * lsm_index_test.c - what a partition offers the index layer (engine/lsm/lsm_index.c):
 * image entries that reach the WAL but no memtable, the commit hook's order, trees without a
 * WAL (inserts at given sequences, checkpoints recorded with their flushes and kept across a
 * reopen, an unflushed memtable gone after it), WAL retention by sequence and the replay of
 * retained segments.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/lsm/lsm.h"
#include "util/ikey.h"
#include "util/pool.h"
#include "util/thread.h"

typedef struct fixture {
    char *dir;
    lsm_shared sh;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("lsm_index");
    lsm_shared_init(&f->sh);
    f->sh.io = io_env_posix();
    f->sh.cache = block_cache_new(1 << 20);
    f->sh.pool = kpool_new(1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kpool_free(f->sh.pool);
    block_cache_free(f->sh.cache);
    lsm_shared_destroy(&f->sh);
    test_rmrf(f->dir); /* frees it */
    free(f);
    return 0;
}

static lsm_options opts(bool no_wal, bool retain)
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
    o.no_wal = no_wal;
    o.retain_wals = retain;
    return o;
}

static lsm_tree *open_tree(fixture *f, const char *name, lsm_options o, bool create)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    if (create)
        assert_kura_ok(io_mkdir(f->sh.io, path));
    lsm_tree *t;
    uint64_t max_seq = 0;
    assert_kura_ok(lsm_open(&f->sh, &o, path, create, &t, &max_seq));
    if (max_seq > lsm_visible(&f->sh))
        lsm_seq_reset(&f->sh, max_seq);
    return t;
}

static void check_value(lsm_tree *t, const char *key, const char *want)
{
    kbuf v = KBUF_INIT;
    kura_status s = lsm_get(t, (const uint8_t *)key, strlen(key), 0, true, &v);
    if (!want) {
        assert_int_equal(s, KURA_E_NOT_FOUND);
    } else {
        assert_kura_ok(s);
        assert_int_equal(v.len, strlen(want));
        assert_memory_equal(v.data, want, v.len);
    }
    kbuf_free(&v);
}

/* A put with an image: the image is in the WAL (replayed to the hook and lsm_wal_replay) but
 * never readable. */
typedef struct seen {
    uint64_t seqs[64];
    size_t n;
    size_t images;
} seen;

static kura_status count_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                               size_t klen, const uint8_t *val, size_t vlen)
{
    seen *s = arg;
    if (type == LSM_BATCH_IMAGE)
        s->images++;
    return KURA_OK;
}

static kura_status hook(void *arg, lsm_tree *t, const uint8_t *rep, size_t len)
{
    seen *s = arg;
    if (s->n < 64)
        s->seqs[s->n++] = lsm_rep_seq(rep);
    return lsm_rep_iterate(rep, len, count_entry, s, "hook");
}

static kura_status replay_rec(void *arg, const uint8_t *rep, size_t len)
{
    return hook(arg, NULL, rep, len);
}

static void put_with_image(lsm_tree *t, const char *k, const char *v, const char *old)
{
    lsm_batch b;
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_put(&b, k, strlen(k), v, strlen(v)));
    assert_kura_ok(lsm_batch_image(&b, k, strlen(k), old, strlen(old)));
    assert_kura_ok(lsm_write(t, &b, true));
    lsm_batch_free(&b);
}

static void test_images_hook_and_replay(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, "base", opts(false, true), true);
    seen h = {0};
    lsm_set_commit_hook(t, hook, &h);
    put_with_image(t, "a", "1", "");
    put_with_image(t, "b", "2", "");
    put_with_image(t, "a", "3", "1");
    assert_int_equal(h.n, 3);
    assert_true(h.seqs[0] < h.seqs[1] && h.seqs[1] < h.seqs[2]);
    assert_int_equal(h.images, 3);
    check_value(t, "a", "3");
    check_value(t, "b", "2");
    /* flushed: the memtable's segments are no longer needed by the tree, but retention keeps
     * them for the index layer */
    assert_kura_ok(lsm_flush(t));
    seen r = {0};
    assert_kura_ok(lsm_wal_replay(t, 0, replay_rec, &r));
    assert_int_equal(r.n, 3);
    assert_int_equal(r.images, 3);
    seen r2 = {0};
    assert_kura_ok(lsm_wal_replay(t, h.seqs[1] + 1, replay_rec, &r2));
    assert_int_equal(r2.n, 1);
    assert_int_equal(r2.seqs[0], h.seqs[2]);
    /* released up to the last one: the flushed segments go */
    lsm_set_wal_retain(t, h.seqs[2] + 1);
    seen r3 = {0};
    assert_kura_ok(lsm_wal_replay(t, 0, replay_rec, &r3));
    assert_int_equal(r3.n, 0);
    assert_kura_ok(lsm_close(t));

    /* reopen: the data is in the table, the images were never stored */
    t = open_tree(f, "base", opts(false, true), false);
    check_value(t, "a", "3");
    assert_kura_ok(lsm_close(t));
}

/* Retention holds segments that the tree itself no longer needs, also across a reopen. */
static void test_retention_across_reopen(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, "ret", opts(false, true), true);
    for (int i = 0; i < 5; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%d", i);
        put_with_image(t, k, "v", "");
        assert_kura_ok(lsm_flush(t)); /* a new segment each time */
    }
    assert_kura_ok(lsm_close(t));
    t = open_tree(f, "ret", opts(false, true), false);
    seen r = {0};
    assert_kura_ok(lsm_wal_replay(t, 0, replay_rec, &r));
    assert_int_equal(r.n, 5);
    lsm_set_wal_retain(t, r.seqs[2] + 1); /* the first three (2 entries each) are durable */
    seen r2 = {0};
    assert_kura_ok(lsm_wal_replay(t, 0, replay_rec, &r2));
    assert_int_equal(r2.n, 2);
    assert_int_equal(r2.seqs[0], r.seqs[3]);
    assert_kura_ok(lsm_close(t));
    /* without retention the tree deletes its flushed segments at open */
    t = open_tree(f, "ret", opts(false, false), false);
    seen r3 = {0};
    assert_kura_ok(lsm_wal_replay(t, 0, replay_rec, &r3));
    assert_int_equal(r3.n, 0);
    assert_kura_ok(lsm_close(t));
}

/* ---- A transaction's piece in flight (lsm_txn.c) ------------------------------------------- */

typedef struct bg_write {
    lsm_tree *t;
    bool flush; /* lsm_flush instead of a put */
    int done;   /* atomic */
} bg_write;

static void *bg_write_main(void *arg)
{
    bg_write *w = arg;
    if (w->flush) {
        assert_kura_ok(lsm_flush(w->t));
    } else {
        lsm_batch b;
        lsm_batch_init(&b);
        assert_kura_ok(lsm_batch_put(&b, "b", 1, "2", 1));
        assert_kura_ok(lsm_write(w->t, &b, true));
        lsm_batch_free(&b);
    }
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A piece of transaction `first` for key k, appended under the lead and let go of. */
static void piece_in_flight(fixture *f, lsm_tree *t, lsm_batch *p, const char *k, uint64_t *end)
{
    lsm_txn_hold hold;
    assert_kura_ok(lsm_txn_lead(t, &hold));
    lsm_batch_init(p);
    uint64_t id = lsm_seq_alloc(&f->sh, 1);
    lsm_seq_complete(&f->sh, id, id);
    assert_kura_ok(lsm_batch_txn_marker(p, id));
    assert_kura_ok(lsm_batch_put(p, k, strlen(k), "1", 1));
    lsm_rep_set_seq(p->rep.data, 0);
    assert_kura_ok(lsm_txn_append(t, p->rep.data, p->rep.len, end));
    lsm_txn_release(t, &hold, KURA_OK);
}

/* Allocates its range (while the partition's writers go on), applies it. */
static uint64_t piece_commit(fixture *f, lsm_tree *t, lsm_batch *p, uint64_t end,
                             kthread *th, bg_write *w)
{
    assert_kura_ok(lsm_txn_sync(t, end));
    lsm_hook_slot slot;
    uint64_t off = 0;
    uint64_t first = lsm_txn_alloc(&f->sh, &t, &off, &slot, 1, 2);
    if (w) /* a write after the range, its hook behind the piece's */
        assert_true(kthread_start(th, bg_write_main, w));
    sleep_ms(50); /* time enough for a broken order to show */
    lsm_rep_set_seq(p->rep.data, first);
    assert_kura_ok(lsm_txn_apply(t, p->rep.data, p->rep.len, &slot));
    lsm_seq_complete(&f->sh, first, first + 1);
    lsm_batch_free(p);
    return first;
}

/* Appended and let go of, a piece holds back the hook for later writes of its partition (the
 * index layer sees them in sequence order) and the memtable switch (its entries must land in
 * the memtable of its WAL segment) until it is applied. */
static void test_piece_in_flight(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, "txn", opts(false, true), true);
    seen h = {0};
    lsm_set_commit_hook(t, hook, &h);
    lsm_batch p;
    uint64_t end;
    kthread th;

    piece_in_flight(f, t, &p, "a", &end);
    bg_write put = {.t = t};
    uint64_t first = piece_commit(f, t, &p, end, &th, &put);
    kthread_join(th);
    assert_int_equal(h.n, 2);
    assert_int_equal(h.seqs[0], first); /* the piece, then the later write */
    assert_true(h.seqs[1] > first);

    piece_in_flight(f, t, &p, "c", &end);
    bg_write flush = {.t = t, .flush = true};
    assert_true(kthread_start(&th, bg_write_main, &flush));
    sleep_ms(50);
    int flushed_early = __atomic_load_n(&flush.done, __ATOMIC_ACQUIRE);
    piece_commit(f, t, &p, end, NULL, NULL);
    kthread_join(th);
    assert_int_equal(flushed_early, 0);
    check_value(t, "a", "1");
    check_value(t, "b", "2");
    check_value(t, "c", "1");
    assert_kura_ok(lsm_close(t));
}

static void apply_put(lsm_tree *t, uint64_t seq, const char *k, const char *v)
{
    lsm_batch b;
    lsm_batch_init(&b);
    if (v)
        assert_kura_ok(lsm_batch_put(&b, k, strlen(k), v, strlen(v)));
    else
        assert_kura_ok(lsm_batch_delete(&b, k, strlen(k)));
    lsm_rep_set_seq(b.rep.data, seq);
    assert_kura_ok(lsm_apply(t, b.rep.data, b.rep.len));
    lsm_batch_free(&b);
}

static void expect_meta(lsm_tree *t, const char *want)
{
    kbuf m = KBUF_INIT;
    assert_kura_ok(lsm_user_meta(t, &m));
    assert_int_equal(m.len, strlen(want));
    if (m.len)
        assert_memory_equal(m.data, want, m.len);
    kbuf_free(&m);
}

static void test_no_wal_tree(void **state)
{
    fixture *f = *state;
    lsm_tree *t = open_tree(f, "idx", opts(true, false), true);
    uint64_t s0 = lsm_seq_alloc(&f->sh, 3);
    lsm_seq_complete(&f->sh, s0, s0 + 2);
    apply_put(t, s0, "x", "1");
    apply_put(t, s0 + 1, "y", "2");
    check_value(t, "x", "1");
    expect_meta(t, "");
    /* a checkpoint with the switch: durable once the flush is */
    assert_kura_ok(lsm_switch_memtable(t, (const uint8_t *)"ck1", 3));
    assert_kura_ok(lsm_wait_flushed(t));
    expect_meta(t, "ck1");
    apply_put(t, s0 + 2, "x", NULL); /* in the memtable only */
    check_value(t, "x", NULL);
    /* an empty memtable records the checkpoint at once */
    lsm_tree *t2 = open_tree(f, "idx2", opts(true, false), true);
    assert_kura_ok(lsm_switch_memtable(t2, (const uint8_t *)"ck-empty", 8));
    expect_meta(t2, "ck-empty");
    assert_kura_ok(lsm_close(t2));
    /* lsm_write is refused */
    lsm_batch b;
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_put(&b, "z", 1, "9", 1));
    assert_int_equal(lsm_write(t, &b, false), KURA_E_INVALID);
    lsm_batch_free(&b);
    assert_kura_ok(lsm_close(t));

    /* reopen: the flushed entries and the checkpoint are back; the unflushed delete is not
     * (its owner replays it from the base WALs) */
    t = open_tree(f, "idx", opts(true, false), false);
    check_value(t, "x", "1");
    check_value(t, "y", "2");
    expect_meta(t, "ck1");
    assert_kura_ok(lsm_close(t));
    t2 = open_tree(f, "idx2", opts(true, false), false);
    expect_meta(t2, "ck-empty");
    /* lsm_flush of a no-WAL tree keeps the last checkpoint */
    apply_put(t2, s0, "q", "1");
    assert_kura_ok(lsm_flush(t2));
    expect_meta(t2, "ck-empty");
    assert_kura_ok(lsm_close(t2));
    t2 = open_tree(f, "idx2", opts(true, false), false);
    check_value(t2, "q", "1");
    assert_kura_ok(lsm_close(t2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_images_hook_and_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention_across_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_piece_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_wal_tree, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
