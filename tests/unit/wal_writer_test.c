/*
 * wal_writer_test.c - the failure and concurrency contract of wal/writer.c: a failed sync or
 * append makes the writer failed (KURA_E_READONLY thereafter, the file untouched, no second
 * fsync), a sync with nothing new issues none, durable offsets recorded in fragments, a
 * background sync racing with adds, a crash under the writer, and power losses (io_fault,
 * DROP and TEAR) that always leave every synced record readable and are never reported as
 * corruption.
 *
 * Faults come from util/io_fault.h. Its base env here is POSIX with fdatasync replaced by a
 * no-op, so that hundreds of simulated power losses need no real disk flushes (io_fault keeps
 * its own durability model from the sync calls).
 */
#include "testutil.h"

#include <sched.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/io.h"
#include "util/io_fault.h"
#include "util/status.h"
#include "util/thread.h"
#include "wal/format.h"
#include "wal/reader.h"
#include "wal/writer.h"

/* ---- env: io_fault over POSIX without real fdatasync ---------------------------------- */

static kura_status nosync_sync(io_file *f)
{
    (void)f;
    return KURA_OK;
}

static io_ops nosync_ops;
static io_env nosync_env = {&nosync_ops};

static io_env *nosync_posix(void)
{
    nosync_ops = *io_env_posix()->ops;
    nosync_ops.sync = nosync_sync;
    return &nosync_env;
}

typedef struct wt_fixture {
    char *dir;
    char path[512];
    io_fault *fault;
    io_env *env;
} wt_fixture;

static int wt_setup(void **state)
{
    wt_fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("wal_writer");
    snprintf(f->path, sizeof f->path, "%s/000003.log", f->dir);
    f->fault = io_fault_new(nosync_posix());
    assert_non_null(f->fault);
    f->env = io_fault_env(f->fault);
    *state = f;
    return 0;
}

static int wt_teardown(void **state)
{
    wt_fixture *f = *state;
    io_fault_free(f->fault);
    test_rmrf(f->dir);
    free(f);
    return 0;
}

static uint64_t wt_file_size(wt_fixture *f)
{
    uint64_t size = 0;
    assert_kura_ok(io_path_size(io_env_posix(), f->path, &size));
    return size;
}

static void wt_rule(wt_fixture *f, io_op op, uint64_t at, int error)
{
    io_fault_rule r = {.at = at, .op_mask = 1u << op, .error = error};
    io_fault_set_rule(f->fault, &r);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_failed_sync_is_final(void **state)
{
    wt_fixture *f = *state;
    wt_rule(f, IO_OP_SYNC, 2, EIO);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(wal_writer_add(w, "one", 3));
    assert_kura_ok(wal_writer_sync(w));
    assert_int_equal(wal_writer_synced(w), 14);
    assert_kura_ok(wal_writer_add(w, "two", 3));
    assert_kura_status(wal_writer_sync(w), KURA_E_IO);
    assert_true(wal_writer_failed(w));
    assert_int_equal(wal_writer_synced(w), 14); /* not advanced */
    uint64_t size = wt_file_size(f);
    uint64_t appends = io_fault_op_count(f->fault, IO_OP_APPEND);
    assert_kura_status(wal_writer_add(w, "three", 5), KURA_E_READONLY);
    assert_kura_status(wal_writer_sync(w), KURA_E_READONLY);
    const void *recs[] = {"a"};
    size_t lens[] = {1};
    assert_kura_status(wal_writer_addv(w, recs, lens, 1), KURA_E_READONLY);
    assert_kura_status(wal_writer_sync(w), KURA_E_READONLY);
    if (!strstr(kura_last_error(), f->path))
        fail_msg("message '%s' does not name %s", kura_last_error(), f->path);
    assert_int_equal(io_fault_op_count(f->fault, IO_OP_SYNC), 2); /* never retried */
    assert_int_equal(io_fault_op_count(f->fault, IO_OP_APPEND), appends);
    assert_int_equal(wt_file_size(f), size);
    assert_int_equal(wal_writer_size(w), size);
    assert_kura_ok(wal_writer_close(w));
}

static void test_failed_append_is_final(void **state)
{
    wt_fixture *f = *state;
    wt_rule(f, IO_OP_APPEND, 2, IO_FAULT_SHORT_WRITE);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(wal_writer_add(w, "one", 3));
    char big[1000] = {0};
    assert_kura_status(wal_writer_add(w, big, sizeof big), KURA_E_IO);
    assert_true(wal_writer_failed(w));
    assert_int_equal(wal_writer_size(w), 14); /* the half-written append is not counted */
    assert_int_equal(wt_file_size(f), 14 + (11 + 1000) / 2);
    assert_kura_status(wal_writer_add(w, "x", 1), KURA_E_READONLY);
    assert_kura_status(wal_writer_sync(w), KURA_E_READONLY);
    assert_int_equal(io_fault_op_count(f->fault, IO_OP_SYNC), 0);
    assert_int_equal(io_fault_op_count(f->fault, IO_OP_APPEND), 2);
    assert_kura_ok(wal_writer_close(w));

    /* the reader sees the first record and a torn tail where the partial append begins */
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t len;
    assert_kura_ok(wal_reader_next(r, &rec, &len));
    assert_int_equal(len, 3);
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), 14);
    wal_reader_close(r);

    /* ENOSPC: nothing written, the status says so, the writer is failed */
    wt_rule(f, IO_OP_APPEND, 1, ENOSPC);
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_status(wal_writer_add(w, "one", 3), KURA_E_NOSPC);
    assert_true(wal_writer_failed(w));
    assert_kura_status(wal_writer_add(w, "one", 3), KURA_E_READONLY);
    assert_kura_ok(wal_writer_close(w));
    assert_int_equal(wt_file_size(f), 0);
}

