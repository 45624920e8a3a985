/*
 * wal_roundtrip_test.c - records written by wal/writer.c come back from wal/reader.c intact:
 * small, empty, block-spanning, exactly block-sized, huge multi-block records, addv, random
 * mixes; the on-disk bytes match docs/format/wal.md; the 4 GiB limit; a throughput print.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io.h"
#include "util/thread.h"
#include "wal/format.h"
#include "wal/reader.h"
#include "wal/writer.h"

typedef struct rt_fixture {
    char *dir;
    char path[512];
    io_env *env;
} rt_fixture;

static int rt_setup(void **state)
{
    rt_fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("wal_roundtrip");
    snprintf(f->path, sizeof f->path, "%s/000001.log", f->dir);
    f->env = io_env_posix();
    *state = f;
    return 0;
}

static int rt_teardown(void **state)
{
    rt_fixture *f = *state;
    test_rmrf(f->dir);
    free(f);
    return 0;
}

/* Record i's content: deterministic bytes, so a wrong or shifted record is detected. */
static void rt_fill(uint8_t *p, size_t len, uint64_t i)
{
    uint64_t st = i * 0x9e3779b97f4a7c15ull + len;
    for (size_t k = 0; k < len; k++) {
        if (k % 8 == 0)
            st = test_rand(&st);
        p[k] = (uint8_t)(st >> (8 * (k % 8)));
    }
}

/* Writes records of the given lengths (syncing every sync_every records if > 0), reads the
 * file back and checks every record, its offset, and a clean end. */
static void rt_check_lengths(rt_fixture *f, const size_t *lens, size_t n, size_t sync_every)
{
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    size_t maxlen = 1;
    for (size_t i = 0; i < n; i++)
        maxlen = lens[i] > maxlen ? lens[i] : maxlen;
    uint8_t *buf = malloc(maxlen), *want = malloc(maxlen);
    uint64_t *starts = malloc(n * sizeof *starts);
    for (size_t i = 0; i < n; i++) {
        rt_fill(buf, lens[i], i);
        starts[i] = wal_writer_size(w);
        assert_kura_ok(wal_writer_add(w, buf, lens[i]));
        if (sync_every && (i + 1) % sync_every == 0) {
            assert_kura_ok(wal_writer_sync(w));
            assert_int_equal(wal_writer_synced(w), wal_writer_size(w));
        }
    }
    uint64_t size = wal_writer_size(w);
    assert_kura_ok(wal_writer_close(w));
    uint64_t fsize = 0;
    assert_kura_ok(io_path_size(f->env, f->path, &fsize));
    assert_int_equal(fsize, size);

    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    for (size_t i = 0; i < n; i++) {
        const uint8_t *rec = NULL;
        size_t len = 0;
        assert_kura_ok(wal_reader_next(r, &rec, &len));
        assert_non_null(rec);
        assert_int_equal(len, lens[i]);
        rt_fill(want, lens[i], i);
        if (memcmp(rec, want, len) != 0)
            fail_msg("record %zu (%zu bytes) differs", i, len);
        /* a record starting in a block trailer begins at the next block */
        uint64_t start = starts[i];
        if (WAL_BLOCK_SIZE - start % WAL_BLOCK_SIZE < WAL_HEADER_SIZE)
            start += WAL_BLOCK_SIZE - start % WAL_BLOCK_SIZE;
        assert_int_equal(wal_reader_record_offset(r), start);
        assert_int_equal(wal_reader_end_offset(r), i + 1 < n ? starts[i + 1] : size);
    }
    const uint8_t *rec;
    size_t len;
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND); /* sticky */
    wal_reader_close(r);
    free(buf);
    free(want);
    free(starts);
}

static void test_small_and_empty(void **state)
{
    size_t lens[] = {0, 1, 2, 10, 11, 12, 100, 0, 0, 1000, 5, 0};
    rt_check_lengths(*state, lens, sizeof lens / sizeof lens[0], 3);
}

static void test_block_sized(void **state)
{
    size_t B = WAL_BLOCK_SIZE, H = WAL_HEADER_SIZE;
    /* exactly one block; one byte more and less; a record leaving 11 bytes (an empty FIRST
     * follows), 10 bytes (a trailer), 0 bytes; two blocks exactly */
    size_t lens[] = {B - H, B - H + 1, B - H - 1, B - 2 * H, 7, B - H - 10 - H, 3,
                     B - H - 11,    0,     2 * (B - H), B,  B - H,  2 * B, 1};
    rt_check_lengths(*state, lens, sizeof lens / sizeof lens[0], 0);
}

static void test_huge(void **state)
{
    size_t lens[] = {5, 3 * 1024 * 1024 + 17, 0, 1 << 20, 9};
    rt_check_lengths(*state, lens, sizeof lens / sizeof lens[0], 2);
}

