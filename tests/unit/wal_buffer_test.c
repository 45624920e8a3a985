/*
 * wal_buffer_test.c - the WAL writer's two speed modes: buffered appends (relaxed durability)
 * and preallocated zeros (sync durability). Both must keep the log readable exactly as an
 * unbuffered, unpreallocated one.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/io.h"
#include "wal/reader.h"
#include "wal/writer.h"

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Reads every record back and checks record i is "rec-<i>" padded to its length. */
static void check_records(const char *path, int n)
{
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(io_env_posix(), path, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t len;
    for (int i = 0; i < n; i++) {
        assert_kura_ok(wal_reader_next(r, &rec, &len));
        char want[64];
        int wn = snprintf(want, sizeof want, "rec-%d", i);
        assert_true(len >= (size_t)wn);
        assert_memory_equal(rec, want, (size_t)wn);
    }
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1); /* zeros and buffered tails are clean ends */
    wal_reader_close(r);
}

static void add_records(wal_writer *w, int from, int to)
{
    char buf[300];
    for (int i = from; i < to; i++) {
        memset(buf, 'x', sizeof buf);
        int n = snprintf(buf, sizeof buf, "rec-%d", i);
        buf[n] = '.';
        assert_kura_ok(wal_writer_add(w, buf, 40 + (size_t)(i % 200)));
    }
}

static void test_buffered(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("wal-buffer");
    char path[4096];
    snprintf(path, sizeof path, "%s/000001.log", dir);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(io_env_posix(), path, IO_KIND_WAL, &w));
    wal_writer_set_buffer(w, 64 << 10);
    add_records(w, 0, 10);
    assert_int_equal(file_size(path), 0); /* still in memory */
    assert_true(wal_writer_size(w) > 0);
    assert_kura_ok(wal_writer_flush(w));
    assert_int_equal(file_size(path), (long)wal_writer_size(w));
    add_records(w, 10, 2000); /* passes the cap several times */
    assert_true(file_size(path) > 64 << 10);
    assert_kura_ok(wal_writer_sync(w)); /* flushes, then syncs */
    assert_int_equal(wal_writer_synced(w), wal_writer_size(w));
    assert_int_equal(file_size(path), (long)wal_writer_size(w));
    add_records(w, 2000, 2100);
    assert_kura_ok(wal_writer_close(w)); /* close flushes too */
    check_records(path, 2100);
    test_rmrf(dir);
}

static void test_preallocated(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("wal-prealloc");
    char path[4096];
    snprintf(path, sizeof path, "%s/000001.log", dir);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(io_env_posix(), path, IO_KIND_WAL, &w));
    wal_writer_set_prealloc(w, 64 << 10);
    add_records(w, 0, 5);
    assert_int_equal(file_size(path), 64 << 10); /* zeros ahead of the records */
    assert_kura_ok(wal_writer_sync(w));
    check_records(path, 5); /* the zero tail reads as a clean end */
    add_records(w, 5, 1500); /* grows through several chunks */
    assert_kura_ok(wal_writer_sync(w));
    long size = file_size(path);
    assert_true(size >= (long)wal_writer_size(w));
    assert_int_equal(size % (64 << 10), 0);
    assert_kura_ok(wal_writer_close(w));
    check_records(path, 1500);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffered),
        cmocka_unit_test(test_preallocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