/* A sync with nothing appended since the last one does not call fdatasync. */
static void test_sync_skips_when_clean(void **state)
{
    wt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(wal_writer_sync(w));
    assert_int_equal((int)io_fault_op_count(f->fault, IO_OP_SYNC), 0);
    assert_kura_ok(wal_writer_add(w, "a", 1));
    assert_kura_ok(wal_writer_sync(w));
    assert_kura_ok(wal_writer_sync(w));
    assert_int_equal((int)io_fault_op_count(f->fault, IO_OP_SYNC), 1);
    assert_kura_ok(wal_writer_close(w));
}

/* Every fragment records the durable offset the writer knew when it framed it. */
static void test_durable_offsets_recorded(void **state)
{
    wt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    uint8_t *big = calloc(1, 70000);
    uint64_t want[6];
    size_t lens[6] = {10, 70000, 5, 0, 40000, 7};
    for (size_t i = 0; i < 6; i++) {
        want[i] = wal_writer_synced(w);
        assert_kura_ok(wal_writer_add(w, big, lens[i]));
        if (i % 2 == 0)
            assert_kura_ok(wal_writer_sync(w));
    }
    assert_kura_ok(wal_writer_close(w));
    void *data = NULL;
    size_t n = 0;
    assert_kura_ok(io_read_file(f->env, f->path, IO_KIND_WAL, 1 << 20, &data, &n));
    const uint8_t *p = data;
    size_t pos = 0, rec = 0;
    while (pos < n) {
        if (WAL_BLOCK_SIZE - pos % WAL_BLOCK_SIZE < WAL_HEADER_SIZE) {
            pos += WAL_BLOCK_SIZE - pos % WAL_BLOCK_SIZE;
            continue;
        }
        wal_frag_header h;
        wal_frag_decode(p + pos, &h);
        assert_int_equal(h.durable_off, want[rec]);
        if (h.type == WAL_FULL || h.type == WAL_LAST)
            rec++;
        pos += WAL_HEADER_SIZE + h.len;
    }
    assert_int_equal(rec, 6);
    free(data);
    free(big);
}

/* Relaxed durability: a background thread syncs while the caller appends. Every record
 * comes back, and durable offsets only grow and never pass the fragment carrying them. */
typedef struct bg_sync {
    wal_writer *w;
    atomic_bool stop;
    atomic_size_t nsyncs;
    kura_status first_error; /* cmocka asserts belong to the main thread */
} bg_sync;