static void test_random_mix(void **state)
{
    uint64_t seed = test_seed();
    size_t n = 2000;
    size_t *lens = malloc(n * sizeof *lens);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rand(&seed);
        lens[i] = r % 16 == 0 ? r % 100000 : r % 16 == 1 ? 0 : r % 700;
    }
    rt_check_lengths(*state, lens, n, 7);
    free(lens);
}

/* A record that ends 0..30 bytes before a block boundary, then one that must continue in
 * the next block (as an empty FIRST, after a trailer, or in place), then an empty one. */
static void test_every_start_offset(void **state)
{
    for (size_t gap = 0; gap <= 30; gap++) {
        size_t lens[] = {WAL_BLOCK_SIZE - WAL_HEADER_SIZE - gap, 20, 0, gap};
        rt_check_lengths(*state, lens, 4, 0);
    }
}

static void test_addv(void **state)
{
    rt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_MANIFEST, &w));
    uint8_t a[3] = {1, 2, 3}, big[70000];
    rt_fill(big, sizeof big, 42);
    const void *recs[] = {a, "", big, a + 1};
    size_t lens[] = {3, 0, sizeof big, 2};
    assert_kura_ok(wal_writer_addv(w, recs, lens, 4));
    assert_kura_ok(wal_writer_addv(w, recs, lens, 0));
    assert_kura_ok(wal_writer_add(w, "x", 1));
    assert_kura_ok(wal_writer_close(w));

    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_MANIFEST, &r));
    const uint8_t *rec;
    size_t len;
    for (size_t i = 0; i < 4; i++) {
        assert_kura_ok(wal_reader_next(r, &rec, &len));
        assert_int_equal(len, lens[i]);
        assert_memory_equal(rec, recs[i], len);
    }
    assert_kura_ok(wal_reader_next(r, &rec, &len));
    assert_int_equal(len, 1);
    assert_int_equal(rec[0], 'x');
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);
}

/* The bytes on disk are exactly the ones docs/format/wal.md describes (its example). */
/* Seeking to any record's offset reads from that record on; a limit at a record's end is a
 * clean end there (a log still being appended to, read up to its writer's size). */