static void *bg_sync_main(void *arg)
{
    bg_sync *b = arg;
    while (!atomic_load(&b->stop) && b->first_error == KURA_OK) {
        b->first_error = wal_writer_sync(b->w);
        atomic_fetch_add(&b->nsyncs, 1);
        struct timespec ts = {0, 100000}; /* relaxed mode syncs periodically */
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void test_background_sync(void **state)
{
    wt_fixture *f = *state;
    bg_sync b = {0};
    /* the real POSIX env: write(2) and fdatasync(2) on one descriptor at the same time */
    assert_kura_ok(wal_writer_open(io_env_posix(), f->path, IO_KIND_WAL, &b.w));
    kthread t;
    assert_true(kthread_start(&t, bg_sync_main, &b));
    enum { N = 20000 };
    uint8_t rec[300];
    for (uint32_t i = 0; i < N; i++) {
        size_t len = 4 + i % 290;
        memset(rec, (int)(i & 0xff), len);
        enc_fixed32(rec, i);
        assert_kura_ok(wal_writer_add(b.w, rec, len));
        /* every 1,000 records, one background sync is sure to fall between two appends (on
         * a loaded machine the thread might otherwise not run at all: the check of distinct
         * durable offsets below must not depend on scheduling) */
        if (i % 1000 == 999) {
            size_t seen = atomic_load(&b.nsyncs);
            while (atomic_load(&b.nsyncs) < seen + 2 && b.first_error == KURA_OK)
                sched_yield();
        }
    }
    atomic_store(&b.stop, true);
    kthread_join(t);
    assert_kura_ok(b.first_error);
    assert_kura_ok(wal_writer_sync(b.w));
    assert_int_equal(wal_writer_synced(b.w), wal_writer_size(b.w));
    assert_kura_ok(wal_writer_close(b.w));

    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    const uint8_t *p;
    size_t len;
    for (uint32_t i = 0; i < N; i++) {
        assert_kura_ok(wal_reader_next(r, &p, &len));
        assert_int_equal(len, 4 + i % 290);
        assert_int_equal(dec_fixed32(p), i);
    }
    assert_kura_status(wal_reader_next(r, &p, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);

    void *data = NULL;
    size_t n = 0;
    assert_kura_ok(io_read_file(f->env, f->path, IO_KIND_WAL, 64 << 20, &data, &n));
    const uint8_t *d = data;
    uint32_t prev = 0, distinct = 0;
    for (size_t pos = 0; pos + WAL_HEADER_SIZE <= n;) {
        if (WAL_BLOCK_SIZE - pos % WAL_BLOCK_SIZE < WAL_HEADER_SIZE) {
            pos += WAL_BLOCK_SIZE - pos % WAL_BLOCK_SIZE;
            continue;
        }
        wal_frag_header h;
        wal_frag_decode(d + pos, &h);
        assert_true(h.durable_off >= prev);
        assert_true(h.durable_off <= pos);
        distinct += h.durable_off != prev;
        prev = h.durable_off;
        pos += WAL_HEADER_SIZE + h.len;
    }
    fprintf(stderr, "%zu background syncs, %u distinct durable offsets recorded\n",
            atomic_load(&b.nsyncs), distinct);
    assert_true(distinct > 0);
    free(data);
}

/* A crash (io_fault FREEZE) under the writer: the failing call fails the writer for good;
 * after the power loss the synced records are there. The writer passes no crash points of
 * its own (the engine passes wal.after_append / wal.after_sync). */
static void test_crash_freezes_writer(void **state)
{
    wt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(io_sync_dir(f->env, f->dir));
    assert_kura_ok(wal_writer_add(w, "a", 1));
    assert_kura_ok(wal_writer_sync(w));
    assert_kura_ok(wal_writer_add(w, "b", 1));
    io_fault_crash_at_op(f->fault, 1, IO_CRASH_FREEZE); /* before the next sync */
    assert_kura_status(wal_writer_sync(w), KURA_E_IO);
    assert_true(wal_writer_failed(w));
    assert_int_equal(wal_writer_synced(w), 12);
    assert_kura_status(wal_writer_add(w, "c", 1), KURA_E_READONLY);
    assert_kura_status(wal_writer_sync(w), KURA_E_READONLY);
    wal_writer_close(w); /* KURA_E_IO: the env has crashed */
    assert_int_equal(io_fault_point_hits(f->fault, "*"), 0);
    io_fault_power_loss(f->fault, IO_LOSS_DROP, 1);

    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t len;
    assert_kura_ok(wal_reader_next(r, &rec, &len));
    assert_int_equal(rec[0], 'a');
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);
}

/* Record i of power-loss round `round`: deterministic content, mostly small, some spanning
 * blocks. */
static size_t pl_record(uint8_t *buf, uint64_t round, size_t i)
{
    uint64_t st = round * 1000003u + i;
    uint64_t r = test_rand(&st);
    size_t len = r % 10 == 0 ? 30000 + r % 20000 : r % 3000;
    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)(k * 131 + i * 7 + round);
    return len;
}

/* Writes one round: batches of records (one addv each), some followed by a sync. Returns the
 * number of records written; *durable_out those covered by the last sync. */
static size_t pl_write_round(wt_fixture *f, uint64_t round, uint64_t *rng, uint8_t *buf,
                             size_t *durable_out)
{
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(io_sync_dir(f->env, f->dir));
    size_t n = 0, durable = 0, nbatches = 1 + test_rand(rng) % 12;
    for (size_t b = 0; b < nbatches; b++) {
        const void *recs[5];
        size_t lens[5], k = 1 + test_rand(rng) % 5;
        for (size_t j = 0; j < k; j++) {
            recs[j] = buf + j * 50000;
            lens[j] = pl_record(buf + j * 50000, round, n + j);
        }
        assert_kura_ok(wal_writer_addv(w, recs, lens, k));
        n += k;
        if (test_rand(rng) % 2) {
            assert_kura_ok(wal_writer_sync(w));
            durable = n;
        }
    }
    assert_kura_ok(wal_writer_close(w));
    *durable_out = durable;
    return n;
}

/* Power losses (DROP and TEAR: cut tails, zeros or garbage in the cut sector) after random
 * group-committed batches: every synced record reads back intact, and the log always ends
 * cleanly or as a torn tail, never as corruption. */
static void test_power_loss(void **state)
{
    wt_fixture *f = *state;
    uint64_t rng = test_seed();
    uint8_t *buf = malloc(5 * 50000), *want = malloc(50000);
    size_t torn = 0;
    for (uint64_t round = 0; round < 300; round++) {
        size_t durable = 0, n = pl_write_round(f, round, &rng, buf, &durable);
        io_fault_power_loss(f->fault, round % 2 ? IO_LOSS_TEAR : IO_LOSS_DROP, rng + round);
        wal_reader *r = NULL;
        assert_kura_ok(wal_reader_open(io_env_posix(), f->path, IO_KIND_WAL, &r));
        const uint8_t *rec;
        size_t len, i = 0;
        kura_status s;
        while ((s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
            assert_true(i < n);
            size_t wlen = pl_record(want, round, i);
            if (len != wlen || memcmp(rec, want, len) != 0)
                fail_msg("round %llu: record %zu differs", (unsigned long long)round, i);
            i++;
        }
        if (s != KURA_E_NOT_FOUND)
            fail_msg("round %llu: %s: %s", (unsigned long long)round, kura_status_str(s),
                     kura_last_error());
        if (i < durable)
            fail_msg("round %llu: %zu records read, %zu were synced", (unsigned long long)round,
                     i, durable);
        torn += wal_reader_torn_at(r) != -1;
        wal_reader_close(r);
    }
    fprintf(stderr, "300 power losses, %zu ended in a torn tail\n", torn);
    free(buf);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failed_sync_is_final, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_failed_append_is_final, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_sync_skips_when_clean, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_durable_offsets_recorded, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_background_sync, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_crash_freezes_writer, wt_setup, wt_teardown),
        cmocka_unit_test_setup_teardown(test_power_loss, wt_setup, wt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