static void test_seek_and_limit(void **state)
{
    rt_fixture *f = *state;
    enum { N = 60 };
    size_t lens[N];
    uint64_t st = 7;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    uint8_t *buf = malloc(3 * 32768);
    for (size_t i = 0; i < N; i++) {
        lens[i] = test_rand(&st) % 4 == 0 ? 32768 + test_rand(&st) % 40000
                                          : test_rand(&st) % 3000; /* some span blocks */
        rt_fill(buf, lens[i], i);
        assert_kura_ok(wal_writer_add(w, buf, lens[i]));
    }
    assert_kura_ok(wal_writer_close(w));
    uint64_t off[N], end[N];
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    for (size_t i = 0; i < N; i++) {
        const uint8_t *rec;
        size_t len;
        assert_kura_ok(wal_reader_next(r, &rec, &len));
        off[i] = wal_reader_record_offset(r);
        end[i] = wal_reader_end_offset(r);
    }
    for (size_t i = 0; i < N; i += 3) {
        size_t j = i + (size_t)(test_rand(&st) % (N - i)); /* read i..j */
        assert_kura_ok(wal_reader_seek(r, off[i], end[j]));
        for (size_t k = i; k <= j; k++) {
            const uint8_t *rec;
            size_t len;
            assert_kura_ok(wal_reader_next(r, &rec, &len));
            assert_int_equal(len, lens[k]);
            rt_fill(buf, lens[k], k);
            assert_memory_equal(rec, buf, len);
            assert_int_equal(wal_reader_record_offset(r), off[k]);
        }
        const uint8_t *rec;
        size_t len;
        assert_int_equal(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
        assert_int_equal(wal_reader_torn_at(r), -1); /* a clean end, not a torn one */
    }
    /* no limit: to the end of the file; at the end: nothing */
    assert_kura_ok(wal_reader_seek(r, off[N - 1], UINT64_MAX));
    const uint8_t *rec;
    size_t len;
    assert_kura_ok(wal_reader_next(r, &rec, &len));
    assert_int_equal(len, lens[N - 1]);
    assert_int_equal(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_kura_ok(wal_reader_seek(r, end[N - 1], UINT64_MAX));
    assert_int_equal(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);
    free(buf);
}

static void test_format_bytes(void **state)
{
    rt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    uint8_t *rec = malloc(40000);
    rt_fill(rec, 40000, 1);
    assert_kura_ok(wal_writer_add(w, rec, 100));
    assert_kura_ok(wal_writer_sync(w));
    assert_int_equal(wal_writer_synced(w), 111);
    assert_kura_ok(wal_writer_add(w, rec, 40000));
    assert_kura_ok(wal_writer_close(w));

    void *data = NULL;
    size_t n = 0;
    assert_kura_ok(io_read_file(f->env, f->path, IO_KIND_WAL, 1 << 20, &data, &n));
    const uint8_t *p = data;
    assert_int_equal(n, 111 + 11 + 32646 + 11 + 7354);
    struct {
        size_t off, len;
        uint8_t type;
        uint32_t durable;
        size_t src;
    } frags[] = {{0, 100, 1, 0, 0}, {111, 32646, 2, 111, 0}, {32768, 7354, 4, 111, 32646}};
    for (size_t i = 0; i < 3; i++) {
        const uint8_t *h = p + frags[i].off;
        assert_int_equal(h[4] | h[5] << 8, frags[i].len); /* fixed16 LE length */
        assert_int_equal(h[6], frags[i].type);
        assert_int_equal(h[7] | h[8] << 8 | h[9] << 16 | (uint32_t)h[10] << 24, frags[i].durable);
        /* crc: masked crc32c of type, durable_off, payload */
        uint32_t crc = crc32c_extend(crc32c(h + 6, 5), h + 11, frags[i].len);
        assert_int_equal(dec_fixed32(h), crc32c_mask(crc));
        assert_memory_equal(h + 11, rec + frags[i].src, frags[i].len);
    }
    free(data);
    free(rec);
}

/* The writer refuses to grow the file past 2^32 - 1 bytes, without writing or failing. */
static void test_size_limit(void **state)
{
    rt_fixture *f = *state;
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(wal_writer_add(w, "abc", 3));
    uint8_t one = 7;
    /* the writer checks sizes before it reads any payload, so no 4 GiB buffer is needed */
    assert_kura_status(wal_writer_add(w, &one, (size_t)UINT32_MAX), KURA_E_INVALID);
    const void *recs[] = {&one, &one, &one};
    size_t lens[] = {1, (size_t)UINT32_MAX - 100, SIZE_MAX};
    assert_kura_status(wal_writer_addv(w, recs, lens, 3), KURA_E_INVALID);
    assert_false(wal_writer_failed(w));
    assert_int_equal(wal_writer_size(w), 14);
    assert_kura_ok(wal_writer_add(w, "de", 2));
    assert_kura_ok(wal_writer_close(w));
    uint64_t size = 0;
    assert_kura_ok(io_path_size(f->env, f->path, &size));
    assert_int_equal(size, 14 + 13);
}

static void test_open_errors(void **state)
{
    rt_fixture *f = *state;
    wal_reader *r = NULL;
    assert_kura_status(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r), KURA_E_NOT_FOUND);
    assert_null(r);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.log", f->dir);
    wal_writer *w = NULL;
    assert_int_not_equal(wal_writer_open(f->env, bad, IO_KIND_WAL, &w), KURA_OK);
    assert_null(w);
    /* an empty file is an empty log */
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    assert_kura_ok(wal_writer_sync(w)); /* nothing to sync */
    assert_kura_ok(wal_writer_close(w));
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t len;
    assert_kura_status(wal_reader_next(r, &rec, &len), KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);
    wal_reader_close(NULL);
    assert_kura_ok(wal_writer_close(NULL));
}

/* Not a timed assertion: prints the framing + append and the read throughput. */
static void test_bench(void **state)
{
    rt_fixture *f = *state;
    enum { N = 200000, LEN = 100 };
    uint8_t rec[LEN];
    rt_fill(rec, LEN, 3);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(f->env, f->path, IO_KIND_WAL, &w));
    uint64_t t0 = know_ns();
    for (size_t i = 0; i < N; i++)
        assert_kura_ok(wal_writer_add(w, rec, LEN));
    uint64_t t1 = know_ns();
    assert_kura_ok(wal_writer_close(w));
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(f->env, f->path, IO_KIND_WAL, &r));
    const uint8_t *p;
    size_t len, count = 0;
    uint64_t t2 = know_ns();
    while (wal_reader_next(r, &p, &len) == KURA_OK)
        count++;
    uint64_t t3 = know_ns();
    wal_reader_close(r);
    assert_int_equal(count, N);
    fprintf(stderr,
            "wal bench: add %zu x %d B records, no sync: %.0f records/s; read: %.0f records/s\n",
            (size_t)N, LEN, N / ((t1 - t0) / 1e9), N / ((t3 - t2) / 1e9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_small_and_empty, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_block_sized, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_huge, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_random_mix, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_every_start_offset, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_addv, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_seek_and_limit, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_format_bytes, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_size_limit, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_bench, rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
